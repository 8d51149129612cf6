"""``wikitrace compile``: runs in, a published read-only corpus out.

Runs stream through in input order: each is compiled (up to ``concurrency``
at once), then its raw, compilation and insight pages go to a page sink that
writes them into a staging folder, with ids fixed in input order. Only light
per-run entries stay in memory for the indexes and corpus.json. The staged
tree replaces the published one in a single swap.

Large builds spread over three processes (see README, Scale): a reader
(runs/read_helper.py) parses and redacts the input, this process renders
prompts and talks to the model, a page writer (corpus/pages.py) renders and
writes the pages. The bytes written are the same either way.
"""

from __future__ import annotations

import asyncio
import collections
import datetime as _dt
import hashlib
import importlib
import json
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

from . import __version__, llm_report
from .compilers.base import Compiler
from .compilers.offline import OfflineCompiler, compile_offline
from .corpus import documents, layout, pages
from .corpus.fsio import FILE_MODE, remove_tree, write_atomic
from .corpus.manifest import IdAllocator, content_hash
from .corpus.publish import BuildLock, PublishError, check_target, fresh_staging, publish
from .runs._common import Carried
from .redact import redact_compilation, redactor_for
from .runs.load import LoadReport, iter_runs
from .runs.model import Run, RunError


@dataclass
class BuildOptions:
    inputs: list[Path]
    out: Path
    fmt: str | None = None
    mount_path: str = "/work/corpus"
    templates: Path | None = None
    task_type: str | None = None
    offline: bool = False
    model: str | None = None
    base_url: str | None = None
    concurrency: int = 8
    cache_dir: Path | None = None
    read_cache: bool = True  # False: --no-cache (ask the model again, still store the answers)
    max_tokens: int | None = None  # None: WIKITRACE_MAX_TOKENS or the default
    timeout: float | None = None  # None: WIKITRACE_TIMEOUT or the default
    quiet: bool = False
    batch: bool = False  # send the model calls through the OpenAI Batch API first
    resume_batch: str | None = None
    batch_poll_interval: float = 30.0
    outcomes: Path | None = None
    strict: bool = False
    redact: bool = True
    redact_patterns: tuple[str, ...] = ()


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
    compiler: dict = field(default_factory=dict)  # name, model, endpoint
    by_compiler: dict = field(default_factory=dict)  # pages per compiler label


class BuildError(RuntimeError):
    pass


def make_compiler(opts: BuildOptions, config=None) -> Compiler:
    """The LLM compiler when a key or base URL is configured, else the offline one."""
    if opts.offline:
        return OfflineCompiler()
    if config is None:
        from .llm_config import resolve

        config = resolve(opts.model, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)
    if config is None:
        return OfflineCompiler()
    from .compilers.llm import LLMCompiler

    compiler = LLMCompiler(config, cache_dir=opts.cache_dir, read_cache=opts.read_cache, templates=opts.templates,
                           concurrency=opts.concurrency)
    compiler.redactor = redactor_for(opts.redact, opts.redact_patterns)  # the answers, with the user's patterns too
    return compiler


def _read_kwargs(opts: BuildOptions, known: dict | None) -> dict:
    return dict(outcomes=opts.outcomes, strict=opts.strict, redact=opts.redact,
                redact_patterns=tuple(opts.redact_patterns), known=known)


def _read_runs(opts: BuildOptions, report: LoadReport, known: dict | None = None) -> Iterator[Run | Carried]:
    """The runs of a build, exactly as compiled (the batch pass must see the same prompts)."""
    return _apply_defaults(iter_runs(list(opts.inputs), opts.fmt, report, **_read_kwargs(opts, known)), opts)


def _reader(opts: BuildOptions, known: dict, count_first: bool):
    """A helper process reading the input on another core, for inputs large enough
    to pay for starting it (runs/read_helper.py); None: read in this process."""
    from .runs import read_helper

    if not read_helper.worth_a_helper(list(opts.inputs)):
        return None
    try:
        return read_helper.RunReader(list(opts.inputs), opts.fmt, count_first, **_read_kwargs(opts, known))
    except OSError:  # cannot start a process here
        return None


def _prefill_from_batch(opts: BuildOptions, compiler: Compiler, progress=None):
    """Answer as many runs as possible through the Batch API before the build compiles."""
    from .compilers.batch import BatchError, prefill_cache

    if compiler.name != "llm":
        raise BuildError("--batch needs an LLM endpoint: set OPENAI_API_KEY (or OPENAI_BASE_URL) and drop --offline")
    if not opts.read_cache:
        raise BuildError("--batch answers through the response cache, which --no-cache skips; drop one of them")
    state = opts.out.parent / f".{opts.out.name}.batch.json"
    try:
        return prefill_cache(_read_runs(opts, LoadReport()), compiler, state, resume_batch=opts.resume_batch,
                             poll_interval=opts.batch_poll_interval, progress=progress)
    except BatchError as exc:
        raise BuildError(str(exc)) from None


def _apply_defaults(runs: Iterable[Run | Carried], opts: BuildOptions) -> Iterator[Run | Carried]:
    for run in runs:
        if isinstance(run, Carried):
            yield run
            continue
        if opts.task_type and not run.task.task_type and not run.task.apps:
            run.task.task_type = opts.task_type
        yield run


REUSED = object()  # marker: the published corpus already holds this run's pages


class _Reuse:
    """Runs whose pages in the published corpus are still what this build would write.

    True when the corpus was built with the same build key (wikitrace version,
    compiler and model, templates, mount path) and the run's content is
    unchanged. Their files are hard-linked into the new tree instead of being
    compiled and rendered again, so adding one run to a large corpus costs one
    compile. Fallback pages are never reused: their LLM call is tried again.
    """

    def __init__(self, previous: dict | None, out: Path, key: str):
        same = bool(previous) and previous.get("build_key") == key
        self.out = out
        self.runs = {r["run_id"]: r for r in previous.get("runs", [])} if same else {}
        self.insights = {i["id"]: i for i in previous.get("insights", [])} if same else {}
        # JSONL records compiled from exactly these bytes: the readers skip parsing them.
        self.digests = _read_record_digests(out, key) if same else {}
        self.known = {d: Carried(d, run_id, self.runs[run_id]["outcome"]) for run_id, d in self.digests.items()
                      if run_id in self.runs and self.runs[run_id]["compiler"] != "offline-fallback"}

    def entry(self, run: Run | Carried, digest: str | None) -> dict | None:
        prev = self.runs.get(run.run_id)
        if not prev or prev["compiler"] == "offline-fallback":
            return None
        if isinstance(run, Carried):
            return prev if self.digests.get(run.run_id) == run.record_digest else None
        return prev if prev["content_hash"] == digest else None


def _record_digests_path(out: Path) -> Path:
    """Beside the corpus, not in it: a digest of a raw record is a digest of unredacted text."""
    return out.parent / f".{out.name}.records.json"


def _read_record_digests(out: Path, key: str) -> dict[str, str]:
    try:
        data = json.loads(_record_digests_path(out).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("build_key") != key or not isinstance(data.get("records"), dict):
        return {}
    return {k: v for k, v in data["records"].items() if isinstance(k, str) and isinstance(v, str)}


def build_key(compiler_name: str, model: str | None, opts: BuildOptions) -> str:
    """What, besides a run's own content, decides the bytes of its pages."""
    from .templates import bundled_dir

    h = hashlib.sha256()
    h.update(json.dumps([__version__, compiler_name, model, opts.mount_path, opts.redact,
                         list(opts.redact_patterns), opts.task_type]).encode())
    if opts.outcomes is not None and Path(opts.outcomes).is_file():
        h.update(b"outcomes\0" + Path(opts.outcomes).read_bytes())
    for folder in filter(None, [bundled_dir("corpus_templates"), opts.templates]):
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


async def _compile_in_order(runs: Iterable[Run], compiler: Compiler, concurrency: int, on_done, errors: list[str],
                            reuse: _Reuse):
    """Compile with bounded concurrency; hand results to ``on_done`` in input order."""
    sem = asyncio.Semaphore(concurrency)

    async def one(run: Run, digest: str):
        if reuse.entry(run, digest) is not None:
            return REUSED
        async with sem:
            try:
                return await compiler.compile(run)
            except Exception as exc:  # a compiler bug must not sink the build
                if compiler.name == "offline":
                    errors.append(f"run {run.run_id!r}: offline compiler failed ({type(exc).__name__}: {exc}); skipped")
                    return None
                comp = compile_offline(run)
                comp.compiler = "offline-fallback"
                comp.fallback_reason = f"internal error: {type(exc).__name__}: {exc}"
                compiler.stats().count_fallback(comp.fallback_reason)  # counted with the LLM's own fallbacks
                return comp

    window: collections.deque = collections.deque()
    try:
        for run in runs:
            digest = None if isinstance(run, Carried) else content_hash(run)
            window.append((run, digest, asyncio.ensure_future(one(run, digest))))
            while len(window) > concurrency * 4:
                r, d, task = window.popleft()
                on_done(r, d, await task)
        while window:
            r, d, task = window.popleft()
            on_done(r, d, await task)
    finally:  # also when interrupted: an open HTTP session would be reported at exit
        for _, _, task in window:
            task.cancel()
        close = getattr(compiler, "aclose", None)
        if close is not None:
            await close()


class _Writer:
    """Hands each compiled run's pages to a page sink and keeps its corpus.json entries.

    The first ``HELPER_AFTER`` runs are written in this process; a build with
    more moves the rendering and writing to a helper process (corpus/pages.py),
    which runs on another core while this one reads runs and calls the model.
    """

    HELPER_AFTER = 32

    def __init__(self, stage: Path, ids: IdAllocator, opts: BuildOptions, reuse: _Reuse):
        self.stage, self.ids, self.opts, self.reuse = stage, ids, opts, reuse
        self.redactor = redactor_for(opts.redact, opts.redact_patterns)
        self.runs: list[dict] = []
        self.insights: list[dict] = []
        self.compilers: collections.Counter = collections.Counter()
        self.record_digests: dict[str, str] = {}  # run id -> digest of its raw JSONL record
        self.carried_insights: set[str] = set()  # insight ids whose entries are the published ones
        self.carried_steps: set[str] = set()  # steps of runs carried over unchanged
        self._sink_args = (str(stage), str(reuse.out), opts.mount_path, str(opts.templates) if opts.templates else None)
        self._sink = pages.PageSink(*self._sink_args)
        self._handed = 0

    def _apply(self, op: tuple) -> None:
        self._handed += 1
        if self._handed == self.HELPER_AFTER + 1 and isinstance(self._sink, pages.PageSink):
            try:
                helper = pages.HelperSink(*self._sink_args)
            except OSError:  # cannot start a process here: keep writing in this one
                pass
            else:
                self._sink.close()  # runs it is still carrying over finish first
                self._sink = helper
        self._sink.apply(op)

    def close(self, ok: bool = True) -> None:
        """Wait until every page is written (raises PageWriteError), or stop at once."""
        if ok:
            self._sink.close()
        elif isinstance(self._sink, pages.HelperSink):
            self._sink.kill()
        else:
            try:
                self._sink.close()
            except pages.PageWriteError:
                pass  # the build failed already; that error is the one to report

    def _carry_over(self, run: Run, digest: str) -> None:
        prev = self.reuse.entry(run, digest)
        step = self.ids.step_for(run.run_id)
        ins_ids = self.ids.insights_for(run.run_id, len(prev["insights"]))
        self._apply(("carry", step, ins_ids))
        self.insights.extend(self.reuse.insights[i] for i in ins_ids)
        self.carried_insights.update(ins_ids)
        self.carried_steps.add(step)
        self.compilers[prev["compiler"]] += 1
        if isinstance(run, Carried):
            self.record_digests[run.run_id] = run.record_digest
        elif run.source.get("record_digest"):
            self.record_digests[run.run_id] = run.source["record_digest"]
        self.runs.append(prev)

    def __call__(self, run: Run, digest: str, comp) -> None:
        if comp is None:
            return
        if comp is REUSED:
            return self._carry_over(run, digest)
        redact_compilation(comp, self.redactor)
        step = self.ids.step_for(run.run_id)
        ins_ids = self.ids.insights_for(run.run_id, len(comp.insights))
        refs = [documents.InsightRef(i, c.title, layout.insight_doc(i)) for i, c in zip(ins_ids, comp.insights)]
        self._apply(("run", run, comp, step, refs))
        for k, ref in enumerate(refs):
            self.insights.append({
                "id": ref.id, "title": ref.title, "task_type": run.task.task_type if not run.task.apps else None,
                "apps": run.task.apps or None, "source_step": step, "source_outcome": comp.outcome,
                "guideline": comp.insights[k].guideline, "applicability": comp.insights[k].applicability,
            })
        self.compilers[comp.compiler] += 1
        if run.source.get("record_digest"):
            self.record_digests[run.run_id] = run.source["record_digest"]
        self.runs.append({
            "step": step, "run_id": run.run_id, "task_id": run.task.id,
            "task_type": run.task.task_type if not run.task.apps else None, "apps": run.task.apps or None,
            "outcome": run.outcome.label, "steps": run.outcome.steps, "instruction": run.task.instruction,
            "title": comp.title, "compiler": comp.compiler, "content_hash": digest, "insights": ins_ids,
            "redactions": run.source.get("redactions") or None,
        })


def _corpus_json(writer: _Writer, compiler: Compiler, opts: BuildOptions, ids: IdAllocator, report: LoadReport,
                 key: str) -> dict:
    runs, insights = writer.runs, writer.insights
    return {
        "format": layout.CORPUS_FORMAT,
        "wikitrace_version": __version__,
        "mount_path": opts.mount_path,
        "compiler": {"name": compiler.name, "model": compiler.model},
        "build_key": key,
        "counts": {
            "runs": len(runs),
            "success": sum(r["outcome"] == "success" for r in runs),
            "failure": sum(r["outcome"] == "failure" for r in runs),
            "insights": len(insights),
            "by_compiler": dict(sorted(writer.compilers.items())),
        },
        "runs": runs,
        "insights": insights,
        "retired": ids.retired(),
        # The one block that may differ between two builds of the same inputs.
        "build": {
            "built_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "stats": compiler.stats().as_dict(),
            "reused_runs": len(writer.carried_steps),
            "detected_formats": report.detected,
            "redactions": dict(sorted(report.redactions.items())),
            "identical_copies_dropped": report.deduplicated,
            "skipped": report.errors,
            "warnings": report.warnings,
            "ignored_files": report.ignored,
        },
    }


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
        raise BuildError(f"{out / 'corpus.json'}: its runs/insights are not laid out as wikitrace writes them, so "
                         f"its ids cannot be kept — restore it from git, or move {out} away and build afresh")
    return previous


def build(opts: BuildOptions, progress=None, announce=None, batch_progress=None) -> BuildResult:
    """Compile ``opts.inputs`` and publish the corpus at ``opts.out``. Raises BuildError/PublishError."""
    out = opts.out
    with BuildLock(out):
        previous = _usable_manifest(check_target(out), out)
        report = LoadReport()
        ids = IdAllocator(previous)
        config = None
        if not opts.offline:
            from .llm_config import resolve

            config = resolve(opts.model, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)
        # The key needs only the compiler's name and model, so the input can be
        # read (and counted) beside the build while the model client is imported.
        key = build_key("llm" if config else "offline", config.model if config else None, opts)
        reuse = _Reuse(previous, out, key)
        count_first = config is not None and announce is not None
        reader = _reader(opts, reuse.known, count_first)
        try:
            compiler = make_compiler(opts, config)
            if count_first:
                # Before paying for calls, show the labels: an inverted outcome shows here.
                # Records compiled before are counted from the manifest, not re-read.
                if reader is not None:
                    if compiler.name == "llm":  # import the client while this process waits
                        threading.Thread(target=importlib.import_module, args=("openai",),
                                         name="wikitrace-import-openai").start()
                    counts = reader.counts()
                else:
                    from .runs.load import count_outcomes

                    counts, _ = count_outcomes(list(opts.inputs), opts.fmt, outcomes=opts.outcomes, redact=False,
                                               known=reuse.known)
                announce(f"{sum(counts.values())} runs in the input ({counts['success']} success, "
                         f"{counts['failure']} failure), {len(reuse.known)} compiled before; model {compiler.model}")
            batch_report = (_prefill_from_batch(opts, compiler, batch_progress)
                            if (opts.batch or opts.resume_batch) else None)
        except BaseException:
            if reader is not None:
                reader.stop()
            raise
        stage = fresh_staging(out)
        writer = _Writer(stage, ids, opts, reuse)
        runs = (_apply_defaults(reader.runs(report), opts) if reader is not None
                else _read_runs(opts, report, reuse.known))
        if progress is not None:
            runs = progress(runs)
        try:
            try:
                asyncio.run(_compile_in_order(runs, compiler, opts.concurrency, writer, report.errors, reuse))
            except BaseException:
                writer.close(ok=False)
                raise
            writer.close()
        except pages.PageWriteError as exc:
            raise BuildError(f"{exc}; nothing was published") from None
        finally:
            if reader is not None:
                reader.stop()
        if not writer.runs:
            raise BuildError("no run could be read from the input; nothing was published"
                             + (f" ({len(report.errors)} problems, first: {report.errors[0]})" if report.errors else ""))
        unanswered = llm_report.nothing_answered(compiler, writer.compilers)
        if unanswered:
            remove_tree(stage)
            raise BuildError(unanswered)
        for rel, text in documents.render_indexes(writer.runs, writer.insights, opts.mount_path, opts.templates).items():
            write_atomic(stage / rel, text, mode=FILE_MODE)
        if (out / "dialogue").is_dir():  # dialogue memory is built separately; carry it over untouched
            shutil.copytree(out / "dialogue", stage / "dialogue")
        from .agent.index import write_prompt_index
        from .corpus import corpus_json

        writer.runs.sort(key=lambda r: layout.id_number(r["step"]))
        writer.insights.sort(key=lambda i: layout.id_number(i["id"]))
        text, region = corpus_json.dumps(_corpus_json(writer, compiler, opts, ids, report, key))
        # `prompt` need not re-index per call; renders of insights carried over are reused
        write_prompt_index(stage, writer.runs, writer.insights, region, previous=out if writer.carried_steps else None,
                           unchanged=writer.carried_insights, unchanged_runs=writer.carried_steps)
        from .corpus.search_files import write_search_files

        write_search_files(stage)  # the agent's grep reads one file per layer
        write_atomic(stage / "corpus.json", text, mode=FILE_MODE)
        publish(stage, out)
        write_atomic(_record_digests_path(out), json.dumps(
            {"build_key": key, "records": dict(sorted(writer.record_digests.items()))}) + "\n")
    counts = collections.Counter(r["outcome"] for r in writer.runs)
    return BuildResult(
        out=out, runs=len(writer.runs), success=counts["success"], failure=counts["failure"],
        insights=len(writer.insights), stats=compiler.stats().as_dict(), skipped=report.errors,
        detected=report.detected, dropped_runs=ids.dropped_runs(), report=report, batch=batch_report,
        compiler=llm_report.describe(compiler), by_compiler=dict(sorted(writer.compilers.items())),
    )


def run_build(opts: BuildOptions, as_json: bool = False) -> int:
    """CLI wrapper: what will be read, progress, closing summary (all on stderr), exit code.
    With ``as_json`` the summary is also one JSON object on stdout."""
    from .errors import Failed, InputError
    from .input_survey import survey
    from .llm_config import LLMConfigError
    from .progress import Progress, console as make_console

    console = make_console(quiet=opts.quiet)
    found = survey(list(opts.inputs), opts.fmt)
    for line in found.lines():
        console.print(line)
    try:
        with Progress(console, quiet=opts.quiet) as bar:
            result = build(opts, lambda runs: bar.track(runs, found.runs, "compiling runs"),
                           announce=console.print, batch_progress=bar)
    except (BuildError, PublishError) as exc:
        raise Failed(str(exc)) from None
    except (LLMConfigError, RunError) as exc:
        raise InputError(str(exc)) from None
    _summary(console, result, opts)
    if as_json:
        print(json.dumps(result_dict(result), indent=2, ensure_ascii=False))
    return 0


def result_dict(result: BuildResult) -> dict:
    """The closing summary as data (``compile --json``)."""
    report = result.report
    return {
        "out": str(result.out), "runs": result.runs, "success": result.success, "failure": result.failure,
        "insights": result.insights, "stats": result.stats, "detected_formats": result.detected,
        "skipped": result.skipped, "warnings": list(report.warnings) if report else [],
        "ignored_files": list(report.ignored) if report else [], "retired_runs": result.dropped_runs,
        "compiler": result.compiler, "by_compiler": result.by_compiler,
    }


def _summary(console, result: BuildResult, opts: BuildOptions) -> None:
    from rich.table import Table
    from rich.text import Text  # plain text: fallback reasons quote what a model wrote

    table = Table(title=f"corpus published at {result.out}", show_header=False)
    table.add_row("compiler", Text(llm_report.compiler_line(result.compiler, result.by_compiler)))
    table.add_row("runs", f"{result.runs} ({result.success} success, {result.failure} failure)")
    if result.report is not None:
        table.add_row("input", result.report.summary())
    table.add_row("insights", str(result.insights))
    s = result.stats
    table.add_row("LLM calls", f"{s.get('calls', 0)} sent, {s.get('cache_hits', 0)} from cache, "
                               f"{s.get('retries', 0)} retries, {s.get('repairs', 0)} repairs")
    table.add_row("fallbacks", Text(llm_report.fallback_line(s)))
    dropped = llm_report.dropped_line(s)
    if dropped:
        table.add_row("checks", dropped)
    table.add_row("tokens", f"{s.get('prompt_tokens', 0)} prompt, {s.get('completion_tokens', 0)} completion")
    table.add_row("skipped", str(len(result.skipped)))
    console.print(table)
    for line in result.skipped[:20]:
        console.print(f"  skipped: {line}", markup=False, highlight=False, soft_wrap=True)
    if len(result.skipped) > 20:
        console.print(f"  … and {len(result.skipped) - 20} more (all listed in corpus.json under build.skipped)")
    if result.batch is not None:
        console.print(result.batch.summary(), markup=False, soft_wrap=True)
        for item in result.batch.failed[:20]:
            console.print(f"  batch item failed: {item.run_id or item.custom_id}: {item.reason}", markup=False, soft_wrap=True)
    for line in (result.report.warnings if result.report else [])[:10]:
        console.print(f"  warning: {line}", markup=False, highlight=False, soft_wrap=True)
    if result.dropped_runs:
        console.print(f"{len(result.dropped_runs)} run(s) of the previous corpus are not in this input; "
                      f"their ids are retired: {', '.join(result.dropped_runs[:5])}{' …' if len(result.dropped_runs) > 5 else ''}")
