"""corpus.json as parsed, kept between commands so ``wikitrace add`` need not parse it.

An add carries every run of the corpus over from corpus.json's entries: parsing its tens of
megabytes of JSON was the largest pass over every run that an add of one run paid for
(0.27 CPU-s at 10,000 runs; loading the same data from marshal costs half). Every command
that publishes corpus.json (compile, add, forget: ``pending.complete``) therefore keeps the
parsed data in ``.wikitrace/corpus.marshal``, and an add loads it instead of parsing.

The file is a chain of records, each a length and a marshal value: the first holds a stamp
(format, the interpreter's marshal version) and a whole corpus.json's parse; each later one
the runs an add appended and the rest of the new corpus.json (all but ``runs``: a few
megabytes), with the sha256 of the corpus.json it follows and of the one it makes. So an
add writes what it added, not the tens of megabytes again; a command that changed or
dropped a carried run (or found no usable file, or one with ``_LINKS`` records after the first) writes
the whole parse anew.

The kept data is used only when the chain is whole and ends at the sha256 the manifest
lists for corpus.json now (which the add has checked is the file on disk): a file from an
older wikitrace, another interpreter, a corpus.json written by a wikitrace that does not
keep this file, or a damaged or cut-short file, is ignored and corpus.json parsed as before.
It holds nothing corpus.json does not.
"""

from __future__ import annotations

import marshal
import os
import sys
from dataclasses import dataclass
from pathlib import Path

FILE = "corpus.marshal"
_STAMP = ("wikitrace-kept-corpus/2", marshal.version, sys.implementation.cache_tag)
_LINKS = 8  # records after the first before the whole parse is written again
_SIZE = 8  # bytes of each record's length


@dataclass
class _Chain:
    """The file as this process last loaded it: appending to it is safe only while it is still
    that file and the new runs follow exactly these entries. Held from ``load`` to the next
    ``save`` only (one command's), so a harness that adds run after run keeps no corpus alive."""

    path: Path
    digest: str
    runs: tuple  # the run entries its last record ends with, the very objects handed out
    records: int
    stat: tuple  # (size, mtime_ns, inode) when loaded


_chain: _Chain | None = None


def path(root: Path) -> Path:
    return Path(root) / ".wikitrace" / FILE


def _stat(p: Path) -> tuple:
    st = os.stat(p)
    return st.st_size, st.st_mtime_ns, st.st_ino


def _record(value) -> bytes:
    body = marshal.dumps(value)
    return len(body).to_bytes(_SIZE, "little") + body


def load(root: Path, corpus_digest: str | None) -> dict | None:
    """The parsed corpus.json whose sha256 is ``corpus_digest``, or None (missing, damaged,
    cut short, from other code or of another corpus.json)."""
    global _chain
    if not corpus_digest:
        return None
    p = path(root)
    try:
        with open(p, "rb") as fh:
            raw = fh.read()
            st = os.fstat(fh.fileno())
        view, at, records = memoryview(raw), 0, []
        while at < len(raw):
            size = int.from_bytes(view[at:at + _SIZE], "little")
            if size <= 0 or at + _SIZE + size > len(raw):
                return None
            records.append(view[at + _SIZE:at + _SIZE + size])
            at += _SIZE + size
        if not records:
            return None
        stamp, digest, data = marshal.loads(records[0])
        if stamp != _STAMP or not isinstance(data, dict) or not isinstance(data.get("runs"), list):
            return None
        for rec in records[1:]:
            after, before, kept, added, head = marshal.loads(rec)
            if before != digest or kept != len(data["runs"]) or not isinstance(head, dict):
                return None
            data["runs"].extend(added)
            head["runs"], data, digest = data["runs"], head, after
    except (OSError, EOFError, ValueError, TypeError, KeyError):
        return None
    if digest != corpus_digest:
        return None
    _chain = _Chain(p, digest, tuple(data["runs"]), len(records), (st.st_size, st.st_mtime_ns, st.st_ino))
    return data


def save(root: Path, data: dict | None, corpus_digest: str | None) -> None:
    """Keep ``data``, the parse of the corpus.json whose sha256 is ``corpus_digest``: appended
    to the chain when it only adds runs to the parse this command loaded, else written whole
    and renamed into place. Without either the file is removed, so nothing stale stays."""
    global _chain
    from ..fsio import write_atomic

    p, chain, _chain = path(root), _chain, None
    try:
        if data is None or not corpus_digest:
            p.unlink(missing_ok=True)
            return
        runs = data["runs"]
        if chain is not None and _appends(chain, p, runs):
            head = dict(data)
            head["runs"] = None
            with open(p, "ab") as fh:
                fh.write(_record((corpus_digest, chain.digest, len(chain.runs), runs[len(chain.runs):], head)))
        else:
            write_atomic(p, _record((_STAMP, corpus_digest, _shared(data))), mode=0o644)
    except (OSError, ValueError):  # only a speed-up for the next add: without it corpus.json is parsed
        try:
            p.unlink(missing_ok=True)  # nor is a record cut short left to be read
        except OSError:
            pass


def _shared(value):
    """``value`` with equal strings made one object (``sys.intern``): marshal writes an object
    met again as a reference, so each distinct pattern, rule sentence or lesson text is written
    and loaded once, not once per run (10,000 runs: 45 MB -> 13 MB, load 0.095 -> 0.04 CPU-s; the
    walk costs 0.2 CPU-s where the whole parse is written). A copy: the caller's data is left
    as it is."""
    kind = type(value)
    if kind is str:
        return sys.intern(value)
    if kind is list:
        if value and type(value[0]) is str:
            try:
                return list(map(sys.intern, value))  # a list of strings (patterns): in C
            except TypeError:
                pass
        return [_shared(v) for v in value]
    if kind is dict:
        return {k: _shared(v) for k, v in value.items()}
    return value


def let_go() -> None:
    """Forget the loaded chain (an add that ended without saving): nothing stays alive after it."""
    global _chain
    _chain = None


def _appends(chain: _Chain, p: Path, runs: list) -> bool:
    """Whether ``runs`` are the chain's runs (the same objects, in order) and more, and the file
    is still the one the chain was read from, not too long yet."""
    kept = chain.runs
    try:
        if chain.path != p or chain.records > _LINKS or len(runs) < len(kept) or _stat(p) != chain.stat:
            return False
    except OSError:
        return False
    return all(a is b for a, b in zip(kept, runs))
