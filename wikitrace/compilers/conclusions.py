"""The conclusion an agent draws from two dates it compared, checked against its own figures.

An agent may get the numbers right and still name the wrong side: "1963 (Ronald Koeman) < 1974
(Julio Cruz), so Julio Cruz was born first". Nothing outside the sentence is needed to see it: its
two years and whose each one is, the side its conclusion names first, and the word that orders them (first,
earlier, older on one hand; later, last, younger on the other). Only a conclusion about one of the
two labelled sides, with one such word and no negation, is read, and only where the task itself asks
about that order; anything else yields nothing. A comparison whose numbers are themselves wrong is
claim_facts.wrong_comparisons' case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .claim_facts import _own_words
from .reading import Reading
from .schema import KeyFact
from .text import clip, stands_alone

_YEAR = r"\b(?:1\d{3}|20\d{2})\b"
_LABEL = r"[^()\d<>=\n]{1,80}?"
_OP = r"(?P<op><|>|≤|≥|is (?:earlier|later|before|after|less|more|smaller|greater) than)"
_THEN = r"[,;]?\s+(?:so|therefore|thus|hence|which means)\s+(?P<then>[^.;!?\n]{1,160})"
# "1963 (Ronald Koeman) < 1974 (Julio Cruz), so …" and "Ronald Koeman (1963) < Julio Cruz (1974), so …"
_YEAR_FIRST = re.compile(rf"(?P<x>{_YEAR})\s*\((?P<xl>{_LABEL})\)\s*{_OP}\s*(?P<y>{_YEAR})\s*\((?P<yl>{_LABEL})\)"
                         rf"{_THEN}")
_NAME_FIRST = re.compile(rf"(?P<xl>(?:[A-Z][\w'’.&-]*)(?:\s+(?:[A-Z][\w'’.&-]*|of|the|de|la|von|van)){{0,6}})"
                         rf"\s*\((?:born\s+)?(?P<x>{_YEAR})\)\s*{_OP}\s*"
                         rf"(?P<yl>(?:[A-Z][\w'’.&-]*)(?:\s+(?:[A-Z][\w'’.&-]*|of|the|de|la|von|van)){{0,6}})"
                         rf"\s*\((?:born\s+)?(?P<y>{_YEAR})\){_THEN}")
_EARLY = ("first", "earlier", "earliest", "before", "older", "oldest", "sooner")
_LATE = ("later", "latest", "last", "after", "younger", "youngest", "newer", "newest", "more recent", "more recently",
         "most recent", "most recently")
_ORDER = re.compile(r"\b(" + "|".join(sorted(_EARLY + _LATE, key=len, reverse=True)) + r")\b", re.IGNORECASE)
_ORDER_WORDS = tuple(sorted(_EARLY + _LATE, key=len, reverse=True))


def _names_order(text: str) -> bool:
    """Whether ``_ORDER`` finds a word in ``text``. An ASCII text is searched word by word in its
    lower case (a substring scan each), not by the pattern: its leading word boundary hides the
    words' first letters from the engine, which then tries every alternative at every offset,
    a tenth of a millisecond for a task statement of every run."""
    if not text.isascii():
        return _ORDER.search(text) is not None
    low = text.lower()
    return any(stands_alone(word, low) for word in _ORDER_WORDS)


_NEGATION = re.compile(r"\b(?:not|never|neither|nor)\b|n't\b", re.IGNORECASE)


@dataclass(frozen=True)
class Conclusion:
    """A conclusion drawn from two labelled years, and the side the word in it truly picks."""

    text: str  # the words it was read from
    earlier: tuple[str, str]  # (label, year) of the earlier side
    later: tuple[str, str]
    named: str  # the side the conclusion is about
    word: str  # the word that orders them, as written
    picks: str  # the side that word picks by the figures

    @property
    def reversed(self) -> bool:
        return self.named != self.picks


def conclusions(text: str) -> list[Conclusion]:
    """Every conclusion about one side of two labelled years the text draws, in order."""
    out: list[Conclusion] = []
    if not text or "(" not in text or not re.search(_YEAR, text):
        return out
    for pattern in (_YEAR_FIRST, _NAME_FIRST):
        for m in pattern.finditer(text):
            found = _read(m)
            if found is not None and all(found.text != c.text for c in out):
                out.append(found)
    return out


def _read(m: re.Match) -> Conclusion | None:
    sides = [(" ".join(m.group("xl").split()).strip(" ,"), m.group("x")),
             (" ".join(m.group("yl").split()).strip(" ,"), m.group("y"))]
    op = m.group("op")
    smaller_first = op in ("<", "≤") or any(w in op for w in ("earlier", "before", "less", "smaller"))
    if sides[0][1] == sides[1][1] or not all(label for label, _ in sides) or (
            smaller_first != (int(sides[0][1]) < int(sides[1][1]))):
        return None  # equal years settle nothing; wrong figures are a wrong comparison, said as such
    then = m.group("then")
    low = then.casefold()
    at = {label: low.find(label.casefold()) for label, _ in sides}
    named = min((label for label in at if at[label] >= 0), key=lambda label: at[label], default=None)
    if named is None:
        return None
    word = _ORDER.search(then, at[named] + len(named))
    if word is None or _NEGATION.search(then, 0, word.start()):
        return None
    earlier, later = sorted(sides, key=lambda s: int(s[1]))
    picks = earlier[0] if word.group(1).lower() in _EARLY else later[0]
    return Conclusion(" ".join(m.group(0).split()), earlier, later, named, word.group(1), picks)


def reversed_conclusions(r: Reading) -> list[KeyFact]:
    """Conclusions in the agent's own words that name the other side than their own years pick,
    where the task asks which comes first or last (elsewhere the word answers nothing asked)."""
    out: list[KeyFact] = []
    if not _names_order(r.run.task.instruction or ""):
        return out
    for turn, text in _own_words(r):
        for c in conclusions(text):
            if c.reversed:
                out.append(KeyFact(
                    f"The agent's conclusion at turn {turn} names the wrong side: by its own figures {c.earlier[0]} "
                    f"({c.earlier[1]}) comes before {c.later[0]} ({c.later[1]}), so \"{c.word}\" picks {c.picks}, "
                    f"not {c.named} (it wrote \"{clip(c.text, 160)}\").", [turn],
                    about=[f"{c.earlier[1]} is earlier than {c.later[1]}"]))
    return out
