"""corpus.json and its prompt index noted as a pair, so a cold ``prompt`` need not hash corpus.json.

A build writes ``index/prompt.bin`` from the same bytes it then writes to corpus.json. Once
both are in place it notes each file's inode, modification time and size (the test the
manifest trusts for every page). A prompt that finds both files exactly so reads only the
corpus.json entries it needs; any other state (a hand edit, ``forget`` before this note
existed, a copy) falls back to hashing the indexed span, as agent/index_reader.py describes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

INDEX_PATH = "index/prompt.bin"  # the prompt index (agent/index.py)
PAIR_PATH = ".wikitrace/prompt-pair.json"


def _stat_key(path: Path) -> tuple:
    st = path.stat()
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def note_pair(root: str | Path) -> None:
    """Called by a build once corpus.json and the prompt index made from it are both in
    place: note the two files' stat keys, so a prompt that finds them unchanged need not
    hash corpus.json. Best effort: without the note (or with a stale one) it hashes."""
    pair = Path(root) / PAIR_PATH
    tmp = pair.with_name(f".{pair.name}.{os.getpid()}")
    try:
        keys = {"index": list(_stat_key(Path(root) / INDEX_PATH)), "corpus": list(_stat_key(Path(root) / "corpus.json"))}
        tmp.write_text(json.dumps(keys), encoding="utf-8")
        os.replace(tmp, pair)
    except OSError:
        try:
            tmp.unlink()
        except OSError:
            pass


def noted_pair(root: Path, index_key: tuple, corpus_key: tuple) -> bool:
    try:
        noted = json.loads((root / PAIR_PATH).read_bytes())
        return tuple(noted["index"]) == index_key and tuple(noted["corpus"]) == corpus_key
    except (OSError, ValueError, KeyError, TypeError):
        return False


class CorpusFile:
    """The parts of corpus.json a prompt reads, read when asked (``pread`` on one open file)."""

    def __init__(self, fh, size: int):
        self._fh, self._size = fh, size

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, span: slice) -> bytes:
        start, stop, _ = span.indices(self._size)
        return os.pread(self._fh.fileno(), max(0, stop - start), start)

    def find(self, sub: bytes, start: int, end: int) -> int:
        return self[start:end].find(sub)
