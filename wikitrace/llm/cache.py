"""An on-disk cache of model answers, so a rebuild never pays twice for a call.

One JSON file per request, named by a sha256 over the model name, the full
rendered messages and the response mode, sharded by the key's first two hex
digits: ``<dir>/ab/abcdef....json``. Each file is written atomically (temp file
in the same folder, then ``os.replace``) as soon as its call returns, so a
build killed half-way keeps the answers it already paid for.

Only answers that passed the compiler's checks are stored by a live build
(an answer that needed a repair is stored as its repaired form, under the run's
first request). The Batch API path stores answers unchecked; an answer read
back is checked again, and one that fails is deleted, never replayed.

A file holds the raw answer text and token usage, the model and response mode,
and ``runs``: the content hashes of the runs it answered (a tag, not their text),
so ``wikitrace forget`` can find and delete every answer that quotes a forgotten
run (``purge_runs``). It never holds the prompt, the API key or any HTTP header. A file that cannot be read or parsed is treated as absent and is
overwritten by the next answer for that key.

A build writes behind (``write_behind``): the files are made on a thread, in the order
they were asked for, so its event loop never waits on the disk; an answer not yet on
disk is read from memory, and ``flush`` (the compiler's ``aclose``) waits for them all.

``<dir>/modes/<mode>`` marks each response mode the cache holds answers in, so a
build looks up the less structured modes only where answers in them exist.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import message_json

FORMAT = "wikitrace-llm-cache/1"
ENV_CACHE_DIR = "WIKITRACE_CACHE_DIR"


def default_dir() -> Path:
    """``$WIKITRACE_CACHE_DIR``, else ``$XDG_CACHE_HOME/wikitrace/llm``, else ``~/.cache/wikitrace/llm``."""
    explicit = os.environ.get(ENV_CACHE_DIR, "").strip()
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "wikitrace" / "llm"


def cache_key(model: str, messages: list[dict[str, Any]], mode: str,
              options: dict[str, Any] | None = None) -> str:
    """sha256 over what decides the answer. ``options`` (temperature, max_tokens)
    join the key only when set, so the common case is (model, messages, mode)."""
    material: dict[str, Any] = {"model": model, "messages": messages, "mode": mode}
    if options:
        material["options"] = {k: v for k, v in sorted(options.items()) if v is not None}
    blob = message_json.dumps(material, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class CachedAnswer:
    text: str
    usage: dict[str, int] = field(default_factory=dict)
    runs: list[str] = field(default_factory=list)  # content hashes of the runs it answered


class ResponseCache:
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.dir = Path(directory).expanduser() if directory else default_dir()
        self._folders: set[str] = set()  # shard folders known to exist
        self._modes: set[str] | None = None  # response modes with cached answers, read once
        self._marked: set[str] = set()  # modes this process has marked
        self._writer: Any = None  # the one-thread executor of a cache that writes behind
        # key -> the file's bytes until the writer has made it, or None until it has removed it
        self._unwritten: dict[str, bytes | None] = {}
        self._lock = threading.Lock()

    def write_behind(self) -> None:
        """Make the files on a thread from now on (a build's event loop must not wait on the disk)."""
        if self._writer is None:
            from concurrent.futures import ThreadPoolExecutor

            # one worker: the files are made in order; its pending work is finished at exit
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="wikitrace-cache")

    def flush(self) -> None:
        """Wait until every answer put so far is on disk (or failed to be written)."""
        if self._writer is not None:
            self._writer.submit(lambda: None).result()

    def close(self) -> None:
        """Wait for the writer and stop its thread; answers put later are written at once."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)

    def path(self, key: str) -> Path:
        return Path(self._file(key))

    def _file(self, key: str) -> str:
        """The entry's path as a string: a build reads and writes one per run, and the
        ``Path`` objects cost more than the calls (the writer thread shares the build's lock)."""
        return f"{self.dir}{os.sep}{key[:2]}{os.sep}{key}.json"  # a Path keeps its text once made

    def get(self, key: str) -> CachedAnswer | None:
        try:
            unwritten = self._unwritten.get(key, b"")
            if unwritten is None:
                return None  # discarded; the writer has not removed the file yet
            if not unwritten:
                with open(self._file(key), encoding="utf-8") as fh:
                    unwritten = fh.read()
            data = json.loads(unwritten)
        except (OSError, ValueError):
            return None  # absent or corrupt: ask the model again
        if not isinstance(data, dict) or data.get("key") != key or not isinstance(data.get("text"), str):
            return None
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        runs = data.get("runs") if isinstance(data.get("runs"), list) else []
        return CachedAnswer(
            text=data["text"],
            usage={k: int(v) for k, v in usage.items() if isinstance(v, int) and not isinstance(v, bool)},
            runs=[r for r in runs if isinstance(r, str)],
        )

    def discard(self, key: str) -> None:
        """Forget an answer that turned out unusable, so no build replays it."""
        if self._writer is not None:
            with self._lock:
                self._unwritten[key] = None  # gone for readers now, whatever the writer has made so far
            self._writer.submit(self._unlink, key)
        else:
            self._unlink(key)

    def _unlink(self, key: str) -> None:
        try:
            self.path(key).unlink()
        except OSError:
            pass
        finally:
            with self._lock:
                if key in self._unwritten and self._unwritten[key] is None:
                    del self._unwritten[key]

    def put(self, key: str, answer: CachedAnswer, *, model: str, mode: str,
            messages: list[dict[str, Any]]) -> None:
        """Write one answer atomically. A failure to write is not fatal: the answer
        is still used, it just will not be reused."""
        # The prompt itself is not stored: the key is its hash, and prompts of large
        # runs would make the cache many times the size of the answers.
        record = {
            "format": FORMAT,
            "key": key,
            "model": model,
            "mode": mode,
            "text": answer.text,
            "usage": answer.usage,
        }
        if answer.runs:
            record["runs"] = sorted(set(answer.runs))
        data = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")
        try:
            self._mark(mode)
        except OSError:
            return
        if self._writer is None:
            self._write(key, data)
            return
        with self._lock:
            self._unwritten[key] = data
        self._writer.submit(self._write, key, data)

    def _write(self, key: str, data: bytes) -> None:
        folder = f"{self.dir}{os.sep}{key[:2]}"
        tmp = f"{folder}{os.sep}.{key[:16]}.{os.getpid()}.tmp"  # one writer per process and key at a time
        try:
            if folder not in self._folders:
                os.makedirs(folder, exist_ok=True)
                self._folders.add(folder)
            # Rename makes the entry appear whole or not at all, which is what a killed
            # build needs; no fsync: after a power loss an entry may be asked for again.
            with open(tmp, "wb") as fh:
                fh.write(data)
            os.replace(tmp, self._file(key))
        except OSError:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        finally:
            with self._lock:
                if self._unwritten.get(key) is data:
                    del self._unwritten[key]

    # Which response modes the cache holds answers for: a build need not render and
    # hash its prompts for a mode no answer was ever cached in. A mark is a file
    # <dir>/modes/<mode>, made the first time an answer in that mode is stored.

    def holds_mode(self, mode: str) -> bool:
        if self._modes is None:
            try:
                self._modes = set(os.listdir(self.dir / "modes"))
            except FileNotFoundError:  # no marks: empty, or a cache from before them (any mode)
                self._modes = {"*"} if self._has_entries() else set()
            except OSError:
                self._modes = {"*"}
        return mode in self._modes or "*" in self._modes

    def _mark(self, mode: str) -> None:
        if mode in self._marked:
            return
        marks = self.dir / "modes"
        marks.mkdir(parents=True, exist_ok=True)
        (marks / mode).touch()
        self._marked.add(mode)
        if self._modes is not None:
            self._modes.add(mode)

    def _has_entries(self) -> bool:
        try:
            with os.scandir(self.dir) as entries:
                return any(entry.is_dir() for entry in entries)
        except OSError:
            return False


def purge_runs(directory: str | os.PathLike[str], tags: set[str]) -> tuple[list[str], int]:
    """Delete every answer in the cache at ``directory`` tagged with one of ``tags`` (run
    content hashes), and any temp file of an interrupted write that names one.
    Returns the keys deleted and how many answers carry no tag at all (written by an
    older wikitrace, or not about a corpus run): those cannot be told apart."""
    removed: list[str] = []
    untagged = 0
    needles = [t.encode() for t in tags]
    try:
        shards = [e for e in os.scandir(directory) if len(e.name) == 2 and e.is_dir(follow_symlinks=False)]
    except OSError:
        return removed, untagged
    for shard in sorted(shards, key=lambda e: e.name):
        with os.scandir(shard.path) as entries:
            files = [e for e in entries if e.is_file(follow_symlinks=False)]
        for entry in files:
            try:
                with open(entry.path, "rb") as fh:
                    blob = fh.read()
            except OSError:
                continue
            hit = any(n in blob for n in needles)
            if entry.name.endswith(".json") and not hit:
                untagged += b'"runs"' not in blob
                continue
            if not hit:
                continue
            if entry.name.endswith(".json"):
                try:
                    data = json.loads(blob)
                except ValueError:
                    data = None
                runs = data.get("runs") if isinstance(data, dict) else None
                if isinstance(runs, list) and not tags & {r for r in runs if isinstance(r, str)}:
                    continue  # the hash text appears, but not as a tag
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
            removed.append(entry.name.rsplit(".", 1)[0].lstrip("."))
    return removed, untagged
