"""Claims about when a looked-up record was made ("booked within the last 24 hours", "made
today", "more than 7 days ago"), checked by date arithmetic against the record's own creation
time and the current time the run's system prompt (or task) states.

A fact is said only when all three are plain: one assertive sentence of the agent about one
record it looked up, one creation-time field in that record, one "now" in the log. A run that
looked no record up before the sentence (it took the user's word) is checked against the answer
of the first change after it that returned the record it names. A date
without a time of day stands for the whole day, and a claim is called wrong only when it is
wrong for every moment of that day. Anything unsure yields nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import lru_cache

from .. import lazy_re
from .arguments import _parsed
from .claim_facts import _own_words
from .reading import Call, Reading, leaves
from .schema import KeyFact
from .text import clip

_STAMP = r"\d{4}-\d{2}-\d{2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"

# "The current time is 2024-05-15 15:00:00 EST.", "Today's date is 2024-05-15", "It is now 2024-05-15 09:30"
_NOW = lazy_re.compile(rf"\b(?:current (?:date and )?(?:time|date)|today(?:'s date)?|the date today|it is now|now)"
                       rf"\s+is\s+(?P<when>{_STAMP})", re.IGNORECASE)

_DAY = lazy_re.compile(r"\d{4}-\d{2}-\d{2}")  # how every ``_STAMP`` begins


@dataclass(frozen=True)
class Span:
    """A moment or a whole day: [start, end)."""

    start: datetime
    end: datetime
    text: str

    @property
    def days(self) -> set[date]:
        return {self.start.date() + timedelta(days=i) for i in range((self.end - self.start).days or 1)}


def parse_stamp(text: str) -> Span | None:
    """An ISO date or date-time with no zone offset; None for anything else (an offset or a zone
    letter makes the comparison with a stated now unsure)."""
    text = text.strip()
    if not re.fullmatch(_STAMP, text):
        return None
    try:
        when = datetime.fromisoformat(text.replace(" ", "T"))
    except ValueError:
        return None
    if len(text) == 10:
        return Span(when, when + timedelta(days=1), text)
    return Span(when, when, text)


@lru_cache(maxsize=256)
def _nows(text: str) -> tuple[str, ...]:
    """The moments a text states as now, in order: a run's system prompt is read once per build,
    not once per run and per reader of it."""
    if _DAY.search(text) is None:  # every moment stated holds a date: most texts (a task's words) hold none
        return ()
    return tuple(m.group("when") for m in _NOW.finditer(text))


def stated_now(texts: list[tuple[str, str]]) -> tuple[Span, str] | None:
    """(now, where it is stated) from (where, text) pairs: one value, however often stated."""
    found: dict[str, str] = {}
    for where, text in texts:
        for when in _nows(text or ""):
            found.setdefault(when, where)
    if len(found) != 1:
        return None
    (when, where), = found.items()
    span = parse_stamp(when)
    return (span, where) if span is not None else None


# --- the claim, in the agent's words -------------------------------------------------------------

_UNIT = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}
_ONES = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
         "seventeen eighteen nineteen").split()
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
# a count in words, as English writes them up to ninety-nine ("a day", "seven days", "forty-eight hours")
_WORD_NUMBER = {"a": 1, "an": 1, **{w: i for i, w in enumerate(_ONES, 1)},
                **{t: 10 * i for i, t in enumerate(_TENS, 2)},
                **{f"{t}{sep}{o}": 10 * i + j for i, t in enumerate(_TENS, 2) for j, o in enumerate(_ONES[:9], 1)
                   for sep in "- "}}
_N = r"(?P<n>\d{1,3}|" + "|".join(sorted(_WORD_NUMBER, key=len, reverse=True)) + r")\s+(?P<unit>hour|day|week)s?"
_CLAIM = lazy_re.compile(
    r"\b(?P<be>was|were|is|are|has been|have been|had been)(?P<neg>\s+not|n't)?\s+(?:(?:only|just|actually)\s+)?"
    r"(?P<verb>made|booked|created|placed|purchased|ordered|reserved)\s+"
    r"(?:(?P<within>(?:with)?in the (?:last|past) " + _N + r")"
    r"|(?P<less>(?:less than|under|fewer than) " + _N.replace("?P<n>", "?P<n2>").replace("?P<unit>", "?P<unit2>")
    + r" ago)"
    r"|(?P<more>(?:more than|over) " + _N.replace("?P<n>", "?P<n3>").replace("?P<unit>", "?P<unit3>") + r" ago)"
    r"|(?P<today>today)|(?P<yesterday>yesterday))\b"
    # "the cancellation is within 24 hours of booking": now, set against when it was made
    r"|(?:\b(?P<be2>is|are|was|were)|(?<=\w)['\u2019]s)(?P<neg2>\s+not|n't)?\s+(?:still\s+)?(?P<of>within (?:the (?:first )?)?"
    + _N.replace("?P<n>", "?P<n4>").replace("?P<unit>", "?P<unit4>")
    + r" (?:of|after|from) (?:the )?(?:booking|purchase|creation|reservation|order|being (?:booked|made|placed)))\b",
    re.IGNORECASE)
# one of these is in every claim's text (in any case); in ASCII text lower() finds them as the
# pattern does (outside ASCII a case-blind match may take another letter: the pattern decides)
_CLAIM_WORDS = ("made", "booked", "created", "placed", "purchased", "ordered", "reserved")
_WHEN_WORDS = ("last", "past", "ago", "today", "yesterday")  # after a verb: one of these ends every claim
_SINCE_WORDS = ("booking", "purchase", "creation", "reservation", "order", "being")  # "within ... of" one of these
# a rule or a supposition, not a claim about this record
_HEDGE = lazy_re.compile(r"\b(?:if|unless|whether|provided|as long as|only when|in case|assuming)\b", re.IGNORECASE)
_GENERAL = lazy_re.compile(r"\b(?:that|which|a|an|any|all|every|each)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_QUOTE_MARKS = "\"\u201c\u201d"


@dataclass(frozen=True)
class TimeClaim:
    """What a sentence asserts about a record's age: within (age < limit), more (age > limit),
    or on a day (0: today, 1: yesterday); negated when the sentence says it was not so."""

    kind: str  # "within" | "more" | "day"
    limit: timedelta | None
    days_back: int | None
    negated: bool
    said: str  # what it says of the record: "was made within the last 24 hours", "now is within 1 day of booking"
    sentence: str


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text or "") if s.strip()]


def _in_quotes(sentence: str, at: int) -> bool:
    before = sentence[:at]
    return sum(before.count(q) for q in _QUOTE_MARKS[:1]) % 2 == 1 or before.count("\u201c") > before.count("\u201d")


def time_claims(text: str) -> list[TimeClaim]:
    """The assertive claims about when something was made that the text holds, one sentence each."""
    return list(_claims_in(text)) if text else []


@lru_cache(maxsize=4096)
def _claims_in(text: str) -> tuple[TimeClaim, ...]:
    """Once per distinct text: trials of one task repeat the agent's sentences."""
    return tuple(_read_claims(text))


def _read_claims(text: str) -> list[TimeClaim]:
    out: list[TimeClaim] = []
    if text.isascii():  # a plain test passes over most texts: a claim names one of its verbs with a
        low = text.lower()  # word of time, or "within" with the making it is counted from
        if not ((any(w in low for w in _CLAIM_WORDS) and any(w in low for w in _WHEN_WORDS))
                or ("within" in low and any(w in low for w in _SINCE_WORDS))):
            return out
    if _CLAIM.search(text) is None:
        return out  # most texts hold none: no need to split them
    for sentence in _sentences(text):
        if sentence.endswith("?"):
            continue
        found = list(_CLAIM.finditer(sentence))
        if len(found) != 1:
            continue  # two claims in one sentence may be about two records
        m = found[0]
        head = sentence[:m.start()]
        if _HEDGE.search(head) or _GENERAL.search(head) or _in_quotes(sentence, m.start()):
            continue
        negated = (m.group("neg") or m.group("neg2")) is not None
        said = ("was " if m.group("verb") else "is ") + ("not " if negated else "") \
            + " ".join(sentence[m.start("verb" if m.group("verb") else "of"):m.end()].split())
        if m.group("today") or m.group("yesterday"):
            claim = TimeClaim("day", None, 0 if m.group("today") else 1, negated, said, sentence)
        else:
            n, unit, kind = next((m.group(a), m.group(b), k) for a, b, k in
                                 (("n", "unit", "within"), ("n2", "unit2", "within"), ("n3", "unit3", "more"),
                                  ("n4", "unit4", "within"))
                                 if m.group(a))
            count = int(n) if n.isdigit() else _WORD_NUMBER[n.lower()]
            claim = TimeClaim(kind, count * _UNIT[unit.lower()], None, negated, said, sentence)
        out.append(claim)
    return out


def claim_holds(claim: TimeClaim, made: Span, now: Span) -> bool | None:
    """True or False when every moment the two spans allow agrees; None when they differ, and
    None for a record made after the stated now (the log contradicts itself there)."""
    if made.start > now.start:
        return None
    if claim.kind == "day":
        days = {d - timedelta(days=claim.days_back) for d in now.days}
        answers = {d in days for d in made.days}
    else:
        youngest, oldest = now.start - made.end, now.end - made.start
        if claim.kind == "within":
            answers = {youngest < claim.limit, oldest < claim.limit}
        else:
            answers = {youngest > claim.limit, oldest > claim.limit}
    if len(answers) != 1:
        return None
    (holds,) = answers
    return holds != claim.negated


# --- the record it is about ----------------------------------------------------------------------

_MADE_KEY = lazy_re.compile(r"(?:created|creation|booked|booking|placed|purchased|purchase|ordered|order|made|reserved)"
                            r"(?:_(?:at|on|date|time|datetime|timestamp))?", re.IGNORECASE)


@dataclass
class Record:
    call: Call
    key: str
    made: Span
    names: set[str]  # the strings that name it: the look-up's arguments and the record's id fields


def _record(c: Call) -> Record | None:
    """A call's answer as a record with one creation-time field, or None: a look-up's, or the
    answer of a change that returned the record it acted on."""
    if c.error or not (c.turn.result or "").lstrip().startswith("{"):
        return None
    answer = _parsed(c.turn.result)  # the argument checks' parse of the same answer
    if not isinstance(answer, dict):
        return None
    fields = [(k, v) for k, v in answer.items() if _MADE_KEY.fullmatch(k) and isinstance(v, str)]
    if len(fields) != 1:
        return None
    key, value = fields[0]
    made = parse_stamp(value)
    if made is None:
        return None
    names = {v for _, v in leaves(c.turn.arguments) if isinstance(v, str) and len(v) >= 4}
    names |= {v for k, v in answer.items() if isinstance(v, str) and k.lower().endswith("id") and len(v) >= 4}
    return Record(c, key, made, names)


def _names_in(text: str, names: set[str]) -> bool:
    # a name not in the text at all needs no pattern compiled for it
    return any(n in text and re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", text) for n in names)


def _about(sentence: str, message: str, records: list[Record]) -> Record | None:
    """The record a sentence is about: the one it names, else the one its message names, else the
    last one looked up when the message names no other."""
    for text in (sentence, message):
        named = {id(r.call): r for r in records if _names_in(text, r.names)}
        if named:
            named_ids = {frozenset(r.names) for r in named.values()}
            return list(named.values())[-1] if len(named_ids) == 1 else None
    unnamed = [t for t in re.findall(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b", message)]
    return records[-1] if records and not unnamed else None


# --- the fact -----------------------------------------------------------------------------------


def _gap(delta: timedelta) -> str:
    days, hours = delta.days, delta.seconds // 3600
    if days >= 2:
        return f"{days} days" + (f" {hours} hours" if days < 7 and hours else "")
    total = days * 24 + hours
    if total >= 1:
        return f"{total} hour{'s' if total != 1 else ''}"
    return f"{delta.seconds // 60} minutes"


def _what_is_true(claim: TimeClaim, made: Span, now: Span) -> str:
    if claim.kind == "day" or made.end - made.start >= timedelta(days=1) or now.end - now.start >= timedelta(days=1):
        days = (now.start.date() - made.start.date()).days
        if days == 0:
            return "the same day as"
        return (f"{days} day{'s' if abs(days) != 1 else ''} before" if days > 0 else
                f"{-days} day{'s' if days != -1 else ''} after")
    delta = now.start - made.start
    return f"{_gap(delta)} before" if delta >= timedelta(0) else f"{_gap(-delta)} after"


def time_facts(r: Reading) -> list[KeyFact]:
    """Claims of the agent about when a record it looked up was made that the record's own
    creation time and the log's stated now prove wrong."""
    texts = ([("the system prompt", r.system.content or "")] if r.system is not None else [])
    texts.append(("the task's instruction", r.run.task.instruction or ""))
    told = stated_now(texts)
    if told is None:
        return []
    now, where = told
    out = []
    made: list[Record] | None = None  # the run's records with a creation time: read once, when a claim asks
    for turn, text in _own_words(r):
        claims = time_claims(text)
        if not claims:
            continue
        if made is None:
            made = [x for x in (_record(c) for c in r.calls) if x is not None]
        records = [x for x in made if x.call.n < turn and not x.call.writes]
        for claim in claims:
            record = _about(claim.sentence, text, records)
            unlooked = None
            if record is None and not records:  # said of a record never looked up: the change on it shows it
                unlooked = record = _about(claim.sentence, text, [x for x in made if x.call.n > turn and x.call.writes][:1])
            if record is None or claim_holds(claim, record.made, now) is not False:
                continue
            c = record.call
            whose = (f"before any look-up of the record, that the record {c.name} then acted on at turn {c.n}"
                     if unlooked else f"of the record {c.name} returned at turn {c.n}, that it")
            out.append(KeyFact(
                f"The agent said at turn {turn}, {whose} {claim.said} (\"{clip(claim.sentence, 120)}\"); "
                + (f"that call's answer gives `{record.key}` {record.made.text}, " if unlooked else
                   f"its `{record.key}` {record.made.text} is ")
                + ("which is " if unlooked else "")
                + f"{_what_is_true(claim, record.made, now)} the current time {where} gives, {now.text}.",
                [c.n, turn]))
    return out
