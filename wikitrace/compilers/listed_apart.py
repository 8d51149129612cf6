"""Where a change sent one item of a listing and the task expected another of the same listing:
the listed figures that tell the two apart.

A search returns flights, each with its prices and seats; the run sent HAT132 where the task
expected HAT172, and both stood in the same answer. The page then shows, for the fields the task's
words name ("economy" of ``prices.economy``), what that answer listed for each: 102 against 190.
The reader sees the choice the run made, and the figure it should have weighed, without opening
the answer. The fields shown are those most of whose name the task's words make up; nothing is
said when no differing field's name shares a word with the task.
"""

from __future__ import annotations

import re
from collections import deque

from .arguments import _parsed
from .reading import Call, Reading, leaves
from .text import folded_words

SHOWN_FIELDS = 2  # differing figures said per item
_PATH_WORDS = re.compile(r"[a-z]+")


def _items_holding(data, value: str, key: str) -> list[dict]:
    """The dicts of ``data`` (at any depth) whose field ``key`` is ``value``, in order."""
    out: list[dict] = []
    queue = deque([data])  # breadth first: the items of a listing in their order
    while queue:
        node = queue.popleft()
        if isinstance(node, dict):
            if node.get(key) == value:
                out.append(node)
            queue.extend(node.values())
        elif isinstance(node, list):
            queue.extend(node)
    return out


def _figures(item: dict) -> dict[str, float]:
    return {str(p): v for p, v in leaves(item) if isinstance(v, (int, float)) and not isinstance(v, bool)}


def listed_apart_note(r: Reading, c: Call, diffs: list[tuple[str, object, object]]) -> tuple[str, list[int]]:
    """" search_onestop_flight's answer at turn 10 listed both: "HAT172" with `prices.economy` 102 …,
    "HAT132" (sent) with 190 …." for the first differing field whose sent and expected values are
    both items of one earlier answer; ("", []) otherwise."""
    task = set(folded_words(r.run.task.instruction or ""))
    for path, want, got in diffs:
        if not (isinstance(want, str) and isinstance(got, str) and want and got and want != got):
            continue
        key = re.split(r"[.\[]", str(path))[-1].rstrip("]")
        for x in reversed([x for x in r.calls if x.n < c.n and not x.writes and not x.error and x.turn.result]):
            data = _parsed(x.turn.result)
            if not isinstance(data, (dict, list)):
                continue
            mine, theirs = _items_holding(data, got, key), _items_holding(data, want, key)
            if not (mine and theirs):
                continue
            a, b = _figures(theirs[0]), _figures(mine[0])
            # the fields most of whose name the task's words make up: "prices.economy" before
            # "available_seats.economy" for a task asking for the cheapest economy flight
            share = {p: len(task & set(w)) / len(w) for p in a if p in b and a[p] != b[p]
                     and (w := _PATH_WORDS.findall(p.lower()))}
            best = max(share.values(), default=0)
            if not best:
                return "", []
            shown = [p for p in share if share[p] == best][:SHOWN_FIELDS]
            fields = " and ".join(f"`{p}` {a[p]:g}" for p in shown)
            values = " and ".join(f"{b[p]:g}" for p in shown)
            return (f" {x.name}'s answer at turn {x.n} listed both: \"{want}\" with {fields}, \"{got}\" (sent) with "
                    f"{values}.", [x.n])
    return "", []
