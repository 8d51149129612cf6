"""``wikitrace compile``: runs in, a published read-only corpus out.

Runs stream through in input order: each is compiled (up to ``concurrency``
at once), then its raw and compilation pages go to a page sink that
writes them into the corpus in place, with ids fixed in input order; runs whose
pages are unchanged and intact are not touched. Only light per-run entries stay
in memory for the insight pages (gathered across runs: corpus/insights.py), the
indexes and corpus.json, which are written after the run pages
(corpus/publish.py says in what order, and why a reader never sees a gap).

Large builds spread over three processes (see README, Scale): a reader
(runs/read_helper.py) parses and redacts the input, this process renders
prompts and talks to the model, a page writer (corpus/pages.py) renders and
writes the pages. The bytes written are the same either way. What the command
shows at the terminal (progress, the closing summary) is ``build_cli``.
"""

from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from . import llm_report
from .compilers.base import Compiler
from .build_input import apply_defaults, read_runs, reader as read_from
from .build_key import build_key, outcomes_digest
from .build_options import BuildOptions
from .build_publish import LaidOut, _trial_scope, lay_out_indexes, publish_indexes
from .compile_loop import compile_in_order
from .corpus import pages
from .corpus.manifest import IdAllocator
from .corpus.update import Reuse as _Reuse, RunWriter as _Writer
from .corpus.publish import STATE, BuildLock, PublishError, Publisher, check_target, corpus_root, read_corpus_json
from .corpus.tombstones import Tombstones
from .runs._common import Carried
from .redact import redactor_for
from .runs.load import LoadReport
from .runs.model import Run


@dataclass
class BuildResult:
    out: Path
    runs: int = 0
    success: int = 0
    failure: int = 0
    insights: int = 0
    stats: dict = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    detected: dict = field(default_factory=dict)
    dropped_runs: list[str] = field(default_factory=list)
    report: LoadReport | None = None
    batch: object | None = None  # compilers.batch.BatchReport when --batch ran
    repaired: list[str] = field(default_factory=list)  # owned files found missing or edited, rewritten
    removed: int = 0  # files of the previous corpus no longer produced
    compiler: dict = field(default_factory=dict)  # name, model, endpoint
    by_compiler: dict = field(default_factory=dict)  # pages per compiler label
    forgotten: list[str] = field(default_factory=list)  # run ids in the input kept out by `wikitrace forget`
    waiting: str | None = None  # changed runs that kept their LLM pages: the model did not answer


class BuildError(RuntimeError):
    pass


class BuildInputError(BuildError):
    """The command or its inputs cannot give a build (exit 2, not a failed build)."""


def make_compiler(opts: BuildOptions, config=None) -> Compiler:
    """The LLM compiler when a key or base URL is configured, else the offline one."""
    if opts.offline or (config is None and (config := _resolve(opts)) is None):
        # imported here: the LLM path needs the offline compiler only for a run that falls
        # back, and importing it (~0.1 CPU-s) held back the build's first request
        from .compilers.offline import OfflineCompiler

        return OfflineCompiler()
    from .compilers.llm import LLMCompiler

    compiler = LLMCompiler(config, cache_dir=opts.cache_dir, read_cache=opts.read_cache, templates=opts.templates,
                           concurrency=opts.concurrency)
    compiler.redactor = redactor_for(opts.redact, opts.redact_patterns)  # the answers, with the user's patterns too
    if compiler.cache is not None:
        compiler.cache.write_behind()  # the event loop never waits on the disk; ``aclose`` waits for it
    return compiler


def _resolve(opts: BuildOptions):
    from .llm.config import resolve

    return resolve(opts.model, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)


def _prefill_from_batch(opts: BuildOptions, compiler: Compiler, root: Path, graves, progress=None):
    """Answer as many runs as possible through the Batch API before the build compiles."""
    from .compilers.batch import BatchError, prefill_cache

    if compiler.name != "llm":
        raise BuildInputError("--batch needs an LLM endpoint: set OPENAI_API_KEY (or OPENAI_BASE_URL) and drop --offline")
    if not opts.read_cache:
        raise BuildInputError("--batch answers through the response cache, which --no-cache skips; drop one of them")
    state = root / STATE / "batch.json"
    try:
        return prefill_cache(graves.skip(read_runs(opts, LoadReport())), compiler, state, resume_batch=opts.resume_batch,
                             poll_interval=opts.batch_poll_interval, progress=progress)
    except BatchError as exc:
        raise BuildError(str(exc)) from None


def _usable_manifest(previous: dict | None, out: Path) -> dict | None:
    """The published corpus.json if it has the shape this build reads ids from, else a
    BuildError that says so (a hand-edited manifest must not turn into a traceback)."""
    if previous is None:
        return None
    runs, insights, retired = previous.get("runs", []), previous.get("insights", []), previous.get("retired", {})
    good = (isinstance(runs, list) and isinstance(insights, list) and isinstance(retired, dict)
            and all(isinstance(r, dict) and isinstance(r.get("run_id"), str) and isinstance(r.get("step"), str)
                    for r in runs)
            and all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in insights))
    if not good:
        raise PublishError(f"{out / 'corpus.json'}: its runs/insights are not laid out as wikitrace writes them, so "
                           f"its ids cannot be kept — restore it from git, or move {out} away and build afresh")
    return previous


def build(opts: BuildOptions, progress=None, announce=None, batch_progress=None) -> BuildResult:
    """Compile ``opts.inputs`` and publish the corpus at ``opts.out``. Raises BuildError/PublishError."""
    root = corpus_root(opts.out)
    check_target(root)
    with BuildLock(root):
        pub = Publisher(root, "runs")
        try:
            from .agent.index import prompt_index_bytes
            from .corpus.pending import recover

            recover(pub, prompt_index_bytes)  # a command killed earlier is finished (or its unlisted pages removed) first
            return _build_locked(opts, pub, progress, announce, batch_progress)
        finally:
            pub.close()


def _previous(pub: Publisher) -> dict | None:
    """The published corpus.json; when it is gone or damaged, the ids the manifest kept."""
    try:
        previous = _usable_manifest(read_corpus_json(pub.root), pub.root)
    except PublishError:
        if pub.manifest.files.get("corpus.json") is None:
            raise  # not written by wikitrace: not ours to replace
        previous = None
    kept = pub.manifest.data.get("ids")
    if previous is None and isinstance(kept, dict):
        return {"runs": kept.get("runs") or [], "retired": kept.get("retired") or {"steps": [], "insights": []}}
    return previous


def _build_locked(opts: BuildOptions, pub: Publisher, progress, announce, batch_progress) -> BuildResult:
    root = pub.root
    previous = _previous(pub)
    report = LoadReport()
    ids = IdAllocator(previous)
    graves = Tombstones.load(root, restore=opts.restore)  # runs `wikitrace forget` removed stay out
    config = None
    if not opts.offline:
        from .llm.config import resolve

        config = resolve(opts.model, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)
    # The key needs only the compiler's name and model, so the input can be
    # read (and counted) beside the build while the model client is imported.
    key = build_key("llm" if config else "offline", config.model if config else None, opts)
    reuse = _Reuse(previous, pub, key)
    if (pub.manifest.data.get("settings") or {}).get("outcomes") != outcomes_digest(opts):
        reuse.known = {}  # another verdict table: records are parsed again (pages of unchanged runs are still kept)
    count_first = config is not None and announce is not None
    reader = read_from(opts, reuse.known, count_first, llm=config is not None)
    writer = None
    try:
        # A large input into a corpus holding no run yet: every run is written, so the page
        # writer process starts now, beside the reader, rather than after the first runs.
        writer = _Writer(pub, ids, opts, reuse, page_helper=reader is not None and not ids.prev_runs)
        compiler = make_compiler(opts, config)
        if compiler.name == "llm" and (count_first or compiler.asks_at_once()):
            # make the model client while the first runs are read (and counted)
            compiler.transport.prepare()
        if count_first:
            # Before paying for calls, show the labels: an inverted outcome shows here.
            # Records compiled before are counted from the manifest, not re-read.
            if reader is not None:
                counts = reader.counts()
            else:
                from .build_input import read_kwargs
                from .runs.load import count_outcomes

                counts, _ = count_outcomes(list(opts.inputs), opts.fmt, **dict(read_kwargs(opts, reuse.known), strict=False))
            announce(f"{sum(counts.values())} runs in the input ({counts['success']} success, "
                     f"{counts['failure']} failure), {len(reuse.known)} compiled before; model {compiler.model}")
        batch_report = (_prefill_from_batch(opts, compiler, root, graves, batch_progress)
                        if (opts.batch or opts.resume_batch) else None)
    except BaseException:
        if reader is not None:
            reader.stop()
        if writer is not None:
            writer.close(ok=False)
        raise
    report.warnings.extend(writer.usage_problems)  # lines of usage/ledger.jsonl left out of the counts
    runs = (apply_defaults(reader.runs(report), opts) if reader is not None
            else read_runs(opts, report, reuse.known))
    runs = graves.skip(runs)
    if progress is not None:
        runs = progress(runs)
    laid: list[LaidOut] = []
    try:
        write_runs(writer, runs, compiler, opts, report.errors, reuse,
                   lay_out=lambda: laid.append(lay_out_indexes(writer, compiler, reuse.prompt_index_ok)))
    finally:
        if reader is not None:
            reader.stop()
    if not writer.runs and not graves.skipped:
        raise BuildInputError("no run could be read from the input; nothing was published"
                              + (f" ({len(report.errors)} problems, first: {report.errors[0]})" if report.errors else "")
                              + " — fix the inputs as each problem says (or give other paths) and run again")
    removed = publish_indexes(writer, compiler, opts, ids, report, key, reuse.prompt_index_ok, graves,
                              laid[0] if laid else None)
    counts = collections.Counter(r["outcome"] for r in writer.runs)
    return BuildResult(
        out=root, runs=len(writer.runs), success=counts["success"], failure=counts["failure"],
        insights=len(writer.insights), stats=compiler.stats().as_dict(), skipped=report.errors,
        detected=report.detected, dropped_runs=ids.dropped_runs(), report=report, batch=batch_report,
        repaired=list(pub.repaired), removed=len(removed),
        compiler=llm_report.describe(compiler), by_compiler=dict(sorted(writer.compilers.items())),
        forgotten=list(graves.skipped),
        waiting=llm_report.waiting_for_model(compiler, writer.waiting_for_model),
    )


def write_runs(writer: _Writer, runs: Iterable[Run | Carried], compiler: Compiler, opts: BuildOptions,
               errors: list[str], reuse: _Reuse, lay_out: Callable[[], None] | None = None) -> None:
    """Compile ``runs`` and hand their pages to ``writer`` (``wikitrace add`` writes the same
    way); ``lay_out()`` is called once the insights are gathered, before waiting for the page
    writer. On any failure the pages of runs no index names yet are removed again."""
    from .corpus import cause_contrast, trial_pages

    async def finish() -> None:
        unanswered = llm_report.nothing_answered(compiler, writer.counts())
        if unanswered:
            raise BuildError(unanswered)
        writer.release()
        # every run has its entry: the page writer gets each task's trials, to write the
        # compilation pages it holds with their lines against each other
        touched, dropped = _trial_scope(writer)
        writer.cause_counts = cause_contrast.count(writer.runs)  # the pages on disk are set against them too
        writer.all_handed_on(trial_pages.trial_groups(writer.runs, touched, dropped, opts.templates),
                             cause_contrast.notes(writer.runs, touched, writer.cause_counts))
        # the insights are gathered (and with a model, the merges go out) now, while the page
        # writer still writes the last runs' pages (``writer.close`` waits for it below)
        if compiler.name == "llm":
            await writer.merge_insights(compiler)
        else:
            writer.gather_insights()
        if lay_out is not None:
            lay_out()

    try:
        if compiler.name == "llm":
            writer.hold_fallbacks_until_the_model_answers()
        try:
            asyncio.run(compile_in_order(runs, compiler, opts.concurrency, writer, errors, reuse, then=finish))
        except BaseException:
            writer.close(ok=False)
            raise
        writer.close()
    except pages.PageWriteError as exc:
        writer.pub.abandon(writer.new_paths)
        raise BuildError(f"{exc}; the corpus was not updated (its indexes and corpus.json are as before)") from None
    except BaseException:
        writer.pub.abandon(writer.new_paths)  # no index names these yet
        raise
