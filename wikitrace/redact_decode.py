"""A decoded view of a string, for finding secrets written in escaped form.

A secret can reach a log JSON-escaped (a JSON document kept as a string inside
another one: ``"...\\nOPENAI_API_KEY=sk-..."``), Python-escaped, or URL-encoded
(``key%3Dsk-proj-...``). Read raw, the escape's letter (the ``n`` of ``\\n``,
the ``D`` of ``%3D``) sits right before the secret and hides its start, and an
encoded ``:`` or ``/`` breaks shapes such as a password in a URL.

``decoded_view`` undoes backslash escapes (``\\n \\t \\r \\b \\f \\" \\' \\\\ \\/``,
``\\uXXXX``), ``%XX`` and HTML character references (``&#115;``, ``&#x2F;``, ``&colon;``)
in one pass, repeated until nothing changes (at most
``MAX_LEVELS`` times, for JSON inside JSON inside JSON), and returns a map from
positions in the view back to the raw string, so what is found in the view is
replaced in the raw text, escapes included.
"""

from __future__ import annotations

import bisect
import re

MAX_LEVELS = 4
_SIMPLE = {"n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\", "/": "/"}
# The named HTML entities a key, a URL or a config line can be written with.
_ENTITIES = {"amp": "&", "lt": "<", "gt": ">", "quot": '"', "apos": "'", "sol": "/", "colon": ":", "equals": "=",
             "lowbar": "_", "hyphen": "-", "dash": "-", "period": ".", "commat": "@", "plus": "+", "num": "#",
             "percnt": "%", "quest": "?", "semi": ";", "excl": "!", "nbsp": " ", "bsol": "\\"}
_TOKEN = re.compile(r"\\(?:u[0-9a-fA-F]{4}|[nrtbf\"'\\/])|%[0-9a-fA-F]{2}"
                    rf"|&(?:#[0-9]{{1,7}}|#[xX][0-9a-fA-F]{{1,6}}|{'|'.join(_ENTITIES)});")
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
        ch = _char(tok)
        parts.append(ch)
        level.dec.append(out), level.raw.append(a), level.width.append(len(tok))
        out += 1
        pos = m.end()
    if pos < len(text):
        parts.append(text[pos:])
        level.dec.append(out), level.raw.append(pos), level.width.append(-1)
    return "".join(parts), level


def _char(tok: str) -> str:
    """The one character an escape token stands for (an unknown entity stands for itself)."""
    if tok[0] == "%":
        return chr(int(tok[1:], 16))
    if tok[0] == "&":
        if tok[1] != "#":
            return _ENTITIES[tok[1:-1]]
        code = int(tok[3:-1], 16) if tok[2] in "xX" else int(tok[2:-1])
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    if tok[1] == "u":
        return chr(int(tok[2:], 16))
    return _SIMPLE[tok[1]]


def _decode_token(m: re.Match) -> str:
    return _char(m.group())


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


# -- a whole secret written as base64 or hex ----------------------------------------------
#
# ``base64(secret)`` starts with characters fixed by the secret's first bytes alone: the
# encoding of a known prefix (``sk-``, ``ghp_``, ``-----BEGIN``) is a literal that can be
# looked for like any other trigger. A token that starts with one is decoded and searched.

_B64_TOKEN = "[A-Za-z0-9+/_-]"


def _b64_head(head: str) -> str:
    """The characters every base64 text of ``head + anything`` starts with."""
    import base64

    raw = head.encode()
    fixed = len(raw) * 8 // 6
    return base64.b64encode(raw + b"\0\0").decode()[:fixed]


def encoded_heads(heads) -> tuple[str, ...]:
    """Literal starts of the base64 (standard and URL-safe) and hex (both cases) encodings
    of a text beginning with one of ``heads``."""
    out: list[str] = []
    for head in heads:
        b64 = _b64_head(head)
        out += [b64, b64.replace("+", "-").replace("/", "_"), head.encode().hex(), head.encode().hex().upper()]
    return tuple(dict.fromkeys(out))


def encoded_pattern(heads) -> str:
    """A regex for a base64 or hex token that starts with the encoding of a head."""
    import re

    starts = "|".join(re.escape(h) for h in encoded_heads(heads))
    return rf"(?<![A-Za-z0-9+/_-])(?:{starts}){_B64_TOKEN}*={{0,2}}"


def decode_whole(token: str) -> str | None:
    """``token`` decoded as hex or base64 into UTF-8 text, or None when it is neither."""
    import base64
    import binascii

    body = token.rstrip("=")
    if len(body) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in body):
        try:
            return bytes.fromhex(body).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            pass
    padded = body + "=" * (-len(body) % 4)
    for alt in (None, b"-_"):
        try:
            return base64.b64decode(padded, altchars=alt, validate=True).decode("utf-8")
        except (binascii.Error, ValueError, UnicodeDecodeError):
            continue
    return None
