"""Session dates and relative time expressions ("last week", "two days ago") resolved against
them. ``datetime`` is imported only inside the functions: a query never parses a date."""

from __future__ import annotations

import re

from .text import MONTHS, WEEKDAYS, LazyRegex

TYPE_CHECKING = False  # not typing's: see above
if TYPE_CHECKING:
    from datetime import date


_DATE_RE = LazyRegex(r"(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})")
_DATE_RE_US = LazyRegex(r"([A-Za-z]+)\s+(\d{1,2}),?\s+(\d{4})")


def parse_date(value: str | None) -> date | None:
    """'1:56 pm on 8 May, 2023', '8 May 2023', 'May 8, 2023', or ISO 8601."""
    from datetime import date, datetime

    if not value:
        return None
    s = str(value).strip()
    try:
        return datetime.fromisoformat(s.replace("Z", "+00:00")).date()
    except ValueError:
        pass
    m = _DATE_RE.search(s)
    if m and m.group(2).lower() in MONTHS:
        return date(int(m.group(3)), MONTHS.index(m.group(2).lower()) + 1, int(m.group(1)))
    m = _DATE_RE_US.search(s)
    if m and m.group(1).lower() in MONTHS:
        return date(int(m.group(3)), MONTHS.index(m.group(1).lower()) + 1, int(m.group(2)))
    return None


def fmt_date(d: date) -> str:
    return f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"


# source: closed class - English cardinal numerals and vague quantities
_NUM = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "a few": 3, "few": 3,
        "several": 3}
# source: closed class - English deictic and relative time expressions
_REL = LazyRegex(
    r"\b(yesterday|today|tonight|tomorrow|last night|this morning|"
    r"(last|next|this|past)\s+(week|weekend|month|year|" + "|".join(WEEKDAYS) + r")|"
    r"(a|one|two|three|four|five|six|a few|few|several|\d+)\s+(day|week|month|year)s?\s+ago)\b", re.I)


def resolve_relative(text: str, anchor: date | None) -> list[tuple[str, str]]:
    """Relative temporal expressions in ``text`` resolved against the session date.
    Returns ``[(surface, resolved)]``; nothing when there is no anchor date."""
    from datetime import timedelta

    if anchor is None:
        return []
    out: list[tuple[str, str]] = []
    for m in _REL.finditer(text):
        surface = m.group(0)
        low = surface.lower()
        res: str | None = None
        if low in ("today", "tonight", "this morning"):
            res = fmt_date(anchor)
        elif low in ("yesterday", "last night"):
            res = fmt_date(anchor - timedelta(days=1))
        elif low == "tomorrow":
            res = fmt_date(anchor + timedelta(days=1))
        elif m.group(2):
            which, unit = m.group(2).lower(), m.group(3).lower()
            if unit in WEEKDAYS:
                wd = WEEKDAYS.index(unit)
                if which in ("last", "past"):
                    delta = (anchor.weekday() - wd) % 7 or 7
                    res = fmt_date(anchor - timedelta(days=delta))
                elif which == "next":
                    delta = (wd - anchor.weekday()) % 7 or 7
                    res = fmt_date(anchor + timedelta(days=delta))
                else:
                    delta = (wd - anchor.weekday()) % 7
                    res = fmt_date(anchor + timedelta(days=delta))
            elif unit in ("week", "weekend"):
                if which in ("last", "past"):
                    res = f"the {unit} before {fmt_date(anchor)}"
                elif which == "next":
                    res = f"the {unit} after {fmt_date(anchor)}"
                else:
                    res = f"the {unit} of {fmt_date(anchor)}"
            elif unit == "month":
                y, mo = anchor.year, anchor.month + (-1 if which in ("last", "past") else 1 if which == "next" else 0)
                if mo == 0:
                    y, mo = y - 1, 12
                elif mo == 13:
                    y, mo = y + 1, 1
                res = f"{MONTHS[mo - 1].capitalize()} {y}"
            elif unit == "year":
                res = str(anchor.year + (-1 if which in ("last", "past") else 1 if which == "next" else 0))
        elif m.group(4):
            n_raw = m.group(4).lower()
            n = int(n_raw) if n_raw.isdecimal() else _NUM.get(n_raw, 1)
            unit = m.group(5).lower()
            if unit == "day":
                res = fmt_date(anchor - timedelta(days=n))
            elif unit == "week":
                res = f"the week of {fmt_date(anchor - timedelta(days=7 * n))}"
            elif unit == "month":
                total = anchor.year * 12 + anchor.month - 1 - n
                res = f"{MONTHS[total % 12].capitalize()} {total // 12}"
            elif unit == "year":
                res = str(anchor.year - n)
        if res:
            out.append((surface, res))
    return out
