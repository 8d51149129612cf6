"""A change's check and the way successful runs made that change are one lesson, on one page.

Failed runs whose change with a tool went through teach a check to make before it
(``went-through|<tool>``); successful runs that ended with the same tool teach how they
settled the task (``procedure|<tool>``). Apart, they were two pages about one call, the
second a list of look-ups drawn from a few runs. So both get one insight id (``shared_key``,
used where ids are handed out), each is still worked out from its own runs (``split``: the
settled way under an id no corpus hands out), and the way then joins the check's page
(``fold``): its runs under Sources and in the counts, its recipe after the check, and from
then on one group, so the cases keep a place for a successful run.
"""

from __future__ import annotations

import re

from . import layout, run_counts

_HERE = re.compile(r"(?<!failed )(?<!successful )(?<!scored )\bruns? here\b")

SETTLED = "procedure|"
CHANGE = "went-through|"
_APART = 1_000_000  # a settled way's id while it is worked out alone: above any id handed out
_RECIPE = "To settle the task: "  # compilers/procedure_lessons.py: how a settle lesson's recipe opens
_CODE_CHANGE = "file-"  # compilers/ending_words.FILE_PLACE: the source of a coding run's ending


def shared_key(key: str) -> str:
    """The key an insight id is handed out by: a settle lesson on a plain call, or on a call a code
    change came before (``procedure|submit:file-task``, compilers/procedure_lessons.py), shares the
    id of that call's change lesson; one whose source says where a free-text answer came from
    (``procedure|Finish:looked-up``) is a way of its own and keeps its own."""
    if key.startswith(SETTLED):
        rest = key[len(SETTLED):]
        call, _, source = rest.rpartition(":") if ":" in rest else (rest, "", "")
        if not source or source.startswith(_CODE_CHANGE):
            return CHANGE + call
    return key


def settles(lesson: dict) -> bool:
    return lesson["key"].startswith(SETTLED)


def own_runs(apart: dict[str, str], groups: dict[str, list[tuple[dict, dict]]], iid: str) -> set[str]:
    """The steps of the runs whose settled way joins ``iid``'s page: its sources, not runs to
    contrast it with."""
    return {e["step"] for e, _l in groups.get(apart.get(iid, ""), ())}


def split(groups: dict[str, list[tuple[dict, dict]]]) -> dict[str, str]:
    """Moves the settle lessons of a group that also holds change lessons to a group of their own.
    Returns the group's id -> the id its settle lessons are worked out under."""
    apart = {}
    for iid in sorted(groups, key=layout.id_number):
        members = groups[iid]
        ways = [m for m in members if settles(m[1])]
        if ways and len(ways) < len(members):
            sub = layout.insight_id(_APART + layout.id_number(iid))
            groups[iid] = [m for m in members if not settles(m[1])]
            groups[sub] = ways
            apart[iid] = sub
    return apart


def _recipe(guideline: str, runs: int) -> str:
    """The settle page's recipe sentence, said of the successful runs on the check's page."""
    start = guideline.find(_RECIPE)
    if start < 0:
        return ""
    body = guideline[start + len(_RECIPE):]
    end = body.find(". ")
    body = body if end < 0 else body[:end + 1]
    who = "The successful run here" if runs == 1 else f"The {runs} successful runs here"
    return f"{who} settled the task this way: {body}"


def _recount(contrast: dict, before: list[dict], sources: list[dict]) -> None:
    """The runs behind the contrast's counts, said again against the joined Sources: the successful
    runs that made the change are now partly the page's own."""
    for outcome, side in (contrast.get("counted") or {}).items():
        own = [s["step"] for s in before if s["outcome"] == outcome] if side["sources"] else []
        runs = [{"step": st} for st in sorted({*side["steps"], *own}, key=layout.id_number)]
        contrast["counted"][outcome] = run_counts.counted_runs(sources, {outcome: runs})[outcome]


def fold(out: list[dict], apart: dict[str, str], groups: dict[str, list[tuple[dict, dict]]], task_of) -> list[dict]:
    """Joins each settled way to its change lesson's entry: sources, counts and tasks of both, the
    recipe after the check's own advice, and one group (step order) for what reads it next."""
    if not apart:
        return out
    by_id = {e["id"]: e for e in out}
    gone = set()
    for iid, sub in apart.items():
        main, way = by_id[iid], by_id[sub]
        gone.add(sub)
        members = sorted(groups[iid] + groups.pop(sub), key=lambda m: layout.id_number(m[0]["step"]))
        groups[iid] = members
        before = main["sources"]
        main["sources"] = sorted(before + way["sources"], key=lambda s: layout.id_number(s["step"]))
        _recount(main.get("contrast") or {}, before, main["sources"])
        main["counts"] = {k: main["counts"][k] + way["counts"][k] for k in main["counts"]}
        main["tasks"] = len({task_of(e) for e, _l in members})
        # what the check's page said of "the runs here" so far was of its failed runs only
        main["guideline"] = _HERE.sub(r"failed \g<0>", main["guideline"])
        recipe = _recipe(way["guideline"], way["counts"]["success"]) if way["counts"]["success"] > 1 else ""
        if recipe:  # one run's recipe is that run's own: its case shows it, not the advice
            main["guideline"] = f"{main['guideline'].rstrip()} {recipe}"
            main["recipe"] = recipe  # advice_cut.cut: said right after the check
    return [e for e in out if e["id"] not in gone]
