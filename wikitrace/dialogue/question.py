"""A question as retrieval uses it: its shape (list, count, comparison, time, the speakers and
entities it names), its tokens and hashed embedding, and its cosines against the endpoint
vectors when the index was built with an embedding endpoint."""

from __future__ import annotations

import os
import re

from .loaded_index import LoadedIndex
from .ranking import HASHED_NOTE, Query
from .text import STOPWORDS, families_of, hashed_embedding, tokens, words

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
    return Query(text=question, toks=toks, content=content or toks, emb=hashed_embedding(question), shape=shape,
                 fams=set(shape["families"]), speaker_keys={s.lower() for s in shape["speakers"]},
                 ent_keys=ent_keys, dense=dense, embedder=note)
