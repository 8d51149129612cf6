"""Choices that separate successful from failed runs of a task type, for the insight pages."""

from __future__ import annotations

from collections import Counter

from .applies import key_tool
from .fisher import verdict as _verdict
from .trials import EDITED, FROM_WORDS, RETRIED as _RETRIED, RETRY_ONLY, WORDS_FROM

# A run records what it chose (corpus/trials.py reads the same patterns): the look-ups it made
# before its first change with a tool (``before|<change>|<look-up>``), where the words of a
# free-text query or answer came from (``query|`` / ``said|<tool>|task|shown|own``). Each choice
# is contrasted only among the runs that could have made it (the runs whose change with that
# tool went through; the runs that sent such a query or answer), with the same one-sided
# Fisher test as the lessons, so a page says "successful runs did this first" only when the
# counts show it, and a page changes only when a run that faced the same choice is added.

_WHERE = WORDS_FROM  # the same phrases as the trial comparison


def _population(pattern: str) -> str | None:
    fields = pattern.split("|")
    if len(fields) != 3 or fields[2] == "*":
        return None
    kind, tool = fields[:2]
    if kind == "before" or kind == "from" and fields[2].rpartition(":")[2] in FROM_WORDS or kind == "edited" and fields[2] in EDITED:
        return f"went-through|{tool}"
    if (kind in ("query", "said") and fields[2] in _WHERE and fields[2] != RETRY_ONLY
            or kind == "retry" and fields[2] in _RETRIED):
        return f"{kind}|{tool}|*"  # every run that sent such a query or answer (see faced())
    return None


def faced(patterns: list[str]) -> set[str]:
    """The choices a run faced, counted once each: ``query|<tool>|*`` for a run that sent any
    free-text query with that tool (``said|`` likewise)."""
    return {p.rsplit("|", 1)[0] + "|*" for p in patterns if p.startswith(("query|", "said|", "retry|"))}


def separating(kind_met: dict[str, Counter]) -> list[dict]:
    """The choices of one task type whose contrast names a side, best p first."""
    out = []
    for pattern, seen in kind_met.items():
        base = _population(pattern)
        if base is None:
            continue
        outcome_runs = kind_met.get(base, Counter())
        failed, succeeded = outcome_runs["failure"], outcome_runs["success"]
        verdict, p = _verdict(seen["failure"], seen["success"], failed, succeeded)
        if verdict in ("failure", "success"):
            out.append({"pattern": pattern, "side": verdict, "p": p, "failed_met": seen["failure"],
                        "failed": failed, "success_met": seen["success"], "success": succeeded})
    return sorted(out, key=lambda c: (c["p"], c["pattern"]))


def relevant(key: str, splits: list[dict], members: list[dict], shown: int = 4) -> list[dict]:
    """The separating choices about the tool an insight is about: the look-ups before its change
    tool, the queries and answers sent with it; an insight about no tool (a loop, an idle run)
    gets the query choices of every tool. A choice is this lesson's only where its own runs
    (``members``, the corpus entries of its sources) of one outcome lean the way that outcome
    does: its failed runs made a choice failed runs make more often at least as often as all the
    failed runs that faced it, or a choice of the successful runs no more often (and the other way
    round for its successful runs): a type-wide count repeated on every page of the type says
    nothing of any one lesson."""
    fields = key.split("|")
    tool = key_tool(key)
    out = []
    sides = None  # the members' pattern sets by outcome, made once a choice is about this lesson's tool
    for c in splits:
        kind, about = c["pattern"].split("|")[:2]
        if (tool is not None and about == tool or tool is None and fields[0] in ("loop", "idle", "stopped") and kind == "query"
                or kind == "edited" and fields[0] in ("went-through", "procedure")):
            sides = sides or _Sides(members)
            if _concentrated(c, sides):
                out.append({**c, "text": choice_sentence(c)})
    return out[:shown]


class _Sides:
    """A lesson's source runs of each outcome as sets of their patterns, and of the choices they
    faced (made on first use): every choice of the page is tested against the same runs."""

    def __init__(self, members: list[dict]):
        self.met: dict[str, list[set[str]]] = {"failure": [], "success": []}
        for e in members:
            if e.get("outcome") in self.met:
                self.met[e["outcome"]].append(set(e.get("patterns") or ()))
        self._faced: dict[str, list[set[str]]] = {}

    def faced(self, outcome: str) -> list[set[str]]:
        if outcome not in self._faced:
            self._faced[outcome] = [faced(pats) for pats in self.met[outcome]]
        return self._faced[outcome]


def _concentrated(c: dict, sides: _Sides) -> bool:
    """Whether the lesson's failed runs, or its successful ones, that faced the choice lean the way
    their outcome does (see relevant)."""
    base, pattern = _population(c["pattern"]), c["pattern"]
    for outcome, met, total in (("failure", c["failed_met"], c["failed"]), ("success", c["success_met"], c["success"])):
        runs = sides.met[outcome]
        if base.endswith("|*"):
            facing = [pats for pats, choices in zip(runs, sides.faced(outcome)) if base in choices]
        else:
            facing = [pats for pats in runs if base in pats]
        if not facing:
            continue
        made = sum(pattern in pats for pats in facing)
        rate, usual = made * total, len(facing) * met  # against every run of that outcome that faced it
        if made and rate >= usual if c["side"] == outcome else rate <= usual:
            return True
    return False


def choice_sentence(c: dict) -> str:
    kind, tool, what = c["pattern"].split("|", 2)
    if kind == "from":
        arg, _, where = what.rpartition(":")
        among, did = f"Of the runs whose {tool} call went through", f"took `{arg}` {FROM_WORDS[where]}"
    elif kind == "edited":
        among, did = f"Of the runs whose {tool} call went through", EDITED[what]
    elif kind == "before":
        among, did = f"Of the runs whose {tool} call went through", f"had called {what} before it"
    elif kind == "retry":
        among, did = f"Of the runs that called {tool} again after it answered with an error", f"retried {_RETRIED[what]}"
    else:
        among = f"Of the runs that {'sent a ' + tool + ' query' if kind == 'query' else 'gave a ' + tool + ' answer'}"
        did = f"sent one {_WHERE[what]}" if kind == "query" else f"gave one {_WHERE[what]}"
    side = "successful" if c["side"] == "success" else "failed"
    return (f"{among}, those that {did}: {c['failed_met']} of {c['failed']} failed, {c['success_met']} of "
            f"{c['success']} successful; {side} runs did this more often.")
