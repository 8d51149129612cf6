"""A user's word about a record that the record itself contradicts, and dates already past.

Users describe their own records ("I'm a Gold member", "my business cabin"), and an agent that
takes the word for the record acts on a fact the log denies. Read off the log alone: the user
writes a word before a noun that names a field of a record a look-up returned (``member`` of
``membership``), the record holds another value there, and the run's own system prompt uses both
words as values of that noun ("silver/gold member", "regular member") -- so the word is a value
of the same field, not praise or chatter. Nothing here knows a benchmark.

A change that fails on a date before the current time the system prompt states is said with
that date: the item it names was already past when the run began.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache

from .arguments import _parsed as parsed_answer  # one cached parse per answer text, shared
from .expected_calls import expected_lookups
from .reading import Reading, t_is_user
from .stems import stem as _stem
from .schema import KeyFact
from .text import clip_words

_WORD = re.compile(r"[A-Za-z]+")
_ISO_DAY = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?![\d-])")


@dataclass
class Contradicted:
    key: str  # the record's field
    value: str  # what the record holds there
    said: str  # the user's words ("Gold member")
    said_at: int
    tool: str
    record_at: int
    echoed_at: int | None  # an agent message after the look-up that repeated the user's words
    named: bool = True  # whether an agent message after the look-up wrote the user's value word at all

    def fact(self, succeeded: bool = False) -> KeyFact:
        # an agent that wrote the word only to set it right ("regular, not Gold") did repeat it
        echo = (f"; the agent repeated the user's word at turn {self.echoed_at}" if self.echoed_at
                else "; no message of the agent repeated the user's word" if succeeded and not self.named else "")
        echo += (", and the run succeeded all the same" if self.echoed_at else ", and the run succeeded") if succeeded else ""
        return KeyFact(f"The user said \"{self.said}\" (turn {self.said_at}), but {self.tool} (turn {self.record_at}) "
                       f"gives `{self.key}` \"{self.value}\"{echo}. Act on what the record holds, not on the user's "
                       f"word for it: whatever turns on `{self.key}` follows the record.",
                       sorted({self.said_at, self.record_at} | ({self.echoed_at} if self.echoed_at else set())),
                       "user-claim", [self.key])


@lru_cache(maxsize=256)
def _plain_fields(text: str) -> tuple[tuple[str, str], ...]:
    """(field, value) for each top-level field of a JSON object answer holding a word or two."""
    data = parsed_answer(text)
    if not isinstance(data, dict):
        return ()
    out = []
    for k, v in data.items():
        if isinstance(v, str) and re.fullmatch(r"[A-Za-z]+(?:[ _-][A-Za-z]+)?", v.strip()):
            out.append((str(k), v.strip()))
    return tuple(out)


_TOKEN = re.compile(r"[A-Za-z]+(?:/[A-Za-z]+)*|[^\sA-Za-z]")


@lru_cache(maxsize=2048)
def _pairs(text: str) -> tuple[tuple[str, str, str, bool], ...]:
    """(word, next word, as written, whether the word was one of an "a/b" group) for each two
    words side by side, in lower case. Once per distinct text: trials share prompts and replies."""
    tokens = _TOKEN.findall(text)
    out = []
    for a, b in zip(tokens, tokens[1:]):
        if a[0].isalpha() and b[0].isalpha() and "/" not in b:
            out.extend((w.lower(), b.lower(), f"{w} {b}", "/" in a) for w in a.split("/"))
    return tuple(out)


@lru_cache(maxsize=2048)
def _pairs_naming(text: str, system: str) -> tuple[tuple[str, str, str, bool], ...]:
    """``_pairs`` of a text whose second word is a noun the system prompt writes words before
    (``_values_before``), in order: a user's message is read only for those nouns, not pair by
    pair. Once per distinct text and prompt: trials share prompts and replies."""
    nouns = _values_before(system)[0]
    tokens = _TOKEN.findall(text)
    out = []
    for a, b in zip(tokens, tokens[1:]):
        if a[0].isalpha() and b[0].isalpha() and "/" not in b:
            noun = b.lower()
            if noun in nouns:
                out.extend((w.lower(), noun, f"{w} {b}", "/" in a) for w in a.split("/"))
    return tuple(out)


@lru_cache(maxsize=64)
def _values_before(system: str) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """For each noun of four letters or more: the words the system prompt writes right before it,
    and those of them it writes as one of an "a/b" group ("silver/gold member"): words the prompt
    itself sets side by side as values of that noun. Once per distinct system prompt."""
    before: dict[str, set[str]] = {}
    grouped: dict[str, set[str]] = {}
    for w, noun, _said, in_group in _pairs(system):
        if len(noun) >= 4:
            before.setdefault(noun, set()).add(w)
            if in_group:
                grouped.setdefault(noun, set()).add(w)
    return ({k: frozenset(v) for k, v in before.items()}, {k: frozenset(v) for k, v in grouped.items()})


def _names_field(noun: str, key: str) -> bool:
    """A noun names a field when its stem is the field's or starts it (``member`` of ``membership``)."""
    stem, k = _stem(noun), key.lower()
    return stem == _stem(k) or (len(stem) >= 4 and k.startswith(stem))


@lru_cache(maxsize=4096)
def _words(value: str) -> frozenset[str]:
    """A field value's words, lower case: once per value, though a record's fields are read for
    every user word and every answer gives the same fields again."""
    return frozenset(w.lower() for w in _WORD_BREAK.split(value))


_WORD_BREAK = re.compile(r"[ _-]")


def contradicted(r: Reading) -> Contradicted | None:
    """The first user word about a looked-up record's field that the record contradicts, or None.
    The user's word must be a value of that field by the log's own showing: the prompt writes it
    in an "a/b" group before the noun, or an answer of the run gives it as that field's value (a
    word the prompt merely writes before the noun, such as "the" or "your", is neither)."""
    if r.system is None or not r.has_interlocutor:
        return None
    fields = [(c, key, value) for c in r.calls if not c.writes and not c.error and c.turn.result
              and c.turn.result.lstrip().startswith("{") for key, value in _plain_fields(c.turn.result)]
    if not fields:
        return None
    before, grouped = _values_before(r.system.content or "")
    valued: dict[str, set[str]] = {}  # field -> the words any answer of the run gives it
    for _c, key, value in fields:
        valued.setdefault(key, set()).update(_words(value))
    any_valued = set().union(*valued.values())
    # the person's own words, their opening message too (a log with a person has replies)
    said = [(u, w, noun, words) for u in r.run.turns if t_is_user(u) and u.content and u.turn > r.system.turn
            for w, noun, words, _g in _pairs_naming(u.content, r.system.content or "")
            if w in before[noun] and (w in grouped.get(noun, ()) or w in any_valued)]
    for c, key, value in fields:
        held = _words(value)
        for u, word, noun, words in said:
            if word in held or not _names_field(noun, key) or not held <= before[noun]:
                continue  # the record agrees, names another thing, or holds no value the prompt gives the noun
            if word not in grouped.get(noun, ()) and word not in valued.get(key, ()):
                continue  # a value of another field, not of this one
            replies = [t for t in r.run.turns if t.turn > c.n and t.type == "message" and t.role == "assistant"]
            echoed = next((t.turn for t in replies if re.search(r"\b" + re.escape(words) + r"\b", t.content or "",
                                                                  re.I)), None)
            named = any(re.search(r"\b" + re.escape(word) + r"\b", t.content or "", re.I) for t in replies)
            return Contradicted(key, value, words, u.turn, c.name, c.n, echoed, named)
    return None


def unchecked(r: Reading) -> KeyFact | None:
    """A failed run's user word about a record (a value the prompt writes in an "a/b" group before
    its noun: "Gold member" of "silver/gold member") that no answer of the run could check, because
    the run made none of the look-ups the log records as expected (the tools were there to call).
    None when any answer gives a field the noun names, or the log records no expected look-up."""
    if r.system is None or not r.has_interlocutor:
        return None
    looks = list(dict.fromkeys(c["name"] for c in expected_lookups(r)))
    if not looks or any(c.name in looks for c in r.calls):
        return None
    _before, grouped = _values_before(r.system.content or "")
    keys = {key for c in r.calls if not c.error and c.turn.result and c.turn.result.lstrip().startswith("{")
            for key, _v in _plain_fields(c.turn.result)}
    for u in r.run.turns:
        if not (t_is_user(u) and u.content and u.turn > r.system.turn):  # the user's own words, the opening too
            continue
        for w, noun, words, _g in _pairs_naming(u.content, r.system.content or ""):
            if w in grouped.get(noun, ()) and not any(_names_field(noun, k) for k in keys):
                names = " and ".join(looks) if len(looks) <= 2 else ", ".join(looks[:2]) + f" and {len(looks) - 2} more"
                return KeyFact(f"The user wrote \"{words}\" at turn {u.turn}, and nothing in the run checked it: it "
                               f"made none of the look-ups the log records as expected ({names}). Look a record up "
                               f"before acting on what the user says it holds.", [u.turn])
    return None


def past_dates(r: Reading, now: datetime | None) -> KeyFact | None:
    """Failed changes whose error names a day, sent in the call, wholly before the stated now."""
    if now is None:
        return None
    hits: dict[str, list] = {}
    for c in r.calls:
        if not (c.writes and c.error and c.turn.result):
            continue
        sent = json.dumps(c.turn.arguments) if not isinstance(c.turn.arguments, str) else c.turn.arguments
        for day in dict.fromkeys(_ISO_DAY.findall(c.turn.result)):
            try:
                past = datetime.fromisoformat(day).date() < now.date()
            except ValueError:
                continue
            if past and day in sent:
                hits.setdefault(day, []).append(c)
    if not hits:
        return None
    calls = sorted({c.n: c for cs in hits.values() for c in cs}.values(), key=lambda c: c.n)
    first = calls[0]
    turns = [c.n for c in calls]
    where = (f"turn {turns[0]}" if len(turns) == 1 else
             "turns " + ", ".join(map(str, turns[:-1])) + f" and {turns[-1]}")
    days = list(hits)
    told = (days[0] if len(days) == 1 else ", ".join(days[:-1]) + " and " + days[-1])
    return KeyFact(f"The {first.name if all(c.name == first.name for c in calls) else 'change'} call"
                   f"{'s' if len(calls) > 1 else ''} at {where} failed with errors naming {told} "
                   f"(the first: \"{clip_words(' '.join(first.turn.result.split()), 90)}\"), "
                   f"{'a date' if len(days) == 1 else 'dates'} already past by the current time the system prompt "
                   f"states ({now:%Y-%m-%d %H:%M}). Compare the dates a change sends with the stated current time "
                   "before sending it.", turns, "past-date", list(dict.fromkeys(c.name for c in calls)))
