"""Render one run's documents (raw metadata, compilation, insights) and the indexes.

Frontmatter is assembled here, in a fixed key order, then handed to the
template as text: a template override can restyle a page but the fields a
reader or ``wikitrace check`` relies on stay the same.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path

from ..compilers.schema import Compilation
from ..runs.model import Run
from ..controls import visible
from ..templates import md_text, render
from . import layout, usage_pages
from ..fsio import dump_frontmatter


@dataclass
class InsightRef:
    id: str
    title: str
    path: str
    usage: tuple[int, int] = (0, 0)  # (episodes citing it, of which succeeded): corpus/ledger.py


def _kind(run: Run) -> dict:
    """AppWorld-style runs carry ``apps`` instead of ``task_type``."""
    if run.task.apps:
        return {"apps": list(run.task.apps)}
    return {"task_type": run.task.task_type or "unspecified"}


def render_raw_metadata(run: Run, step: str, insights: list[InsightRef], mount: str, templates: Path | None) -> str:
    path = layout.raw_metadata(step)
    fm = {
        "type": "raw-run",
        "step_id": step,
        "run_id": run.run_id,
        "task_id": run.task.id,
        **_kind(run),
        "outcome": run.outcome.label,
        "success": run.outcome.success,
        "score": run.outcome.score,
        "steps": run.outcome.steps,
        "ended_by": run.outcome.ended_by,
        "source_format": run.source.get("format"),
        # Obsidian and other vaults title a note by its file name: every run's page is metadata.md
        "aliases": [f"{step} metadata"],
    }
    from . import plain_pages

    if not plain_pages.overridden(templates, plain_pages.METADATA_TEMPLATE):  # the bundled page, without the engine
        return plain_pages.metadata(dump_frontmatter(fm), run, step, insights, layout.Linker(path, mount))
    numbers = [t.turn for t in run.turns] or [0]
    return render(
        plain_pages.METADATA_TEMPLATE, templates,
        frontmatter=dump_frontmatter(fm), task=run.task, outcome=run.outcome, step=step,
        link=layout.Linker(path, mount), log=layout.raw_log(step),
        compilation=layout.compilation_doc(step), insights=insights, run_id=run.run_id,
        turns_page=layout.raw_turns(step), raw=layout.raw_dir(step),
        turn_count=len(run.turns), first_turn=numbers[0], last_turn=numbers[-1],
    )


def render_raw_turns(run: Run, step: str, mount: str, templates: Path | None) -> str:
    """A readable view of the turn log (editors do not open .jsonl), one heading per turn."""
    from . import turns_page

    if not turns_page.overridden(templates):
        return turns_page.render(run, step, mount)  # the bundled template's bytes, without the engine
    path = layout.raw_turns(step)
    turns = [{"turn": t.turn, "type": t.type, "role": t.role, "name": t.name, "is_error": t.is_error,
              "fields": turns_page.turn_fields(t, step)} for t in run.turns]
    return render(
        turns_page.TEMPLATE, templates,
        frontmatter=turns_page.frontmatter(run, step), step=step, run_id=run.run_id, task=run.task, turns=turns,
        link=layout.Linker(path, mount), log=layout.raw_log(step), metadata=layout.raw_metadata(step),
    )


def render_compilation(run: Run, comp: Compilation, step: str, insights: list[InsightRef], mount: str,
                       templates: Path | None) -> str:
    path = layout.compilation_doc(step)
    fm = {
        "type": "trajectory-compilation",
        "title": comp.title,
        "description": comp.description,
        "step_id": step,
        "outcome": comp.outcome,
        **_kind(run),
        "compiler": comp.compiler,
        "model": comp.model,
        "fallback_reason": comp.fallback_reason,
        "dropped_refs": comp.dropped_refs,
        "dropped_quotes": comp.dropped_quotes,
        "dropped_items": comp.dropped_items,
        "dropped_insights": comp.dropped_insights,
        "insights": [i.id for i in insights],
        "raw": layout.raw_dir(step),
    }
    from . import plain_pages

    if not plain_pages.overridden(templates, plain_pages.COMPILATION_TEMPLATE):  # the bundled page, without the engine
        return plain_pages.compilation(dump_frontmatter(fm), comp, run.task, run.outcome, step, insights,
                                       layout.Linker(path, mount))
    return render(
        plain_pages.COMPILATION_TEMPLATE, templates,
        frontmatter=dump_frontmatter(fm), comp=comp, task=run.task, outcome=run.outcome, step=step,
        insights=insights, link=layout.Linker(path, mount), log=layout.raw_log(step), raw=layout.raw_dir(step),
        raw_page=layout.raw_metadata(step), turns_page=layout.raw_turns(step),
    )


def render_insight(entry: dict, mount: str, templates: Path | None, usage: tuple[int, int] = (0, 0),
                   titles: dict[str, str] | None = None) -> str:
    """One insight page from its corpus.json entry (corpus/insights.py): the lesson, its
    evidence across runs and every source run."""
    from .contrast_words import contrast_sentence
    from .trials import advice

    path = layout.insight_doc(entry["id"])
    kind = {"apps": list(entry["apps"])} if entry.get("apps") else {"task_type": entry.get("task_type") or "unspecified"}
    c = entry.get("counts") or {}
    fm = {
        "type": "insight",
        "id": entry["id"],
        "title": entry["title"],
        **kind,
        "key": entry["key"],
        "source_step": entry["source_step"],
        "source_outcome": entry["source_outcome"],
        "sources": [s["step"] for s in entry["sources"]],
        "runs": c.get("runs", 0),
        "success": c.get("success", 0),
        "failure": c.get("failure", 0),
        "contrast_verdict": (entry.get("contrast") or {}).get("verdict"),  # of the pattern, not the sources
        "compiler": entry.get("compiler") or "offline",
        # on the LLM path: who wrote the guideline (llm, or offline-fallback with the reason)
        **({"guideline_by": entry["guideline_by"], "fallback_reason": entry.get("fallback_reason")}
           if entry.get("guideline_by") else {}),
        **usage_pages.frontmatter_fields(*usage),
    }
    link = layout.Linker(path, mount)
    instead = lessons_instead(entry.get("contrast") or {}, titles or {})
    # the first runs of a list linked, the rest named: every count printed is of runs the page names
    failed_ended = [{**i, "page": layout.insight_doc(i["insight"]), "named": i["steps"][FAILED_LINKED:],
                     "pages": [(st, layout.compilation_doc(st)) for st in i["steps"][:FAILED_LINKED]]}
                    for i in (entry.get("contrast") or {}).get("failed_ended", [])]
    counted = []  # which runs the contrast's counts are, per outcome (run_counts.counted_runs)
    contrast = entry.get("contrast") or {}
    for outcome, word, n in (("failure", "failed", contrast.get("failed_met")),
                             ("success", "successful", contrast.get("success_met"))):
        side = (contrast.get("counted") or {}).get(outcome)
        if side:
            counted.append({"n": n, "word": word, "outcome": outcome, "sources": side["sources"], "more": side["more"],
                            "named": side["steps"][COUNTED_LINKED:],
                            "pages": [(st, layout.compilation_doc(st)) for st in side["steps"][:COUNTED_LINKED]]})
    by_hand = templates is None or not (Path(templates) / INSIGHT_TEMPLATE).is_file()
    sources = [] if by_hand else [{**s, "page": layout.compilation_doc(s["step"]), "raw": layout.raw_dir(s["step"])}
                                  for s in entry["sources"]]
    same_task = entry.get("same_task") or None
    if same_task and entry.get("one_run_apart"):  # its one run's differences are said above (checked_facts.links)
        same_task = {**same_task, "differences": []}
    if same_task:
        same_task = {**same_task, "advice": advice(entry),
                     "compared_pages": [(st, layout.compilation_doc(st))
                                        for st in (same_task.get("compared_steps") or [])[:COUNTED_LINKED]],
                     "differences": [{**d, "pages": [(st, layout.compilation_doc(st)) for st in d["steps"][:COUNTED_LINKED]]}
                                     for d in _merged(same_task["differences"])]}
    from .answer_cases import markdown as answer_markdown

    answer_cases, answer_versus = answer_markdown(entry, link, titles, md_text)
    from .checked_facts import links as checked_links
    from .listed_leads import links as lead_links

    checked_runs, one_run = checked_links(entry, link, md_text)
    text = render(
        INSIGHT_TEMPLATE, templates, usage=usage_pages.usage_line(*usage), answer_cases=answer_cases,
        checked_links="\n\n".join(x for x in (checked_runs, lead_links(entry, link)) if x), one_run=one_run,
        answer_versus=answer_versus, counted_subject=_counted_subject(contrast),
        frontmatter=dump_frontmatter(fm), insight=entry, counts=c, contrast=contrast_sentence(entry), counted=counted, layout_doc=layout.compilation_doc,
        layout_insight=layout.insight_doc,
        # the header counts Sources, the contrast every run that met the pattern: where that is more, both say so
        met_beyond=(contrast.get("failed_met") or 0) + (contrast.get("success_met") or 0) > c["runs"],
        # the header's count is of Sources; a reader comparing it with the contrast's is told why they differ
        counted_beyond=bool(counted) and all(side["sources"] for side in counted)
        and any(side["pages"] or side["named"] for side in counted),
        # said only when every source is counted there: a rule's keepers under Sources are not its breakers
        counted_are_sources=bool(counted) and not any(side["pages"] or side["more"] for side in counted)
        and {s["outcome"] for s in entry["sources"]} <= {side["outcome"] for side in counted if side["sources"]},
        instead=instead, failed_ended=failed_ended, sources=sources, link=link, same_task=same_task,
        # the first source's pages, under the names a template written for one-run insights uses
        step=entry["source_step"], outcome=entry["source_outcome"], compilation=layout.compilation_doc(entry["source_step"]),
        raw=layout.raw_dir(entry["source_step"]), raw_page=layout.raw_metadata(entry["source_step"]),
    )
    if not by_hand or not entry["sources"]:
        return text
    head, heading, tail = text.rpartition(_SOURCES_HEADING)
    return head + heading + _source_lines(entry["sources"], link) + tail


def _merged(differences: list[dict]) -> list[dict]:
    """The same-task differences, those of the very same runs said in one line: two lines listing
    the same twelve runs say one finding twice."""
    out: list[dict] = []
    for d in differences:
        twin = next((m for m in out if m["steps"] == d["steps"] and m["runs"] == d["runs"]), None)
        if twin is None:
            out.append(dict(d))
        else:
            twin["text"] = f"{twin['text']}; and {d['text']}"
    return out


def _counted_subject(contrast: dict) -> str:
    """What the runs the contrast counts have in common, as the list of them opens."""
    from .contrast_words import met_words

    return f"Runs of this task type {met_words(contrast['pattern'])}" if contrast.get("pattern") else ""


INSIGHT_TEMPLATE = "insight.md.j2"
COUNTED_LINKED = 10  # runs outside a page's Sources linked per outcome under its contrast; the rest are named
FAILED_LINKED = 5  # runs linked per lesson the failed runs that ended a procedure's way teach; the rest are named
_SOURCES_HEADING = "\n## Sources\n"


def lessons_instead(contrast: dict, titles: dict[str, str]) -> list[dict]:
    """What the successful runs that met a lesson's pattern teach, one line per lesson (most runs
    first, then by id; the runs teaching none last): its runs counted over every combination of
    lessons they teach, the first of those the contrast names linked."""
    runs: Counter = Counter()
    for combo, n in (contrast.get("instead_counts") or {}).items():
        for iid in combo.split(",") if combo else [""]:
            runs[iid] += n
    steps: dict[str, list[str]] = {}
    for item in contrast.get("instead") or []:
        for iid in item["insights"] or [""]:
            steps.setdefault(iid, []).append(item["step"])
    out = []
    for iid in sorted(runs, key=lambda i: (not i, -runs[i], layout.id_number(i) if i else 0)):
        shown = sorted(steps.get(iid, []), key=layout.id_number)[:FAILED_LINKED]
        out.append({"insight": iid, "page": layout.insight_doc(iid) if iid else "", "title": titles.get(iid, iid),
                    "runs": runs[iid], "pages": [(st, layout.compilation_doc(st)) for st in shown],
                    "more": runs[iid] - len(shown)})
    return out


def _source_lines(sources: list[dict], link: layout.Linker) -> str:
    """The bundled template's list of sources, one line a run, without the engine: a large
    group's page is mostly this list, and the engine's pass per value made re-rendering it
    the bulk of adding a run (tests/test_insight_page.py holds it to the template's bytes)."""
    base = link.abs("")  # the mount path and a slash: every path here is relative to the corpus
    to_folder: dict[str, str] = {}  # a folder -> the link to it from this page

    def rel(target: str) -> str:
        folder, _, name = target.rpartition("/")
        if folder not in to_folder:
            to_folder[folder] = link.rel(folder + "/")
        return to_folder[folder] + name

    # the mount paths once: a large group's list named each run's two paths beside its link, most of the page
    lines = [f"Each run's compilation is `<step>.md` in `{base}compilation/`, its log the folder `<step>/` in `{base}raw/`.\n"]
    for s in sources:
        detail = s.get("detail")
        lines.append(f"- [{s['step']}]({rel(layout.compilation_doc(s['step']))}) ({s['outcome']})"
                     + (f": {md_text(detail)}" if detail else "") + "\n")
    return visible("".join(lines))  # what the engine's finalize does to each printed value


def render_indexes(runs: list[dict], insights: list[dict], mount: str, templates: Path | None,
                   dialogue: bool = False, published: dict[str, str] | None = None, kept: int = 0,
                   tallies: dict | None = None) -> dict[str, str]:
    """The root page and the three layer indexes, from corpus.json's run and insight entries.
    ``published``, ``kept``: the run indexes as published, made from the first ``kept`` runs
    (run_indexes.render_run_indexes). ``tallies``: the gather's pattern counts (unpaged.py)."""
    runs = sorted(runs, key=lambda r: layout.id_number(r["step"]))
    counts = {"success": sum(r["outcome"] == "success" for r in runs),
              "failure": sum(r["outcome"] == "failure" for r in runs)}

    def group_of(i: dict) -> str:
        return ", ".join(i["apps"]) if i.get("apps") else (i.get("task_type") or "unspecified")

    from .insights import index_note, kind_of
    from .unpaged import unpaged

    ordered = sorted(insights, key=lambda i: (group_of(i), layout.id_number(i["id"])))
    by_kind = Counter((kind_of(r), r["outcome"]) for r in runs)
    groups = [(g, list(items)) for g, items in groupby(ordered, key=group_of)]
    # what changes with every run lives here, not on the insight pages: the task types' totals, the p-values
    totals = {g: {o: by_kind[(g, o)] for o in ("failure", "success")} for g, _items in groups}
    notes = {i["id"]: index_note(i) for i in insights}
    root_counts = {**counts, "runs": len(runs), "insights": len(insights)}
    from .run_indexes import render_run_indexes

    run_pages = render_run_indexes(runs, counts, mount.rstrip("/"), templates, {
        f"{layer}/_index.md": dump_frontmatter({"type": "index", "layer": layer, "count": len(runs)})
        for layer in ("raw", "compilation")}, published, kept)
    return {
        layout.ROOT_INDEX: render("root_index.md.j2", templates, mount=mount.rstrip("/"), counts=root_counts,
                                  dialogue=dialogue,
                                  frontmatter=dump_frontmatter({"type": "index", "layer": "root", "count": len(runs)})),
        **run_pages,
        "insight/_index.md": render("insight_index.md.j2", templates, mount=mount.rstrip("/"), groups=groups,
                                    totals=totals, notes=notes, unpaged=unpaged(runs, insights, tallies),
                                    frontmatter=dump_frontmatter({"type": "index", "layer": "insight", "count": len(insights)})),
    }
