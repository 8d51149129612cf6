"""Two trials of one task set against each other by what they decided: the answer, and the sets
of state-changing acts each made. An act is a tool and the values that tell it apart: two cancels
of one reservation are the same act, a cancel of another reservation is another act, not the same
act sent otherwise. A difference that every successful trial of the task shares is the one a line
leads with (corpus/trial_contrast.py says it)."""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from ..compilers.trial_record import answer_norm, norm


@dataclass
class Diff:
    """One way two trials' decisive calls differ; ``ref`` is the successful side."""

    aspect: tuple  # ("answer",) | ("missing", tool, turn) | ("args", tool, key) | ("extra", tool)
    turn: float  # the successful side's turn it is about (its order)
    ref: dict  # what the successful side did (call, value...)
    other: dict  # what the other side did


_RANK = {"answer": 0, "missing": 1, "extra": 2, "args": 3}


def _top(path: str) -> str:
    return re.split(r"[.\[#]", path, maxsplit=1)[0]


def _by_key(values: dict) -> dict[str, dict]:
    out: dict[str, dict] = defaultdict(dict)
    for path, v in values.items():
        out[_top(path)][path] = v
    return out


def _same(a: dict, b: dict) -> bool:
    """Two value sets of one argument mean the same: every path both hold has one value (a
    path only one side sets is a difference of shape, not of choice)."""
    return all(norm(a[p]) == norm(b[p]) for p in set(a) & set(b))


def _score(a: dict, b: dict) -> int:
    return sum(1 for p in set(a["values"]) & set(b["values"]) if norm(a["values"][p]) == norm(b["values"][p]))


def _matches(a: dict, b: dict) -> bool:
    """Two calls of one tool are the same act when they share a value (the reservation both
    cancel) or one of them has no value to tell it by (a hand-off): a cancel of another
    reservation is another act, not the same act sent otherwise."""
    if a.get("file") and b.get("file"):  # edits: the same act only on the same file
        return a["file"] == b["file"]
    return not a["values"] or not b["values"] or _score(a, b) > 0


def _pairs(mine: list[dict], theirs: list[dict]) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Calls of one tool paired, each of ``mine`` with the unpaired call of ``theirs`` that is
    the same act sharing most values (the earliest on a tie); then the calls left on each side."""
    left = list(theirs)
    pairs = []
    for a in mine:
        same = [x for x in left if _matches(a, x)]
        if not same:
            continue
        b = max(same, key=lambda x: (_score(a, x), -x["turn"]))
        left.remove(b)
        pairs.append((a, b))
    paired = {id(a) for a, _ in pairs}
    return pairs, [a for a in mine if id(a) not in paired], left


def compare(ref: dict, other: dict) -> list[Diff]:
    """Where ``other``'s decisive calls differ from ``ref``'s (both run entries), in ``ref``'s order:
    the answer, each change one made and the other did not (a tool and the values that tell the
    act apart; a file edit by the file it changed), and the arguments of the same act sent otherwise."""
    a, b = ref.get("decisive") or {}, other.get("decisive") or {}
    unasked = set(a.get("unasked") or ())
    out: list[Diff] = []
    ra, oa = a.get("answer"), b.get("answer")
    if ra and (not oa or answer_norm(ra["text"]) != answer_norm(oa["text"])):
        out.append(Diff(("answer",), ra["turn"], ra, oa or {}))
    tools: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for side, rec in ((0, a), (1, b)):
        for c in rec.get("changes") or []:
            tools[c["tool"]][side].append(c)
    files = [{c["file"] for c in rec.get("changes") or [] if c.get("file")} for rec in (a, b)]
    for tool, (mine, theirs) in tools.items():
        pairs, extra_mine, extra_theirs = _pairs(mine, theirs)
        # an edit of a file the other side changed too, with another editor (SWE-agent's edit against
        # str_replace_editor, Claude Code's Edit against MultiEdit), is the same act
        extra_mine = [x for x in extra_mine if x.get("file") not in files[1]]
        extra_theirs = [y for y in extra_theirs if y.get("file") not in files[0]]
        for x in extra_mine:  # what the other made of this tool instead, when it made one
            if tool in unasked:
                continue  # a success's hand-off its task did not expect: not the change the other left unmade
            out.append(Diff(("missing", tool, x["turn"]), x["turn"], x, extra_theirs[0] if extra_theirs else {}))
        if extra_theirs and not extra_mine:
            out.append(Diff(("extra", tool), float("inf"), {}, extra_theirs[0]))
        for x, y in pairs:
            mx, my = _by_key(x["values"]), _by_key(y["values"])
            for key in mx:
                if key in my and not _same(mx[key], my[key]):
                    out.append(Diff(("args", tool, key), x["turn"], {**x, "key": key}, {**y, "key": key}))
    seen: dict[tuple, Diff] = {}
    for d in out:  # one difference per aspect: the first call it shows in
        if d.aspect not in seen or d.turn < seen[d.aspect].turn:
            seen[d.aspect] = d
    return sorted(seen.values(), key=lambda d: (d.turn, _RANK[d.aspect[0]]))  # stable: the call's own order


def _has_act(entry: dict, call: dict) -> bool:
    return any(c["tool"] == call["tool"] and _matches(c, call) for c in (entry.get("decisive") or {}).get("changes") or [])


def decides(d: Diff, won: list[dict]) -> bool:
    """Whether a difference parts every successful trial in ``won`` from the other side: a change
    every one of them made, a change none of them made, a value all of them sent. One a
    successful trial did otherwise did not decide the run, and a line does not lead with it."""
    kind = d.aspect[0]
    if kind == "missing":
        return all(_has_act(w, d.ref) for w in won)
    if kind == "extra":
        return not any(_has_act(w, d.other) for w in won)
    if kind == "args":
        key = d.aspect[2]
        mine = _by_key(d.ref["values"]).get(key, {})
        return all(any(c["tool"] == d.aspect[1] and _matches(c, d.ref) and _same(_by_key(c["values"]).get(key, {}), mine)
                       for c in (w.get("decisive") or {}).get("changes") or []) for w in won)
    return True
