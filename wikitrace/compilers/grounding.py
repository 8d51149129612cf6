"""Hold every decision's support to the run it claims to come from.

A compiler (LLM or offline) names the turns its support rests on and may quote
them. Here each ref is checked against the run's turn log: a turn that does not
exist is dropped, a quote that does not occur in its turns is dropped, and both
are counted in the compilation so a reader sees how much was ungrounded.
"""

from __future__ import annotations

import json

from ..runs.model import Run, Turn
from .schema import Compilation


def turn_text(turn: Turn) -> str:
    """Everything a quote may legitimately come from: what was said, done and seen."""
    parts = [turn.content, turn.reasoning, turn.name, turn.result]
    if turn.arguments is not None:
        args = turn.arguments
        parts.append(args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, sort_keys=True))
        if not isinstance(args, str):  # a value as sent, not JSON-escaped: a quote of a note with line breaks
            parts.extend(_strings(args))
    return "\n".join(p for p in parts if p)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _head_holds(turn: Turn, needle: str) -> bool:
    """A sure yes, cheaply: the folded needle is in the folded head of the turn's message or
    answer (most quotes are one's head). Folded ASCII text's head is the head of its folding, and
    the folding of one part is part of the whole turn's, so only a yes is taken from here."""
    for part in (turn.content, turn.result):
        if isinstance(part, str) and part:
            head = part[:2 * len(needle) + 200]
            if head.isascii() and needle in _norm(head):
                return True
    return False


def ground(compilation: Compilation, run: Run) -> Compilation:
    """Drop refs and quotes the run does not bear out; count what was dropped."""
    by_number = {t.turn: t for t in run.turns}
    normed: dict[int, str] = {}  # a turn's text, folded once: items of a page cite the same turns

    def text_of(n: int) -> str:
        hit = normed.get(n)
        if hit is None:
            hit = normed[n] = _norm(turn_text(by_number[n]))
        return hit

    for item in compilation.evidence:
        kept = [n for n in item.turns if n in by_number]
        compilation.dropped_refs += len(item.turns) - len(kept)
        item.turns = kept
        if item.quote:
            needle = _norm(item.quote)
            if not kept or not any(_head_holds(by_number[n], needle) or needle in text_of(n) for n in kept):
                item.quote = None
                compilation.dropped_quotes += 1
    return compilation
