"""A way to settle a task that failed runs took too: what those failed runs teach.

A success's procedure page ("Settle with T after ...") says what worked. When failed runs
of the same task type ended the same way, following that procedure does not separate the
outcomes, and the useful contrast is what went wrong in those failed runs: the lessons
they teach about the call that ended them, counted over those runs. The page then says
what to check first as well as how to make the call, with the counts in each outcome.
"""

from __future__ import annotations

from collections import Counter

# lessons a failed run teaches about the call that ended it (a change that went through, a rule
# it broke, a value it made up, a wrong final answer); errors and loops are about other calls
CHECKS = ("went-through", "rule", "unseen", "answer")
SHOWN = 5  # lessons listed on the page, and runs linked per lesson


def failed_peers(entry: dict, failed_runs: list[dict], taught: dict[str, list[tuple[str, str]]]) -> None:
    """On a procedure page whose way of settling failed runs also took: the lessons those failed
    runs teach about their last call, each with the runs that teach it (``contrast['failed_ended']``),
    and the commonest one, when at least two of them teach it, as what to check first.

    ``taught``: run step -> the (insight id, lesson key) pairs the run teaches."""
    if not entry["key"].startswith("procedure|") or not failed_runs or entry.get("contrast") is None:
        return
    runs_of: dict[str, list[str]] = {}
    for r in failed_runs:
        for iid, key in taught.get(r["step"], []):
            if iid != entry["id"] and key.split("|", 1)[0] in CHECKS:
                runs_of.setdefault(iid, []).append(r["step"])
    per = Counter({iid: len(steps) for iid, steps in runs_of.items()})
    ranked = sorted(per, key=lambda iid: (-per[iid], iid))[:SHOWN]
    entry["contrast"]["failed_ended"] = [{"insight": iid, "runs": per[iid], "steps": runs_of[iid]}
                                         for iid in ranked]


def check_first(entry: dict, titles: dict[str, str]) -> None:
    """The procedure's guideline gains what to check before following it, from the commonest
    lesson of the failed runs that ended the same way (two of them at least); each listed
    lesson keeps the title of its page. The counts stand under Evidence, as the other
    contrasts' do, so a run added elsewhere in the task type rewrites no advice's figures."""
    c = entry.get("contrast") or {}
    listed = c.get("failed_ended") or []
    for item in listed:
        item["title"] = titles.get(item["insight"], item["insight"])
    if not listed or listed[0]["runs"] < 2:
        return
    entry["guideline"] += (" Failed runs ended this way too; the lesson they teach most often is the check to make "
                           f"first: \"{listed[0]['title']}\" (counts under Evidence).")
    entry["guideline"] += _apart(entry.get("same_task") or {})


def _apart(same_task: dict) -> str:
    """What most often set this page's successful runs apart from their own task's failed trials,
    said plainly after the way of settling that failed runs took too: the difference found in two
    runs or more, or that none recurs (the page then has no separating fact to offer)."""
    compared = same_task.get("compared") or 0
    if same_task.get("side") != "success" or compared < 2:  # one pair shows no pattern
        return ""
    top = (same_task.get("differences") or [{}])[0]
    if (top.get("runs") or 0) >= 2:
        return (f" Against their own task's failed trials ({compared} of the {same_task.get('members')} runs here have one), "
                f"{top['runs']} of these {compared} runs {top['text']}.")
    return (f" Against their own task's failed trials ({compared} of the {same_task.get('members')} runs here have one), "
            "no checked difference from them recurs in two of these runs.")


# lessons that say how a successful run ended (settled with a call, answered without a change,
# asked, handed off): what the successful runs that met a trouble did instead of failing
ENDINGS = ("procedure", "answer-from", "direct", "hand-off")


def success_did(entry: dict, titles: dict[str, str], keys: dict[str, str]) -> None:
    """A trouble page of failed runs (an error, a change that went through, an answer without a
    call...) that successful runs met too: the guideline names how most of those successful runs
    ended, by the lesson they teach, when two of them at least and most of them teach it (the runs
    and counts are listed under Evidence, so the advice changes only with its lesson)."""
    c = entry.get("contrast") or {}
    met = c.get("success_met") or 0
    if not entry["counts"]["failure"]:
        return
    per: Counter = Counter()
    for group, n in (c.get("instead_counts") or {}).items():
        for iid in filter(None, group.split(",")):
            if keys.get(iid, "").split("|", 1)[0] in ENDINGS:
                per[iid] += n
    if not per:
        return
    iid = min(per, key=lambda i: (-per[i], i))
    if per[iid] < 2 or 2 * per[iid] <= met:
        return
    entry["guideline"] += f" Successful runs met it too, and most of them teach \"{titles[iid]}\" (counts under Evidence)."
