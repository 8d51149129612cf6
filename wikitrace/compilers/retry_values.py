"""The value a retry changed to get past an error, and where each side of it came from: an id the
agent made up from the user's digits ("credit_card_7334") against the one a look-up listed
("credit_card_9074831", from get_user_details). "payment_id changed" tells a reader which argument
to fix; the two values and their sources tell it how.
"""

from __future__ import annotations

import re

from .reading import Call, Reading, _occurs, t_is_user
from .text import clip

_LONGEST = 60  # a longer value (a list, a paragraph) is no value to quote beside its key
_DIGITS = re.compile(r"\d{3,}")


def _users_digits(r: Reading, value: str, before: int) -> str | None:
    """A run of three digits or more of ``value`` that a user's message before ``before`` wrote
    as a number of its own ("ending in 7334"): the value was pieced together from it."""
    said = [t.content for t in r.run.turns if t.turn < before and t_is_user(t) and t.content]
    return next((d for d in _DIGITS.findall(value) if any(_occurs(d, text.lower()) for text in said)), None)


def _source(r: Reading, value: str, before: int) -> tuple[str, Call | None] | None:
    """Where ``value`` stood before turn ``before``: ("user", None) when a user's message held it
    (what the user asked for says more than a table that also lists it), else ("call", the first
    call whose answer held it), or None when nothing did."""
    low = value.lower()
    for t in r.run.turns:
        if t.turn >= before:
            break
        if t_is_user(t) and t.content and _occurs(low, t.content.lower()):
            return "user", None
    for c in r.calls:
        if c.n >= before:
            break
        if not c.error and c.turn.result and _occurs(low, c.turn.result.lower()):
            return "call", c
    return None


def swapped(r: Reading, err: Call, fix: Call) -> tuple[str, str | None] | None:
    """(a phrase after "with <key> changed", the look-up tool whose answer held the new value when
    the old one stood in no answer or user message) for a retry that changed one named argument
    from one short text value to another; None otherwise."""
    x, y = err.turn.arguments, fix.turn.arguments
    if not (isinstance(x, dict) and isinstance(y, dict)):
        return None
    changed = [k for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
    if len(changed) != 1:
        return None
    old, new = x.get(changed[0]), y.get(changed[0])
    if not all(isinstance(v, str) and 4 <= len(v) <= _LONGEST and "\n" not in v for v in (old, new)):
        return None
    before, after = _source(r, old, err.n), _source(r, new, fix.n)

    def said(where: tuple[str, Call | None] | None, value: str, at: int) -> str:
        if where is None:
            digits = _users_digits(r, value, at)
            return ("held in no answer or user message before it" if digits is None else
                    f"held in no answer before it, only its digits {digits} in a user's message")
        kind, c = where
        return "given in a user's message" if kind == "user" else f"returned by {c.name} at turn {c.n}"

    phrase = (f' from "{clip(old, _LONGEST)}", {said(before, old, err.n)}, to "{clip(new, _LONGEST)}", '
              f"{said(after, new, fix.n)}")
    tool = after[1].name if after is not None and after[0] == "call" and before is None and not after[1].writes else None
    return phrase, tool
