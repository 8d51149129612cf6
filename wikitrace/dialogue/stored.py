"""A compiled sample read back: its ``memory.json`` as the Dialogue it was compiled from, and
what a later build changed in the files the dialogue build owns (``dialogue add`` and
``dialogue forget`` recompile from this, so their output is what ``dialogue compile`` of the
changed conversation writes)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from .load import Dialogue, Message


class StoredError(InputError):
    """A compiled sample that is missing or unreadable; the message says how to get it back."""


def samples(root: Path) -> list[str]:
    top = Path(root) / "dialogue"
    return sorted(p.name for p in top.iterdir() if (p / "memory.json").is_file()) if top.is_dir() else []


def read_memory(root: Path, sample: str) -> dict:
    path = Path(root) / "dialogue" / sample / "memory.json"
    inside = path.resolve().is_relative_to((Path(root) / "dialogue").resolve())   # no symlink out of the corpus
    if "/" in sample or sample in ("", ".", "..") or not inside or not path.is_file():
        have = samples(root)
        raise StoredError(f"{Path(root) / 'dialogue'}: no compiled sample {sample!r} "
                          f"({'samples: ' + ', '.join(have) if have else 'no dialogue compiled here'}); "
                          f"compile it first with `wikitrace dialogue compile INPUT --out {root}`")
    try:
        mem = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(mem, dict) or not isinstance(mem.get("messages"), list):
            raise ValueError("no 'messages' list")
    except (OSError, ValueError) as exc:
        raise StoredError(f"{path}: unreadable ({exc}); compile the sample again with `wikitrace dialogue compile`") \
            from None
    return mem


def dialogue_from_memory(mem: dict) -> Dialogue:
    """The Dialogue a sample was compiled from (messages as compiled: redacted and repaired)."""
    messages = [Message(id=m["id"], speaker=m["speaker"], text=m["text"], session=str(m["session"]),
                        timestamp=m.get("timestamp"), date=m.get("date"), index=i)
                for i, m in enumerate(mem["messages"])]
    sessions = [{"id": str(s["id"]), "timestamp": s.get("timestamp"), "date": s.get("date"),
                 "first": s["first"], "count": s["count"]} for s in mem["sessions"]]
    src = mem.get("source") or {}
    return Dialogue(sample_id=mem["sample"], speakers=list(mem["speakers"]), messages=messages,
                    sessions=sessions, source=src.get("file", ""), source_format=src.get("format", ""))


def owned_files(root: Path) -> dict[str, str | None]:
    """Path -> sha256 of every file the dialogue build owns (from its manifest)."""
    from ..corpus.manifest import FileManifest

    man = FileManifest.load(Path(root) / ".wikitrace" / "dialogue.json")
    return {rel: (entry[0] if entry else None) for rel, entry in (man.files.items() if man else [])}


def changes(before: dict, after: dict, prefix: str) -> dict:
    """Files under ``prefix`` added, rewritten, removed and left byte-identical by a build."""
    b = {r: h for r, h in before.items() if r.startswith(prefix)}
    a = {r: h for r, h in after.items() if r.startswith(prefix)}
    return {"added": sorted(set(a) - set(b)), "rewritten": sorted(r for r in set(a) & set(b) if a[r] != b[r]),
            "removed": sorted(set(b) - set(a)), "unchanged": sum(1 for r in set(a) & set(b) if a[r] == b[r])}
