"""Memory trajectories (TrajWiki A.2-A.3): deterministic features, the g_det score,
prefiltering, CONTINUE/NEW matching and the append-only claim lifecycle."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .extract import Claim, Snapshot
from .embed import cos, mean_vector
from .text import entity_key, hashed_embedding, jaccard, keywords

DELTA = 0.72                # mock/offline continuation threshold (paper, A.2)
DELTA_CENTRED = 0.60        # the same decision on mean-centred endpoint embeddings (see embed.centred)
PREFILTER_CAP = 32
TOP_CANDIDATES = 3          # passed to the structured trajectory_match call
MAX_PREVIOUS = 3            # previous claims shortlisted for claim_transition_judge

W_SUM, W_LATEST, W_JACCARD = 0.60, 0.20, 0.20
B_ENTITY, B_FACET_VALUE, B_FACET_TAG = 0.08, 0.06, 0.03
B_CONT_PER, B_CONT_MAX = 0.04, 0.14
P_BROAD_ONLY, P_LEXICAL_ONLY = 0.10, 0.04


@dataclass
class Features:
    K: set[str]          # lexical keywords (stems)
    E: set[str]          # entity keys (specific, i.e. not the conversation's participants)
    broad: set[str]      # broad entities (participants)
    X: set[str]          # exact source-backed terms (normalised)
    F: set[str]          # facets: tags and tag=value
    emb: dict


def snapshot_features(s: Snapshot, speakers: list[str], embed=hashed_embedding, vector=None) -> Features:
    """``vector``: a precomputed dense embedding of the snapshot (endpoint backend), else ``embed``."""
    text = feature_text(s, speakers)
    spk = {entity_key(x) for x in speakers}
    ents = {entity_key(e) for e in s.entities}
    return Features(K=set(keywords(text)), E=ents - spk, broad=ents & spk | {entity_key(x) for x in s.speakers},
                    X={x.lower() for x in s.exact_terms if not TEMPORAL_ONLY.fullmatch(x)}, F=set(s.facets),
                    emb=vector if vector is not None else embed(text))


TEMPORAL_ONLY = re.compile(r"(?i)(yesterday|today|tonight|tomorrow|last night|this morning|"
                           r"(last|next|this|past) \w+|.* ago|(in|since|on) \w+( \d{4})?|(19|20)\d\d)")


def strip_speakers(text: str, speakers: list[str]) -> str:
    """Participants' names carry no continuity (everything is about them): drop them, and the
    offline extractor's "X said:" scaffolding, before keywords and embeddings."""
    for sp in speakers:
        text = re.sub(r"\b" + re.escape(sp) + r"(?:'s)?\b", " ", text)
    return re.sub(r"\bsaid:", " ", text)


def feature_text(s: Snapshot, speakers: list[str]) -> str:
    """Content of a snapshot for matching: its claims (the summary lead when there are none)."""
    return strip_speakers(" ".join(c.text for c in s.claims) or s.summary.split(". ", 1)[-1], speakers)


def specific(f: Features) -> set[str]:
    """Specific continuity terms: exact terms, specific entities and facet values."""
    return f.X | {"e:" + e for e in f.E} | {x for x in f.F if "=" in x}


@dataclass
class Trajectory:
    id: str
    snapshots: list[str] = field(default_factory=list)
    claims: list[Claim] = field(default_factory=list)        # every version, append-only
    ops: list[dict] = field(default_factory=list)
    K: set[str] = field(default_factory=set)
    E: set[str] = field(default_factory=set)
    broad: set[str] = field(default_factory=set)
    X: set[str] = field(default_factory=set)
    F: set[str] = field(default_factory=set)
    emb_sum: dict = field(default_factory=dict)
    emb_latest: dict = field(default_factory=dict)
    update_links: list[list[str]] = field(default_factory=list)   # [old_snapshot, new_snapshot]
    member_vecs: list = field(default_factory=list)                # dense backend: snapshot vectors

    def active_claims(self) -> list[Claim]:
        return [c for c in self.claims if c.status != "deprecated"]

    def summary_text(self) -> str:
        return " ".join(c.text for c in self.active_claims())


def g_det(f: Features, T: Trajectory, detail: bool = False):
    """Deterministic compatibility of a snapshot with a trajectory (A.2)."""
    cos_sum = cos(f.emb, T.emb_sum)
    cos_latest = cos(f.emb, T.emb_latest)
    jac = jaccard(f.K, T.K)
    b_ent = B_ENTITY if f.E & T.E else 0.0
    fv = {x for x in f.F if "=" in x} & {x for x in T.F if "=" in x}
    ft = {x for x in f.F if "=" not in x} & {x for x in T.F if "=" not in x}
    b_facet = B_FACET_VALUE if fv else (B_FACET_TAG if ft else 0.0)
    shared_specific = specific(f) & (T.X | {"e:" + e for e in T.E} | {x for x in T.F if "=" in x})
    b_cont = min(B_CONT_MAX, B_CONT_PER * len(shared_specific))
    penalty = 0.0
    if not shared_specific:
        if (f.broad & T.broad) and not (f.E & T.E):
            penalty = P_BROAD_ONLY
        elif jac > 0:
            penalty = P_LEXICAL_ONLY
    score = W_SUM * cos_sum + W_LATEST * cos_latest + W_JACCARD * jac + b_ent + b_facet + b_cont - penalty
    if detail:
        return score, {"cos_sum": round(cos_sum, 4), "cos_latest": round(cos_latest, 4),
                       "jaccard": round(jac, 4), "b_entity": b_ent, "b_facet": b_facet,
                       "b_cont": round(b_cont, 4), "penalty": penalty}
    return score


def prefilter(f: Features, trajs: list[Trajectory], cap: int = PREFILTER_CAP) -> list[Trajectory]:
    """Keep trajectories overlapping on keywords/entities/facet values (most overlap first, at most
    ``cap``); when nothing overlaps every open trajectory stays a candidate."""
    fvals = {x for x in f.F if "=" in x}
    scored = []
    for T in trajs:
        n = len(f.K & T.K) + len(f.E & T.E) + len(fvals & T.F)
        if n:
            scored.append((n, T))
    if not scored:
        return list(trajs)
    scored.sort(key=lambda nt: (-nt[0], nt[1].id))
    return [T for _, T in scored[:cap]]


# ---------------------------------------------------------------- claim lifecycle (A.3)

def _norm_claim(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


_VALUE = re.compile(r"\b(\d+(?:[.,]\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|not|never|no longer|"
                    r"anymore|stopped|quit|instead|now)\b", re.I)


def offline_transition_judge(new: Claim, previous: list[Claim]) -> tuple[str, Claim | None]:
    """Deterministic stand-in for claim_transition_judge: REVISE when a previous claim about the same
    subject says nearly the same thing but with a different value (number, negation, 'now'...)."""
    nk = set(keywords(new.text))
    for p in previous:
        if p.subject != new.subject:
            continue
        pk = set(keywords(p.text))
        if jaccard(nk, pk) >= 0.5:
            nv = {m.lower() for m in _VALUE.findall(new.text)}
            pv = {m.lower() for m in _VALUE.findall(p.text)}
            if nv and nv != pv:
                return "REVISE", p
    return "ADD", None


def apply_claims(T: Trajectory, snap: Snapshot, judge=None) -> dict:
    """Append a snapshot's claims to a trajectory, emitting ADD / REVISE / DEPRECATE operations.
    Nothing is removed: a revised or deprecated claim stays, marked deprecated, linked to its snapshot."""
    counts = {"ADD": 0, "REVISE": 0, "DEPRECATE": 0, "duplicate": 0, "judge_fallback": 0}
    for c in snap.claims:
        c.trajectory = T.id
        norm = _norm_claim(c.text)
        dup = next((p for p in reversed(T.claims) if p.status != "deprecated" and _norm_claim(p.text) == norm), None)
        if dup is not None:
            if dup.status == c.status:
                counts["duplicate"] += 1      # a repeat adds provenance, not a new fact
                c.duplicate_of = dup.id
                continue
            op = "DEPRECATE" if c.status == "deprecated" else "REVISE"
            dup.status = "deprecated"
            dup.replaced_by = c.id
            c.replaces = dup.id
            T.claims.append(c)
            T.ops.append({"op": op, "claim": c.id, "previous": dup.id, "snapshot": snap.id, "status": c.status})
            T.update_links.append([dup.snapshot, snap.id])
            counts[op] += 1
            continue
        nk = set(keywords(c.text)) - T.broad
        shortlist = []
        for p in T.active_claims():
            ov = len(nk & set(keywords(p.text)))
            if ov:
                shortlist.append((ov, p))
        shortlist.sort(key=lambda x: (-x[0], x[1].id))
        previous = [p for _, p in shortlist[:MAX_PREVIOUS]]
        decision, target = "ADD", None
        if previous:
            res = judge(c, previous) if judge else None
            if res is None:
                if judge:
                    counts["judge_fallback"] += 1
                res = offline_transition_judge(c, previous)
            decision, target = res
        T.claims.append(c)
        if decision == "REVISE" and target is not None:
            target.status = "deprecated"
            target.replaced_by = c.id
            c.replaces = target.id
            T.ops.append({"op": "REVISE", "claim": c.id, "previous": target.id, "snapshot": snap.id,
                          "status": c.status})
            T.update_links.append([target.snapshot, snap.id])
            counts["REVISE"] += 1
        else:
            T.ops.append({"op": "ADD", "claim": c.id, "snapshot": snap.id, "status": c.status})
            counts["ADD"] += 1
    return counts


def _absorb(T: Trajectory, f: Features, snap: Snapshot, embed, dense: bool = False, speakers=()) -> None:
    T.snapshots.append(snap.id)
    T.K |= f.K
    T.E |= f.E
    T.broad |= f.broad
    T.X |= f.X
    T.F |= f.F
    if dense:       # endpoint vectors: the summary embedding is the mean of the member snapshots
        T.member_vecs.append(f.emb)
        T.emb_sum = mean_vector(T.member_vecs)
    else:
        T.emb_sum = embed(strip_speakers(T.summary_text(), list(speakers)) or feature_text(snap, list(speakers)))
    T.emb_latest = f.emb
    snap.trajectory = T.id


def build_trajectories(snaps: list[Snapshot], speakers: list[str], embed=hashed_embedding,
                       matcher=None, judge=None, delta: float | None = None,
                       vectors: dict | None = None) -> tuple[list[Trajectory], dict]:
    """Replay snapshots in order. ``matcher(snapshot, [(label, trajectory, score)]) -> label | 'NEW' | None``
    is the optional structured decision (None = unavailable, fall back to the threshold)."""
    if delta is None:
        delta = DELTA_CENTRED if vectors else DELTA
    trajs: list[Trajectory] = []
    stats = {"continued": 0, "new": 0, "matcher_calls": 0, "matcher_fallbacks": 0,
             "ADD": 0, "REVISE": 0, "DEPRECATE": 0, "duplicate": 0, "judge_fallback": 0}
    for snap in snaps:
        f = snapshot_features(snap, speakers, embed, vectors.get(snap.id) if vectors else None)
        cands = prefilter(f, trajs)
        scored = sorted(((g_det(f, T, detail=True), T) for T in cands), key=lambda x: (-x[0][0], x[1].id))
        chosen: Trajectory | None = None
        decided_by = "threshold"
        if scored and matcher is not None:
            top = [(f"T{i + 1}", T, sc[0]) for i, (sc, T) in enumerate(scored[:TOP_CANDIDATES])]
            stats["matcher_calls"] += 1
            label = matcher(snap, top)
            if label is None:
                stats["matcher_fallbacks"] += 1
            else:
                decided_by = "llm"
                chosen = next((T for lab, T, _ in top if lab == label), None)
        if decided_by == "threshold" and scored and scored[0][0][0] >= delta:
            chosen = scored[0][1]
        best = ({"candidate": scored[0][1].id, "score": round(scored[0][0][0], 4), **scored[0][0][1]}
                if scored else None)
        snap.match = {"decision": "CONTINUE" if chosen else "NEW", "decided_by": decided_by,
                      "candidates": len(cands), "best": best, "delta": delta}
        if chosen is None:
            chosen = Trajectory(id=f"traj-{len(trajs) + 1:04d}")
            trajs.append(chosen)
            stats["new"] += 1
        else:
            stats["continued"] += 1
        counts = apply_claims(chosen, snap, judge)
        for k, v in counts.items():
            stats[k] += v
        _absorb(chosen, f, snap, embed, dense=bool(vectors), speakers=speakers)
    return trajs, stats


