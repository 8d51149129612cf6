"""Build beside the published corpus, then swap it in whole.

A build writes into a hidden sibling folder while holding a lock; only a
complete, read-only tree replaces the published one. A build killed at any
point leaves the previous corpus as it was, and the next build clears the
half-written sibling. The lock (``flock``) dies with its process, so a
``kill -9`` never leaves a corpus locked.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import fcntl
import json
import os
from pathlib import Path

from .fsio import make_read_only, remove_tree
from .layout import CORPUS_FORMAT


class PublishError(RuntimeError):
    pass


class BuildLock:
    def __init__(self, out: Path):
        self.path = out.parent / f".{out.name}.lock"
        self._fh = None

    def __enter__(self) -> "BuildLock":
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a+")
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.seek(0)
            holder = self._fh.read().strip() or "another process"
            self._fh.close()
            raise PublishError(
                f"{self.path.parent / self.path.name[1:-5]}: another wikitrace compile ({holder}) is writing this "
                f"corpus; wait for it to finish (the lock {self.path} frees itself when that process ends)"
            ) from None
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(f"pid {os.getpid()}")
        self._fh.flush()
        return self

    def __exit__(self, *exc) -> None:
        if self._fh:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()


def staging_dir(out: Path) -> Path:
    return out.parent / f".{out.name}.building"


def check_target(out: Path) -> dict | None:
    """Return the published corpus.json (or None); refuse to replace a folder that is not a corpus."""
    if not out.exists():
        return None
    if not out.is_dir():
        raise PublishError(f"{out}: exists and is not a folder; choose another --out")
    stamp = out / "corpus.json"
    if not stamp.is_file():
        # A folder holding only dialogue memory may receive agent runs beside it.
        if any(p.name != "dialogue" for p in out.iterdir()):
            raise PublishError(f"{out}: exists, is not empty and holds no corpus.json; "
                               f"choose a new or empty folder for --out (wikitrace will not replace it)")
        return None
    try:
        data = json.loads(stamp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PublishError(f"{stamp}: unreadable ({exc}); move the folder away or choose another --out") from None
    if data.get("format") != CORPUS_FORMAT:
        raise PublishError(f"{stamp}: format {data.get('format')!r} is not {CORPUS_FORMAT!r}; choose another --out")
    return data


def fresh_staging(out: Path) -> Path:
    stage = staging_dir(out)
    if stage.exists():  # left by a killed build; we hold the lock, so nobody is using it
        remove_tree(stage)
    stage.mkdir(parents=True)
    return stage


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2); False where unsupported."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    AT_FDCWD = -100
    rc = fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0


def publish(stage: Path, out: Path) -> None:
    """Freeze the staged tree and put it where the old one was."""
    make_read_only(stage)
    if not out.exists():
        os.rename(stage, out)
        return
    if _exchange(stage, out):
        remove_tree(stage)  # now holds the previous corpus
        return
    old = out.parent / f".{out.name}.previous"
    if old.exists():
        remove_tree(old)
    os.rename(out, old)
    os.rename(stage, out)
    remove_tree(old)
