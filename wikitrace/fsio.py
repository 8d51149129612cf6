"""Writing corpus files: stable frontmatter, atomic replacement, published modes."""

from __future__ import annotations

import json
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Any

from . import lazy_re

FILE_MODE = 0o444
DIR_MODE = 0o755  # the owner may delete, check out, add notes; agents get a read-only mount


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_ ./@()+-]*$")
# Characters YAML does not allow raw in a document; JSON leaves some of them unescaped. Compiled
# only for a value that is not all ASCII (its ranges take 8 ms to compile, a hundredth of an add).
_NON_PRINTABLE = lazy_re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(value: Any) -> str:
    """One YAML scalar. Strings are plain when unambiguous, else JSON-quoted (valid YAML)."""
    if type(value) is str:  # most values; the same tags, tools and task types on every run's pages
        hit = _TEXT_SCALARS.get(value)
        if hit is None:
            if len(_TEXT_SCALARS) >= 8192:
                _TEXT_SCALARS.clear()
            hit = _TEXT_SCALARS[value] = _text_scalar(value)
        return hit
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # YAML 1.1 wants a dot in exponent floats: let PyYAML spell it
        return _float_scalar(float.__repr__(value))
    return _text_scalar(str(value))


_TEXT_SCALARS: dict[str, str] = {}


def _text_scalar(text: str) -> str:
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED and not text.endswith((" ", ":")) \
            and ": " not in text and " #" not in text:
        return text
    quoted = json.dumps(text, ensure_ascii=False)
    if quoted.isascii() and "\x7f" not in quoted:  # JSON escaped every other ASCII control character
        return quoted
    return _NON_PRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


@lru_cache(maxsize=1024)
def _float_scalar(spelled: str) -> str:
    """PyYAML's spelling of a float, asked once per value (a run's score is one of a few): the
    emitter costs more than the rest of a page's frontmatter. Keyed by ``repr``, which tells
    -0.0 from 0.0 and gives back the very float. A plain decimal ("1.0", "0.25") is its own
    spelling (PyYAML writes ``repr``): yaml is imported only for the rest (exponents, inf, nan),
    about 15 ms of an ``add`` that writes one run's pages."""
    if _DECIMAL.fullmatch(spelled):
        return spelled
    import yaml

    return yaml.safe_dump(float(spelled)).split("\n", 1)[0]


_DECIMAL = re.compile(r"-?\d+\.\d+")


def dump_frontmatter(fields: dict[str, Any]) -> str:
    """YAML for a frontmatter block, keys in the order given, None values left out.

    Hand-emitted because PyYAML's emitter dominated build time; only the shapes
    frontmatter uses (scalars and lists of scalars) are written here, and the
    tests round-trip the output through ``yaml.safe_load``.
    """
    lines = []
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple)):
            if not value:
                lines.append(f"{key}: []")
                continue
            lines.append(f"{key}:")
            lines.extend(f"- {_scalar(v)}" for v in value)
        elif isinstance(value, dict):
            import yaml

            lines.append(yaml.safe_dump({key: value}, sort_keys=False, allow_unicode=True, width=10_000).rstrip("\n"))
        else:
            lines.append(f"{key}: {_scalar(value)}")
    return "\n".join(lines) + "\n"


def before_replace() -> None:
    """Called before each file of the corpus or of its state is replaced or removed.

    ``WIKITRACE_KILL_AT=N:COUNTER`` lets the tests SIGKILL a command (and the helper
    processes of its session) at the Nth such point: every process of the command
    appends one byte to the file COUNTER, so the count runs across them. Unset in use."""
    spec = os.environ.get("WIKITRACE_KILL_AT")
    if not spec:
        return
    import fcntl

    at, _, counter = spec.partition(":")
    fd = os.open(counter, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        # in turn: without the lock two processes could both read the size after both wrote,
        # and the point between them would never fire
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b".")
        reached = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if reached == int(at):
        import signal

        os.killpg(os.getpgrp(), signal.SIGKILL)


def write_atomic(path: Path, text, mode: int | None = None, binary: bool = False) -> None:
    """Write via a temp file in the same folder and rename, so readers never see half a file.
    ``text``: a str, bytes written as they are, or an iterable of str pieces (of bytes pieces,
    ``binary``) written one after another."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with (os.fdopen(fd, "wb") if binary or isinstance(text, bytes)
              else os.fdopen(fd, "w", encoding="utf-8", newline="\n")) as fh:
            if isinstance(text, (str, bytes)):
                fh.write(text)
            else:
                fh.writelines(text)
        if mode is not None:
            os.chmod(tmp, mode)
        before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def make_writable(root: Path) -> None:
    """Make a copied tree writable again (its files are 0444)."""
    if not root.exists():
        return
    os.chmod(root, 0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o644)
