"""Text that cannot be written as UTF-8 (or YAML) is repaired where it is read, never fatal.

Real logs carry lone UTF-16 surrogates (``"\\ud83d"``: valid JSON, common where a log
cut an emoji in half), bytes that are not UTF-8, and control characters. The
readers decode bytes with ``surrogateescape``, so an invalid byte arrives as a lone
surrogate too; ``text`` then replaces every lone surrogate, every control character
other than tab, newline and carriage return, and the two non-characters U+FFFE and
U+FFFF with U+FFFD, and removes terminal colour codes (``ESC[31m``). Each change
counts one repair; importers' runs record the total in ``source['repaired_chars']``.
"""

from __future__ import annotations

import re
from typing import Any

REPLACEMENT = "\ufffd"
# Terminal control sequences (colours, cursor moves): formatting, not text.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")
_BAD = re.compile(r"[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]")


def text(value: str) -> tuple[str, int]:
    """(repaired text, number of repairs)."""
    if not _BAD.search(value):  # also finds ESC, so colour codes take the slow path
        return value, 0
    count = 0
    if "\x1b" in value:
        value, count = _ANSI.subn("", value)
    value, n = _BAD.subn(REPLACEMENT, value)
    return value, count + n


def value(obj: Any) -> tuple[Any, int]:
    """Repair every string in a JSON-like value (keys too); returns (value, repairs)."""
    if isinstance(obj, str):
        return text(obj)
    if isinstance(obj, list):
        total = 0
        for i, item in enumerate(obj):
            obj[i], n = value(item)
            total += n
        return obj, total
    if isinstance(obj, dict):
        total = 0
        for key in list(obj):
            new_key, nk = text(key) if isinstance(key, str) else (key, 0)
            item, nv = value(obj[key])
            if nk:
                del obj[key]
            obj[new_key] = item
            total += nk + nv
        return obj, total
    return obj, 0


# What ``_BAD`` finds, as ``json.dumps`` writes it with ASCII escapes: a C-speed first look.
# Backspace and form feed are written as the short escapes \b and \f, the other control
# characters as \u00XX. The look runs on the text with its escaped backslashes (\\) taken out,
# so a logged regex such as \\bword\\b is not taken for a backspace.
_ESCAPED = re.compile(r"\\(?:[bf]|u(?:d[89a-f]|00[01]|007f|008|009|fff[ef]))", re.I)


def _clean(obj: Any) -> bool:
    """True when ``obj`` (JSON-like) certainly holds nothing to repair."""
    import json

    if isinstance(obj, str):
        return not _BAD.search(obj)
    try:
        return _unescaped(json.dumps(obj))
    except (ValueError, TypeError, RecursionError):
        return False


def _unescaped(text: str | bytes) -> bool:
    """No escape of JSON text writes what ``_BAD`` finds. Taking the escaped backslashes out only
    removes matches (what is left of a match was one already), so most texts are read once."""
    if isinstance(text, bytes):
        return not _ESCAPED_BYTES.search(text) or not _ESCAPED_BYTES.search(text.replace(b"\\\\", b""))
    return not _ESCAPED.search(text) or not _ESCAPED.search(text.replace("\\\\", ""))


_ESCAPED_BYTES = re.compile(_ESCAPED.pattern.encode(), re.I)
# The key an importer sets in ``run.source`` when the original's JSON text, as read, passed
# ``clean_json``: ``run`` takes it out, and then need not write the original out again to look.
CLEAN_ORIGINAL = "original_clean"


def clean_json(raw: bytes | str) -> bool:
    """True when ASCII JSON text that ``json.loads`` (strict) parsed certainly holds nothing to
    repair: strict JSON has no control character raw in it, so of ``_BAD`` only DEL can stand
    there as itself, and the rest only as the escapes ``_clean`` looks for (in the escapes the
    file wrote, not in a dump of the record). False for other text: ``_clean`` judges it."""
    return raw.isascii() and ("\x7f" not in raw if isinstance(raw, str) else b"\x7f" not in raw) and _unescaped(raw)


def run(r) -> int:
    """Repair a Run in place (id, task, turns, outcome, original).

    Returns the number of characters repaired in the input: counted in the run's
    original record when it has one (every importer builds the turns from it, so a
    clean original means clean turns and the walk stops there), else in its fields.
    """
    in_original = 0
    if "original" in r.source:
        if r.source.pop(CLEAN_ORIGINAL, False) or _clean(r.source["original"]):
            return 0
        r.source["original"], in_original = value(r.source["original"])
        if not in_original:
            return 0
    total = 0

    def fix(holder, attr):
        nonlocal total
        fixed, n = value(getattr(holder, attr))
        if n:
            setattr(holder, attr, fixed)
            total += n

    fix(r, "run_id")
    for attr in ("id", "instruction", "task_type", "apps", "initial_observation", "metadata"):
        fix(r.task, attr)
    for t in r.turns:
        for attr in ("role", "content", "name", "arguments", "reasoning", "result", "extra"):
            fix(t, attr)
    if r.outcome is not None:
        fix(r.outcome, "ended_by")
    return in_original or total
