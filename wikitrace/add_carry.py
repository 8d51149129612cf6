"""What an add starts from: the published corpus (corpus.json, the manifest, the
options it was compiled with) and a RunWriter already holding its runs.

``wikitrace add`` carries every run of the corpus over from corpus.json's entries
and the manifest alone: no input is read again and no page is checked one by one.
So whatever an add reads grows with the corpus only through those two files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator, Mapping

from . import __version__
from .errors import Failed, InputError
from .runs._common import Carried
from .corpus import layout
from .corpus.corpus_folder import parse_corpus_json
from .corpus.publish import PublishError, Publisher

OUTCOME_HELP = "success|failure|SCORE"

class EveryRun(Mapping):
    """An outcomes table giving one verdict to every run of the file (``--outcome``)."""

    def __init__(self, verdict):
        self.verdict = verdict

    def __getitem__(self, key):
        return self.verdict

    def __iter__(self) -> Iterator[str]:
        return iter(())  # names no run, so none is reported as unmatched

    def __len__(self) -> int:
        return 1


class NothingReused:
    """The Reuse of an add: every run handed to the compile loop is new, or replaces a
    run of the corpus; the pages of those the model wrote (``runs``, ``files``,
    ``insights``, ``digests``, as Reuse holds them) stay when the model does not answer."""

    prompt_index_ok = False

    def __init__(self, pub: Publisher | None = None, previous: dict | None = None, records: dict | None = None,
                 replaced: set[str] = frozenset()):
        self.runs, self.files, self.insights, self.digests = {}, {}, {}, {}
        for r in (previous or {}).get("runs", []):
            if r["run_id"] not in replaced or r.get("compiler") != "llm":
                continue
            files = pub.owned_under(f"raw/{r['step']}/") + [layout.compilation_doc(r["step"])] + \
                [layout.insight_doc(i) for i in r.get("insights", [])]
            if pub.verify_group(files):
                self.runs[r["run_id"]], self.files[r["step"]] = r, files
                self.insights.update((i["id"], i) for i in previous["insights"] if i["id"] in r.get("insights", []))
                if (records or {}).get(r["run_id"]):
                    self.digests[r["run_id"]] = records[r["run_id"]]

    def entry(self, run, digest):
        return None


def published_corpus(pub: Publisher, interrupted: bool) -> tuple[dict, bytes]:
    """corpus.json as the last build wrote it, parsed and as bytes (mapped once: the runs'
    lines are written back unchanged), or an error saying how to repair it."""
    root = pub.root
    fix = f"rebuild it with `wikitrace compile INPUT... --out {root}` (the corpus's inputs), then add"
    if interrupted:  # a build was killed: what it left must be only files no index names yet
        known = [rel for rel, entry in pub.manifest.files.items() if entry is not None]
        if not pub.verify_group(known):
            raise Failed(f"{root}: its last build was interrupted and changed published files "
                         f"({', '.join(pub.repaired[:3])})", fix)
        pub.repaired.clear()
    if pub.verify("corpus.json") != "ok":
        raise Failed(f"{root / 'corpus.json'}: differs from what the last build wrote", fix)
    from .corpus import kept_corpus

    try:
        text = _mapped(root / "corpus.json")
        published = pub.manifest.files.get("corpus.json")  # verified above: the file on disk
        previous = kept_corpus.load(root, published[0] if published else None) \
            or parse_corpus_json(root / "corpus.json", text[:])
    except OSError as exc:
        raise Failed(f"{root / 'corpus.json'}: cannot be read ({exc.strerror or exc})", fix) from None
    except PublishError as exc:
        raise Failed(str(exc)) from None
    from .build import _usable_manifest

    try:
        previous = _usable_manifest(previous, root)
    except PublishError as exc:
        raise Failed(str(exc)) from None
    if previous.get("build_key") != pub.manifest.data.get("build_key"):
        raise Failed(f"{root / 'corpus.json'}: its build key is not the manifest's", fix)
    return previous, text


def _mapped(path: Path):
    """corpus.json's bytes as a read-only map of the file: the runs' lines written back from it
    are never copied into this process (tens of megabytes at 10,000 runs). The add holds the
    corpus's lock, and every file of the corpus is replaced by a rename, never rewritten in place,
    so the mapped file stays as read while the add uses it. A file system that cannot map files
    (some network and FUSE mounts) gets the bytes read instead: the same bytes, more memory."""
    import mmap

    with open(path, "rb") as fh:
        if not os.fstat(fh.fileno()).st_size:
            return b""
        try:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return fh.read()


def compiled_settings(pub: Publisher, previous: dict) -> dict:
    """The options the corpus was compiled with. A corpus from before they were kept: the
    defaults, which the build key then proves or disproves."""
    kept = pub.manifest.data.get("settings")
    if isinstance(kept, dict):
        return kept
    compiler = previous.get("compiler") or {}
    return {"compiler": compiler.get("name"), "model": compiler.get("model"), "mount_path": previous.get("mount_path"),
            "redact": True, "redact_patterns": [], "task_type": None, "outcomes": None, "templates": None}


def build_options(opts, settings: dict, root: Path):
    from .build import BuildOptions

    templates = opts.templates or (Path(settings["templates"]) if settings.get("templates") else None)
    if templates is not None and not templates.is_dir():
        raise InputError(f"the corpus was compiled with --templates {templates}, which is gone",
                         "pass --templates DIR with the same templates", where="--templates")
    return BuildOptions(
        inputs=[opts.run_file], out=root, fmt=opts.fmt, mount_path=settings.get("mount_path") or "/work/corpus",
        templates=templates, task_type=settings.get("task_type"), offline=opts.offline, model=opts.model,
        base_url=opts.base_url, concurrency=opts.concurrency, cache_dir=opts.cache_dir, max_tokens=opts.max_tokens,
        timeout=opts.timeout, quiet=opts.quiet, redact=settings.get("redact", True) is not False,
        redact_patterns=tuple(settings.get("redact_patterns") or ()), command="add",
    )


def llm_config(opts, settings: dict):
    """The corpus's compiler by default: offline for an offline corpus (an API key in the
    environment does not change that), its model for an LLM corpus."""
    from .llm.config import resolve

    if opts.offline or (settings.get("compiler") != "llm" and not (opts.model or opts.base_url)):
        return None
    endpoint = resolve(None, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)
    if endpoint is None:
        raise InputError(f"the corpus was compiled by the LLM {settings.get('model')!r} and no endpoint is configured",
                         "set OPENAI_BASE_URL (or pass --base-url) and OPENAI_API_KEY as for that build",
                         where="--base-url")
    model = opts.model or (settings.get("model") if settings.get("compiler") == "llm" else None)
    return resolve(model, opts.base_url, max_tokens=opts.max_tokens, timeout=opts.timeout)


def same_settings_or_fail(key: str, pub: Publisher, previous: dict, settings: dict, compiler_name: str,
                           model: str | None) -> None:
    if key == pub.manifest.data.get("build_key"):
        return
    root = pub.root
    fix = (f"add with the corpus's own settings, or rebuild everything with `wikitrace compile INPUT... --out "
           f"{root}` under the new ones")

    def who(name, mdl):
        return f"the LLM {mdl!r}" if name == "llm" else "the offline compiler"

    if (settings.get("compiler"), settings.get("model")) != (compiler_name, model):
        raise Failed(f"{root}: was compiled by {who(settings.get('compiler'), settings.get('model'))}; this add would "
                     f"use {who(compiler_name, model)}", "pass --model/--base-url (or --offline) to match, or " + fix)
    if previous.get("wikitrace_version") != __version__:
        raise Failed(f"{root}: was compiled by wikitrace {previous.get('wikitrace_version')}, this is {__version__}",
                     f"rebuild it once with `wikitrace compile INPUT... --out {root}`, then add")
    from .code_digest import code_digest

    if settings.get("code") != code_digest():
        raise Failed(f"{root}: was compiled by wikitrace {__version__} from other source code (a development "
                     f"checkout changed since)", f"rebuild it once with `wikitrace compile INPUT... --out {root}`, then add")
    raise Failed(f"{root}: was compiled with other options than this add would use (templates, --task-type, "
                 f"--redact-pattern or --no-redact)", fix)


def read_run_file(opts, bopts, verdict, records: dict, prev_runs: dict):
    """The runs of RUN_FILE (records the corpus compiled from the same bytes come back as
    ``Carried``, unparsed) and the loader's report."""
    from .build_input import apply_defaults
    from .runs.load import LoadReport, iter_runs

    report = LoadReport()
    known = {d: Carried(d, run_id, prev_runs[run_id]["outcome"]) for run_id, d in records.items()
             if run_id in prev_runs and prev_runs[run_id]["compiler"] != "offline-fallback"}  # fallbacks: asked again
    items = list(apply_defaults(iter_runs(
        [opts.run_file], bopts.fmt, report, outcomes=EveryRun(verdict) if verdict else None, redact=bopts.redact,
        redact_patterns=bopts.redact_patterns, known=known), bopts))
    if report.missing_outcome:
        fmt = next(iter(report.detected.values()), "this format")
        raise InputError(f"{report.missing_outcome} run(s) carry no verdict of their own ({fmt})",
                         f"pass --outcome {OUTCOME_HELP}; nothing was added", where=opts.run_file)
    if verdict is not None:
        for item in items:
            label = item.outcome if isinstance(item, Carried) else item.outcome.label
            if (label == "success") != verdict.success:
                raise InputError(f"run {item.run_id!r} says {label} itself, --outcome says "
                                 f"{'success' if verdict.success else 'failure'}",
                                 "drop --outcome to keep the run's own verdict; nothing was added",
                                 where=opts.run_file)
    if not items:
        first = report.errors[0] if report.errors else "no run found"
        raise InputError(f"no run could be read ({first})", "fix the file or force its format with --from",
                         where=opts.run_file)
    _name_other_runs_of_a_task(items, prev_runs, opts.run_file, report)
    return items, report


def _name_other_runs_of_a_task(items: list, prev_runs: dict, run_file: Path, report) -> None:
    """Name a run as compile would after reading the corpus's inputs: a trajectory its harness
    named after its task (``load.NAMED_AFTER_TASK``) whose id the corpus holds with other content
    is another run of that task, from another experiment's folder, so it becomes
    ``<folder>/<id>`` (``load.qualified_id``) beside the first. A run with an id of its own (a
    session id) and other content is that run continued; it keeps its id and is compiled again."""
    from .runs.load import NAMED_AFTER_TASK, qualified_id
    from .runs.model import content_hash

    for item in items:
        if (isinstance(item, Carried) or item.source.get("format") not in NAMED_AFTER_TASK
                or item.run_id != item.task.id):
            continue
        prev = prev_runs.get(item.run_id)
        if prev is None or prev.get("content_hash") == content_hash(item):
            continue
        other = qualified_id(run_file, item.run_id)
        if other != item.run_id:
            report.warnings.append(f"{run_file}: run_id {item.run_id!r} appears again (a different run); "
                                   f"kept as {other!r}")
            item.run_id = other


def carry_everything(pub: Publisher, ids, bopts, previous: dict, published: bytes, records: dict,
                     replaced: set[str]):
    """A RunWriter already holding every run of the corpus but the ``replaced`` ones, as
    compile's carry-over leaves it, from corpus.json's entries (``previous``, parsed from
    the ``published`` bytes) and the manifest alone (no page is read or checked)."""
    from .build import _Writer
    from .corpus.corpus_json import published_lines

    writer = _Writer(pub, ids, bopts, NothingReused(pub, previous, records, replaced))
    ids.used_run_ids.update(ids.prev_runs)  # none of them leaves the corpus
    runs = [r for r in previous["runs"] if r["run_id"] not in replaced]
    gone = {r["step"] for r in previous["runs"] if r["run_id"] in replaced}
    writer.runs.extend(runs)
    # corpus.json (verified above) is rewritten with these entries unchanged: their lines are reused
    writer.published_lines = published_lines(published, previous["runs"])
    for r in runs:
        ids.keep_insights(r.get("insights") or [])
    writer.prev_insights = {i["id"]: i for i in previous["insights"]}  # the insight pages are gathered again
    writer.carried_steps.update(r["step"] for r in runs)
    writer.compilers.update(r["compiler"] for r in runs)
    writer.record_digests.update((k, v) for k, v in records.items() if k in ids.prev_runs and k not in replaced)
    # The pages of replaced runs are written again (or removed by finish when no longer
    # produced); files another build left half-claimed (entry None) are removed too.
    dropped = {layout.compilation_doc(s) for s in gone}
    gone_raw = {f"raw/{s}" for s in gone}  # the replaced runs' raw folders (none when only new runs come)
    pub.keep([rel for rel, entry in pub.manifest.files.items() if entry is not None and rel not in dropped
              and not rel.startswith("insight/") and not (gone_raw and "/".join(rel.split("/", 2)[:2]) in gone_raw)])
    return writer
