"""Small text helpers the offline compiler's pages and lessons share."""

from __future__ import annotations

import json
import re

from ..runs.model import Turn

# Tokens that hold only in one episode: anything with a digit (ids, amounts, dates) and numbers.
_VALUE = re.compile(r"\b(?=[A-Za-z_]*\d)[A-Za-z0-9_\-]{3,}\b|\b\d+(?:[.,:]\d+)*\b")


def clip(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def quote_of(text: str | None, limit: int = 120) -> str | None:
    """An exact, whitespace-folded prefix of an observation, short enough to read."""
    flat = " ".join((text or "").split())
    if not flat:
        return None
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def generic(text: str) -> str:
    """Values that hold only in one episode (ids, numbers) become ``…``."""
    out = _VALUE.sub("…", text)
    out = re.sub(r"…(?:[\s,;/-]*…)+", "…", out)
    return " ".join(out.split())


def signature(turn: Turn) -> str:
    return f"{turn.name}({json.dumps(turn.arguments, sort_keys=True, default=str)})"


def short_task(instruction: str, limit: int = 90) -> str:
    flat = " ".join(instruction.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(",;:") + "…"


def first_line(text: str | None, limit: int = 90) -> str:
    """The first non-empty line of an observation, values masked: what an error *says*."""
    for line in (text or "").splitlines():
        if line.strip():  # double quotes become single ones: the line is itself shown in quotes
            return clip(generic(line.strip()), limit).replace('"', "'")
    return ""
