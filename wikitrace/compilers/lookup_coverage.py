"""Why expected changes were never made: the records they act on were never looked up.

A user's record often lists every item of the kind a task acts on (a profile's reservation ids,
an order list, a set of tickets). A run that opens only some of them and then decides which to
change cannot change the ones it never opened. This is read off the log alone: a look-up answer
(JSON) holds a list of plain values, an expected change the run never made sends one of them,
and no call of the run ever sent that value. The page then names the items never looked up and
says to look up every listed item before deciding which to change. Nothing here knows a
benchmark: a list of strings in an answer and the values calls send are the only vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .arguments import _parsed as parsed_answer  # one cached parse per answer text, shared
from .reading import Reading, leaves


@dataclass
class Coverage:
    """A list a look-up returned, which of its items the run sent in any call, and the expected
    changes that act on items it never sent."""

    key: str  # the field holding the list (``reservations``)
    tool: str  # the look-up that returned it
    turn: int
    items: list[str]
    looked: list[str]  # items a look-up of the run sent
    missed_on: list[str]  # items never sent that an expected change never made acts on
    explains: list[dict]  # the expected changes never made that send one of those items

    def text(self, changes: str, last: int | None) -> str:
        """The fact, the changes never made named by ``changes`` ("update_reservation_flights on ...")."""
        never = [x for x in self.items if x not in self.looked]
        looked = f" ({_listing(self.looked)})" if self.looked else ""
        return (f"The run looked up {len(self.looked)} of the {len(self.items)} `{self.key}` the record {self.tool} "
                f"returned at turn {self.turn} lists{looked}, never {_listing(never)}; the task expected {changes}, "
                "and the run never made " + ("that change" if len(self.explains) == 1 else "those changes")
                + (f" (the agent's last turn was {last})" if last is not None else "")
                + f". Look up every one of the `{self.key}` a record lists before deciding which of them to change.")


def _listing(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]


@lru_cache(maxsize=512)
def _lists(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(field, its strings) for each top-level field of a JSON object answer that is a list of two
    or more distinct strings (parsed once per distinct answer: trials look up the same records)."""
    answer = parsed_answer(text)
    if not isinstance(answer, dict):
        return ()
    out = []
    for key, value in answer.items():
        if isinstance(value, list) and len(value) >= 2 and all(isinstance(v, str) and v.strip() for v in value) \
                and len(set(value)) == len(value):
            out.append((str(key), tuple(value)))
    return tuple(out)


def unlooked(r: Reading, missed: list[dict]) -> Coverage | None:
    """The list that explains expected changes never made, when one does: a look-up's list holding
    a value those changes send, a value no call of the run sent; None otherwise."""
    if not missed:
        return None
    sent: set[str] = set()  # every string any call sent
    looked: set[str] = set()  # those a look-up sent
    for c in r.calls:
        for _path, v in leaves(c.turn.arguments):
            if isinstance(v, str):
                sent.add(v)
                if not c.writes:
                    looked.add(v)
    wanted = {v for e in missed for _p, v in leaves(e.get("arguments")) if isinstance(v, str) and v not in sent}
    if not wanted:
        return None
    for c in r.calls:
        if c.writes or c.error or not c.turn.result or not c.turn.result.lstrip().startswith("{"):
            continue
        for key, items in _lists(c.turn.result):
            hit = [x for x in items if x in wanted]
            if hit:
                explains = [e for e in missed if any(v in hit for _p, v in leaves(e.get("arguments")))]
                return Coverage(key, c.name, c.n, list(items), [x for x in items if x in looked], hit, explains)
    return None
