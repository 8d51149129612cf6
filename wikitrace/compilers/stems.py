"""One word's stem, by a few English suffix rules: a leaf module, so the modules that read a
log in order (consent.py) and those that match rules (rules.py) share it without importing each other."""

from __future__ import annotations

from functools import lru_cache


# A run's rules are read against the same few thousand words again and again (the system
# prompt's sentences, tool names, argument values): stemming is pure, so each word is stemmed once.
@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    w = word.lower()
    if w.endswith("es") and not w.endswith(("ses", "xes", "zes", "ches", "shes")):
        w = w[:-1]  # baggages -> baggage, like baggage; boxes keeps its "es" for the loop below
    for suffix in ("ations", "ation", "ings", "ing", "ied", "ies", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 4:
            w = w[: -len(suffix)]
            # a doubled last consonant is the suffix's doing: cancelled, cancelling -> cancel
            return w[:-1] if len(w) >= 5 and w[-1] == w[-2] and w[-1] not in "aeiou" else w
    return w
