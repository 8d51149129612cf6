"""What a quoted permission rule concludes on the record's own fields, said only where the rule's
words and the fields settle it.

Two kinds of condition are checked, both read off the sentence itself: a span ("within 24 hours
of booking") against a record's timestamp and the current time the system prompt states, and an
"only if" clause naming a thing the record says it has none of (``insurance`` "no" against "only if
travel insurance is bought"). A permission sentence ("can", "may", "allowed to") is closed when one
of its conditions fails; an alternative of it the fields cannot check ("or if the airline cancelled
the flight") is carried into the conclusion rather than assumed away: "so the rule allowed it only
if the airline cancelled the flight". A sentence with no failed condition leaves the rule open,
and then no conclusion is drawn, only the failed conditions are said.

A rule can also allow the call outright: a part of a permission keyed by a value the record holds
with no condition of its own ("business flights can always be cancelled" for a business booking).
Then that is said, and no failed condition of another part is offered as the reason the call was
wrong (allowing). And a condition that lists what it accepts ("given health or weather reasons") is
checked against the reason the user stated, where the user named one in so many words and it shares
no word with the list (listed_reasons, reason_outside).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from .. import lazy_re

_GRANT = lazy_re.compile(r"\b(?:can|may|allowed to)\b(?!\s+not\b)", re.I)
_SPAN = lazy_re.compile(r"\bwithin\s+(\d+|one|two|three|a|an)\s+(hour|day|week)s?\b[^,;.]*", re.I)
_ONLY_IF = lazy_re.compile(r"\bonly if\s+([^,;.]+)", re.I)
# an alternative condition after the span: ", or if the airline cancelled the flight"
_OR_AFTER = lazy_re.compile(r"\s*,?\s*or\s+([^;.]+?)\s*[.;]?\s*$", re.I)
_PARTS = lazy_re.compile(r",\s+and\s+|;\s*")
# a condition word makes a part a permission under a condition, not one outright
_CONDITIONAL = lazy_re.compile(r"\b(?:if|unless|only|within|when|whenever|provided|otherwise|after|before|until|except)\b",
                               re.I)
_DENIED = lazy_re.compile(r"\b(?:not|cannot|can't|never|no)\b", re.I)
# a condition on what the person the agent serves does or wants ("if the user needs to cancel …")
_ON_PERSON = lazy_re.compile(r"\b(?:if|unless|when|provided)\s+(?:the\s+)?(?:user|customer|client|caller)\b([^.;]*)", re.I)
# a list of single words qualifying one plural noun: "health or weather reasons", "work, health or family reasons"
_LISTED = lazy_re.compile(r"\b((?:[a-z]+,\s*)*[a-z]+,?\s+or\s+[a-z]+)\s+([a-z]+s)\b", re.I)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "a": 1, "an": 1}
_UNIT = {"hour": timedelta(hours=1), "day": timedelta(days=1), "week": timedelta(weeks=1)}


def _amount(word: str) -> int:
    return int(word) if word.isdigit() else _NUMBER_WORDS[word.lower()]


def _applying(sentence: str, applies) -> list[str]:
    """The parts of a permission sentence that bear on this record. Its parts joined by ", and" or
    ";" are each a permission, a verb left out or not ("economy bookings can ... only if ..., and
    business bookings always"); those naming a value the record holds, when any does, else all."""
    if not _GRANT.search(sentence):
        return []
    parts = [p for p in re.split(r",\s+and\s+|;\s*", sentence) if p.strip()]
    named = [p for p in parts if applies(p)]
    return named or parts


def allowing(sentences: list[str], applies, verb: frozenset[str], words_of) -> str:
    """The part of a permission that lets the action through on this record with no condition of
    its own, as the prompt words it ("" when none): keyed by a record value (``applies``), in a
    sentence naming the action's verb, with no condition word ("if", "only", "within", …)."""
    for sentence in sentences:
        if not _GRANT.search(sentence) or not verb or not verb <= words_of(sentence):
            continue
        parts = [p for p in _PARTS.split(sentence) if p.strip()]
        if len(parts) < 2:
            continue  # one case only: its condition, if any, is in the same words
        for part in parts:
            if applies(part) and not _CONDITIONAL.search(part) and not _DENIED.search(part):
                return part.strip()
    return ""


def within_span(sentences: list[str], moments: list[tuple[str, datetime]], now: datetime | None, verb: frozenset[str],
                words_of) -> tuple[str, str] | None:
    """(the permission's words up to its span, the field) when a span of time it grants in holds
    for the record ("can be cancelled within 24 hours of booking", booked 10 hours before the
    prompt's now) and nothing before the span conditions it: the rule allowed the call."""
    if now is None or not moments:
        return None
    for sentence in sentences:
        span = _SPAN.search(sentence)
        if not span or not verb or not verb <= words_of(sentence) or not _GRANT.search(sentence[:span.start()]):
            continue
        head = sentence[:span.start()]
        if _CONDITIONAL.search(head) or _DENIED.search(head):
            continue
        limit = _amount(span.group(1)) * _UNIT[span.group(2).lower()]
        if all(timedelta(0) <= now - t <= limit for _k, t in moments):
            return sentence[:span.end()].strip(), moments[0][0]
    return None


def listed_reasons(sentences: list[str]) -> tuple[tuple[str, ...], str, str]:
    """(the listed words, the noun they qualify, the words as written) of a condition on the
    person's doing that lists what it accepts: "if the user needs to cancel … given health or
    weather reasons" gives ("health", "weather"), "reasons". Empty when no sentence has one."""
    for s in sentences:
        for m in _ON_PERSON.finditer(s):
            listed = _LISTED.search(m.group(1))
            if listed:
                items = tuple(w.lower() for w in re.split(r",\s*(?:or\s+)?|\s+or\s+", listed.group(1)) if w)
                return items, listed.group(2).lower(), listed.group(0)
    return (), "", ""


def reason_outside(items: tuple[str, ...], noun: str, stated: str, every_word: frozenset[str], words_of) -> str:
    """The reason the user stated, as the user put it, when it is none of the listed ones: the
    user's sentence names the noun ("The reason is a change of plan", "for personal reasons"), and
    none of the listed words is in anything the user said before the call (``every_word``).
    "" when the user's reason is not stated in so many words or may be one of the list."""
    listed = frozenset().union(*(words_of(i) for i in items))
    if not listed or listed & every_word:
        return ""
    stem = re.escape(noun.rstrip("s"))
    m = re.search(rf"\b{stem}s?\s+(?:is|was|are|were)\s+(?:that\s+|just\s+|simply\s+)?([^.!?;]+)", stated, re.I)
    if m:  # "the reason is a change of plan"
        return " ".join(m.group(1).split()).strip(" ,")
    # "for personal reasons", "due to other reasons"; not "as for the reason, …" (a determiner names no reason)
    m = re.search(rf"\b(?:for|due to|because of)\s+(?!(?:the|a|an|this|that|these|those|my|our|your|some|any)\b)"
                  rf"((?:[\w'-]+\s+){{1,3}}){stem}s\b", stated, re.I)
    if m:
        return " ".join(m.group(0).split()[1 if m.group(0).lower().startswith("for") else 2:])
    return ""


def verdict(sentences: list[str], moments: list[tuple[str, datetime]], absent: list[tuple[str, frozenset[str], str]],
            now: datetime | None, words_of, applies, action: str) -> str:
    """The failed conditions and, when every permission quoted is closed, the conclusion ("" when
    nothing is settled). ``moments``: (field, its time); ``absent``: (field, its name's words, its value as shown) of
    fields that say the record has none of their thing; ``words_of`` stems a text's words;
    ``applies`` tells whether a text names a value the record holds."""
    failed: list[str] = []
    open_left: list[str] = []  # alternatives no field checks, of closed permissions
    all_closed = True
    any_permission = False
    for s in (part for sentence in sentences for part in _applying(sentence, applies)):
        any_permission = True
        closed = False
        span = _SPAN.search(s)
        if span and now is not None:
            limit = _amount(span.group(1)) * _UNIT[span.group(2).lower()]
            late = [(k, t) for k, t in moments if now - t > limit]
            if late and len(late) == len(moments):
                k, t = late[0]
                unit = span.group(2).lower() + ("s" if _amount(span.group(1)) != 1 else "")
                failed.append(f"`{k}` is more than {_amount(span.group(1))} {unit} before the current time, so "
                              f"\"{span.group(0).strip()}\" does not hold")
                rest = s[span.end():].strip(" .;")
                alternative = _OR_AFTER.match(s[span.end():])
                if alternative:  # what the sentence allows instead, which no field here checks: carried, not assumed
                    open_left.append(alternative.group(1).strip())
                closed = alternative is not None or not rest
        only = _ONLY_IF.search(s)
        if only and not re.search(r"\bor\b", only.group(1), re.I):  # "only if A or B": one failing is not enough
            clause = words_of(only.group(1))
            hit = next(((k, shown) for k, key_words, shown in absent if key_words and key_words <= clause), None)
            if hit is not None:
                failed.append(f"`{hit[0]}` is {hit[1]}, so \"only if {only.group(1).strip()}\" does not hold")
                closed = True
        all_closed = all_closed and closed
    if not failed:
        return ""
    text = "On these fields, " + "; ".join(failed) + "."
    if any_permission and all_closed:
        left = " or ".join(f"\"{x}\"" for x in dict.fromkeys(open_left))
        text += (f" So of this rule only {left} could still have allowed this {action}." if open_left
                 else f" So the rule did not allow this {action}.")
    return text
