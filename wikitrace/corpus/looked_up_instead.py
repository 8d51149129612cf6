"""What the successful trials looked up that failed runs which made no call at all went without.

A run that asks the user for a reservation number, hears that they do not have it, and ends
without a call learns nothing from "check with the environment": the lesson is which look-up
gives that value. The successful trials of the same task record where each value of their
changes came from (``decisive.changes[].from``); a value taken from a look-up's answer shows the
look-up that supplies it. The commonest such (argument, look-up) pair over the failed runs'
tasks leads the lesson of runs that made no call, with the trial, its turn and the counts.
"""

from __future__ import annotations

import re
from collections import defaultdict

from . import run_counts

KEY = "idle|none"  # the lesson of failed runs that made no tool call


def lead(entry: dict, members: list[tuple[dict, dict]], trials) -> None:
    """Puts first in the guideline of the no-call lesson the look-up the successful trials of its
    failed runs' tasks took a change's value from, when one did for two tasks or more."""
    if entry["key"] != KEY:
        return
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    by_pair: dict[tuple[str, str], dict[tuple, tuple[dict, str, str]]] = defaultdict(dict)
    for e in failed:
        task = trials.group(e)
        for won in trials.by_task.get(task, {}).get("success", []) if task is not None else ():
            for key, tool, change, source in _taken(won):
                by_pair[(key, tool)].setdefault(task, (won, change, source))
    if not by_pair:
        return
    (key, tool), tasks = max(by_pair.items(), key=lambda kv: (len(kv[1]), kv[0]))
    if len(tasks) < 2:
        return  # one task's trial is that task's fact, not a lesson of the type
    runs = [e for e in failed if trials.group(e) in tasks]
    changes = sorted({change for _w, change, _s in tasks.values()})
    won, change, source = min(tasks.values(), key=lambda v: v[0]["step"])
    # the successful trial named first, the counted failed runs after their count (each one named)
    entry["guideline"] = (
        f"When the user cannot give the `{key}` a change needs, look it up with {tool}, as the successful trials of "
        f"these tasks did: a successful trial of the same task ({won['step']}'s {change}{_at(source)}) took `{key}` "
        f"of {' or '.join(changes)} from {tool}'s answer for {run_counts.part_of(runs, failed)}: "
        f"{', '.join(sorted(e['step'] for e in runs))}. {entry['guideline']}")


def _at(source: str) -> str:
    """", from its turn 4" for a record's "get_user_details's answer (turn 4)"."""
    m = re.search(r"\(turn (\d+)\)", source)
    return f", from its turn {m.group(1)}" if m else ""


def _taken(won: dict) -> list[tuple[str, str, str, str]]:
    """(argument, look-up, change tool, where) for each value of a successful run's changes that it
    took from a look-up's answer, as its record says."""
    out = []
    changed = {p.split("|", 1)[1] for p in won.get("patterns") or () if p.startswith("went-through|")}
    for change in (won.get("decisive") or {}).get("changes") or ():
        for key, source in (change.get("from") or {}).items():
            tool, sep, _rest = str(source).partition("'s answer")
            if sep and tool and tool not in changed and "[" not in key:  # a look-up's answer, not a change's echo
                out.append((key, tool, str(change.get("tool") or ""), str(source)))
    return out
