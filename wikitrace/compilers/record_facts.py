"""The records a run looked at and acted on, as patterns: what corpus/conditions.py compares
between the runs that made a state-changing call and those that withheld it.

A change such as a cancellation is right or wrong because of the record it acts on (its
class, its insurance, when it was made), not because of its own arguments. Each run therefore
keeps, for every record it looked up by id and every record a change's id argument pointed at,
the record's plain top-level fields as one pattern (``rec|<id digest>|<JSON list of [field, value]>``:
one string per record keeps the corpus's pattern counts small), and for every change
that went through, the record it acted on (``acted|<tool>|<key>|<id digest>``), and the looked-up
records whose id the user's own messages gave (``named|<key>|<id digest>``). The id itself
is kept only as a digest; trials of one task look up the same ids, so a run that looked at a
record and changed nothing can be set against a trial that changed it.

A field holding a date is also given against the time the system prompt states as the current
one, when it states one (within a day before it, earlier, later): a rule of the form "within a
day of booking" is a fact about that difference, not about the date.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from functools import lru_cache

from .insight_words import is_hand_off
from .arguments import _NOT_JSON, _parsed
from .record_notes import _record_holding
from .reading import Reading, runs_a_command
from .rules import _DIGIT
from . import time_claims
from .value_digest import fingerprint as _fingerprint

DAYS = " (against now)"  # the suffix of a derived field: where the date falls against the stated now
_WORDS_KEPT = 3  # a string of more words is prose (a name, an address), not a value a rule names
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?))?")


@lru_cache(maxsize=4096)
def _when(text: str) -> datetime | None:
    """The moment an ISO date (and time) in ``text`` names, once per text: records repeat their dates."""
    m = _DATE.search(text)
    if m is None:
        return None
    try:
        return datetime.fromisoformat(m.group(1) + (" " + m.group(2) if m.group(2) else ""))
    except ValueError:
        return None


def stated_now(r: Reading) -> datetime | None:
    """The current time the system prompt states ("The current time is 2031-02-03 10:00"), if it
    states one (read as the time claims read it: compilers/time_claims.py)."""
    return _now_in((r.system.content or "") if r.system is not None else "")


@lru_cache(maxsize=64)
def _now_in(text: str) -> datetime | None:
    """Once per distinct system prompt: the runs of a benchmark share one."""
    told = time_claims.stated_now([("system prompt", text)])
    return told[0].start if told is not None else None


def _plain(value) -> str | None:
    """A top-level scalar a rule can name: a word or two, a flag, a small count; ids and prose left out."""
    if isinstance(value, bool) or value is None:
        return None if value is None else str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        v = value.strip()
        if v and not _DIGIT.search(v) and len(v.split()) <= _WORDS_KEPT and "|" not in v:
            return v
    return None


def _against(now: datetime, when: datetime) -> str:
    """A date against the stated now, in the one unit a rule of time names without a number: the
    day. "within a day before now", "earlier", or "later"; never a count, which would be a
    label of one record rather than a condition."""
    if when > now:
        return "later"
    return "within a day before" if (now - when).days == 0 else "earlier"


def _fields(record: dict, now: datetime | None) -> list[tuple[str, str]]:
    out = []
    for k, v in record.items():
        if "|" in str(k) or str(k).endswith("id"):  # the record's own id and its pointers to others
            continue
        plain = _plain(v)
        if plain is not None:
            out.append((str(k), plain))
        elif now is not None and isinstance(v, str) and v[:4].isdigit():  # an ISO date opens with its year
            when = _when(v)
            if when is not None and len(v) <= 40:
                out.append((f"{k}{DAYS}", _against(now, when)))
    return out


def _rec(d: str, record: dict, now: datetime | None) -> str:
    return f"rec|{d}|{json.dumps(sorted(_fields(record, now)), ensure_ascii=False)}"


@lru_cache(maxsize=1024)
def _answer_rec(d: str, answer: str, now: datetime | None) -> str:
    """``_rec`` of a whole look-up answer, once per answer text: trials of a task look up the
    same records."""
    return _rec(d, _parsed(answer), now)


def _id_args(args) -> list[tuple[str, str]]:
    """The top-level arguments naming a record: a string under a key ending in ``id``."""
    if not isinstance(args, dict):
        return []
    return [(str(k), v) for k, v in args.items() if str(k).endswith("id") and isinstance(v, str) and v.strip()]


def _record(parsed, key: str, value: str, sent: bool):
    """The record ``value`` names in an answer: the whole answer of a look-up sent it (unless that
    answer holds another value under the same key), else what record_notes._record_holding finds."""
    if sent and isinstance(parsed, dict) and parsed.get(key, value) == value:
        return parsed
    return _record_holding(parsed, key, value, sent)


def record_patterns(r: Reading) -> set[str]:
    """``rec|`` patterns for every record looked up by an id (the whole answer of a look-up sent
    it) or pointed at by a change's id argument in an earlier answer, and ``acted|`` for each
    change that went through with an id argument, whether or not the run had looked its record up
    (a count of the runs that made a change on a record counts them all)."""
    out: set[str] = set()
    now = stated_now(r)
    looked: list = []  # the look-ups answered so far, latest last
    changed: set[str] = set()  # ids a change acted on: a later look-up shows the record after it
    said = [r.lower(f) for f in r.facts if f.type == "message"]  # the user's messages, lower case
    for c in r.calls:
        if c.error:
            continue
        ids = _id_args(c.turn.arguments)
        if not c.writes:
            parsed = _parsed(c.turn.result or "")  # parsed once for the argument checks too
            if parsed is not _NOT_JSON and isinstance(parsed, (dict, list)):
                looked.append((c, parsed, set(ids)))
                for key, value in ids:
                    d = _fingerprint(value)
                    if d not in changed and _record(parsed, key, value, True) is parsed:
                        out.add(_answer_rec(d, c.turn.result or "", now))
                        if any(value.lower() in text for text in said):
                            out.add(f"named|{key}|{d}")  # a record the user's own words named
            continue
        if not ids or is_hand_off(c) or runs_a_command(c.turn):  # a change naming no record
            continue
        for key, value in ids:
            # the look-ups sent this id first (their whole answer is the record), then the latest others
            order = sorted(reversed(looked), key=lambda x: (key, value) not in x[2])
            d = _fingerprint(value)
            out.add(f"acted|{c.name}|{key}|{d}")  # made on a record, whether or not the run looked it up
            for src, parsed, sent_ids in order:
                record = _record(parsed, key, value, (key, value) in sent_ids)
                if isinstance(record, dict):
                    if d not in changed:
                        out.add(_rec(d, record, now))
                    break
            changed.add(d)
    return out
