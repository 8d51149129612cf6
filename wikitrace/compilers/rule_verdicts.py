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
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

_GRANT = re.compile(r"\b(?:can|may|allowed to)\b(?!\s+not\b)", re.I)
_SPAN = re.compile(r"\bwithin\s+(\d+|one|two|three|a|an)\s+(hour|day|week)s?\b[^,;.]*", re.I)
_ONLY_IF = re.compile(r"\bonly if\s+([^,;.]+)", re.I)
# an alternative condition after the span: ", or if the airline cancelled the flight"
_OR_AFTER = re.compile(r"\s*,?\s*or\s+([^;.]+?)\s*[.;]?\s*$", re.I)
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
