"""Comparisons the agent wrote between two named things ("A is further north than B", "A is
older than B"), checked only against values the run's own look-ups returned: coordinates
for a direction, the birth year a page opens with for an age. claim_checks.py settles a
comparison of two numbers the agent wrote; here the numbers must come from the log, never
from what the compiler knows. Where the look-ups give both values, a comparison that does not
hold is said so with them; where no look-up before it gave any value of the kind compared,
the comparison is said to rest on none. Anything else yields nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import lazy_re
from .claim_facts import _own_words
from .reading import Call, Reading
from .schema import KeyFact
from .text import clip

# a name as a question or a page writes it: capitalised words, a comma before a region ("The Colony, Texas")
_NAME = r"(?:[A-Z][\w'\u2019.&-]*)(?:,?\s+(?:[A-Z][\w'\u2019.&-]*|of|the))*"
# the other side ends where the sentence or its clause does: ", so", " and", a stop
_END = r"(?=,?\s+(?:so|and|which|but|because|while|therefore|hence)\b|\s*[.;:!?]|\s*$)"
_DIRECTION = lazy_re.compile(rf"(?P<a>{_NAME})\s+(?:is|was|lies|sits)\s+(?:located\s+)?(?:(?:further|farther|more)\s+)?"
                             rf"(?P<word>north|south|east|west)(?:ward)?\s+(?:than|of)\s+(?:that of\s+)?(?P<b>{_NAME}){_END}")
_AGE = lazy_re.compile(rf"(?P<a>{_NAME})\s+(?:is|was)\s+(?P<word>older|younger)\s+than\s+(?P<b>{_NAME}){_END}")
_SENTENCE = lazy_re.compile(r"(?<=[.!?])\s+|\n+")

# a coordinate as pages write it: 33°05′N, 42.24°N, 71° 10' 0" W
_COORD = lazy_re.compile(r"(?<![\d.])(\d{1,3}(?:\.\d+)?)\s*°\s*(?:(\d{1,2}(?:\.\d+)?)\s*[′']\s*)?"
                         r"(?:(\d{1,2}(?:\.\d+)?)\s*[″\"]\s*)?([NSEW])\b")
# a page's opening parenthesis giving a birth: "(born 12 March 1979)", "(28 June 1909 – 22 October 1998)"
# (the year after "born", or the first year of a span of life)
_BORN = lazy_re.compile(r"\([^()]*?(?:\bborn\b[^()\d]*?(?:\d{1,2}\s+\w+\s+|\w+\s+\d{1,2},\s+)?(\d{4})\b|\b(\d{4})\s*[\u2013-])[^()]*\)")


@dataclass
class _Claim:
    turn: int
    text: str  # the words the comparison was read from
    a: str
    b: str
    word: str  # north / south / east / west / older / younger


def _claims(r: Reading) -> list[_Claim]:
    out = []
    for turn, text in _own_words(r):
        low = text.lower()
        if " than " not in low and not any(f" {w} of " in low for w in ("north", "south", "east", "west")):
            continue
        for sentence in _SENTENCE.split(text):
            for pattern in (_DIRECTION, _AGE):
                m = pattern.search(sentence)
                if m and m.group("a").strip() and m.group("b").strip():
                    out.append(_Claim(turn, " ".join(m.group(0).split()), _side(m.group("a")), _side(m.group("b")),
                                      m.group("word").lower()))
    return out


def _side(text: str) -> str:
    """A name as the claim wrote it, without a leading clause ("So X" -> "X", "I think X" is left)."""
    text = " ".join(text.split()).strip(" ,")
    return re.sub(r"^(?:So|Thus|Therefore|Hence|Then|And|But)\s+,?", "", text).strip() or text


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"[^\W_]+", text.casefold())) - {"the"}


def _pages_about(r: Reading, name: str, before: int) -> list[Call]:
    """Look-ups before a turn that went through and were sent for the name (every word of one
    is a word of the other) or whose answer opens with it."""
    own = _tokens(name)
    out = []
    for c in r.calls:
        if c.n >= before or c.error or c.writes or not c.turn.result or not isinstance(c.turn.arguments, str):
            continue
        sent = _tokens(c.turn.arguments)
        if own and sent and (sent <= own or own <= sent) or c.turn.result.casefold().startswith(name.casefold()):
            out.append(c)
    return out


def _degrees(m: re.Match) -> float:
    value = float(m.group(1)) + float(m.group(2) or 0) / 60 + float(m.group(3) or 0) / 3600
    return -value if m.group(4) in "SW" else value


_AXIS = {"north": "NS", "south": "NS", "east": "EW", "west": "EW"}


def _value(c: Call, word: str) -> tuple[float, str] | None:
    """The one value of the kind compared that a look-up gave, and how it wrote it: a coordinate
    on the axis, or the birth year its opening parenthesis gives; None when none or several."""
    text = c.turn.result or ""
    if word in _AXIS:
        found = {round(_degrees(m), 4): " ".join(m.group(0).split()) for m in _COORD.finditer(text)
                 if m.group(4) in _AXIS[word]}
        return next(iter(found.items())) if len(found) == 1 else None
    m = _BORN.search(text[:300])
    year = m and (m.group(1) or m.group(2))
    return (float(year), year) if year else None


def _holds(word: str, a: float, b: float) -> bool:
    return {"north": a > b, "east": a > b, "south": a < b, "west": a < b,
            "older": a < b, "younger": a > b}[word]


def named_comparison_facts(r: Reading) -> list[KeyFact]:
    """The first comparison of two named things the agent wrote that the look-ups settle or
    that rests on no value of its kind."""
    for claim in _claims(r):
        sides = []
        for name in (claim.a, claim.b):
            values = {(v, c.n) for c in _pages_about(r, name, claim.turn) if (v := _value(c, claim.word)) is not None}
            sides.append(min(values, key=lambda x: x[1]) if len({v[0] for v, _ in values}) == 1 else None)
        said = f"it wrote \"{clip(claim.text, 110)}\""
        if all(sides):
            ((va, wa), ta), ((vb, wb), tb) = sides
            if va == vb or _holds(claim.word, va, vb):
                continue  # equal years or places settle nothing either way
            truth = (f"the look-ups place {claim.a} at {wa} (turn {ta}) and {claim.b} at {wb} (turn {tb})"
                     if claim.word in _AXIS else
                     f"the look-ups give {claim.a}'s birth year as {wa} (turn {ta}) and {claim.b}'s as {wb} (turn {tb})")
            # its own kind, not "comparison": the lessons say that one of two numbers the agent wrote
            return [KeyFact(f"The agent's comparison at turn {claim.turn} is wrong: {truth} ({said}).",
                            [ta, tb, claim.turn], "named-comparison", [claim.word])]
        if claim.word in _AXIS and not any(_COORD.search(c.turn.result or "") for c in r.calls
                                           if c.n < claim.turn and not c.error):
            return [KeyFact(f"The agent's comparison at turn {claim.turn} rests on no value a look-up returned: no "
                            f"look-up before it gave coordinates for {claim.a} or {claim.b} ({said}): find the values compared "
                            "before choosing.", [claim.turn], "unsupported-comparison", [claim.word])]
    return []
