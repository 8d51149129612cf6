"""Small text helpers the offline compiler's pages and lessons share."""

from __future__ import annotations

import json
import re

from ..runs.errors import failure_line
from ..runs.model import Turn, reused_encoder

# Tokens that hold only in one episode: anything with a digit (ids, amounts, dates) and numbers.
_VALUE = re.compile(r"\b(?=[A-Za-z_]*\d)[A-Za-z0-9_\-]{3,}\b|\b\d+(?:[.,:]\d+)*\b")


_WORD = re.compile(r"\w+")


def folded_words(text: str) -> list[str]:
    """The runs of word characters of ``text``, case-folded: how answers, queries and task texts
    are compared word by word (an answer's words against the expected one's, a query's against the
    pages before it)."""
    return _WORD.findall(text.casefold())


def _folded_head(text: str, limit: int) -> str:
    """``text`` whitespace-folded, or only a head of it longer than ``limit`` when it has one: the
    head of a folding is the folding of a head, and a long answer was folded whole to show a line."""
    head = " ".join(text[:4 * limit + 64].split())
    return head if len(head) > limit else " ".join(text.split())


def base_name(path: str) -> str:
    """A path's last part, as a page names a file (``A.java`` of ``/src/main/A.java``)."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def clip(text: str | None, limit: int = 160) -> str:
    flat = _folded_head(text or "", limit)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def clip_words(text: str, width: int) -> str:
    """The whitespace-folded start of ``text``, cut at a word end and marked with … when cut."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    cut = flat[:width]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip() + "…"


def shown_beside(text: str, other: str, limit: int = 80) -> str:
    """A value set beside another (an answer beside the one expected), whole when short: the
    lesson is often in a year or an ordinal ("69th") that masking or clipping would hide. A
    long one is cut to a window that starts just before its first word the other lacks."""
    words = " ".join((text or "").split()).replace('"', "'").split()
    if len(" ".join(words)) <= limit:
        return " ".join(words)
    lacks = {w.casefold() for w in (other or "").split()}
    start = max(0, next((k for k, w in enumerate(words) if w.casefold() not in lacks), 0) - 3)
    kept: list[str] = []
    for w in words[start:]:
        if kept and len(" ".join(kept + [w])) > limit:
            break
        kept.append(w)
    return ("…" if start else "") + " ".join(kept) + ("…" if start + len(kept) < len(words) else "")


def quote_of(text: str | None, limit: int = 120) -> str | None:
    """An exact, whitespace-folded prefix of an observation, short enough to read."""
    flat = _folded_head(text or "", limit)
    if not flat:
        return None
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def generic(text: str) -> str:
    """Values that hold only in one episode (ids, numbers) become ``…``."""
    out = _VALUE.sub("…", text)
    out = _MASKS.sub("…", out)
    return " ".join(out.split())


TITLE_KIND = re.compile(r"\s*\([^()]*\)$")  # "Alien (film)": the bracket tells pages apart, the name is before it
_MASKS = re.compile(r"…(?:[\s,;/-]*…)+")  # masked values in a row become one
# json.dumps(v, sort_keys=True, default=str) and json.dumps(v, ensure_ascii=False, sort_keys=True),
# each with its C encoder built once: a run asks for its calls' arguments so many times
sorted_json = reused_encoder(json.JSONEncoder(sort_keys=True, default=str))
sorted_json_text = reused_encoder(json.JSONEncoder(ensure_ascii=False, sort_keys=True))


def signature(turn: Turn) -> str:
    return f"{turn.name}({sorted_json(turn.arguments)})"


def short_task(instruction: str, limit: int = 90) -> str:
    flat = " ".join(instruction.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(",;:") + "…"


_FAILURE_WORD = re.compile(r"error|fail|exception|not found|denied|invalid|cannot|refused", re.I)


def first_line(text: str | None, limit: int = 90) -> str:
    """What an observation *says*, values masked: the first line shaped as a failure (a test
    runner's ``FAILED tests/x.py::test_y`` before its ``=== FAILURES ===`` banner), else its
    first line that names a failure, else its first non-empty line (a build log opens with
    [INFO] lines before its [ERROR] one)."""
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    line = failure_line(text) or next((x for x in lines if _FAILURE_WORD.search(x)), lines[0] if lines else "")
    return clip(generic(line), limit).replace('"', "'")  # shown in double quotes itself


def _word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"  # what a pattern's \w matches in text


def stands_alone(word: str, text: str, joins=_word_char) -> bool:
    """``word`` in ``text`` with no character ``joins`` accepts either side (a word character by
    default): the places it occurs tested by hand, where a pattern compiled per word, or one led by
    a word boundary, costs more than the few places the word is found."""
    at = text.find(word)
    while at != -1:
        end = at + len(word)
        if (at == 0 or not joins(text[at - 1])) and (end == len(text) or not joins(text[end])):
            return True
        at = text.find(word, at + 1)
    return False


# "turn 4", "turns 1, 2 and 6": a run's own turns a sentence names (not another run's "its turn 3")
TURN_NUMBERS = re.compile(r"(?<!its )\bturns?\s+(\d+(?:(?:,\s*|,?\s+and\s+)\d+)*)")


def named_turns(text: str) -> list[int]:
    """Every turn number ``text`` names, in the order it names them."""
    return [int(n) for m in TURN_NUMBERS.finditer(text) for n in re.findall(r"\d+", m.group(1))]
