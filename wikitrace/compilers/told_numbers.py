"""A number the user or the agent wrote in words counts as stating an argument's value only near
a word of that argument's field: "1 checked bag" tells ``nonfree_baggages: 1``, a stray "1" does
not. Used by the argument checks."""

from __future__ import annotations

import re
from functools import lru_cache

_INDEX_AT_END = re.compile(r"\[\d+\]$")
_PATH_STEP = re.compile(r"[.\[]")


@lru_cache(maxsize=4096)
def _last_key(path: str) -> str:
    return _PATH_STEP.split(_INDEX_AT_END.sub("", path))[-1] if path else ""


_NUMBER_WORDS = {"0": "no|none|zero", "1": "one|a|an|single", "2": "two|both|pair", "3": "three", "4": "four", "5": "five"}


def _told_number(value: str, key: str, text: str) -> bool:
    """A short number counts as told only near a word that starts like one of its key's words
    (``nonfree_baggages: 1`` is told by "1 checked bag", not by any "1" in the text)."""
    low = text.lower()
    cues = _number_cues(value, key)
    # both patterns need one of the key's stems and the number (or its word) in the text: a plain
    # test passes over most texts before a pattern is compiled or run
    if cues is None or not any(s in low for s in cues[0]) or not any(n in low for n in cues[1]):
        return False
    patterns = _number_patterns(value, key)
    return any(p.search(low) is not None for p in patterns)


@lru_cache(maxsize=4096)
def _number_cues(value: str, key: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(the key's stems, the number's spellings) as plain strings; None: the key has no word."""
    stems = _stems(key)
    if not stems:
        return None
    return stems, (value,) + (tuple(_NUMBER_WORDS[value].split("|")) if value in _NUMBER_WORDS else ())


def _stems(key: str) -> tuple[str, ...]:
    return tuple(w[:3] for w in re.split(r"[^a-z]", key.lower()) if len(w) >= 3)


@lru_cache(maxsize=4096)
def _number_patterns(value: str, key: str) -> tuple[re.Pattern, re.Pattern] | None:
    """The number near one of its key's words, after it or before it; None: the key has no word."""
    stems = _stems(key)
    if not stems:
        return None
    number = re.escape(value) + (f"|{_NUMBER_WORDS[value]}" if value in _NUMBER_WORDS else "")
    stem = "|".join(map(re.escape, stems))
    after = rf"(?<![\w.])(?:{number})(?![\w])(?:\W+\w+){{0,6}}?\W+(?:{stem})"
    before = rf"\b(?:{stem})\w*(?:\W+\w+){{0,6}}?\W+\$?(?:{number})(?![\w])"
    return re.compile(after), re.compile(before)
