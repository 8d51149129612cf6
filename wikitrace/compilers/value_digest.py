"""A value as the digests of its scalars: how trials of one task and the records a change acted
on are compared without any value of the episode reaching the corpus."""

from __future__ import annotations

import hashlib
from functools import lru_cache

from .reading import leaves

_LEAVES_KEPT = 16  # scalar digests kept per argument; a larger value is kept as one digest


def fingerprint(value) -> str:
    """Digests of the scalars an argument value holds, sorted and joined by dots: trials of one
    task compare values through them (one value holding another's scalars, as a flight listed
    with or without its airports, is the same choice), and no value of the episode reaches the
    corpus. A value of many scalars is one digest marked ``*``."""
    if isinstance(value, str):
        return _text_fingerprint(value)
    return _fingerprint(value)


@lru_cache(maxsize=4096)
def _text_fingerprint(text: str) -> str:
    """``fingerprint`` of one text (an id, a name): a run's records and trials ask about the same few."""
    return _fingerprint(text)


def _fingerprint(value) -> str:
    digest = lambda text: hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()[:6]  # noqa: E731
    scalars = sorted({digest(str(v)) for _p, v in leaves(value) if v is not None and str(v).strip()})
    if len(scalars) > _LEAVES_KEPT:
        import json

        return "*" + digest(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))
    return ".".join(scalars)
