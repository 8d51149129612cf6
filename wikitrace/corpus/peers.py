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

