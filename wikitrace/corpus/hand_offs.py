"""Successful runs of a lesson that also handed the request off where their task expected no hand-off.

A success that answered from its look-ups and then called the hand-off tool (tau-bench's
``transfer_to_human_agents``) counts for the lesson it taught, yet a reader who sees it among the
sources may take the hand-off for part of the way. Its record names such a hand-off
(compilers/trial_record.py ``unasked``); the page then says how many of its successful sources made
one, so the hand-off is told apart from the lesson.
"""

from __future__ import annotations

from collections import Counter


def say_unasked(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """A line under Evidence (``set_aside``) when two or more of the page's successful sources handed
    off with a tool their task did not expect; a hand-off lesson is about that very call, and says
    nothing more."""
    if entry["key"].startswith("hand-off|"):
        return
    won = list({r["step"]: r for r, _l in members if r.get("outcome") == "success"}.values())
    tools: Counter = Counter()
    for r in won:
        tools.update(set((r.get("decisive") or {}).get("unasked") or ()))
    if not tools:
        return
    tool = min(tools, key=lambda t: (-tools[t], t))
    handed = [r["step"] for r in won if tool in ((r.get("decisive") or {}).get("unasked") or ())]
    if len(handed) < 2:
        return
    details = {s["step"]: s.get("detail") or "" for s in entry["sources"]}
    named = ("each source line names it" if all(f"handed off with {tool}" in details.get(s, "") for s in handed)
             else ", ".join(handed))
    line = (f"{len(handed)} of the {len(won)} successful runs here also handed off with {tool}, which their tasks "
            "did not expect, and succeeded all the same: they count for what they did before it, and the hand-off "
            f"is no part of this lesson ({named}).")
    entry["set_aside"] = entry.get("set_aside", []) + [line]
