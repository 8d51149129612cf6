"""An error lesson's advice backed by its own failed runs' way out: the name the error listed,
never sent, that a successful trial of the same task then searched and answered from.

A search tool's "Could not find [X]. Similar: ['A', 'B']" offers the next query; whether the
offer mattered shows only against a trial of the same task that got the answer. Each run's
record keeps the names its errors listed and it never sent (``offered``) and, for a success,
the look-up its answer came from (``answer.found``); here the failed sources of an error
insight are counted where the two meet, and the page says what to do with the count and links.
"""

from __future__ import annotations

from ..compilers.trial_record import looked_up
from . import layout

LEAST = 2  # one run's lead is on its own page; a lesson needs it in two runs at least


def _found(entry: dict) -> dict:
    return ((entry.get("decisive") or {}).get("answer") or {}).get("found") or {}


def mark(entry: dict, members: list[tuple[dict, dict]], trials) -> None:
    """Sets ``listed_lead`` and extends the guideline of an error insight of a tool when, in two
    or more of its failed sources, the run's own error of that tool had listed the name a
    successful trial of the same task answered from, and the run never sent it."""
    if not entry["key"].startswith("error|"):
        return
    tool = entry["key"].split("|")[1]
    compared, led = 0, []
    for e, _l in members:
        task = trials.group(e) if e["outcome"] == "failure" else None
        wins = trials.by_task.get(task, {}).get("success") if task is not None else None
        if not wins:
            continue
        compared += 1
        offered = {looked_up(t, n) for t, n, _turn in (e.get("decisive") or {}).get("offered") or () if t == tool}
        if any(_found(w).get("tool") == tool and _found(w).get("query")
               and looked_up(tool, _found(w)["query"]) in offered for w in wins):
            led.append(e["step"])
    if len(led) < LEAST:
        return
    entry["listed_lead"] = {"tool": tool, "steps": led, "compared": compared}
    entry["guideline"] += (f" When a {tool} error lists names, search the listed one that fits the question's next "
                           f"step before rewording the query or answering from another page: in {len(led)} of the "
                           f"{compared} failed runs here whose task a trial solved, the run's own error had listed the "
                           "very name that successful trial searched and answered from, and the run never sent it.")


def links(entry: dict, link) -> str:
    """The line naming the runs the lead's count covers, each linked to its page."""
    lead = entry.get("listed_lead")
    if not lead:
        return ""
    return (f"The {len(lead['steps'])} failed runs whose own {lead['tool']} error listed the name their task's "
            "successful trial answered from, each page's \"In short\" naming it and the turn: "
            + ", ".join(f"[{s}]({link.rel(layout.compilation_doc(s))})" for s in lead["steps"]) + ".")
