"""Claims in a run's own words that arithmetic alone can settle.

An agent often writes the comparison it acts on ("1985 < 1965", "born 1972, is older than
Y, born 1968", "$368 is within the $200 budget"), and a user often states a limit or a count
("my budget is $200", "there were 3 of us"). These are parsed from the text here, with no
knowledge of the run, and checked by plain comparison; a page states only the ones that are
false (a comparison) or contradicted by a number the log holds (a limit, a count). Anything
the parser is unsure of (two numbers of different units, a word it does not read as a
comparison, a number that is part of an id) yields nothing: a wrong verdict is worse than none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .. import lazy_re
from .consent import _Caseless

# a number as written: "$1,002.50", "1985", "2024-05-14" (ISO dates compare as dates)
_NUM = r"(?P<{0}>(?<![\w.$/:-])(?:\$\s?)?(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:\s?%)?(?![\w/:-]|\.\d|,\d))"
_LEFT, _RIGHT = _NUM.format("left"), _NUM.format("right")

# what may stand between a number and the operator: a short parenthesis without digits ("1985
# (Lucie) < 1965"), or the closing mark of one the number sits in ("Lucie (1985) < Rafa (1965)")
_LEFT_GAP = r"(?:\s*\([^()\d<>=\n]{1,40}\)|\s*\))?\s+"
# after the operator: a name the number follows in a parenthesis ("< Rafa (1965)", "< Rafa (born 1965)")
_RIGHT_GAP = r"\s+(?:[^()\d<>=\n.;:!?,]{1,40}\((?:[a-z]{1,12}\.?\s)?)?"
_SYMBOL = lazy_re.compile(_LEFT + _LEFT_GAP + r"(?P<op><=|>=|≤|≥|<|>)" + _RIGHT_GAP + _RIGHT)

# comparative words: the relation they assert between the number before and the one after
_WORDS = {
    "less than": "<", "fewer than": "<", "lower than": "<", "smaller than": "<", "cheaper than": "<",
    "more than": ">", "greater than": ">", "higher than": ">", "larger than": ">", "bigger than": ">",
    "more expensive than": ">",
    "earlier than": "<", "later than": ">",
    "below": "<", "under": "<", "within": "<=", "at most": "<=", "no more than": "<=",
    "above": ">", "over": ">", "exceeds": ">", "at least": ">=",
    "older than": "older", "younger than": "younger",
}
_WORD = "|".join(sorted(map(re.escape, _WORDS), key=len, reverse=True))
# the number, then (through a parenthesis' end and a name) a verb of being, then the comparative,
# then (through a few words such as "the", "your", a name and a parenthesis) the other number
_PHRASE = lazy_re.compile(
    _LEFT + r"\)?,?(?:\s+[^()\d<>=\n.;:!?]{0,30}?)?\s+(?:is|was|are|were|'s|being|which is|which was)\s+(?:still\s+|also\s+|well\s+)?(?P<word>"
    + _WORD + r")\s+(?:[^\d\n.;:!?<>=]{0,40}?\(?(?:[a-z]{1,12}\.?\s)?)?" + _RIGHT, re.IGNORECASE)

# a cheap first look: a comparison needs a digit and an operator or a comparative word
_DIGIT = lazy_re.compile(r"\d")
_REACH = 120
_SYMBOL_CUE = lazy_re.compile(r"\d[^<>≤≥\n]{0,45}\s[<>≤≥]=?\s")
# the last word of every comparative: in ASCII text, lower() finds them wherever the case-blind
# pattern could
_CUE_WORDS = tuple(dict.fromkeys(w.split()[-1] for w in _WORDS))
_WORD_CUE = lazy_re.compile(r"\b(?:" + "|".join(_CUE_WORDS) + r")\b", re.IGNORECASE)
_WORD_CUE_LOW = lazy_re.compile(_WORD_CUE.pattern)  # the same, read in an ASCII text's lower case: several times faster
_OPERATORS = "<>≤≥"  # one of them is in every symbol cue

_FUNCTION_WORDS = {"is", "was", "are", "were", "be", "than", "and", "or", "the", "a", "an", "in", "on", "at", "of",
                   "to", "for", "which", "that", "so", "but", "it", "as", "by", "with", "from"}


@dataclass(frozen=True)
class Comparison:
    """One comparison as written: its two numbers (as written), the relation, and whether it holds."""

    left: str
    relation: str  # "<", ">", "<=", ">="
    right: str
    holds: bool
    text: str  # the words it was read from
    dated: bool  # both sides are years or dates: "earlier" and "later" say it truly


def _value(written: str) -> tuple[str, object] | None:
    """(kind, comparable value) of a number as written; kinds must match to compare."""
    s = written.replace(" ", "")
    if "-" in s:
        try:
            return "date", date.fromisoformat(s.lstrip("$"))
        except ValueError:
            return None
    kind = "money" if s.startswith("$") else "percent" if s.endswith("%") else "number"
    try:
        return kind, float(s.strip("$%").replace(",", ""))
    except ValueError:
        return None


def _is_year(written: str) -> bool:
    return bool(re.fullmatch(r"1\d{3}|20\d{2}", written))


def _unit_after(text: str, end: int) -> str | None:
    """The word right after a number, when it is a unit-like word ("3 passengers", "24 hours")."""
    m = re.match(r"\s?([A-Za-z]+)", text[end:])
    if not m or m.group(1).lower() in _FUNCTION_WORDS or m.group(1)[0].isupper():
        return None
    return m.group(1).lower().rstrip("s")


def _relation_of(m: re.Match, text: str) -> str | None:
    if "op" in m.groupdict() and m.group("op"):
        return {"≤": "<=", "≥": ">="}.get(m.group("op"), m.group("op"))
    relation = _WORDS[" ".join(m.group("word").lower().split())]
    if relation in ("older", "younger"):  # by birth or founding year: older is the earlier year; by age, the larger
        left, right = m.group("left"), m.group("right")
        if _is_year(left) and _is_year(right):
            return "<" if relation == "older" else ">"
        if all(re.fullmatch(r"\d{1,3}", x) for x in (left, right)):
            return ">" if relation == "older" else "<"
        return None
    return relation


_CHECK = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


def comparisons(text: str) -> list[Comparison]:
    """Every comparison of two numbers of one kind the text writes, in order."""
    out: list[Comparison] = []
    if not text or not _DIGIT.search(text):
        return out
    spans: list[tuple[int, int]] = []
    # each pattern is tried only around its cue (an operator, a comparative word): a comparison
    # reaches at most about a hundred characters either side of it, and most texts hold none
    # and holds two numbers: a window with no digit is passed over before the pattern is tried.
    # Nor is a cue looked for in a text that lacks its characters (a plain substring test)
    cues = []
    if any(op in text for op in _OPERATORS):
        cues.append((_SYMBOL, _SYMBOL_CUE))
    low = text.lower()
    if not text.isascii():
        cues.append((_PHRASE, _WORD_CUE))
    elif any(w in low for w in _CUE_WORDS):  # ASCII: its lower case holds the cues at the same offsets
        cues.append((_PHRASE, _WORD_CUE_LOW))
    found = [m for pattern, cue in cues
             for at in cue.finditer(low if cue is _WORD_CUE_LOW else text)
             if _DIGIT.search(text, max(0, at.start() - _REACH), at.end() + _REACH)
             for m in pattern.finditer(text, max(0, at.start() - _REACH), at.end() + _REACH)]
    for m in sorted(found, key=lambda m: (m.start(), -m.end())):
        if any(s < m.end() and m.start() < e for s, e in spans):
            continue
        relation = _relation_of(m, text)
        left, right = _value(m.group("left")), _value(m.group("right"))
        if relation is None or left is None or right is None or left[0] != right[0]:
            continue
        lw, rw = m.group("left").strip(), m.group("right").strip()
        if left[0] == "number":  # a bare number's unit is the word after it: both the same, or neither
            units = _unit_after(text, m.end("left")), _unit_after(text, m.end("right"))
            if units[0] != units[1] or _is_year(lw) != _is_year(rw):
                continue  # "4 were more than 30 years", "in 2010 it was less than 300": not one quantity
        spans.append((m.start(), m.end()))
        dated = left[0] == "date" or (_is_year(lw) and _is_year(rw))
        out.append(Comparison(lw, relation, rw, _CHECK[relation](left[1], right[1]),
                              " ".join(m.group(0).split()), dated))
    return out


def wrong_phrase(c: Comparison) -> str:
    """What is true instead of a comparison that does not hold: "1985 is later than 1965"."""
    a, b = _value(c.left)[1], _value(c.right)[1]
    if a == b:
        return f"{c.left} and {c.right} are equal"
    bigger = ("later" if c.dated else "more") if a > b else ("earlier" if c.dated else "less")
    return f"{c.left} is {bigger} than {c.right}"


# a money limit: "a budget of $200", "up to $500", "$300 at most", "no more than $150", "less than $1000"
_LIMIT = lazy_re.compile(
    r"(?:budget|limit|maximum|at most|no more than|not more than|up to|not exceed(?:ing)?|less than|under|below)\W+"
    r"(?:[a-z]+\W+){0,3}?"
    r"\$\s?(?P<a>\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d|,\d)"
    r"|\$\s?(?P<b>\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?!\d|,\d)\s+(?:at most|max(?:imum)?|budget|limit)\b",
    re.IGNORECASE)


def money_limits(text: str) -> list[float]:
    """The money limits a message states, in order (each written once)."""
    out: list[float] = []
    if "$" not in (text or ""):
        return out
    for m in _LIMIT.finditer(text):
        value = float((m.group("a") or m.group("b")).replace(",", ""))
        if value not in out:
            out.append(value)
    return out


_COUNT_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10}


_COUNT_CUE = _Caseless(r"\bhow many\b|\bthere (?:are|were|is|was)\b", needs=("how many", "there "))  # read in every user message


def stated_count(text: str, noun: str) -> int | None:
    """The count a message asserts for the things ``noun`` (a plural such as "passengers") names:
    "there were 3 passengers", or a message that asks "how many passengers" and holds exactly
    one small whole number (digits or a word from two to ten) and no other number (a date, a
    price or an id makes it unsure). "Book 3 passengers" asks for something new, not a count
    of what is there, and yields nothing."""
    if not text or not noun or not _COUNT_CUE.search(text):
        return None
    written = noun[:-1] if noun.endswith("s") else noun  # in either form of the noun
    if text.isascii() and written.isascii() and written.lower() not in text.lower():
        return None  # the noun is nowhere in the message: no pattern is built for it
    forms = rf"(?:{re.escape(noun)}|{re.escape(noun[:-1])})" if noun.endswith("s") else re.escape(noun)
    count = r"(\d{1,2}|" + "|".join(w for w in _COUNT_WORDS if w != "one") + ")"
    m = re.search(rf"\bthere (?:are|were|is|was) (?:only |just |actually )?{count} {forms}\b", text, re.IGNORECASE)
    if m is None and re.search(rf"\bhow many {forms}\b", text, re.IGNORECASE):
        numbers = re.findall(r"(?<![\w.$,:/-])\d+(?:[.,:/-]\d+)*(?![\w%])|\$\s?\d", text)
        words = re.findall(r"\b(?:" + "|".join(_COUNT_WORDS) + r")\b", text, re.IGNORECASE)
        if len(numbers) + len(words) == 1:
            # the number said as the answer: right after a verb of being or having, ending its sentence
            m = re.search(rf"\b(?:are|were|is|was|had|has|have) (?:only |just ){{0,1}}{count}(?=\s*(?:[.!?]|$))",
                          text, re.IGNORECASE)
    if m is None:
        return None
    said = m.group(1).lower()
    return int(said) if said.isdigit() else _COUNT_WORDS[said]
