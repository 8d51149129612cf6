"""The JSON value inside a model's reply, however the model wrapped it.

Small local models put the JSON in fences, after reasoning, with trailing
commas or raw control characters inside strings; each is tolerated here so the
schema check sees what the model meant.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\r?\n?(.*?)```", re.S)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` outside strings."""
    out: list[str] = []
    in_str = escaped = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _loads(text: str) -> Any:
    # strict=False lets raw control characters (newlines, tabs) sit inside strings,
    # which small local models often emit.
    decoder = json.JSONDecoder(strict=False)
    try:
        return decoder.decode(text)
    except json.JSONDecodeError:
        return decoder.decode(_drop_trailing_commas(text))


def extract_json(text: str) -> Any:
    """The JSON value in a model's reply: the whole text, a fenced block, or the
    outermost ``{...}``. Raises ``ValueError`` naming why nothing parsed."""
    stripped = (text or "").strip().lstrip("\ufeff")
    if not stripped:
        raise ValueError("the answer is empty")
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in reversed(list(_FENCE.finditer(stripped)))]
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        candidates.append(stripped[start:end + 1])
    err: json.JSONDecodeError | None = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return _loads(candidate)
        except json.JSONDecodeError as exc:
            err = exc  # the last candidate (the outermost braces) says the most
    # A last try: the first object that decodes cleanly from some "{", ignoring what follows.
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and value:
            return value
    if start == -1:
        raise ValueError("the answer contains no JSON object")
    raise ValueError(f"the answer is not valid JSON ({err.msg} at line {err.lineno} column {err.colno})"
                     if err else "the answer is not valid JSON")

