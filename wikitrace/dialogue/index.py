"""The retrieval index of one sample, written at compile time: BM25 statistics, ids and packet
data as plain JSON (``index.json``), and hashed-lexical vectors as one binary blob
(``vectors.bin``) with the reader that computes cosines in place. ``retrieve`` only reads them."""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left

from .bm25 import BM25
from .kinds import kinds_of
from .text import EMBED_DIM, hashed_embedding, tokens

INDEX_FORMAT = "wikitrace-dialogue-index/1"
VECTOR_FILE = "vectors.bin"
VECTOR_LEVELS = ("snapshots", "trajectories", "pages")


def pack_vectors(levels: dict[str, list[dict]]) -> tuple[dict, bytes]:
    """Hashed-lexical vectors of every level in one binary blob: all dimension indices (uint16),
    then all values (float32), little-endian; ``offsets[level]`` (n + 1 entries) delimit items."""
    idx, val = array("H"), array("f")
    offsets = {}
    for level in VECTOR_LEVELS:
        offs = [len(idx)]
        for v in levels[level]:
            for k in sorted(v):
                idx.append(k)
                val.append(v[k])
            offs.append(len(idx))
        offsets[level] = offs
    if sys.byteorder != "little":
        idx.byteswap()
        val.byteswap()
    meta = {"file": VECTOR_FILE, "dim": EMBED_DIM, "nnz": len(idx), "offsets": offsets}
    return meta, idx.tobytes() + val.tobytes()


class VectorStore:
    """Read-only access to ``vectors.bin``; cosines against a sparse query are computed in place."""

    def __init__(self, meta: dict, data: bytes):
        n = meta["nnz"]
        self.idx, self.val = array("H"), array("f")
        self.idx.frombytes(data[:2 * n])
        self.val.frombytes(data[2 * n:2 * n + 4 * n])
        if sys.byteorder != "little":
            self.idx.byteswap()
            self.val.byteswap()
        self.offsets = meta["offsets"]

    def cos(self, level: str, i: int, q: dict) -> float:
        """Dot product with a sparse query: one binary search per query dimension (item indices
        are stored sorted), so the cost follows the short query, not the long document."""
        offs = self.offsets[level]
        a, b = offs[i], offs[i + 1]
        idx, val = self.idx, self.val
        s = 0.0
        for k, qv in q.items():
            j = bisect_left(idx, k, a, b)
            if j < b and idx[j] == k:
                s += qv * val[j]
        return s

    def vector(self, level: str, i: int) -> dict:
        offs = self.offsets[level]
        a, b = offs[i], offs[i + 1]
        return dict(zip(self.idx[a:b], self.val[a:b]))


def snapshot_text(lines: list[tuple[str, str]], temporal: list[dict]) -> str:
    """The text a snapshot is indexed (and embedded) by: its source lines plus resolved dates."""
    return " ".join(f"{spk} {txt}" for spk, txt in lines) + " " + " ".join(a["resolved"] for a in temporal)


def build_index(mem: dict, embedder=None) -> dict:
    """Retrieval index for one sample from the compiled memory (see ``build.compile_sample``).
    Hashed-lexical vectors are always stored (the offline path and the fallback); with an endpoint
    ``embedder`` the index also points at dense rows of ``embeddings.f32`` for snapshots and pages
    (trajectory vectors are the mean of their snapshots, computed at load time)."""
    msgs = mem["messages"]
    snaps = mem["snapshots"]
    trajs = mem["trajectories"]
    pages = mem["pages"]
    snap_idx = {s["id"]: i for i, s in enumerate(snaps)}
    traj_idx = {t["id"]: i for i, t in enumerate(trajs)}
    msg_idx = {m["id"]: i for i, m in enumerate(msgs)}
    msg_snap = {}
    for i, s in enumerate(snaps):
        for mid in s["message_ids"]:
            msg_snap[mid] = i

    def msg_text(m):
        return f"{m['speaker']} {m['text']}"

    def snap_text(s):
        return snapshot_text([(msgs[msg_idx[mid]]["speaker"], msgs[msg_idx[mid]]["text"]) for mid in s["message_ids"]],
                             s.get("temporal", []))

    def traj_text(t):
        parts = [t["title"]] + [snap_text(snaps[snap_idx[sid]]) for sid in t["snapshots"]]
        return " ".join(parts)

    def page_text(p):
        parts = [p["title"], " ".join(p.get("entities", [])), p.get("facet") or "", " ".join(p.get("keywords", []))]
        for tid in p["trajectories"]:
            t = trajs[traj_idx[tid]]
            parts.append(t["title"])
            parts.append(" ".join(t.get("exact_terms", [])))
            parts.append(" ".join(t.get("keywords", [])))
        return " ".join(parts)

    levels = {
        "messages": [msg_text(m) for m in msgs],
        "snapshots": [snap_text(s) for s in snaps],
        "trajectories": [traj_text(t) for t in trajs],
        "pages": [page_text(p) for p in pages],
    }
    bm = {k: BM25([tokens(x) for x in v]).to_json() for k, v in levels.items()}
    # the kinds of thing each message's nouns name ("Rome" -> city), for questions asking by kind
    bm["kinds"] = BM25([kinds_of(m["text"]) for m in msgs]).to_json()
    vec_meta, vec_bytes = pack_vectors({k: [hashed_embedding(x) for x in levels[k]] for k in VECTOR_LEVELS})

    # neighbours in dialogue order (same session) and update links
    prev_next = []
    for i, s in enumerate(snaps):
        p = i - 1 if i > 0 and snaps[i - 1]["session"] == s["session"] else None
        n = i + 1 if i + 1 < len(snaps) and snaps[i + 1]["session"] == s["session"] else None
        prev_next.append([p, n])
    updates: dict[int, list[int]] = {}
    for t in trajs:
        for a, b in t.get("update_links", []):
            if a in snap_idx and b in snap_idx:
                updates.setdefault(snap_idx[a], []).append(snap_idx[b])
                updates.setdefault(snap_idx[b], []).append(snap_idx[a])

    dense = None
    if embedder is not None:
        embedder.embed_passages(levels["snapshots"] + levels["pages"])
        skeys, pkeys = embedder.keys(levels["snapshots"]), embedder.keys(levels["pages"])
        keys = list(dict.fromkeys(skeys + pkeys))
        row = {k: i for i, k in enumerate(keys)}
        dense = {**embedder.describe(), "file": "embeddings.f32", "snapshots": [row[k] for k in skeys],
                 "pages": [row[k] for k in pkeys], "keys": keys}
    return {
        "format": INDEX_FORMAT,
        "sample": mem["sample"],
        "speakers": mem["speakers"],
        "aliases": mem["stats"]["extraction"].get("aliases", {}),
        "embedder": embedder.name if embedder is not None else "hashed-lexical",
        "dense": dense,
        "messages": [[m["id"], m["speaker"], m.get("date"), m["session"], m["text"], msg_snap.get(m["id"])]
                     for m in msgs],
        "message_paths": [m["path"] for m in msgs],
        "snapshots": [{"id": s["id"], "msgs": [msg_idx[x] for x in s["message_ids"]],
                       "traj": traj_idx[s["trajectory"]], "session": s["session"], "date": s.get("date"),
                       "summary": s["summary"], "nbr": prev_next[i], "upd": sorted(set(updates.get(i, []))),
                       "claims": [[c["id"], c["status"], c["text"], c["source_message_ids"], c.get("replaces"),
                                   c.get("replaced_by")] for c in s["claims"]],
                       "temporal": s.get("temporal", [])}
                      for i, s in enumerate(snaps)],
        "trajectories": [{"id": t["id"], "title": t["title"], "snaps": [snap_idx[x] for x in t["snapshots"]],
                          "ents": t.get("entity_keys", []), "fams": t.get("families", []),
                          "terms": [x.lower() for x in t.get("exact_terms", [])], "counts": len(t.get("counts", [])),
                          "participants": t.get("participants", [])}
                         for t in trajs],
        "pages": [{"slug": p["slug"], "type": p["type"], "title": p["title"],
                   "trajs": [traj_idx[x] for x in p["trajectories"]], "ents": p.get("entity_keys", []),
                   "facet": p.get("facet"), "n": len(p["trajectories"])} for p in pages],
        "bm25": bm,
        "vectors": vec_meta,
        "_vector_bytes": vec_bytes,
    }
