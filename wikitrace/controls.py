"""Control and invisible characters, shown as escapes wherever text leaves for a reader.

Run content and model answers may hold NUL, BEL, ESC (terminal escape
sequences), CR (overwrites a line), C1 controls (``\\x9b`` starts an escape on
some terminals), right-to-left overrides and other invisible formatting that
makes a page read differently from what it holds. Markdown pages and the agent
tools' plain text show each as an escape (``\\x00``, ``\\x1b``, ``\\u202e``);
JSON files hold the same values JSON-escaped (``\\u202e``), which decodes to the
very same string. Tab and newline stay. Zero-width joiners (emoji, Persian,
Indic scripts) and soft hyphens stay too: they change how text looks, not what
it says. A literal backslash is not escaped, so ``\\x00`` typed in a log looks
like an escaped NUL.

``tools/_corpus.py`` keeps its own copy of this set (the tools are stdlib-only);
a test checks that the two agree.
"""

from __future__ import annotations

import re

# (first, last) code points, inclusive.
RANGES: tuple[tuple[int, int], ...] = (
    (0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F),  # C0 but tab and newline, DEL, C1
    (0x061C, 0x061C),  # Arabic letter mark
    (0x180E, 0x180E),  # Mongolian vowel separator
    (0x200B, 0x200B), (0x200E, 0x200F),  # zero width space, LRM, RLM
    (0x2028, 0x202E),  # line/paragraph separators, bidi embeddings and overrides
    (0x2060, 0x2064), (0x2066, 0x206F),  # word joiner, invisible operators, bidi isolates
    (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),  # BOM / zero width no-break space, annotations
    (0xE0000, 0xE007F),  # tag characters (invisible ASCII)
)


def _class() -> str:
    def esc(cp: int) -> str:
        return f"\\U{cp:08x}" if cp > 0xFFFF else f"\\u{cp:04x}"

    return "[" + "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in RANGES) + "]"


_HIDDEN = re.compile(_class())


def escape(ch: str) -> str:
    cp = ord(ch)
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    return f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}"


def _json_escape(ch: str) -> str:
    cp = ord(ch)
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    cp -= 0x10000
    return f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}"


# Printable ASCII, tab and newline: text made of these alone holds none of the characters above.
_PLAIN_ASCII = bytes(range(0x20, 0x7F)) + b"\t\n"


def _plain(text: str) -> bool:
    """True for text that holds none of the characters above, told in C without the regex.
    A printable one-line text (most values a page shows) needs no copy: every character of
    the set is non-printable to ``str.isprintable`` (a test checks it). Other ASCII text
    (tabs, newlines) is checked in one pass, a tenth of what the regex scan costs on the
    long page texts every build shows; other text line by line."""
    if text.isprintable():
        return True
    if text.isascii():
        return not text.encode("ascii").translate(None, _PLAIN_ASCII)
    # Other text (a page's JSON, a policy with a dash): each line printable, half the regex
    # scan's cost; a tab leaves it to the regex
    return all(map(str.isprintable, text.split("\n")))


def visible(text: str) -> str:
    """``text`` with every control or invisible formatting character escaped."""
    if text.isprintable() or _plain(text) or not _HIDDEN.search(text):  # the first test: most values, no call
        return text
    return _HIDDEN.sub(lambda m: escape(m.group()), text)


def json_visible(text: str) -> str:
    """JSON text with those characters as ``\\uXXXX`` escapes: the same JSON value.

    Only valid for JSON text, where such characters can only stand inside strings."""
    if _plain(text) or not _HIDDEN.search(text):
        return text
    return _HIDDEN.sub(lambda m: _json_escape(m.group()), text)
