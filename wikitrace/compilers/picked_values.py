"""Argument values a change took among several that one earlier answer listed for the same
field, with no user message naming them: the choice the log shows the agent made unasked.
Kept apart from the rest of what insights read because it indexes whole JSON answers (by
field, depth and record) and caches that work per answer and per run.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from functools import lru_cache

from .arguments import _NOT_JSON, _as_text, _last_key, _parsed, check_arguments
from .json_fields import fields_at_depth
from .reading import Call, Reading, leaves, t_is_user
from .record_words import sentences
from .text import clip_words
from .user_picks import singled_out, singled_out_at


_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


_ISO_DATE = re.compile(r"\d{4}-(\d{2})-(\d{2})")


@lru_cache(maxsize=4096)
def _spoken_forms(text: str) -> tuple[str, ...]:
    """The value as a user may have written it, lower case: itself, and for an ISO date its
    month-name and slashed forms ("may 25", "25 may", "5/25"). Once per value: every change
    of a run asks about the names of the records it looked at."""
    forms = [text.lower()]
    m = _ISO_DATE.fullmatch(text)
    if m and 1 <= int(m.group(1)) <= 12:
        month, day = _MONTHS[int(m.group(1)) - 1], int(m.group(2))
        forms += [f"{month} {day}", f"{day} {month}", f"{int(m.group(1))}/{day}", f"{m.group(1)}/{m.group(2)}"]
    return tuple(forms)


@dataclass
class Pick:
    """An argument value a change took among several one earlier answer gave the same field."""

    path: str  # the argument's path in the call
    value: str
    source: Call  # the answer that listed it
    field: str  # the answer's field that held it
    values: list[str]  # every value the answer gave that field, this one included
    described: str | None = None  # how the user's words single out its record, when they do


def _fields_at_depth(text: str) -> list[tuple[str, int, object, str]]:
    """(field, nesting depth, scalar, the path of the record holding it) for every scalar of a
    JSON answer: values of one field at one depth are the items of one listing (a reservation's
    own origin is not one of its flights' origins)."""
    data = _parsed(text)
    if data is _NOT_JSON:
        return []
    return [(_last_key(path), path.count(".") + path.count("["), v, _LAST_STEP.sub("", path))
            for path, v in leaves(data)]


_LAST_STEP = re.compile(r"(?:\.[^.\[]*|\[\d+\])$")


class _FieldsIndex:
    """``_fields_at_depth`` of one answer, looked up by value instead of scanned per value.

    Only the places holding each value are indexed up front; a field's listing and a
    record's names are gathered when first asked for: a change asks about one or two
    values of an answer that may hold hundreds (a flight search)."""

    def __init__(self, places: list[tuple[str, int, object, str]]):
        self.places = places
        self.holding: dict[str, list[tuple[str, int, str]]] = {}  # a scalar's text -> (field, depth, record path) of each place
        self._listings: dict[tuple[str, int], list[str]] = {}
        self._names: dict[str, list[str]] = {}
        for k, d, v, home in places:
            self.holding.setdefault(v if type(v) is str else _as_text(v), []).append((k, d, home))

    def listing(self, field: str, depth: int) -> list[str]:
        """The distinct non-empty values of ``field`` at ``depth``, in order."""
        key = (field, depth)
        found = self._listings.get(key)
        if found is None:
            found = self._listings[key] = list(dict.fromkeys(
                v if type(v) is str else _as_text(v) for k, d, v, _h in self.places
                if k == field and d == depth and v not in (None, "")))
        return found

    def names(self, home: str) -> list[str]:
        """The string scalars of 3 characters or more of the record at ``home``."""
        found = self._names.get(home)
        if found is None:
            found = self._names[home] = [v for _k, _d, v, h in self.places
                                         if h == home and isinstance(v, str) and len(v) >= 3]
        return found


@lru_cache(maxsize=64)
def _fields_index(text: str) -> _FieldsIndex:
    """Built once per answer text: a run's changes ask about the same few answers."""
    data = _parsed(text)
    places = [] if data is _NOT_JSON else fields_at_depth(data)  # the same tuples, in one walk
    return _FieldsIndex(_fields_at_depth(text) if places is None else places)


def record_ids(node) -> dict[str, str]:
    """The ids an object names at its top level: its plain text fields whose key names an id
    (``id``, ``reservation_id``)."""
    if not isinstance(node, dict):
        return {}
    return {k: v for k, v in node.items() if isinstance(v, str) and (k.lower() in ("id", "_id") or k.lower().endswith("_id") or k.endswith("Id"))}


def _other_record(mine: dict[str, str], look_up) -> bool:
    """Whether a look-up was about another record than the change: it was sent, or its answer
    holds at its top level, an id the change sends under the same key with another value."""
    if not mine:
        return False
    theirs = _THEIRS.get(id(look_up))
    if theirs is None or theirs[0] is not look_up:  # asked once per argument of every change: kept per look-up
        if len(_THEIRS) >= 256:
            _THEIRS.clear()
        theirs = _THEIRS[id(look_up)] = (look_up, _look_up_ids(look_up.result or "",
                                                               tuple(sorted(record_ids(look_up.arguments).items()))))
    return any(k in theirs[1] and theirs[1][k] != v for k, v in mine.items())


_THEIRS: dict[int, tuple[object, dict[str, str]]] = {}  # id(look-up turn) -> (the turn, kept alive; its ids)


@lru_cache(maxsize=512)
def _look_up_ids(result: str, sent: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """The ids a look-up is about: those its answer holds at its top level, and those it was sent
    (once per answer: every change of a run asks about the same look-ups)."""
    answer = _parsed(result)
    return {**(record_ids(answer) if isinstance(answer, dict) else {}), **dict(sent)}


def picked(r: Reading, c: Call) -> list[Pick]:
    """The argument values of a change the agent picked among several that one earlier answer
    gave the same field, sending none of the others (a field whose other values the call sent
    too is a set it kept), when no user message before the call holds the value in any form a
    user writes it, nor another name of the record it sits in (a saved passenger the user named,
    a card by its brand). An answer that also states the value as a field's only value (a
    reservation's own origin beside its flights' origins) is no listing of it, and a value whose
    record the user's words single out among the listed ones' (``user_picks.singled_out``) is the
    user's pick. So is a value whose record the user named (a card by its last digits): where
    their words single it out among those listed, ``user_described`` gives it with their sentence.
    The listing named is the first that showed the value, where the agent could have learned it.
    The log proves only that the agent chose it among others unasked."""
    key = f"picked:{c.n}"
    if key in r.memo:
        return r.memo[key]
    out: list[Pick] = []
    described: list[Pick] = []  # the same, where the user's words single out the value's record
    pending: list[tuple[Pick, list[str]]] = []  # values in records the user named: see ``user_described``
    checks = [a for a in check_arguments(r, c.turn) if a.seen_at is not None and len(_as_text(a.value)) >= 3]
    if not checks:  # most changes send no value an earlier turn showed: nothing below is needed
        r.memo[key] = out
        r.memo[f"described:{c.n}"] = (described, pending)
        return out
    said = [r.lower(t) for t in r.facts if t.turn < c.n and t_is_user(t)]
    answers = [t for t in r.facts if t.turn < c.n and t.type == "function_call"]
    sent = {_as_text(v) for _p, v in leaves(c.turn.arguments)}
    by_turn = {x.n: x for x in r.calls}
    # a record's names are asked about once per value and per user messages before the call, not
    # once per argument: changes after the same messages share the answers
    heard: dict[str, bool] = r.memo.setdefault(f"picked.heard:{len(said)}", {})
    mine = record_ids(c.turn.arguments)

    def told(v: str) -> bool:
        hit = heard.get(v)
        if hit is None:
            hit = heard[v] = any(f in u for f in _spoken_forms(v) for u in said)
        return hit

    for a in checks:
        text = _as_text(a.value)
        if told(text):
            continue
        low = text.lower()
        key, number = _last_key(a.path), isinstance(a.value, (int, float)) or text.replace(".", "", 1).isdigit()
        places = r.facts_holding(low)  # an answer whose text lacks the value holds no listing of it
        holders = answers if places is None else [t for k in places if (t := r.facts[k]).turn < c.n
                                                  and t.type == "function_call"]
        for t in holders:
            if low not in r.lower(t):
                continue
            if _other_record(mine, t):
                continue  # another reservation's look-up: its values are not the ones this call refers to
            fields = _fields_index(t.result or "")
            holding = fields.holding.get(text)
            if holding and number:  # a number means what its field says: a price is no balance
                holding = [h for h in holding if h[0] == key]
            if not holding:
                continue
            listings = {(k, d): fields.listing(k, d) for k, d, _h in holding}
            homes = {h for _k, _d, h in holding}
            named = [v for h in homes for v in fields.names(h) if v != text and told(v)]
            if named:  # the user named the record it sits in: no pick of the agent's; whether their words
                # single it out among the others listed is asked only by a page's notes (``user_described``)
                listed = next(((k, d) for (k, d), values in sorted(listings.items()) if len(values) > 1), None)
                if listed is not None and t.turn in by_turn:
                    pending.append((Pick(a.path, text, by_turn[t.turn], listed[0], list(listings[listed])), named))
                break
            if any(len(v) < 2 for v in listings.values()):
                continue  # this answer states it as a field's only value: an earlier listing may hold the choice
            choice = next(((k, d) for (k, d), values in sorted(listings.items())
                           if not sent & (set(values) - {text})), None)
            if choice is not None and t.turn in by_turn:
                pick = Pick(a.path, text, by_turn[t.turn], choice[0], list(listings[choice]))
                pick.described = singled_out(r, c.n, text, listings[choice])
                (described if pick.described else out).append(pick)
            break
    r.memo[key] = out
    r.memo[f"described:{c.n}"] = (described, pending)
    return out


def _their_words(r: Reading, turn: int, names: list[str]) -> str:
    """': "…"', the sentence of the user message at ``turn`` that holds one of the record's
    ``names`` in a form users write it; "" when none does (the turn may be the agent's)."""
    said = next((t for t in r.facts if t.turn == turn and t_is_user(t)), None)
    if said is None:
        return ""
    forms = [f for v in names for f in _spoken_forms(v)]
    sentence = next((x for x in sentences(str(said.content or "")) if any(f in x.lower() for f in forms)), None)
    return f": \"{clip_words(sentence, 100)}\"" if sentence else ""


def user_described(r: Reading, c: Call) -> list[Pick]:
    """The values ``picked`` would name but for the user's words, which single out their records."""
    picked(r, c)
    described, pending = r.memo[f"described:{c.n}"]
    while pending:  # a record the user named: theirs when their words single it out, said with those words
        pick, named = pending.pop(0)
        found = singled_out_at(r, c.n, pick.value, pick.values)
        words = _their_words(r, found[1], named) if found is not None else ""
        if words:
            pick.described = found[0] + words
            described.append(pick)
    return described
