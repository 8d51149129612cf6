"""The corpus folder itself: where it is, whether a build may write there, and the one
build at a time that holds it (corpus/publish.py writes into it)."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import stat
from pathlib import Path

from . import layout
from ..fsio import DIR_MODE

STATE = ".wikitrace"  # the build's own folder inside the corpus
KINDS = ("runs", "dialogue")


class PublishError(RuntimeError):
    pass


def corpus_root(out: Path) -> Path:
    """``--out`` with every symlink resolved, once: all later paths, and the lock,
    belong to the real folder, so ``--out link`` and ``--out target`` are one corpus."""
    return Path(os.path.realpath(out))


def _ours(root: Path) -> bool:
    return (root / STATE).is_dir() or (root / "corpus.json").is_file() or (root / "dialogue").is_dir() \
        or (root / "usage" / "ledger.jsonl").is_file()  # a usage ledger kept (git) while the pages are rebuilt


def check_target(root: Path) -> None:
    """Refuse a path that is not a folder, or a folder of other things that holds no corpus.

    Hidden entries (``.git``, ``.obsidian``) do not count: a user may ``git init`` first."""
    if not root.exists():
        return
    if not root.is_dir():
        raise PublishError(f"{root}: exists and is not a folder; choose another --out")
    if _ours(root):
        return
    visible = [p.name for p in root.iterdir() if not p.name.startswith(".")]
    if visible:
        raise PublishError(f"{root}: is not empty ({', '.join(sorted(visible)[:3])}{' …' if len(visible) > 3 else ''}) "
                           f"and holds no corpus; choose a new or empty folder for --out")


def read_corpus_json(root: Path) -> dict | None:
    """The published corpus.json, or None when there is none yet."""
    stamp = root / "corpus.json"
    if not stamp.is_file():
        return None
    return parse_corpus_json(stamp, stamp.read_bytes())


def parse_corpus_json(stamp: Path, text: bytes) -> dict:
    """corpus.json's ``text`` as read from ``stamp``: a caller that needs the bytes too
    (``wikitrace add`` reuses the runs' lines) reads the file once."""
    try:
        data = json.loads(text.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise PublishError(f"{stamp}: unreadable ({exc}); move it away and compile again "
                           f"(wikitrace rebuilds it)") from None
    if not isinstance(data, dict) or data.get("format") != layout.CORPUS_FORMAT:
        raise PublishError(f"{stamp}: format {data.get('format') if isinstance(data, dict) else None!r} is not "
                           f"{layout.CORPUS_FORMAT!r}; choose another --out")
    return data


class BuildLock:
    """One build per corpus folder at a time (``flock``, freed when its process dies).

    Creates the folder when it does not exist yet; removes it again (with the lock)
    when the build that created it fails before publishing anything."""

    def __init__(self, root: Path):
        self.root = root
        self.state = root / STATE
        self.path = self.state / "lock"
        self._fh = None
        self._created = False

    def __enter__(self) -> "BuildLock":
        if not self.root.exists():
            os.makedirs(self.root)
            os.chmod(self.root, DIR_MODE)
            self._created = True
        elif (self.root / "corpus.json").is_file() and not self.root.stat().st_mode & stat.S_IWUSR:
            os.chmod(self.root, DIR_MODE)  # the 0555 corpus of an earlier wikitrace
        try:
            self.state.mkdir(exist_ok=True)
            ignore = self.state / ".gitignore"
            if not ignore.exists():  # a git repository at the corpus leaves the build's state out
                ignore.write_text("*\n")
            self._fh = open(self.path, "a+")
        except OSError as exc:
            where = exc.filename or self.root
            fix = (f"remove {where} (wikitrace keeps its lock file there)" if isinstance(exc, IsADirectoryError)
                   else "choose a folder you can write for --out")
            raise PublishError(f"{where}: cannot write here ({exc.strerror}); {fix}") from None
        try:
            fcntl.flock(self._fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._fh.seek(0)
            holder = self._fh.read().strip() or "another process"
            self._fh.close()
            raise PublishError(
                f"{self.root}: another wikitrace build ({holder}) is writing this corpus; wait for it to "
                f"finish (the lock {self.path} frees itself when that process ends)") from None
        self._fh.seek(0)
        self._fh.truncate()
        self._fh.write(f"pid {os.getpid()}")
        self._fh.flush()
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self._fh:
            if exc_type is not None and self._created:
                _remove_if_only_state(self.root)
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()


def _remove_if_only_state(root: Path) -> None:
    """A first build that failed: take back the folder it created, if nothing else is in it
    (a pending --batch state, for one, is kept: the next build collects it)."""
    state = root / STATE
    try:
        names = os.listdir(root)
        others = [n for n in names if n != STATE]
        if any(n not in (*layout.LAYERS, "index", "dialogue") or os.listdir(root / n) for n in others):
            return
        # temp files in tmp/ are partial writes of this failed build (or of its page writer,
        # interrupted with it): never a file anyone could read, so they go with the folder
        if set(os.listdir(state)) - {"lock", ".gitignore", "tmp", "runs.journal", "dialogue.journal"}:
            return
        for n in others:
            os.rmdir(root / n)
        shutil.rmtree(state)
        os.rmdir(root)
    except OSError:
        pass
