"""The record fields a quoted rule names: the plain top-level fields of the records a change rests
on (the look-ups before it that were sent its own argument values), each worked out once with how a
sentence would name its value ("basic economy" for ``cabin`` "basic_economy"), and which of them a
rule sentence names, by value as a term of its own or by the field's name (rule_reasons.py quotes
the rule, rule_verdicts.py and record_rules.py draw what its words settle)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import timedelta
from functools import lru_cache

from . import record_rules
from .arguments import _parsed
from .reading import Reading
from .record_facts import _when, stated_now
from .rule_blocks import _Sentence
from .rules import _stem

_NAME_PARTS = re.compile(r"[\W_]+|(?<=[a-z])(?=[A-Z])")
_DIGIT = re.compile(r"\d")


@lru_cache(maxsize=1024)  # a few dozen field and argument names, asked for every sentence
def _name_words(name: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _NAME_PARTS.split(name or "") if len(w) >= 3)


@dataclass(frozen=True)
class _Fact:
    key: str
    value: object
    where: str  # "get_user_details (turn 6) gave", or "the call sent" (what the page says of its place)
    turn: int | None
    shown: str  # the value as the page prints it
    moment: bool = False  # a timestamp: named by a sentence that states a span of time
    phrase: str = ""  # the value as a sentence would write it ("basic economy"); "" when no sentence names it so
    key_words: frozenset[str] = frozenset()


def _fact(key: str, value, where: str, turn: int | None) -> _Fact:
    """A field with what the sentence tests need worked out once, not once per sentence."""
    moment = isinstance(value, str) and _when(value) is not None
    v = value if isinstance(value, str) and not moment else ""
    nameable = v.lower() not in ("yes", "no", "true", "false") and any(len(w) >= 4 for w in re.split(r"[\W_]+", v))
    return _Fact(key, value, where, turn, json.dumps(value, ensure_ascii=False), moment,
                 " ".join(v.lower().replace("_", " ").split()) if nameable else "", _name_words(key))


def _plain(value) -> str | None:
    """A scalar a rule can name: a word or three, or a flag; ids, amounts and prose left out."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        v = value.strip()
        if v and not _DIGIT.search(v) and len(v.split()) <= 3:
            return v
    return None


def _facts(r: Reading, args: dict, before: int | None, skip: set[str], own: str = "the call sent") -> list[_Fact]:
    """The plain top-level fields of the records this change rests on (the whole answer of a
    look-up before it that was sent one of the change's own argument values, and no change of the
    same record between them), latest first, then the change's own other arguments."""
    # a look-up counts when it was sent a value under the same name the change sends it (the
    # ``reservation_id`` it cancels, the ``user_id`` it books for): that record is the one acted on
    sent = record_rules.pairs(args)
    out: dict[str, _Fact] = {}
    stale: set[tuple[str, str]] = set()  # records an earlier change acted on: what was looked up before it may be old
    for c in reversed(r.calls):
        if c.error or (before is not None and c.n >= before):
            continue
        shared = sent & record_rules.sent_by(r, c)
        if c.writes:
            if before is not None:  # a change never made has no moment of its own: every look-up is as it was shown
                stale |= shared
            continue
        if not shared - stale:
            continue
        answer = _parsed(c.turn.result or "")
        if not isinstance(answer, dict):
            continue
        for key, value in answer.items():
            if key in out or key in skip:
                continue
            plain = _plain(value)
            if plain is None and isinstance(value, str) and value[:4].isdigit() and ("T" in value or ":" in value) \
                    and _when(value) is not None:
                plain = value  # a moment the record was made or changed (a date alone is a birthday, a flight day)
            if plain is not None:
                out[key] = _fact(key, value, f"{c.name} (turn {c.n}) gave", c.n)
    for key, value in args.items():
        plain = _plain(value)
        if plain is not None and key not in out and key not in skip:
            out[key] = _fact(key, value, own, None)
    return list(out.values())


def _named(r: Reading, s: _Sentence, facts: list[_Fact], subject: frozenset[str]) -> tuple[list[_Fact], list[_Fact]]:
    """(by value, by name) the facts a sentence names. By value: a value as a term of its own (a
    word of four letters or more, not a bare flag), or a moment when the sentence states a span of
    time. By name: the field's own name, in a sentence that names the subject too."""
    by_value, by_name = [], []
    low = s.text.lower()
    for f in facts:
        if f.moment:
            if s.span:
                by_value.append(f)
        elif f.phrase and f.phrase in low and _on_its_own(low, f.phrase):
            by_value.append(f)
        elif f.key_words and f.key_words <= s.words and subject & s.words:
            by_name.append(f)
    return by_value, by_name


# words that leave the noun after them whole: "each economy passenger", "a gold member", "or economy"
_FUNCTION_WORDS = frozenset("a an the or and nor for each every per of in on to at by as is are be any all no not "
                            "with than if its their his her your that this these those including excluding except".split())


@lru_cache(maxsize=4096)
def _on_its_own(low: str, phrase: str) -> bool:
    """Whether a sentence (lower case) names a value (as a phrase) without another word in front
    that makes it another thing ("basic economy" is not "economy"), whatever the records show.
    Once per sentence and phrase: every argument of every change weighs the same prompt
    sentences against the run's values."""
    for m in _fronted(phrase).finditer(low):
        if m.group(1) is None or m.group(1) in _FUNCTION_WORDS:
            return True
    return False


@lru_cache(maxsize=4096)
def _fronted(phrase: str) -> re.Pattern:
    return re.compile(r"(?:(\w+)\s+)?(?<![\w-])" + re.escape(phrase) + r"(?![\w-])")


def _absent(value) -> bool:
    """A field saying the record has none of its thing: a false flag, "no", "none"."""
    return value is False or (isinstance(value, str) and value.strip().lower() in ("no", "none", "false"))


def _fact_text(r: Reading, f: _Fact) -> str:
    if isinstance(f.value, str) and _when(f.value) is not None:
        now, when = stated_now(r), _when(f.value)
        if now is not None and when is not None and when <= now:
            hours = int((now - when).total_seconds() // 3600)
            days, left = divmod(now - when, timedelta(days=1))
            gap = f"{hours} hours" if hours < 48 else f"{'over ' if left else ''}{days} days"
            return f"`{f.key}` {f.shown} ({gap} before the current time the system prompt gives)"
    return f"`{f.key}` {f.shown}"


def _keyed_by(facts: list[_Fact]):
    """The fact a text names by its value as a term of its own (None when none): the record's
    values key which case of a rule applies."""
    def find(part: str) -> _Fact | None:
        low = part.lower()
        return next((f for f in facts if f.phrase and f.phrase in low and _on_its_own(low, f.phrase)), None)
    return find


def standing_facts(r: Reading, args: dict, before: int, skip: set[str]) -> tuple[list[_Fact], dict | None]:
    """(the plain fields of the record a change acts on as it last stood, then of the records it
    names by id, then the change's own other arguments; that record) where ``_facts`` keeps only
    look-ups no change came after: the latest call before it (a look-up, or a change whose answer
    is the record as it then was) that was sent one of its own (name, value) pairs and answered
    with a record holding that pair, and each look-up sent a value that record holds under the
    same name (the ``user_id`` a reservation holds: its owner's tier)."""
    sent = record_rules.pairs(args)
    record, at = None, None
    for c in reversed(r.calls):
        if c.error or c.n >= before or not sent & record_rules.sent_by(r, c):
            continue
        answer = _parsed(c.turn.result or "")
        if isinstance(answer, dict) and any(answer.get(k) == v for k, v in sent & record_rules.sent_by(r, c)):
            record, at = answer, c
        break
    if record is None:
        return [], None
    out: dict[str, _Fact] = {}

    def take(answer: dict, c) -> None:
        for key, value in answer.items():
            if key not in out and key not in skip and _plain(value) is not None:
                out[key] = _fact(key, value, f"{c.name} (turn {c.n}) gave", c.n)

    take(record, at)
    held = record_rules.pairs({k: v for k, v in record.items() if isinstance(v, str)})
    for c in reversed(r.calls):
        if c.error or c.writes or c.n >= before or c is at or not held & record_rules.sent_by(r, c):
            continue
        answer = _parsed(c.turn.result or "")
        if isinstance(answer, dict):
            take(answer, c)
    for key, value in args.items():
        if _plain(value) is not None and key not in out and key not in skip:
            out[key] = _fact(key, value, "the call sent", None)
    return list(out.values()), record
