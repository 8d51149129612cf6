"""Turn names that come from input (run ids, file names) into safe single path parts.

``safe_name`` never returns an empty name, ``.``, a name containing ``..`` or a path
separator, NUL or other control or invisible formatting characters, a name
starting with a dot, or one longer than ``max_bytes`` UTF-8 bytes. A name that
had to be changed gets a short hash of the original appended, so two different
inputs (``a/b`` and ``a_b``) never end up with the same safe name; a name that
was already safe is returned unchanged.

``contained(root, path)`` tells whether ``path`` (after resolving ``..`` and
symlinks) stays inside ``root``; ``safe_join`` builds such a path or refuses.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from pathlib import Path
from typing import Any

DEFAULT_MAX_BYTES = 120
_HASH_LEN = 10
# Characters that are separators or special on some filesystem (Windows included).
_BAD_CHARS = set('/\\:*?"<>|')
_WINDOWS_RESERVED = {"CON", "PRN", "AUX", "NUL"} | {f"COM{i}" for i in range(10)} | {f"LPT{i}" for i in range(10)}


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()[:_HASH_LEN]


def _bad(ch: str) -> bool:
    if ch in _BAD_CHARS:
        return True
    cat = unicodedata.category(ch)
    # Cc: control (NUL, newline, ...), Cf: invisible formatting (bidi overrides, zero
    # width), Cs: lone surrogates, Co/Cn: private use / unassigned, Zl/Zp: separators.
    return cat in ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _truncate_utf8(text: str, max_bytes: int) -> str:
    data = text.encode("utf-8")
    if len(data) <= max_bytes:
        return text
    return data[:max_bytes].decode("utf-8", errors="ignore")


def safe_name(raw: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, fallback: str = "run") -> str:
    """A safe single path component for ``raw`` (see the module docstring)."""
    if max_bytes < _HASH_LEN + 8:
        raise ValueError(f"max_bytes must be at least {_HASH_LEN + 8}")
    original = raw if isinstance(raw, str) else str(raw)
    text = unicodedata.normalize("NFC", original)
    text = "".join("_" if _bad(ch) else ch for ch in text)
    text = re.sub(r"\s+", " ", text)  # tabs and odd spaces become one plain space
    text = re.sub(r"\.{2,}", "_", text)  # no '..' anywhere, not even inside a name
    text = text.strip(" .")  # no leading dot (hidden, '..'), no trailing dot/space (Windows)
    if text.split(".", 1)[0].upper() in _WINDOWS_RESERVED:
        text = "_" + text
    if not text:
        text = fallback
    changed = text != original
    if changed or len(text.encode("utf-8")) > max_bytes:
        stem = _truncate_utf8(text, max_bytes - _HASH_LEN - 1).rstrip(" .") or fallback
        text = f"{stem}-{_digest(original)}"
    return text


def contained(root: Path | str, path: Path | str) -> bool:
    """True when ``path`` resolves (following ``..`` and symlinks) to ``root`` or below it."""
    try:
        root_r = Path(os.path.realpath(root))
        path_r = Path(os.path.realpath(Path(root) / path))
    except (OSError, ValueError):
        return False
    return path_r == root_r or root_r in path_r.parents


def safe_join(root: Path | str, *parts: Any, max_bytes: int = DEFAULT_MAX_BYTES) -> Path:
    """``root / safe_name(p1) / safe_name(p2) ...``, checked to stay inside ``root``."""
    path = Path(root)
    for part in parts:
        path = path / safe_name(part, max_bytes=max_bytes)
    if not contained(root, path):
        raise ValueError(f"{path} would leave {root}")
    return path
