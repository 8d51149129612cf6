"""Tombstones of forgotten dialogue memory: ``.wikitrace/dialogue-forgotten.json``.

A tombstone holds ids and hashes only, never text: the sample as a salted sha256 of its id,
a session by its id, and per forgotten unit its message count and a digest of its messages.
Every dialogue build reads it, so a later ``dialogue compile`` from an input that still holds
a forgotten sample or session leaves it out (and reports it); ``--restore`` compiles it again
and drops the tombstone."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .load import Dialogue, Message

FILE = "dialogue-forgotten.json"
FORMAT = 1


def sample_key(sample: str) -> str:
    return hashlib.sha256(b"wikitrace-dialogue-sample\0" + sample.encode("utf-8", "surrogatepass")).hexdigest()


def digest(messages) -> str:
    """sha256 of the messages' ids, speakers and texts (as compiled, i.e. after redaction)."""
    h = hashlib.sha256()
    for m in messages:
        for part in (m.id, m.speaker, m.text):
            h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def without_sessions(d: Dialogue, drop: set[str]) -> Dialogue:
    """The dialogue minus some sessions (message positions and session offsets recomputed)."""
    messages: list[Message] = []
    sessions = []
    for s in d.sessions:
        if s["id"] in drop:
            continue
        ms = [m for m in d.messages if m.session == s["id"]]
        sessions.append({**s, "first": len(messages), "count": len(ms)})
        for m in ms:
            m.index = len(messages)
            messages.append(m)
    # the speakers the loader would list for the shorter input: LoCoMo's declared pair, then who
    # speaks (a name heard only in a dropped session goes with it)
    declared = d.speakers[:2] if d.source_format.startswith("locomo") else []
    speakers = list(dict.fromkeys(declared + [m.speaker for m in messages]))
    return Dialogue(sample_id=d.sample_id, speakers=speakers, messages=messages, sessions=sessions,
                    qa=d.qa, source=d.source, source_format=d.source_format, repaired=d.repaired,
                    redactions=d.redactions)


@dataclass
class Tombstones:
    path: Path
    samples: dict = field(default_factory=dict)     # key -> {"whole": {...} | None, "sessions": {id: {...}}}

    @classmethod
    def load(cls, root: Path) -> "Tombstones":
        path = Path(root) / ".wikitrace" / FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError) as exc:
            raise InputError(f"{path}: unreadable ({exc.__class__.__name__}); it lists forgotten dialogue memory - "
                             f"restore it from a backup, or delete it to forget nothing") from None
        samples = data.get("samples") if isinstance(data, dict) else None
        if not isinstance(samples, dict) or not all(
                isinstance(e, dict) and isinstance(e.get("whole") or {}, dict) and isinstance(e.get("sessions") or {}, dict)
                for e in samples.values()):
            raise InputError(f"{path}: not the shape wikitrace writes (a 'samples' object of "
                             f"{{whole, sessions}} entries); restore it from a backup, or delete it to forget nothing")
        return cls(path, samples)

    def _entry(self, sample: str) -> dict:
        return self.samples.get(sample_key(sample)) or {}

    def whole(self, sample: str) -> dict | None:
        return self._entry(sample).get("whole")

    def sessions(self, sample: str) -> dict:
        return self._entry(sample).get("sessions") or {}

    def bury_sample(self, sample: str, d: Dialogue | None) -> None:
        """``d`` None: a sample whose memory could not be read (counted as unknown)."""
        entry = self.samples.setdefault(sample_key(sample), {"whole": None, "sessions": {}})
        entry["whole"] = {"messages": len(d.messages) if d else None, "sessions": len(d.sessions) if d else None,
                          "digest": digest(d.messages) if d else None}

    def bury_session(self, d: Dialogue, session: str) -> None:
        ms = [m for m in d.messages if m.session == session]
        entry = self.samples.setdefault(sample_key(d.sample_id), {"whole": None, "sessions": {}})
        entry.setdefault("sessions", {})[session] = {"messages": len(ms), "digest": digest(ms)}

    def apply(self, dialogues: list[Dialogue], restore: bool = False) -> tuple[list[Dialogue], list[dict]]:
        """Dialogues to compile, forgotten parts left out (or, with ``restore``, kept and their
        tombstones dropped), and a report line per forgotten unit the inputs still hold."""
        out, report = [], []
        for d in dialogues:
            key = sample_key(d.sample_id)
            whole = self.whole(d.sample_id)
            graves = self.sessions(d.sample_id)
            if whole:
                same = whole.get("digest") == digest(m for m in d.messages if m.session not in graves)
                report.append({"sample": d.sample_id, "session": None, "same_content": same,
                               "action": "restored" if restore else "left out"})
                if not restore:
                    continue
            held = [s["id"] for s in d.sessions if s["id"] in graves]
            for sid in held:
                same = graves[sid].get("digest") == digest(m for m in d.messages if m.session == sid)
                report.append({"sample": d.sample_id, "session": sid, "same_content": same,
                               "action": "restored" if restore else "left out"})
            if restore:
                self.samples.pop(key, None)
            elif held:
                d = without_sessions(d, set(held))
            out.append(d)
        return out, report

    def save(self) -> None:
        """Written whole through a temp file and renamed into place (never half-written)."""
        data = {"format": FORMAT,
                "about": "forgotten dialogue memory (ids and hashes only); `wikitrace dialogue compile --restore` "
                         "compiles it again from an input that holds it",
                "samples": dict(sorted(self.samples.items()))}
        if not self.samples:
            try:
                os.unlink(self.path)
            except FileNotFoundError:
                pass
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.path)
