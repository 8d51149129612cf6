"""How a task's words name a tool's action, shared by the runs' patterns, the insight layer
and the prompt's ranking (kept apart so the prompt imports nothing of the compilers but this)."""

from __future__ import annotations

import re


def action_word(tool: str) -> str:
    """The word of a tool's name that says what it does, its first (tools are named verb first:
    cancel_reservation, bookFlight, Search), lower case; "" for a name of no such word."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", tool)
    words = [w for w in re.split(r"[^a-z]+", spaced.lower()) if w]
    return words[0] if words and len(words[0]) >= 3 else ""


def same_word(a: str, b: str) -> bool:
    """One word is the other or a longer form of it (flight, flights; cancel, cancellation),
    the shorter one four letters at least."""
    short, long_ = sorted((a, b), key=len)
    return long_.startswith(short) and (len(short) >= 4 or short == long_)
