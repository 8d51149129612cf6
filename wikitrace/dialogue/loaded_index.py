"""The compiled dialogue index as retrieval reads it: ``index.json`` with its BM25 tables and
hashed vectors loaded once, the entity names a question can mention, and each message's
question-independent note (relative dates resolved, revised claims)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .bm25 import BM25
from .index import VECTOR_FILE, VectorStore


@dataclass
class LoadedIndex:
    raw: dict
    bm: dict = field(default_factory=dict)
    vec: VectorStore | None = None
    entity_names: list[str] = field(default_factory=list)
    notes: dict[int, str] = field(default_factory=dict)   # message index -> context note (dates, revisions)
    folder: Path | None = None
    dense_bytes: bytes | None = None       # embeddings.f32, when the index was built with an endpoint
    query_embedder: object | None = None   # set to reuse (or inject) the endpoint client for questions
    _dense: dict | None = None


def load_index(path: Path) -> LoadedIndex:
    path = Path(path)
    raw = json.loads(path.read_text(encoding="utf-8"))
    li = prepare(raw, vector_bytes=(path.parent / raw["vectors"]["file"]).read_bytes())
    li.folder = path.parent
    return li


def prepare_files(files: dict) -> LoadedIndex:
    """A loaded index straight from ``render.render_sample`` output (benchmarks, tests)."""
    return prepare(json.loads(files["index.json"]), vector_bytes=files[VECTOR_FILE],
                   dense_bytes=files.get("embeddings.f32"))


def prepare(raw: dict, vector_bytes: bytes, dense_bytes: bytes | None = None) -> LoadedIndex:
    li = LoadedIndex(raw=raw, dense_bytes=dense_bytes)
    li.bm = {k: BM25.from_json(v) for k, v in raw["bm25"].items()}
    li.vec = VectorStore(raw["vectors"], vector_bytes)
    names = set()
    for p in raw["pages"]:
        if p["type"] == "entity":
            names.update(p["ents"])
    li.entity_names = sorted(names)
    li.notes = message_notes(raw)
    return li


def _short(text: str, words: int = 18) -> str:
    ws = str(text).split()
    return " ".join(ws[:words]) + (" ..." if len(ws) > words else "")


def message_notes(raw: dict) -> dict[int, str]:
    """What a model should read next to a message: its relative dates resolved, and revisions -
    a claim it states that replaced an earlier one (shown as deprecated), or a claim of it that a
    later message superseded. Question-independent, so computed once per loaded index."""
    pos = {m[0]: i for i, m in enumerate(raw["messages"])}
    claims = {c[0]: c for s in raw["snapshots"] for c in s["claims"]}
    notes: dict[int, list[str]] = {}
    for s in raw["snapshots"]:
        for a in s.get("temporal", []):
            if a.get("message") in pos:
                notes.setdefault(pos[a["message"]], []).append(f"({a['surface']} = {a['resolved']})")
        for c in s["claims"]:
            cid, status, text, src = c[:4]
            replaces, replaced_by = (c[4], c[5]) if len(c) > 5 else (None, None)
            at = [pos[x] for x in src if x in pos]
            if not at:
                continue
            if replaces in claims:
                old = claims[replaces]
                notes.setdefault(at[0], []).append(
                    f"[updates {', '.join(old[3])}; deprecated claim: \"{_short(old[2])}\"]")
            if status == "deprecated" and replaced_by in claims:
                new = claims[replaced_by]
                notes.setdefault(at[0], []).append(
                    f"[deprecated, superseded by {', '.join(new[3])}: \"{_short(new[2])}\"]")
    return {i: " ".join(dict.fromkeys(v)) for i, v in notes.items()}
