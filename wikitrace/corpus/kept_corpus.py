"""corpus.json as parsed, kept between commands so ``wikitrace add`` need not parse it.

An add carries every run of the corpus over from corpus.json's entries: parsing its tens of
megabytes of JSON was the largest pass over every run that an add of one run paid for
(0.27 CPU-s at 10,000 runs; loading the same data from marshal costs half). Every command
that publishes corpus.json (compile, add, forget: ``pending.complete``) therefore keeps the
parsed data in ``.wikitrace/corpus.marshal``, stamped with its format, the interpreter's
marshal version and the sha256 of the corpus.json it is the parse of (the manifest's).

The kept data is used only when its stamp is the corpus.json the manifest lists now (which
the add has checked is the file on disk): a file from an older wikitrace, another
interpreter, another corpus.json (written by a wikitrace that does not keep this file),
or a damaged one, is ignored and corpus.json parsed as before. It holds nothing
corpus.json does not.
"""

from __future__ import annotations

import marshal
import sys
from pathlib import Path

FILE = "corpus.marshal"
_STAMP = ("wikitrace-kept-corpus/1", marshal.version, sys.implementation.cache_tag)


def path(root: Path) -> Path:
    return Path(root) / ".wikitrace" / FILE


def load(root: Path, corpus_digest: str | None) -> dict | None:
    """The parsed corpus.json whose sha256 is ``corpus_digest``, or None (missing, damaged,
    from other code or of another corpus.json)."""
    if not corpus_digest:
        return None
    try:
        kept = marshal.loads(path(root).read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(kept, tuple) and len(kept) == 3 and kept[0] == _STAMP and kept[1] == corpus_digest
            and isinstance(kept[2], dict)):
        return None
    return kept[2]


def save(root: Path, data: dict | None, corpus_digest: str | None) -> None:
    """Keep ``data``, the parse of the corpus.json whose sha256 is ``corpus_digest`` (written
    whole, renamed into place); without either the file is removed, so nothing stale stays."""
    from ..fsio import write_atomic

    try:
        if data is None or not corpus_digest:
            path(root).unlink(missing_ok=True)
            return
        write_atomic(path(root), marshal.dumps((_STAMP, corpus_digest, data)), mode=0o644)
    except (OSError, ValueError):
        pass  # only a speed-up for the next add: without it corpus.json is parsed
