"""Hierarchical retrieval (TrajWiki A.5): query shape -> wiki page routing (dense + BM25,
reciprocal-rank fusion) -> candidate trajectories (RRF) -> coverage-aware selection ->
snapshot expansion (neighbours, update links) -> a compact evidence packet with source
refs, timestamps and deprecated-claim diagnostics.

``build_index`` runs at compile time and produces plain JSON; ``retrieve`` only reads it."""

from __future__ import annotations

import json
import os
import re
import sys
from array import array
from bisect import bisect_left
from dataclasses import dataclass, field
from pathlib import Path

from .bm25 import BM25
from .packet import message_text, pack_context
from .text import (EMBED_DIM, FAMILIES, STOPWORDS, families_of, hashed_embedding, tokens,
                   words)

HASHED_NOTE = "hashed-lexical (offline substitute for a dense embedding)"

RRF_K = 60
T_PAGES = 15
K_TRAJ = 15
SNAPSHOT_BUDGET = 2 * K_TRAJ     # "2k" snapshots before neighbour / update-linked expansion
# Coverage-greedy weights of A.5. The paper's text extraction lost the decimal points
# ("90 Delta_entity", "08 s_family"); read as hundredths so the rank score stays dominant.
W_ENTITY, W_FACET, W_ITEM, W_TERM = 0.090, 0.065, 0.030, 0.012
W_INVENTORY, W_COUNT, W_FAMILY = 0.018, 0.018, 0.075
ROUTING = "off"                  # "off": pages are routed for the reader (diagnostics) but do not rank;
                                 # "soft": routed pages are a third RRF ranking over all trajectories;
                                 # "hard": only trajectories of routed pages (+ BM25 rescue) are candidates.
                                 # Off by default: soft routing helped one dev conversation of three and
                                 # cost the others (docs/dialogue.md, "Routing")
DEFAULT_BUDGET = 2000            # whitespace tokens of source context
INDEX_FORMAT = "wikitrace-dialogue-index/1"


# ---------------------------------------------------------------- query shape

# Question shapes from English grammar only (wh-determiners, quantity and comparison words), no
# nouns: "what are", "which", "what kinds of", "list", or "what (adjective) <plural noun>".
# source: closed class - English wh-determiners and list imperatives
_LIST = re.compile(r"\b(what (?:are|were)|which|what (?:kinds?|types?|sorts?) of|list|name (?:some|all))\b", re.I)
# source: closed class - English wh-determiners and pronouns
_PLURAL_OBJECT = re.compile(r"\bwhat\s+(?:\w+\s+)?(\w+s)\b(?!\s+(?:it|he|she|they|that)\b)", re.I)
# source: closed class - English quantity question words
_COUNT = re.compile(r"\b(how many|how often|number of|how much|times|count)\b", re.I)
# source: closed class - English comparison and conjunction words
_COMPARE = re.compile(r"\b(both|in common|same|similar|differ\w*|compare\w*|more than|less than|"
                      r"either|together|share)\b", re.I)
# source: closed class - English duration question words
_DURATION = re.compile(r"\b(how long|since when|for how many (?:years|months|weeks|days))\b", re.I)
# source: closed class - English time question words
_TEMPORAL_Q = re.compile(r"\b(when|what (?:date|year|month|day|time))\b", re.I)


def query_shape(question: str, speakers: list[str], entity_names: list[str] = ()) -> dict:
    q = question
    named = [s for s in speakers if re.search(r"\b" + re.escape(s) + r"\b", q, re.I)]
    ents = [e for e in entity_names if re.search(r"\b" + re.escape(e).replace("\\-", "[ -]") + r"\b", q, re.I)]
    plural = _PLURAL_OBJECT.search(q)
    plural = bool(plural and plural.group(1).lower() not in STOPWORDS and not plural.group(1).endswith("ss"))
    shape = {
        "list": bool(_LIST.search(q) or (plural and not _COUNT.search(q))),
        "count": bool(_COUNT.search(q)),
        "comparison": bool(_COMPARE.search(q)),
        "duration": bool(_DURATION.search(q)),
        "temporal": bool(_TEMPORAL_Q.search(q)),
        "multi_entity": len({x.lower() for x in named} | {e.lower() for e in ents}) >= 2,
        "families": sorted(families_of(q)),
        "speakers": named,
    }
    shape["coverage"] = any(shape[k] for k in ("list", "count", "comparison", "multi_entity"))
    return shape


# ---------------------------------------------------------------- index building

VECTOR_FILE = "vectors.bin"
VECTOR_LEVELS = ("snapshots", "trajectories", "pages")


def _qvec(text: str) -> dict:
    return hashed_embedding(text)


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


# ---------------------------------------------------------------- loading

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
    """A loaded index straight from ``build.render_sample`` output (benchmarks, tests)."""
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


# ---------------------------------------------------------------- dense (endpoint) scores

def _dense_matrices(li: LoadedIndex) -> dict:
    """Row matrices per level from ``embeddings.f32`` (numpy is imported only on this path)."""
    if li._dense is None:
        import numpy as np

        meta = li.raw["dense"]
        data = li.dense_bytes
        if data is None:
            data = (li.folder / meta.get("file", "embeddings.f32")).read_bytes()
        M = np.frombuffer(data, dtype="<f4").reshape(-1, int(meta["dim"]))
        snaps = M[np.asarray(meta["snapshots"], dtype=int)]
        trajs = []
        for t in li.raw["trajectories"]:
            v = snaps[t["snaps"]].mean(axis=0)
            trajs.append(v / (np.linalg.norm(v) or 1.0))
        li._dense = {"snapshots": snaps, "pages": M[np.asarray(meta["pages"], dtype=int)],
                     "trajectories": np.vstack(trajs) if trajs else snaps[:0]}
    return li._dense


def dense_scores(li: LoadedIndex, question: str) -> tuple[dict | None, str]:
    """Query cosines per level from the endpoint the index was built with, and a note naming the
    dense backend actually used. Falls back to the hashed-lexical vectors (also in the index) when
    the index has no endpoint vectors, embeddings are switched off, or the endpoint fails."""
    meta = li.raw.get("dense")
    if not meta:
        return None, HASHED_NOTE
    from .embed import ENV_URL, EmbeddingError, EmbeddingsConfig, EndpointEmbedder, resolve_embeddings

    emb = li.query_embedder
    if emb is None:
        env_url = (os.environ.get(ENV_URL) or "").strip()
        if env_url.lower() in ("off", "none", "0", "false"):
            return None, HASHED_NOTE + f"; endpoint vectors in the index not used ({ENV_URL}={env_url})"
        try:
            cfg = resolve_embeddings(env_url or meta["url"], meta["model"], meta["query_model"])
        except EmbeddingError as exc:
            return None, HASHED_NOTE + f"; endpoint not usable: {exc}"
        emb = li.query_embedder = EndpointEmbedder(cfg or EmbeddingsConfig(meta["url"], meta["model"],
                                                                           meta["query_model"]))
    try:
        qv = emb.embed_query(question)
        mats = _dense_matrices(li)
        if len(qv) != mats["snapshots"].shape[1]:
            raise EmbeddingError(f"query embedding has {len(qv)} dims, index has {mats['snapshots'].shape[1]}")
    except (EmbeddingError, OSError, ValueError) as exc:
        return None, HASHED_NOTE + f"; fallback, endpoint failed: {exc}"
    import numpy as np

    q = np.asarray(qv, dtype="float32")
    scores = {k: (m @ q).tolist() for k, m in mats.items()}
    return scores, f"endpoint {meta['query_model']} / {meta['model']} at {emb.config.url} ({len(qv)} dims)"


# ---------------------------------------------------------------- scoring helpers

def rrf(*rankings: list, k: int = RRF_K) -> dict:
    """Reciprocal-rank fusion: sum over rankings of 1 / (k + rank), ranks from 1."""
    out: dict = {}
    for ranking in rankings:
        for r, x in enumerate(ranking, 1):
            out[x] = out.get(x, 0.0) + 1.0 / (k + r)
    return out


def _rank(scores: dict) -> list:
    return [x for x, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]


def _norm(scores: dict) -> dict:
    if not scores:
        return {}
    mx = max(scores.values())
    return {k: (v / mx if mx > 0 else 0.0) for k, v in scores.items()}


@dataclass
class Query:
    text: str
    toks: list[str]
    content: list[str]
    emb: dict
    shape: dict
    fams: set[str]
    speaker_keys: set[str]
    ent_keys: set[str]
    dense: dict | None = None          # level -> cosines from the endpoint backend
    embedder: str = HASHED_NOTE

    def dcos(self, vec: VectorStore, level: str, i: int) -> float:
        if self.dense is not None:
            return self.dense[level][i]
        return vec.cos(level, i, self.emb)


def make_query(li: LoadedIndex, question: str) -> Query:
    speakers = li.raw["speakers"]
    for short, full in li.raw.get("aliases", {}).items():      # "Mel" in a question means Melanie
        question = re.sub(r"\b" + re.escape(short) + r"\b", full, question)
    toks = tokens(question)
    spk_tokens = {w for s in speakers for w in tokens(s)}
    content = [t for t in toks if t not in spk_tokens and t not in ("when", "kind", "type")]
    shape = query_shape(question, speakers, li.entity_names)
    qwords = set(words(question))
    ent_keys = {e for e in li.entity_names if all(p in qwords for p in e.split("-"))}
    dense, note = dense_scores(li, question)
    return Query(text=question, toks=toks, content=content or toks, emb=_qvec(question), shape=shape,
                 fams=set(shape["families"]), speaker_keys={s.lower() for s in shape["speakers"]},
                 ent_keys=ent_keys, dense=dense, embedder=note)


# ---------------------------------------------------------------- retrieval

def route_pages(li: LoadedIndex, q: Query, t_pages: int = T_PAGES) -> list[int]:
    pages = li.raw["pages"]
    cand = [i for i, p in enumerate(pages) if p["type"] != "index"] or list(range(len(pages)))
    sparse_raw = li.bm["pages"].scores(q.content)
    sp = _norm(sparse_raw)
    dense, sparse = {}, {}
    for i in cand:
        p = pages[i]
        fam = p.get("facet")
        s_fam = 1.0 if fam and fam in q.fams else 0.0
        p_fam = 1.0 if fam and q.fams and fam not in q.fams and fam in FAMILIES else 0.0
        ents = set(p["ents"])
        b_ent = 0.08 if ents & (q.ent_keys | q.speaker_keys) else 0.0
        a_gran = 0.02 if p["n"] <= 4 else 0.0
        dense[i] = q.dcos(li.vec, "pages", i) + b_ent + a_gran + 0.10 * s_fam - 0.12 * p_fam
        sparse[i] = sp.get(i, 0.0) + 0.35 * s_fam - 0.25 * p_fam + (0.1 if b_ent else 0.0)
    fused = rrf(_rank(dense), _rank(sparse))
    return _rank(fused)[:t_pages]


def score_trajectories(li: LoadedIndex, q: Query, cands: list[int],
                       route: list[int] | None = None) -> tuple[list[int], dict]:
    """Dense and sparse trajectory ranks fused by RRF; ``route`` (trajectories in routed-page
    order) is a third ranking when the wiki is used softly."""
    trajs = li.raw["trajectories"]
    sp = _norm(li.bm["trajectories"].scores(q.content))
    content = set(q.content)
    dense, sparse, detail = {}, {}, {}
    for i in cands:
        t = trajs[i]
        fams = set(t["fams"])
        s_fam = 1.0 if fams & q.fams else 0.0
        p_fam = 1.0 if q.fams and fams and not fams & q.fams else 0.0
        ents = set(t["ents"]) | {p.lower() for p in t["participants"]}
        b_ef = 1.0 if ents & (q.ent_keys | q.speaker_keys) else 0.0
        ttoks = li.bm["trajectories"].tfs[i]
        s_event = (sum(1 for c in content if c in ttoks) / len(content)) if content else 0.0
        dense[i] = (0.75 * q.dcos(li.vec, "trajectories", i)
                    + 0.15 * q.dcos(li.vec, "snapshots", t["snaps"][-1])
                    + 0.10 * b_ef + 0.08 * s_fam + 0.10 * s_event - 0.04 * p_fam)
        sparse[i] = sp.get(i, 0.0) + 0.60 * s_fam * sp.get(i, 0.0) + 0.75 * s_event - 0.25 * p_fam
        detail[i] = (dense[i], sparse[i], s_event)
    fused = rrf(_rank(dense), _rank(sparse), *([route] if route else []))
    return _rank(fused), fused


def coverage_select(li: LoadedIndex, q: Query, ranked: list[int], fused: dict, k: int = K_TRAJ) -> list[int]:
    """Greedy selection rewarding new entities, facets, items and terms (A.5); the first pick is the
    strongest relevance anchor. Returns the whole ranking, coverage-ordered for the first k."""
    trajs = li.raw["trajectories"]
    if not ranked:
        return []
    top = max(fused.values()) or 1.0
    pool = ranked[: max(3 * k, 12)]
    chosen = [pool[0]]
    seen_e, seen_f, seen_i, seen_t = set(), set(), set(), set()

    def absorb(i):
        t = trajs[i]
        seen_e.update(t["ents"])
        seen_f.update(t["fams"])
        seen_i.update(t["terms"])
        seen_t.update(li.bm["trajectories"].tfs[i])

    absorb(pool[0])
    rest = pool[1:]
    inventory = {t for p in li.raw["pages"] if p["type"] == "inventory" for t in p["trajs"]}
    content = set(q.content)
    while rest and len(chosen) < k:
        best, best_s = None, None
        for i in rest:
            t = trajs[i]
            s_rank = fused[i] / top
            ents, fams, items = set(t["ents"]), set(t["fams"]), set(t["terms"])
            terms = set(li.bm["trajectories"].tfs[i]) & content
            d_e = len(ents - seen_e) / (len(ents) or 1)
            d_f = len(fams - seen_f) / (len(fams) or 1)
            d_i = len(items - seen_i) / (len(items) or 1)
            d_t = len(terms - seen_t) / (len(content) or 1)
            s_fam = 1.0 if fams & q.fams else 0.0
            red = 0.0
            if ents and ents <= seen_e:
                red += W_ENTITY / 2
            if items and items <= seen_i:
                red += W_ITEM / 2
            if q.fams and fams and not fams & q.fams:
                red += W_FAMILY / 2
            s = (s_rank + W_ENTITY * d_e + W_FACET * d_f + W_ITEM * d_i + W_TERM * d_t
                 + W_INVENTORY * (1 if i in inventory else 0) + W_COUNT * (1 if t["counts"] else 0)
                 + W_FAMILY * s_fam - red)
            if best_s is None or s > best_s or (s == best_s and i < best):
                best, best_s = i, s
        chosen.append(best)
        rest.remove(best)
        absorb(best)
    return chosen + [i for i in ranked if i not in chosen]


@dataclass
class Packet:
    """``context`` is everything handed to a model (``context_tokens`` <= ``budget``);
    ``diagnostics`` (routing, scores, ids, claim states) is for people and tests, never counted."""
    question: str
    budget: int
    context: str
    context_tokens: int
    ref_ids: list[str]
    diagnostics: dict
    answer: dict | None = None

    def refs(self) -> list[str]:
        return list(self.ref_ids)

    def to_json(self) -> dict:
        return {"question": self.question, "budget": self.budget, "context": self.context,
                "context_tokens": self.context_tokens, "answer": self.answer, "diagnostics": self.diagnostics}


def message_line(m: list) -> str:
    """A single message as one line (the shared context renderer groups dates per session)."""
    return message_text(m)


def retrieve(li: LoadedIndex, question: str, budget: int = DEFAULT_BUDGET, t_pages: int = T_PAGES,
             k: int = K_TRAJ, use_wiki: bool = True, rescue: bool = True, routing: str | None = None) -> Packet:
    raw = li.raw
    q = make_query(li, question)
    snaps = raw["snapshots"]
    msgs = raw["messages"]

    # 1. page routing -> candidate trajectories
    route, routed = None, []
    mode = (routing or ROUTING) if use_wiki else "off"
    page_ids = route_pages(li, q, t_pages) if use_wiki else []
    if mode in ("soft", "hard"):
        # a trajectory linked from several routed pages, or from a higher one, ranks higher; within a
        # page, its own lexical match decides (page member lists are in id order, which means nothing)
        direct_sc = li.bm["trajectories"].scores(q.content)
        votes: dict[int, float] = {}
        for r, p in enumerate(page_ids, 1):
            for t in raw["pages"][p]["trajs"]:
                votes[t] = votes.get(t, 0.0) + 1.0 / (RRF_K + r)
        routed = sorted(votes, key=lambda t: (-votes[t], -direct_sc.get(t, 0.0), t))
        if mode == "soft":
            cands = list(range(len(raw["trajectories"])))
            route = routed
        else:
            cands = routed
    else:
        cands = list(range(len(raw["trajectories"])))
    # trajectories with direct lexical evidence stay reachable (raw rescue of A.6, without an LLM)
    direct = li.bm["trajectories"].ranked(q.content)[: 2 * k] if rescue else []
    cands = sorted(set(cands) | {i for i, _ in direct})

    # 2. trajectory ranking and selection
    ranked, fused = score_trajectories(li, q, cands, route)
    order = coverage_select(li, q, ranked, fused, k) if q.shape["coverage"] else ranked
    traj_rank = {t: r for r, t in enumerate(order)}

    # 3. snapshots: query-snapshot similarity (dense + sparse, fused), trajectory prior, neighbours
    cand_snaps = [s for t in order for s in raw["trajectories"][t]["snaps"]]
    s_sparse = _norm(li.bm["snapshots"].scores(q.content))
    s_dense = {s: q.dcos(li.vec, "snapshots", s) for s in cand_snaps}
    s_dense = _norm(s_dense)
    base = {}
    for s in cand_snaps:
        prior = 1.0 / (1.0 + traj_rank[snaps[s]["traj"]] / k)
        base[s] = 0.5 * s_sparse.get(s, 0.0) + 0.2 * s_dense.get(s, 0.0) + 0.3 * prior
    score = {}
    for s, v in base.items():
        p, n = snaps[s]["nbr"]
        nb = max(base.get(p, 0.0) if p is not None else 0.0, base.get(n, 0.0) if n is not None else 0.0)
        score[s] = v + 0.15 * nb
    # top snapshot per selected trajectory first, then by score
    primary: list[int] = []
    for t in order[:k]:
        ss = raw["trajectories"][t]["snaps"]
        best = max(ss, key=lambda s: (score.get(s, 0.0), -s))
        primary.append(best)
    rest = [s for s in _rank(score) if s not in set(primary)]
    primary_sorted = sorted(primary, key=lambda s: (-score.get(s, 0.0), s))
    snap_order = primary_sorted + rest
    selected = snap_order[:SNAPSHOT_BUDGET]
    # neighbour and update-linked expansion of the selected snapshots
    expanded = list(selected)
    seen = set(expanded)
    for s in selected:
        for x in list(snaps[s]["nbr"]) + snaps[s]["upd"]:
            if x is not None and x not in seen:
                seen.add(x)
                expanded.append(x)
    expanded += [s for s in snap_order[SNAPSHOT_BUDGET:] if s not in seen]

    # 4. source messages, prioritised: message relevance within the snapshot ranking
    m_sparse = _norm(li.bm["messages"].scores(q.content))
    snap_pos = {s: r for r, s in enumerate(expanded)}
    prio = []
    for s in expanded:
        sp = score.get(s, base.get(s, 0.0))
        for mi in snaps[s]["msgs"]:
            own = m_sparse.get(mi, 0.0)
            prev_own = m_sparse.get(mi - 1, 0.0) if mi > 0 else 0.0
            nxt_own = m_sparse.get(mi + 1, 0.0) if mi + 1 < len(msgs) else 0.0
            spk = 0.1 if q.speaker_keys and len(q.speaker_keys) == 1 and msgs[mi][1].lower() in q.speaker_keys else 0.0
            prio.append((-(0.6 * own + 0.4 * sp + 0.2 * max(prev_own, nxt_own) + spk), snap_pos[s], mi))
    prio.sort()
    ctx = pack_context([mi for _, _, mi in prio], msgs, budget, li.notes)

    # 5. packet: the context, and diagnostics kept apart from it
    chosen_set = set(ctx.messages)
    snaps_in = [s for s in expanded if any(m in chosen_set for m in snaps[s]["msgs"])]
    trajs_in = list(dict.fromkeys(snaps[s]["traj"] for s in snaps_in))
    claims, deprecated, temporal = [], [], []
    for s in snaps_in:
        for c in snaps[s]["claims"]:
            cid, status, text, src = c[:4]
            item = {"id": cid, "status": status, "text": text, "sources": src, "snapshot": snaps[s]["id"]}
            if status == "deprecated":
                deprecated.append({**item, "replaced_by": c[5] if len(c) > 5 else None})
            else:
                claims.append({k: item[k] for k in ("id", "status", "snapshot")})
        for a in snaps[s]["temporal"]:
            temporal.append({**a, "snapshot": snaps[s]["id"]})
    paths = raw["message_paths"]
    diagnostics = {
        "embedder": q.embedder, "shape": q.shape, "routing": mode, "candidate_trajectories": len(cands),
        "routed_trajectories": len(routed), "total_trajectories": len(raw["trajectories"]),
        "selected_trajectories": [raw["trajectories"][t]["id"] for t in order[:k]],
        "pages": [{"slug": raw["pages"][p]["slug"], "title": raw["pages"][p]["title"], "type": raw["pages"][p]["type"]}
                  for p in page_ids],
        "trajectories": [{"id": raw["trajectories"][t]["id"], "title": raw["trajectories"][t]["title"],
                          "score": round(fused.get(t, 0.0), 5)} for t in trajs_in],
        "snapshots": [snaps[s]["id"] for s in snaps_in],
        "sources": [{"id": msgs[mi][0], "session": msgs[mi][3], "date": msgs[mi][2], "path": paths[mi]}
                    for mi in ctx.picked],            # most relevant first
        "claims": claims, "deprecated": deprecated, "temporal": temporal,
    }
    return Packet(question=question, budget=budget, context=ctx.text, context_tokens=ctx.tokens,
                  ref_ids=[msgs[mi][0] for mi in ctx.messages], diagnostics=diagnostics)
