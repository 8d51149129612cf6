"""Whether any earlier turn holds a value in any common rendering: the test behind every sentence
that says no earlier turn held an argument's value. A number is also found as ``100.0``,
``$100``, ``1,000`` or inside a JSON number; an ISO date also in its spelled forms (``April 12,
2001``, ``12 April 2001``, ``04/12/2001``, ``May 25`` without the year); any text whatever its
case or its ``_`` written as a space or a hyphen, and a word also as its plural, possessive or
adjective. Every turn counts: observations and errors,
user, system and agent messages, the arguments of earlier calls.

The renderings are derived from the value itself (the standard library spells the months), so
nothing here knows a benchmark."""

from __future__ import annotations

import calendar
import datetime as dt
import json
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from .reading import Reading


def is_default(value: Any) -> bool:
    """A value a call sends when nothing was asked for (``0``, ``""``, ``false``, an empty list):
    no turn needs to have shown it, so it is never said to be unsourced."""
    if value is None or isinstance(value, bool):
        return True
    if isinstance(value, (int, float)):
        return value == 0
    if isinstance(value, str):
        text = value.strip()
        return not text or _number(text) == 0
    return isinstance(value, (list, dict)) and not value


def _number(text: str) -> Decimal | None:
    if not re.fullmatch(r"[-+]?\d+(?:\.\d+)?", text):
        return None
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def _number_pattern(n: Decimal) -> str:
    """A number as a token: with or without a sign, thousands commas and trailing zeros after
    the point (``305`` finds ``305``, ``305.0``, ``$305``, ``-305``, ``"price": 305``)."""
    n = abs(n)
    if n == n.to_integral_value():
        whole = int(n)
        forms = {str(whole), f"{whole:,}"}
        body = "(?:" + "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True)) + r")(?:\.0+)?"
    else:
        text = format(n.normalize(), "f")
        body = re.escape(text) + "0*"
    return rf"(?<![\d.,]){body}(?!\.?\d)(?!,\d{{3}})"


_ISO_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?")


def _date_pattern(day: dt.date) -> str:
    """An ISO date in its spelled and numeric forms, months named by the standard library."""
    names = {calendar.month_name[day.month], calendar.month_abbr[day.month]}
    month = "(?:" + "|".join(re.escape(m) for m in sorted(names, key=len, reverse=True)) + r")\.?"
    d = rf"0?{day.day}(?:st|nd|rd|th)?(?!\d)"
    y = str(day.year)
    m = rf"0?{day.month}"
    dd = rf"0?{day.day}"
    forms = [
        rf"{month}\s+{d}(?:,?\s+{y})?",  # April 12, 2001 / April 12
        rf"{d}(?:\s+of)?\s+{month}(?:,?\s+{y})?",  # 12 April 2001 / 12th of April
        rf"{y},?\s+{month}\s+{d}",  # 2001 April 12
        rf"{y}[-/.]{m}[-/.]{dd}",  # 2001-04-12, 2001/4/12
        rf"{m}[-/.]{dd}[-/.]{y}",  # 04/12/2001
        rf"{dd}[-/.]{m}[-/.]{y}",  # 12.04.2001
    ]
    return r"(?<![\w])(?:" + "|".join(forms) + r")(?![\w])"


@lru_cache(maxsize=4096)
def rendering_pattern(text: str) -> re.Pattern:
    """The regex (lower-case text) that finds a value's text in any of its common renderings."""
    stripped = text.strip()
    alternatives = []
    n = _number(stripped)
    if n is not None:
        alternatives.append(_number_pattern(n))
    iso = _ISO_DATE.fullmatch(stripped)
    if iso:
        try:
            alternatives.append(_date_pattern(dt.date(*map(int, iso.groups()))))
        except ValueError:
            pass
    if alternatives:  # a number or a date: its renderings above include its own text
        return re.compile("|".join(alternatives), re.I)
    folded = " ".join(stripped.lower().split())
    spellings = {folded} | ({folded.replace("_", sep) for sep in " -"} if "_" in folded else set())
    words = "|".join(r"\s+".join(map(re.escape, s.split(" "))) for s in sorted(spellings))
    # a word also in its English plural, possessive or adjective (``Vikings`` holds ``Viking``,
    # ``Indian`` holds ``India``): in doubt, it was shown; ``list`` does not hold ``Li``
    end = (r"(?:s|es|'s|n|an)?(?!\w)" if folded[-1:].isalpha() else r"(?!\w)" if re.search(r"\w$", folded) else "")
    alternatives.append((r"(?<!\w)" if re.match(r"\w", folded) else "") + f"(?:{words})" + end)
    return re.compile("|".join(alternatives), re.I)


@lru_cache(maxsize=4096)
def _needles(text: str) -> tuple[tuple[str, ...], bool]:
    """Literal texts one of which every match of ``rendering_pattern(text)`` holds, and whether
    they hold letters (then they are lower case, to be looked for in a text's lower case, which
    stands for re.I only in ASCII text). A number holds its digits with or without commas, a
    date its day, a text the head of its first word; () when there is no such literal."""
    stripped = text.strip()
    n = _number(stripped)
    if n is not None:
        n = abs(n)
        if n == n.to_integral_value():
            return (str(int(n)), f"{int(n):,}"), False
        return (format(n.normalize(), "f"),), False
    iso = _ISO_DATE.fullmatch(stripped)
    if iso:
        try:
            return (str(dt.date(*map(int, iso.groups())).day),), False
        except ValueError:
            pass
    head = re.split(r"[ _]", " ".join(stripped.lower().split()))[0]
    return ((head,), True) if head and head.isascii() else ((), False)


def _turn_text(t) -> str:
    parts = [t.content, t.reasoning, t.result]
    if t.arguments is not None:
        parts.append(t.arguments if isinstance(t.arguments, str) else json.dumps(t.arguments, ensure_ascii=False))
    return "\n".join(p for p in parts if isinstance(p, str) and p)


def _texts(r: Reading) -> list[tuple[int, str, str | None]]:
    """Every turn's whole text (message, reasoning, arguments, answer) and its lower case when it
    is ASCII (else None), made once per run."""
    texts = r.memo.get("renderings.texts")
    if texts is None:
        texts = r.memo["renderings.texts"] = [(t.turn, body, body.lower() if body.isascii() else None)
                                              for t in r.run.turns for body in (_turn_text(t),)]
    return texts


def held_before(r: Reading, value: Any, turn: int) -> int | None:
    """The last turn before ``turn`` whose text holds ``value`` in any common rendering (cached
    per run and value), or None: only then may a page say no earlier turn held it."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    key = f"renderings.held:{text}"
    found = r.memo.get(key)
    if found is None:  # the turns holding it, found once per distinct value of the run
        needles, lettered = _needles(text)
        # a turn holding none of the literals every rendering holds is passed over without the
        # pattern (compiled only when some turn may hold the value)
        maybe = [(n, body) for n, body, low in _texts(r) if not needles
                 or (any(x in low for x in needles) if lettered and low is not None
                     else lettered or any(x in body for x in needles))]
        pattern = rendering_pattern(text) if maybe else None
        found = r.memo[key] = [n for n, body in maybe if pattern.search(body)]
    hit = next((n for n in reversed(found) if n < turn), None)
    if hit is None and isinstance(value, str) and _ABSOLUTE_PATH.fullmatch(value):
        # an absolute path the agent built from the working folder and a relative path it was
        # shown ("tally/stats.py" in the request, "/home/dev/tally/tally/stats.py" in the call)
        parts = value.strip("/").split("/")
        tails = ["/".join(parts[i:]) for i in range(1, len(parts) - 1)]
        return max((n for t in tails if (n := held_before(r, t, turn)) is not None), default=None)
    return hit


# an absolute file path of three parts or more, its last one a file name with an extension
_ABSOLUTE_PATH = re.compile(r"(?:/[\w.-]+){2,}/[\w-]+\.\w+")
