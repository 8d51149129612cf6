"""A decoded view of a string, for finding secrets written in escaped form.

A secret can reach a log JSON-escaped (a JSON document kept as a string inside
another one: ``"...\\nOPENAI_API_KEY=sk-..."``), Python-escaped, or URL-encoded
(``key%3Dsk-proj-...``). Read raw, the escape's letter (the ``n`` of ``\\n``,
the ``D`` of ``%3D``) sits right before the secret and hides its start, and an
encoded ``:`` or ``/`` breaks shapes such as a password in a URL.

``decoded_view`` undoes backslash escapes (``\\n \\t \\r \\b \\f \\" \\' \\\\ \\/``,
``\\uXXXX``) and ``%XX`` in one pass, repeated until nothing changes (at most
``MAX_LEVELS`` times, for JSON inside JSON inside JSON), and returns a map from
positions in the view back to the raw string, so what is found in the view is
replaced in the raw text, escapes included.
"""

from __future__ import annotations

import bisect
import re

MAX_LEVELS = 4
_TOKEN = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[nrtbf\"'\\/])|%[0-9a-fA-F]{2}")
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\", "/": "/"}
# A quick test: does this string hold anything ``decoded_view`` would change?
HINT = _TOKEN


class _Level:
    """Pieces of one decoding step: plain runs (same length both sides) or one token -> one char."""

    __slots__ = ("dec", "raw", "width")

    def __init__(self) -> None:
        self.dec: list[int] = []  # where each piece starts in the decoded text
        self.raw: list[int] = []  # where it starts in the text before decoding
        self.width: list[int] = []  # -1 for a plain run, else the token's length

    def start(self, i: int) -> int:
        k = bisect.bisect_right(self.dec, i) - 1
        return self.raw[k] + (i - self.dec[k] if self.width[k] < 0 else 0)

    def end(self, j: int) -> int:
        """The raw end (exclusive) of a decoded span ending at ``j`` (> 0)."""
        k = bisect.bisect_right(self.dec, j - 1) - 1
        if self.width[k] < 0:
            return self.raw[k] + (j - self.dec[k])
        return self.raw[k] + self.width[k]


def _decode_once(text: str) -> tuple[str, _Level]:
    parts: list[str] = []
    level = _Level()
    pos = out = 0
    for m in _TOKEN.finditer(text):
        a = m.start()
        if a > pos:
            parts.append(text[pos:a])
            level.dec.append(out), level.raw.append(pos), level.width.append(-1)
            out += a - pos
        tok = m.group()
        if tok[0] == "%":
            ch = chr(int(tok[1:], 16))
        elif tok[1] == "u":
            ch = chr(int(tok[2:], 16))
        else:
            ch = _SIMPLE[tok[1]]
        parts.append(ch)
        level.dec.append(out), level.raw.append(a), level.width.append(len(tok))
        out += 1
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
        level.dec.append(out), level.raw.append(pos), level.width.append(-1)
    return "".join(parts), level


def _decode_token(m: re.Match) -> str:
    tok = m.group()
    if tok[0] == "%":
        return chr(int(tok[1:], 16))
    if tok[1] == "u":
        return chr(int(tok[2:], 16))
    return _SIMPLE[tok[1]]


class View:
    """The decoded text and the way back to the raw one (worked out only when asked:
    most views hold nothing the raw text did not already show)."""

    def __init__(self, text: str):
        self._texts = [text]  # each decoding level's input
        cur = text
        for _ in range(MAX_LEVELS):
            if not HINT.search(cur):
                break
            nxt = _TOKEN.sub(_decode_token, cur)
            if nxt == cur:
                break
            self._texts.append(nxt)
            cur = nxt
        self.text = cur
        self._levels: list[_Level] | None = None

    @property
    def changed(self) -> bool:
        return len(self._texts) > 1

    def raw_span(self, start: int, end: int) -> tuple[int, int]:
        """The raw span a non-empty decoded span ``[start, end)`` came from."""
        if self._levels is None:
            self._levels = [_decode_once(t)[1] for t in self._texts[:-1]]
        for level in reversed(self._levels):
            start, end = level.start(start), level.end(end)
        return start, end
