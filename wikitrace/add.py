"""``wikitrace add``: one finished run into a published corpus, at the cost of one run.

A corpus built by ``wikitrace compile`` keeps what a further run needs: corpus.json
holds every run's and insight's entry, the manifest (``.wikitrace/runs.json``) the
build key, the options that decided the pages (``settings``), every run's ids and
the digests of the JSONL records it compiled. ``add`` reads only RUN_FILE, compiles
its new runs with the corpus's own settings (compiler, model, mount path, redaction,
templates), writes their pages through compile's RunWriter and ends as compile does
(``build_publish.publish_indexes``: indexes, prompt index, search files, corpus.json,
manifest). The runs already in the corpus are carried over from those entries:
their inputs are never read again and their pages are not checked one by one
(``wikitrace compile`` and ``wikitrace check`` do that).

Order: new runs get the next free ids in the order RUN_FILE holds them, so the
corpus is byte for byte what ``wikitrace compile`` of the corpus's inputs followed
by RUN_FILE writes into the same folder (only the ``build`` block of corpus.json
differs). A run whose id the corpus already holds is not added again: with the same
content nothing changes (and it says so); with other content (a resumed session that
ended again) the run is compiled again under its ids, as compile does with a run
whose input changed; but a trajectory named after its task from another experiment's folder
is another run, named ``<folder>/<id>`` as compile names it (``add_carry.read_run_file``).
Several runs in one file are all added, in file order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .add_carry import (OUTCOME_HELP, EveryRun, NothingReused, build_options, carry_everything, compiled_settings,
                        llm_config, published_corpus, read_run_file, same_settings_or_fail)
from .errors import Failed, InputError
from .runs._common import Carried
from .runs.model import Run
from .corpus.publish import STATE, BuildLock, PublishError, Publisher, corpus_root, read_corpus_json


@dataclass
class AddOptions:
    run_file: Path
    corpus: Path
    outcome: str | None = None  # success / failure / a score; else the format's own verdict
    fmt: str | None = None
    offline: bool = False
    model: str | None = None  # default: the model that compiled the corpus
    base_url: str | None = None
    templates: Path | None = None  # default: the folder the corpus was compiled with
    cache_dir: Path | None = None
    max_tokens: int | None = None
    timeout: float | None = None
    concurrency: int = 8
    quiet: bool = False


@dataclass
class AddResult:
    corpus: Path
    added: list[dict] = field(default_factory=list)  # run_id, step, outcome, insights, compiler, replaced
    present: list[dict] = field(default_factory=list)  # run_id, step: already in the corpus, unchanged
    skipped: list[str] = field(default_factory=list)  # records of RUN_FILE that could not be read
    forgotten: list[str] = field(default_factory=list)  # run ids `wikitrace forget` removed: not added back
    warnings: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)  # changed runs that kept their LLM pages (no answer)
    waiting_reason: str | None = None
    runs: int = 0  # in the corpus afterwards
    insights: int = 0
    stats: dict = field(default_factory=dict)
    compiler: dict = field(default_factory=dict)
    created: bool = False  # the folder held no corpus: this add compiled a new one (_create_corpus)


def add_runs(opts: AddOptions) -> AddResult:
    """Append the runs of ``opts.run_file`` to the corpus at ``opts.corpus``. Raises a
    WikitraceError (one line: where, what, what to do) when it cannot."""
    from . import capture

    root = corpus_root(opts.corpus)
    if capture.is_fresh(root) and opts.run_file.is_file():  # a hook's first session: the corpus starts here
        return _create_corpus(opts)
    if not (root / "corpus.json").is_file() or not (root / STATE / "runs.json").is_file():
        what = ("holds no corpus of agent runs (no corpus.json)" if not (root / "corpus.json").is_file() else
                "was built by an earlier wikitrace (no .wikitrace/runs.json)")
        raise InputError(f"{root}: {what}", f"build it first with `wikitrace compile INPUT --out {root}`, then add runs")
    from .runs._common import not_a_file

    why = not_a_file(opts.run_file)
    if why:
        raise InputError(why)
    if not opts.run_file.is_file():
        raise InputError("no such file" if not opts.run_file.exists() else "is a folder; add takes one run file",
                         "give the run file the agent left (a folder of runs: use wikitrace compile)",
                         where=opts.run_file)
    from .llm.config import LLMConfigError
    from .runs.model import RunError

    try:
        return _add_under_lock(opts, root)
    except PublishError as exc:  # another build holds the corpus, a file cannot be written
        raise Failed(str(exc)) from None
    except (LLMConfigError, RunError) as exc:  # a bad --outcome, an unreadable run, a bad endpoint
        raise InputError(str(exc)) from None


def _create_corpus(opts: AddOptions) -> AddResult:
    """Compile RUN_FILE into a new corpus at ``opts.corpus``: the add of a hook's first session,
    which finds no corpus there yet (``capture.is_fresh``)."""
    from .build import BuildError, BuildOptions, build
    from .llm.config import LLMConfigError
    from .runs.model import RunError
    from .runs.outcomes import parse_verdict

    try:
        verdict = parse_verdict(opts.outcome, "--outcome") if opts.outcome is not None else None
    except (LLMConfigError, RunError) as exc:
        raise InputError(str(exc)) from None
    bopts = BuildOptions(inputs=[opts.run_file], out=opts.corpus, fmt=opts.fmt, templates=opts.templates,
                         offline=opts.offline, model=opts.model, base_url=opts.base_url, cache_dir=opts.cache_dir,
                         max_tokens=opts.max_tokens, timeout=opts.timeout, quiet=True, strict=True,
                         outcomes=EveryRun(verdict) if verdict is not None else None)
    try:
        built = build(bopts)
    except BuildError as exc:
        raise Failed(str(exc)) from None
    except (LLMConfigError, RunError) as exc:
        if verdict is None and "no outcome for run" in str(exc):  # strict: the run has no verdict of its own
            raise InputError("the run carries no verdict of its own", f"pass --outcome {OUTCOME_HELP}; no corpus "
                             f"was created", where=opts.run_file) from None
        raise InputError(str(exc)) from None
    data = read_corpus_json(built.out)
    result = AddResult(corpus=built.out, skipped=list(built.skipped), runs=built.runs, insights=built.insights,
                       stats=built.stats, compiler=built.compiler, created=True)
    result.added = [{**{k: r[k] for k in ("run_id", "step", "outcome", "insights", "compiler")}, "replaced": False}
                    for r in data["runs"]]
    return result


def _add_under_lock(opts: AddOptions, root: Path) -> AddResult:
    from .corpus import kept_corpus
    from .gc_policy import paused

    with BuildLock(root), paused():
        journal = root / STATE / "runs.journal"
        pub = Publisher(root, "runs")
        try:
            from .agent.index import prompt_index_bytes
            from .corpus.pending import recover

            recover(pub, prompt_index_bytes)  # a command killed earlier is finished (or its unlisted pages removed) first
            interrupted = journal.is_file() and journal.stat().st_size > 0
            return _add_locked(opts, pub, interrupted)
        finally:
            pub.close()
            kept_corpus.let_go()
            if journal.is_file() and not journal.stat().st_size:  # nothing was claimed: no trace
                journal.unlink()


def _add_locked(opts: AddOptions, pub: Publisher, interrupted: bool) -> AddResult:
    from .build import BuildError, build_key, make_compiler, write_runs
    from .build_publish import publish_indexes
    from .corpus.manifest import IdAllocator
    from .runs.model import content_hash
    from .corpus.tombstones import Tombstones
    from .corpus.update import INDEXES, PROMPT_INDEX
    from .llm_report import describe, waiting_for_model
    from .runs.outcomes import parse_verdict

    root = pub.root
    previous, published = published_corpus(pub, interrupted)
    settings = compiled_settings(pub, previous)
    bopts = build_options(opts, settings, root)
    verdict = parse_verdict(opts.outcome, "--outcome") if opts.outcome is not None else None
    config = llm_config(opts, settings)
    bopts.offline = config is None  # the corpus decides: a key in the environment does not make it an LLM corpus
    name, model = ("llm", config.model) if config else ("offline", None)
    key = build_key(name, model, bopts)
    same_settings_or_fail(key, pub, previous, settings, name, model)

    ids = IdAllocator(previous)
    records = pub.manifest.data.get("records") or {}
    items, report = read_run_file(opts, bopts, verdict, records, ids.prev_runs)
    graves = Tombstones.load(root)  # runs `wikitrace forget` removed are not added back
    items = list(graves.skip(items))
    result = AddResult(corpus=root, skipped=list(report.errors), warnings=list(report.warnings),
                       forgotten=list(graves.skipped))
    todo: list[Run] = []  # new runs, and runs of the corpus whose content changed (a resumed session)
    replaced: set[str] = set()
    for item in items:
        prev = ids.prev_runs.get(item.run_id)
        if prev is None:
            todo.append(item)
        elif isinstance(item, Carried) or (prev.get("content_hash") == content_hash(item)
                                           and prev["compiler"] != "offline-fallback"):
            result.present.append({"run_id": item.run_id, "step": prev["step"]})
        else:  # as compile does with a run whose input changed: compiled again under its ids
            todo.append(item)
            replaced.add(item.run_id)
    result.runs, result.insights = len(previous["runs"]), len(previous["insights"])
    if not todo:
        return result
    compiler = make_compiler(bopts, config)
    # The corpus's model: the add's few requests go without the client while they are answered
    # plainly (llm/light_post.py); else it is imported while the corpus's runs are carried over
    if config is not None and not compiler.transport.go_light() and _asks_the_model(compiler, todo):
        from .llm.preload import import_client_ahead

        import_client_ahead()
    writer = carry_everything(pub, ids, bopts, previous, published, records, replaced)
    pub.verify_group(list(INDEXES))  # rewritten below; damage is reported, as compile does
    prompt_index_ok = pub.verify_group([PROMPT_INDEX])
    before = {r["run_id"] for r in writer.runs}
    try:
        write_runs(writer, todo, compiler, bopts, report.errors, NothingReused())
    except BuildError as exc:
        raise Failed(str(exc)) from None
    publish_indexes(writer, compiler, bopts, ids, report, key, prompt_index_ok, graves)
    result.skipped = list(report.errors)
    result.waiting = list(writer.waiting_for_model)
    result.waiting_reason = waiting_for_model(compiler, result.waiting)
    for entry in writer.runs:
        if entry["run_id"] not in before and entry["run_id"] not in result.waiting:
            result.added.append({**{k: entry[k] for k in ("run_id", "step", "outcome", "insights", "compiler")},
                                 "replaced": entry["run_id"] in replaced})
    result.runs, result.insights = len(writer.runs), len(writer.insights)
    result.stats, result.compiler = compiler.stats().as_dict(), describe(compiler)
    return result


def _asks_the_model(compiler, runs: list[Run]) -> bool:
    """Whether compiling ``runs`` sends a request: a run whose answer the response cache does
    not hold in the compiler's mode. Only then is the client (half a CPU-second of imports)
    loaded ahead; an add answered from the cache loads it only if a merge asks after all."""
    from .compilers.llm_request import LazyMessages

    if compiler.cache is None or not compiler.read_cache:
        return True
    mode = compiler.response_mode
    return any(compiler.cache.get(LazyMessages(compiler, compiler.prompt(run)).key(mode)) is None for run in runs)


def add_run(path, corpus, outcome=None, **options) -> AddResult:
    """``wikitrace add`` for a harness: ``add_run("run.jsonl", corpus="memory", outcome="success")``.
    ``options``: the other AddOptions fields (``offline``, ``model``, ``fmt``, ...)."""
    options.setdefault("quiet", True)
    return add_runs(AddOptions(run_file=Path(path), corpus=Path(corpus),
                               outcome=None if outcome is None else str(outcome), **options))


def result_dict(result: AddResult) -> dict:
    """The summary as data (``add --json``)."""
    return {"corpus": str(result.corpus), "added": result.added, "already_present": result.present,
            "forgotten": result.forgotten, "skipped": result.skipped, "warnings": result.warnings,
            "waiting_for_model": result.waiting,
            "runs": result.runs, "insights": result.insights, "stats": result.stats, "compiler": result.compiler}


def run_add(opts: AddOptions, as_json: bool = False) -> int:
    """CLI wrapper: a line per run on stderr (and ``--json`` on stdout)."""
    import sys

    from .errors import WikitraceError
    from .capture import log_failure

    try:
        result = add_runs(opts)
    except WikitraceError as exc:  # unattended in a hook: the failure stays on record in the corpus folder
        log_failure(opts.corpus, opts.run_file, exc.message())
        raise
    lines = [f"{'replaced' if a['replaced'] else 'added'} {a['run_id']} as {a['step']} ({a['outcome']}, "
             f"{len(a['insights'])} insight(s), compiler {a['compiler']})" for a in result.added]
    lines += [f"already in the corpus: {p['run_id']} is {p['step']}; nothing to add" for p in result.present]
    lines += [f"not added: {run_id} was removed with `wikitrace forget` (`wikitrace compile --restore` brings "
              f"it back)" for run_id in result.forgotten]
    lines += [f"skipped: {line}" for line in result.skipped]
    lines += [f"warning: {line}" for line in result.warnings]
    if result.created:
        lines.append(f"{result.corpus}: a new corpus, {result.runs} runs, {result.insights} insights")
    elif result.added:
        lines.append(f"{result.corpus}: {result.runs} runs, {result.insights} insights")
    else:
        lines.append(f"{result.corpus}: unchanged")
    if not opts.quiet:
        from .controls import visible

        print("\n".join(map(visible, lines)), file=sys.stderr)  # ids and problem lines quote the input
    if as_json:
        print(json.dumps(result_dict(result), indent=2, ensure_ascii=False))
    if result.waiting_reason:
        from .llm_report import WAITING_FIX

        raise Failed(result.waiting_reason, WAITING_FIX, where=result.corpus)
    return 0
