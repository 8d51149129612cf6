"""Compiled templates kept between processes, so a short command does not compile them again.

Compiling a jinja2 template costs far more than rendering it, and ``wikitrace add``,
``prompt`` and each build start a fresh process that renders a dozen templates once or
a few times. jinja2 can keep the compiled code on disk (a bytecode cache); this module
puts it in the user's own cache folder (``$XDG_CACHE_HOME/wikitrace/templates``, else
``~/.cache/wikitrace/templates``).

The files hold code that is executed, so the folder is used only when it is this user's
and nobody else may write to it (mode 0700); otherwise templates are compiled as before.
Any error reading or writing the cache falls back to compiling: the cache never changes
what is rendered, only how long the first render takes. A template's file name, its source
checksum (jinja2's own check), the jinja2 and Python versions and the environment's
options are part of each entry's key, so an edited template or another setup compiles anew.
"""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path


def cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "wikitrace" / "templates"


def _private_folder(path: Path) -> bool:
    """Create ``path`` (mode 0700) if needed; True when it is a folder only this user can write."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(path)
    except OSError:
        return False
    return (stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid()
            and not stat.S_IMODE(st.st_mode) & (stat.S_IWGRP | stat.S_IWOTH))


def bytecode_cache(settings: str):
    """A jinja2 bytecode cache for an environment set up as ``settings`` says, or None
    when no safe folder is available (templates are then compiled in each process)."""
    if not hasattr(os, "getuid"):
        return None
    try:
        folder = cache_dir()
    except (RuntimeError, KeyError):  # no home folder to be found (a bare sandbox): compile as before
        return None
    if not _private_folder(folder):
        return None
    import jinja2
    from jinja2.bccache import FileSystemBytecodeCache

    stamp = hashlib.sha256(f"{jinja2.__version__}|{settings}".encode()).hexdigest()[:16]

    class _Cache(FileSystemBytecodeCache):
        def get_cache_key(self, name, filename=None):
            return super().get_cache_key(f"{stamp}|{name}", filename)

        def load_bytecode(self, bucket):
            try:
                super().load_bytecode(bucket)
            except Exception:  # unreadable or damaged entry: compile the template instead
                bucket.reset()

        def dump_bytecode(self, bucket):
            try:
                super().dump_bytecode(bucket)
            except OSError:  # a full or read-only disk: the next process compiles again
                pass

    return _Cache(str(folder), "%s.jinja")
