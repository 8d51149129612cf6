"""The end of a build (``compile`` and ``add`` alike): once every run has its pages, the insight
pages, the lines against other trials and causes of pages written before, the indexes, the
prompt index and corpus.json, published in the order corpus/publish.py gives. What needs every
entry but no page (``lay_out_indexes``) is made while the page writer still writes."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .build_key import build_settings
from .compilers.base import Compiler
from .corpus import layout
from .corpus.manifest import IdAllocator
from .corpus.tombstones import Tombstones, forget_state
from .corpus.update import RunWriter as _Writer
from .runs.load import LoadReport

if TYPE_CHECKING:
    from .build import BuildOptions


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
            "repaired": writer.pub.repaired,
            "detected_formats": report.detected,
            "redactions": dict(sorted(report.redactions.items())),
            "identical_copies_dropped": report.deduplicated,
            "skipped": report.errors,
            "warnings": report.warnings,
            "ignored_files": report.ignored,
            "waiting_for_model": writer.waiting_for_model,
        },
    }


@dataclass
class LaidOut:
    """The parts of corpus.json and the prompt index that need every entry but no page, made
    while the page writer still writes the last pages (``lay_out_indexes``), for these entries."""

    runs: list[dict]
    insights: list[dict]
    region: tuple[bytes | list, list[int], list[int]]  # corpus_json.region_pieces (or corpus_region)
    prompt: bytes

    def fits(self, runs: list[dict], insights: list[dict]) -> bool:
        """Made for exactly these entries, in this order (entries are never changed in place)."""
        return (len(runs) == len(self.runs) and len(insights) == len(self.insights)
                and all(a is b for a, b in zip(runs, self.runs)) and all(a is b for a, b in zip(insights, self.insights)))


def _prompt_index(writer: _Writer, runs: list[dict], region, prompt_index_ok: bool) -> bytes:
    """`prompt` need not re-index per call; renders of insights carried over are reused."""
    from .agent.index import prompt_index_bytes

    carried = writer.carried_steps and prompt_index_ok
    return prompt_index_bytes(runs, writer.insights, region, previous=writer.pub.root if carried else None,
                              unchanged=writer.carried_insights, unchanged_runs=writer.carried_steps)


def lay_out_indexes(writer: _Writer, compiler: Compiler, prompt_index_ok: bool) -> LaidOut:
    """Once every run has its entry and the insights are gathered: the insight entries, the
    runs' and insights' region of corpus.json and the prompt index, with nothing written. At
    that point the page writer process still has pages to write and this one would wait for it:
    ``publish_indexes`` then only writes (the corpus.json around the region needs what the
    insight pages' checks report as repaired)."""
    from .corpus.corpus_json import region_pieces

    writer.choose_insights(compiler)
    runs = sorted(writer.runs, key=lambda r: layout.id_number(r["step"]))  # as publish_indexes sorts them
    region = region_pieces(runs, writer.insights, writer.published_lines)
    return LaidOut(runs, list(writer.insights), region, _prompt_index(writer, runs, region, prompt_index_ok))


def publish_indexes(writer: _Writer, compiler: Compiler, opts: BuildOptions, ids: IdAllocator, report: LoadReport,
                    key: str, prompt_index_ok: bool, graves: Tombstones, laid: LaidOut | None = None) -> list[str]:
    """Every page is in place; insights carried over get the ledger's counts; then the
    indexes, then corpus.json, then the removals and the manifest (``wikitrace add`` ends
    the same way). Returns the removed paths. ``laid``: what ``lay_out_indexes`` made before."""
    from .corpus import corpus_json, pending

    pub = writer.pub
    writer.publish_insights(compiler)  # gathered across every run, now that all are compiled
    _set_trial_lines(writer)
    usage = writer.refresh_usage()
    writer.runs.sort(key=lambda r: layout.id_number(r["step"]))
    writer.insights.sort(key=lambda i: layout.id_number(i["id"]))
    data = _corpus_json(writer, compiler, opts, ids, report, key)
    if laid is not None and not laid.fits(writer.runs, writer.insights):
        laid = None
    text, region = corpus_json.dump_pieces(data, writer.published_lines, region=laid.region if laid else None)
    prompt = laid.prompt if laid else _prompt_index(writer, writer.runs, region, prompt_index_ok)
    graves.settle(r["run_id"] for r in writer.runs)
    record = pending.Pending(
        command=opts.command, corpus_json=text,
        templates=str(Path(opts.templates).resolve()) if opts.templates else None, output={},
        data={"build_key": key, "records": dict(sorted(writer.record_digests.items())),
              "ids": {"runs": [{"run_id": r["run_id"], "step": r["step"], "insights": r["insights"],
                                "task_type": r.get("task_type"), "apps": r.get("apps"),
                                "keys": [lesson["key"] for lesson in r.get("lessons") or []]} for r in writer.runs],
                      "retired": ids.retired()},
              "settings": build_settings(compiler.name, compiler.model, opts),
              "usage": usage,
              **forget_state(pub, compiler, opts.templates)})
    pending.save(pub, record)  # every page is in place: from here the next command can finish this one
    removed = pending.complete(pub, record, prompt, data, kept_runs=_kept_runs(writer, ids, opts),
                               tallies=writer.tally.counted if writer.tally is not None else None)
    writer.save_tally()
    return removed


def _trial_scope(writer: _Writer) -> tuple[set[str], list[dict]]:
    """(steps this command writes, entries the corpus held before of runs it no longer holds or
    compiles again): what corpus/trial_pages.py sets the lines against other trials from."""
    steps = {r["step"] for r in writer.runs}
    touched = steps - writer.carried_steps
    return touched, [r for r in writer.ids.prev_runs.values() if r["step"] not in steps or r["step"] in touched]


def _set_trial_lines(writer: _Writer) -> None:
    """The pages of runs this command did not write whose task gained, changed or lost a trial
    get their lines against the other trials (corpus/trial_pages.py), and every failure page not
    written here its causes against the successes now (corpus/cause_contrast.py); the page
    writer wrote the others with theirs."""
    from .corpus import cause_contrast, trial_pages

    touched, dropped = _trial_scope(writer)
    trial_pages.set_on_disk(writer.pub, writer.runs, touched, dropped, writer.opts.templates)
    if dropped or len(touched) != len(writer.runs):  # not a first compile: counts of kept pages moved
        cause_contrast.set_on_disk(writer.pub, writer.runs, touched, dropped, writer.opts.templates,
                                   writer.cause_counts)


def _kept_runs(writer: _Writer, ids: IdAllocator, opts: BuildOptions) -> int:
    """How many of the first runs (in id order) are every run the corpus held, carried over
    unchanged by an add: the run indexes keep their published rows. 0 for anything else."""
    kept = len(ids.prev_runs)
    if opts.command != "add" or not kept or len(writer.carried_steps) != kept or len(writer.runs) < kept:
        return 0
    if any(r["step"] not in writer.carried_steps for r in writer.runs[:kept]):
        return 0
    return kept
