"""The clause of a rule sentence that the record's own values key: one sentence often lists a case
per value ("2 free bags for each basic economy passenger, 3 for each economy passenger, and 3 for
each business passenger"; "economy flights can be cancelled only if …, and business flights can
always be cancelled"), and quoting every case makes the reader pick the one that applies.

The sentence is cut at its commas and semicolons. A segment that names one of the record's values
(the caller's test) is kept; a segment parallel to a kept one (it shares two content words with it)
that names none of the record's values is another case, and is cut, with "…" where it stood. The
other segments (a condition in front, "If the booking user is a gold member") stay. When no
segment names a record value, or none is parallel, the sentence is returned whole.
"""

from __future__ import annotations

import re
from typing import Callable

from .rules import _words

_SEGMENT = re.compile(r"\s*(?:,|;)\s*")
_LEADING_LINK = re.compile(r"^(?:and|or|but)\s+", re.I)


def _content(text: str) -> frozenset[str]:
    return frozenset(w for w in _words(text) if len(w) >= 4)


def clause_for(sentence: str, names_value: Callable[[str], bool]) -> str:
    """The sentence with the cases no record value keys cut out ("…" in their place)."""
    segments = [s for s in _SEGMENT.split(sentence.strip()) if s]
    if len(segments) < 2:
        return sentence
    keyed = [i for i, s in enumerate(segments) if names_value(s)]
    if not keyed:
        return sentence
    kept_words = [_content(segments[i]) for i in keyed]
    cut = {i for i, s in enumerate(segments) if i not in keyed
           and any(len(_content(s) & words) >= 2 for words in kept_words)}
    if not cut:
        return sentence
    out: list[str] = []
    for i, s in enumerate(segments):
        if i in cut:
            if not out or out[-1] != "…":
                out.append("…")
            continue
        out.append(_LEADING_LINK.sub("", s) if out and out[-1] == "…" else s)
    text = ", ".join(out).replace(", …", " …").replace("…, ", "… ")
    return text if text.endswith((".", "…")) else text + " …"
