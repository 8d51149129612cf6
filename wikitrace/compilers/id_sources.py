"""Which of several earlier turns that held an id a change sent (a card, a record's key) it was
read from. The latest turn to hold it is often not the one: a look-up of another record may list
the same card in its payment history after the user's profile listed it among their cards. So an
answer is preferred only for what it is about, as the log shows it: the record the user's own
words picked (a card by its brand or last digits, which the other answers' records of it lack),
else the record the change acts on (a look-up sent the id the change sends under the same key).
An answer about another record (a look-up sent another value under a key the change sends, or
whose record of the id gives a field sent beside it another value: the same flight number on
another date) is passed over while any other turn held the value.
When no such evidence singles out one look-up, every answer that held it is returned: a page
names them all, never one at random.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..runs.model import Turn
from .arguments import _as_text, _last_key, _parsed
from .picked_values import _fields_index, _other_record, record_ids
from .reading import Call, Reading, _occurs, is_read_only, leaves, t_is_user


def read_from(r: Reading, c: Call, a, places: list[Turn]) -> list[Turn]:
    """Of ``places`` (the turns before the call that held the id whole, in order, echoes of the
    agent's own calls left out), the one it was read from, or every answer that may have been.
    A user message that wrote it after every answer that held it is where it came from, and so is
    one that wrote it before answers none of which the log prefers."""
    key, text = _last_key(a.path), _as_text(a.value)
    mine = {k: v for k, v in record_ids(c.turn.arguments).items() if k != key}
    beside = _beside(c, a.path)
    near = [t for t in places if t_is_user(t) or not (_other_record(mine, t) or _contradicts(t, text, beside))] or places
    said = [t for t in near if t_is_user(t)]
    answers = [t for t in near if not t_is_user(t) and (not said or t.turn > said[-1].turn)]
    # a change's answer that repeats the record it changed is not where the id was read when a look-up showed it
    answers = [t for t in answers if is_read_only(t)] or answers
    if len(answers) <= 1:
        return answers or said[-1:]
    mates = {t.turn: _mates(t, text) for t in answers}
    chosen = [t for t in answers if any(_written(m, _user_words(r, t, c)) for m in mates[t.turn] - set().union(
        *(mates[u.turn] for u in answers if u.turn != t.turn)))]
    if chosen:
        return chosen[-1:]
    held = {t.turn: _items_held(t, c, a) for t in answers}
    if len(set(held.values())) > 1:  # the answer holding more of the argument's other items (the flights sent with it)
        answers = [t for t in answers if held[t.turn] == max(held.values())]
        if len(answers) == 1:
            return answers
    same = [t for t in answers if _same_record(mine, t)]
    if same:
        return same[-1:]
    asked = {(t.name, repr(t.arguments)) for t in answers}
    if len(asked) == 1:  # one look-up, asked once or again: its latest answer
        return answers[-1:]
    return said[-1:] or answers  # the user who wrote it before answers that only repeat it, else all of them


def _items_held(t: Turn, c: Call, a) -> int:
    """How many other ids the call sends under the same top-level argument (the other flights of
    a trip) ``t``'s answer holds as the same items: where the agent read one, it likely read the
    list it sent."""
    top = _STEP.split(a.path, maxsplit=1)[0]
    index = _fields_index(t.result or "")
    return sum(1 for p, v in leaves(c.turn.arguments) if p != a.path and _STEP.split(p, maxsplit=1)[0] == top
               and isinstance(v, str) and _distinctive_id(v) and v in index.holding
               and not _contradicts(t, v, _beside(c, p)))


_STEP = re.compile(r"[.\[]")  # where an argument path's top-level key ends


def _distinctive_id(text: str) -> bool:
    """Text mixing letters and digits, 5 characters or more: an id, a flight number."""
    return len(text) >= 5 and any(ch.isdigit() for ch in text) and any(ch.isalpha() for ch in text)


def _beside(c: Call, path: str) -> dict[str, str]:
    """The text fields the call sends in the same nested object as the id (a flight's date
    beside its number), lower case: what names that one item. Top-level fields are left out:
    a change sets them to new values, so a record that gives them others may still be its own."""
    parent = path[:len(path) - len(_last_key(path))].rstrip(".")
    if not parent:
        return {}
    return {_last_key(p): v.lower() for p, v in leaves(c.turn.arguments) if p != path and isinstance(v, str)
            and len(v) >= 3 and p[:len(p) - len(_last_key(p))].rstrip(".") == parent}


def _homes(t: Turn, text: str) -> list[dict[str, str]]:
    """Each record of ``t``'s answer that holds the id as a field's value: its other text fields
    of 3 characters or more, by field, lower case, with the look-up's own text arguments for the
    fields it lacks (a flight search's answer is about the date it was sent)."""
    records = _records_holding(t.result or "", text)
    if not records or not isinstance(t.arguments, dict):
        return [dict(fields) for fields in records]
    asked = {k: v.lower() for k, v in t.arguments.items() if isinstance(v, str) and len(v) >= 3}
    return [{**asked, **dict(fields)} for fields in records]


@lru_cache(maxsize=1024)
def _records_holding(result: str, text: str) -> tuple[tuple[tuple[str, str], ...], ...]:
    """``_homes`` of one answer text, without the look-up's arguments: once per answer and id,
    though every place weighed for every value of an argument asks again."""
    index = _fields_index(result)
    homes = {h for _k, _d, h in index.holding.get(text, ())}
    out: dict[str, dict[str, str]] = {h: {} for h in homes}
    if homes:
        for k, _d, v, h in index.places:
            if h in out and isinstance(v, str) and len(v) >= 3 and v != text:
                out[h][k] = v.lower()
    return tuple(tuple(fields.items()) for fields in out.values())


def other_item(t: Turn, c: Call, a) -> bool:
    """Whether ``t``'s answer holds the id only as another item than the one the call sends it
    for (the same flight number on another date than the call sends beside it)."""
    return _contradicts(t, _as_text(a.value), _beside(c, a.path))


def _contradicts(t: Turn, text: str, beside: dict[str, str]) -> bool:
    """Whether every record of ``t``'s answer holding the id gives a field the call sends beside
    it another value (the same flight number on another date): another item than the call's."""
    if not beside:
        return False
    homes = _homes(t, text)
    return bool(homes) and all(any(k in fields and fields[k] != v for k, v in beside.items())
                               for fields in homes)


def _mates(t: Turn, text: str) -> set[str]:
    """The other text values of the records of ``t``'s answer that hold the id (a card's brand
    and last digits beside its id), but for those the id's own text holds (a gift card's kind,
    "gift_card", beside "gift_card_7730215"): every answer that shows the id shows those too."""
    low = text.lower()
    return {v for fields in _homes(t, text) for v in fields.values() if v not in low}


def _user_words(r: Reading, t: Turn, c: Call) -> list[str]:
    """The user's messages after the answer ``t`` and before the call, lower case: a choice among
    what the answer showed (words written before it may name anything)."""
    return [r.lower(u) for u in r.facts if t.turn < u.turn < c.n and t_is_user(u)]


def _written(value: str, said: list[str]) -> bool:
    """A record's value as a whole word of a user message, "_" also written as a space or "-"."""
    forms = [value] + ([value.replace("_", sep) for sep in " -"] if "_" in value else [])
    return any(_occurs(f, low) for f in forms for low in said)


def _same_record(mine: dict[str, str], t: Turn) -> bool:
    """Whether a look-up was about the record the change acts on: it was sent the id the change
    sends under the same key (the key it looked the record up by; an id its answer merely holds,
    such as the owner's on each of their reservations, makes no record the change's)."""
    theirs = record_ids(t.arguments)
    return any(theirs.get(k) == v for k, v in mine.items())


def several(turns: list[Turn]) -> str:
    """The words for a value several answers held, none of them singled out by the log."""
    shown = [f"{t.name}'s answer (turn {t.turn})" for t in turns]
    listed = ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) <= 3 else (
        ", ".join(shown[:2]) + f" or {len(shown) - 2} more")
    return f"{listed}, {'both' if len(shown) == 2 else 'all'} of which held it"


_IN_ITEM = re.compile(r"(.*\[\d+\]\.)[^.\[\]]+$")


def item_values(c: Call, a) -> frozenset[str]:
    """The scalar values (lower case) of the list item an argument sits in (one passenger of
    several), or none: an answer shows such a value only where one of its records holds the
    whole item, as a passenger renamed by the user is not the record a look-up returned."""
    m = _IN_ITEM.match(a.path)
    if m is None:
        return frozenset()
    return frozenset(_as_text(v).lower() for p, v in leaves(c.turn.arguments)
                     if p.startswith(m.group(1)) and "." not in p[len(m.group(1)):])


@lru_cache(maxsize=512)
def records(result: str) -> tuple[frozenset[str], ...]:
    """The scalar values (lower case) each object of a JSON answer holds itself."""
    out: list[frozenset[str]] = []
    todo = [_parsed(result)]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            out.append(frozenset(_as_text(v).lower() for v in x.values() if not isinstance(v, (dict, list))))
            todo.extend(v for v in x.values() if isinstance(v, (dict, list)))
        elif isinstance(x, list):
            todo.extend(x)
    return tuple(out)
