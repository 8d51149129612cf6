"""The value a retry changed to get past an error, and where each side of it came from: an id the
agent made up from the user's digits ("credit_card_7334") against the one a look-up listed
("credit_card_9074831", from get_user_details). "payment_id changed" tells a reader which argument
to fix; the two values and their sources tell it how.
"""

from __future__ import annotations

import re

from .arguments import check_arguments
from .reading import Call, Reading, _occurs, t_is_user
from .text import clip

_LONGEST = 60  # a longer value (a list, a paragraph) is no value to quote beside its key
_DIGITS = re.compile(r"\d{3,}")


def _users_digits(r: Reading, value: str, before: int) -> str | None:
    """A run of three digits or more of ``value`` that a user's message before ``before`` wrote
    as a number of its own ("ending in 7334"): the value was pieced together from it."""
    said = [t.content for t in r.run.turns if t.turn < before and t_is_user(t) and t.content]
    return next((d for d in _DIGITS.findall(value) if any(_occurs(d, text.lower()) for text in said)), None)


def _seen(r: Reading, c: Call, key: str):
    """The argument check (arguments.check_arguments) of ``c``'s top-level argument ``key``: the
    earlier turn that showed its value, as every page says where an argument came from."""
    return next((a for a in check_arguments(r, c.turn) if a.path == key), None)


def _first_shown(r: Reading, value: str, latest: int) -> Call:
    """The first call whose answer held ``value`` as written, the one at ``latest`` at the latest."""
    low = value.lower()
    return next(c for c in r.calls if (c.n == latest or (c.n < latest and not c.error and c.turn.result
                                                          and _occurs(low, c.turn.result.lower()))))


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
    before, after = _seen(r, err, changed[0]), _seen(r, fix, changed[0])
    if before is None or after is None:
        return None
    calls = {c.n: c for c in r.calls}

    def said(check, value: str, at: int) -> str:
        if check.seen_at is None:
            digits = _users_digits(r, value, at)
            return ("held as written in no answer or user message before it" if digits is None else
                    f"held as written in no answer before it, only its digits {digits} in a user's message")
        if check.seen_in == "user message":
            return f"given in a user's message (turn {check.seen_at})"
        if check.seen_in == "observation" and check.seen_at in calls:
            first = _first_shown(r, value, check.seen_at)  # where it could first be learned: a change's echo is no source
            return f"returned by {first.name} at turn {first.n}"
        return f"sent by an earlier call (turn {check.seen_at})"

    phrase = (f' from "{clip(old, _LONGEST)}", {said(before, old, err.n)}, to "{clip(new, _LONGEST)}", '
              f"{said(after, new, fix.n)}")
    looked = after.seen_in == "observation" and after.seen_at in calls and not calls[after.seen_at].writes
    tool = calls[after.seen_at].name if looked and before.seen_at is None else None
    return phrase, tool
