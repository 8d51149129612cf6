"""Where a settle recipe says to take each argument from: only what most of its successful runs did.

A procedure lesson's text is one run's (``To settle the task: …, then call X, taking a from
get_reservation_details; b from search_onestop_flight``). Its page gathers every successful
run that settled the same way, and those runs may have taken the values from elsewhere. So
the page's "taking …" clause is rebuilt from the runs' own ``took|<tool>|<argument>|<place>``
patterns: an argument's source is named only when more than half of the page's successful runs
took it from there, with that count; an argument whose runs disagree is left unnamed.
"""

from __future__ import annotations

import re
from collections import Counter

_LOOKS = 3  # look-ups named, most often first
_PLACE = {"reply": "the user's words", "task": "the task statement"}  # else "answer:<tool>": that tool


def _place(where: str) -> str | None:
    if where in _PLACE:
        return _PLACE[where]
    kind, _, tool = where.partition(":")
    return tool if kind == "answer" and tool else None


def restate(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """Rewrites the "taking …" clause of a procedure page's guideline from its successful runs."""
    fields = entry["key"].split("|")
    if fields[0] != "procedure" or len(fields) < 2:
        return
    tool = fields[1].split(":")[0]
    won = list({e["step"]: e for e, _l in members if e["outcome"] == "success"}.values())
    found = re.search(rf"call {re.escape(tool)}, taking (.*?)\.(?= |$)", entry["guideline"])
    if len(won) < 2 or not found:  # one run's recipe is that run's own: its page says so (one_run.py)
        return
    took: Counter = Counter()
    for e in won:
        took.update({tuple(p.split("|")[2:4]) for p in e.get("patterns") or () if p.startswith(f"took|{tool}|")
                     and p.count("|") == 3})
    best: dict[str, tuple[str, int]] = {}
    for (arg, where), n in sorted(took.items()):
        place = _place(where)
        if place is not None and 2 * n > len(won) and n > best.get(arg, ("", 0))[1]:
            best[arg] = (place, n)
    ranked = sorted(best.items(), key=lambda kv: (-kv[1][1], kv[0]))
    said = [f"{arg} from {place} ({n} of the {len(won)} successful runs here)" if i == 0 else
            f"{arg} from {place} ({n} of {len(won)})" for i, (arg, (place, n)) in enumerate(ranked)]
    clause = f"call {tool}, taking " + "; ".join(said) + "." if said else f"call {tool}."
    text = entry["guideline"][:found.start()] + clause + entry["guideline"][found.end():]
    looked = Counter(p.split("|", 2)[2] for e in won for p in set(e.get("patterns") or ())
                     if p.startswith(f"before|{tool}|"))
    common = sorted((k for k, n in looked.items() if 2 * n > len(won)), key=lambda k: (-looked[k], k))
    looks = " and ".join(f"{k} ({looked[k]} of {len(won)})" for k in common[:_LOOKS])
    text = re.sub(r"look with [^.]*?, then ", f"look with {looks}, then " if looks else "", text, count=1)
    entry["guideline"] = text
