"""Finishing an interrupted dialogue build from what the corpus holds.

A dialogue build (``dialogue compile``, ``add``, ``forget``) is a function of the
Dialogues it compiles. Before it writes anything it saves them, as compiled (redacted,
repaired), in ``.wikitrace/dialogue.pending``; the record goes once the manifest is
saved. A build killed in between is finished by the next dialogue build of the corpus,
which compiles the saved Dialogues again (alongside its own) with no input file: a
sample's memory.json and the pages beside it never stay half old, half new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from .load import Dialogue, Message

PENDING = "dialogue.pending"


def path(root: Path) -> Path:
    return Path(root) / ".wikitrace" / PENDING


def save(root: Path, dialogues: list[Dialogue], command: str) -> None:
    from ..fsio import write_atomic

    record = {"command": command, "dialogues": [
        {**asdict(d), "redactions": _pairs(d.redactions), "notes": _pairs(d.notes)} for d in dialogues]}
    write_atomic(path(root), json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n", mode=0o644)


def _pairs(counts: Counter) -> list:
    """A Counter as [key, n] pairs: a key may be a tuple, which JSON object keys cannot be."""
    return [[list(k) if isinstance(k, tuple) else k, n] for k, n in counts.items()]


def _counter(pairs) -> Counter:
    return Counter({tuple(k) if isinstance(k, list) else k: n for k, n in pairs or []})


def load(root: Path) -> tuple[str, list[Dialogue]] | None:
    """The command and the Dialogues of a build that did not finish, or None. A record
    that cannot be read is ignored (it is only ever replaced whole)."""
    try:
        record = json.loads(path(root).read_bytes())
        dialogues = [Dialogue(**{**d, "messages": [Message(**m) for m in d["messages"]],
                                 "redactions": _counter(d.get("redactions")), "notes": _counter(d.get("notes"))})
                     for d in record["dialogues"]]
        return str(record.get("command") or "dialogue compile"), dialogues
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError):
        return None


def done(root: Path) -> None:
    from ..fsio import before_replace

    before_replace()
    try:
        os.unlink(path(root))
    except FileNotFoundError:
        pass


def describe(root: Path) -> list[str]:
    """`wikitrace check`'s line about an unfinished dialogue build."""
    from ..corpus.pending import running

    found = load(root)
    if found is None:
        return []
    if running(root):
        return [f"{root}: another wikitrace command is writing this corpus now; check again when it is done"]
    command, dialogues = found
    names = ", ".join(sorted({d.sample_id for d in dialogues}))
    return [f"{Path(root) / 'dialogue'}: `wikitrace {command}` was interrupted while writing {names}; the next "
            f"wikitrace dialogue compile, add or forget of this corpus finishes it first"]
