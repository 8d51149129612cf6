"""Hierarchical retrieval (TrajWiki A.5): query shape -> wiki page routing (dense + BM25,
reciprocal-rank fusion) -> candidate trajectories (RRF) -> coverage-aware selection ->
snapshot expansion (neighbours, update links) -> a compact evidence packet with source
refs, timestamps and deprecated-claim diagnostics.

The index is written at compile time (``index.build_index``) and loaded by ``loaded_index``;
the question is shaped by ``question``; the page and trajectory ranking lives in ``ranking``."""

from __future__ import annotations

from dataclasses import dataclass

from .loaded_index import LoadedIndex
from .packet import message_text, pack_context
from .question import make_query
from .ranking import (K_TRAJ, RRF_K, T_PAGES, Query, _norm, _rank, coverage_select, expand_by_entity,
                      expand_by_page, route_pages, score_trajectories, speaker_first)

SNAPSHOT_BUDGET = 2 * K_TRAJ     # "2k" snapshots before neighbour / update-linked expansion
# source: wikitrace's own routing settings
ROUTING_MODES = ("off", "speaker", "expand", "entity", "hard")
ROUTING = "speaker"              # the one routing that raised held-out recall (docs/dialogue.md, "Routing")
DEFAULT_BUDGET = 2000            # whitespace tokens of source context
W_KIND = 0.15    # share of a message's kind match ("Rome" for "cities") in the budget order, chosen leave-one-out


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
    """Top-down retrieval: pages, trajectories, snapshots, then source messages packed into
    ``budget`` tokens."""
    q = make_query(li, question)
    mode = (routing or ROUTING) if use_wiki else "off"
    if mode not in ROUTING_MODES:
        raise ValueError(f"routing must be one of {', '.join(ROUTING_MODES)}, not {mode!r}")
    # "off": pages routed for the reader only; "speaker": then the named participant's messages first;
    # "expand" / "entity": a page lifts its trajectories; "hard": only routed pages' trajectories
    page_ids = route_pages(li, q, t_pages) if use_wiki else []
    cands, routed = _candidate_trajectories(li, q, mode, page_ids, k, rescue)
    order, fused, routed, via = _order_trajectories(li, q, mode, cands, routed, k)
    expanded, score = _rank_snapshots(li, q, order, k)
    priority, routed_to = _message_priority(li, q, expanded, score), None
    if mode == "speaker":
        priority, routed_to = speaker_first(li, q, priority)
    ctx = pack_context(priority, li.raw["messages"], budget, li.notes)
    diagnostics = {"embedder": q.embedder, "shape": q.shape, "routing": mode, "routed_to": routed_to,
                   "candidate_trajectories": len(cands),
                   "routed_trajectories": len(routed), **_evidence(li, page_ids, order, fused, via, k, expanded, ctx)}
    msgs = li.raw["messages"]
    return Packet(question=question, budget=budget, context=ctx.text, context_tokens=ctx.tokens,
                  ref_ids=[msgs[mi][0] for mi in ctx.messages], diagnostics=diagnostics)


def _candidate_trajectories(li: LoadedIndex, q: Query, mode: str, page_ids: list, k: int,
                            rescue: bool) -> tuple[list[int], list[int]]:
    """The trajectories that may be ranked, and those the routed pages gave. Only "hard" routing
    narrows the universe (to the routed pages' trajectories, the paper's candidate set); trajectories
    with direct lexical evidence stay reachable either way (raw rescue of A.6, without an LLM)."""
    raw = li.raw
    routed = []
    if mode == "hard":
        # a trajectory linked from several routed pages, or from a higher one, ranks higher; within a
        # page, its own lexical match decides (page member lists are in id order, which means nothing)
        direct_sc = li.bm["trajectories"].scores(q.content)
        votes: dict[int, float] = {}
        for r, p in enumerate(page_ids, 1):
            for t in raw["pages"][p]["trajs"]:
                votes[t] = votes.get(t, 0.0) + 1.0 / (RRF_K + r)
        cands = routed = sorted(votes, key=lambda t: (-votes[t], -direct_sc.get(t, 0.0), t))
    else:
        cands = list(range(len(raw["trajectories"])))
    direct = li.bm["trajectories"].ranked(q.content)[: 2 * k] if rescue else []
    return sorted(set(cands) | {i for i, _ in direct}), routed


def _order_trajectories(li: LoadedIndex, q: Query, mode: str, cands: list[int], routed: list, k: int):
    """Candidates ranked (dense and sparse, fused), lifted by a page under "expand" / "entity"
    routing, then chosen for coverage when the question asks for a list or a count. Returns the
    order, the fused scores, the routed trajectories and the page the expansion came through."""
    raw = li.raw
    ranked, fused = score_trajectories(li, q, cands)
    via = None
    if mode == "expand":
        ranked, fused, via = expand_by_page(li, ranked, fused, named=q.ent_keys | q.speaker_keys)
        routed = raw["pages"][via]["trajs"] if via is not None else []
    elif mode == "entity":
        ranked, fused, named_pages = expand_by_entity(li, q, ranked, fused)
        routed = sorted({t for p in named_pages for t in raw["pages"][p]["trajs"]})
        via = named_pages[0] if named_pages else None
    order = coverage_select(li, q, ranked, fused, k) if q.shape["coverage"] else ranked
    return order, fused, routed, via


def _rank_snapshots(li: LoadedIndex, q: Query, order: list[int], k: int) -> tuple[list[int], dict]:
    """Snapshots of the ordered trajectories, best first: query similarity (sparse and dense) with a
    prior from their trajectory's rank and a share of their best neighbour's score; each selected
    trajectory's top snapshot leads, the first ``SNAPSHOT_BUDGET`` bring their dialogue neighbours
    and update-linked snapshots. Returns that order and the scores (a neighbour may have none)."""
    raw = li.raw
    snaps = raw["snapshots"]
    traj_rank = {t: r for r, t in enumerate(order)}
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
    primary: list[int] = []
    for t in order[:k]:
        ss = raw["trajectories"][t]["snaps"]
        best = max(ss, key=lambda s: (score.get(s, 0.0), -s))
        primary.append(best)
    rest = [s for s in _rank(score) if s not in set(primary)]
    primary_sorted = sorted(primary, key=lambda s: (-score.get(s, 0.0), s))
    snap_order = primary_sorted + rest
    selected = snap_order[:SNAPSHOT_BUDGET]
    expanded = list(selected)
    seen = set(expanded)
    for s in selected:
        for x in list(snaps[s]["nbr"]) + snaps[s]["upd"]:
            if x is not None and x not in seen:
                seen.add(x)
                expanded.append(x)
    expanded += [s for s in snap_order[SNAPSHOT_BUDGET:] if s not in seen]
    return expanded, score


def _message_priority(li: LoadedIndex, q: Query, expanded: list[int], score: dict) -> list[int]:
    """Source messages in the order the budget takes them: a message's own match and its
    neighbours' and its snapshot's score, a nudge for the one speaker the question names, and its kinds."""
    snaps, msgs = li.raw["snapshots"], li.raw["messages"]
    m_sparse = _norm(li.bm["messages"].scores(q.content))
    m_kind = _norm(li.bm["kinds"].scores(q.content)) if "kinds" in li.bm else {}   # older indexes lack it
    snap_pos = {s: r for r, s in enumerate(expanded)}
    prio = []
    for s in expanded:
        sp = score.get(s, 0.0)
        for mi in snaps[s]["msgs"]:
            own = m_sparse.get(mi, 0.0)
            prev_own = m_sparse.get(mi - 1, 0.0) if mi > 0 else 0.0
            nxt_own = m_sparse.get(mi + 1, 0.0) if mi + 1 < len(msgs) else 0.0
            spk = 0.1 if q.speaker_keys and len(q.speaker_keys) == 1 and msgs[mi][1].lower() in q.speaker_keys else 0.0
            prio.append((-(0.6 * own + 0.4 * sp + 0.2 * max(prev_own, nxt_own) + spk + W_KIND * m_kind.get(mi, 0.0)),
                         snap_pos[s], mi))
    prio.sort()
    return [mi for _, _, mi in prio]


def _evidence(li: LoadedIndex, page_ids: list, order: list[int], fused: dict, via, k: int,
              expanded: list[int], ctx) -> dict:
    """The diagnostics naming what the packed context holds (pages, trajectories, snapshots,
    sources, claims), kept apart from the context a model reads."""
    raw = li.raw
    snaps, msgs, paths = raw["snapshots"], raw["messages"], raw["message_paths"]
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
    return {
        "total_trajectories": len(raw["trajectories"]),
        "expanded_from": raw["pages"][via]["slug"] if via is not None else None,
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
