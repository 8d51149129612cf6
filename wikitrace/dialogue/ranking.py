"""Ranking of one question over the index: pages (wiki routing) and trajectories, each by a dense
and a sparse score fused by reciprocal rank, and the coverage-aware greedy selection of A.5."""

from __future__ import annotations

from dataclasses import dataclass
from .text import FAMILIES

TYPE_CHECKING = False  # not typing's: a question must not import typing (CLI start-up)
if TYPE_CHECKING:
    from .index import VectorStore
    from .loaded_index import LoadedIndex

HASHED_NOTE = "hashed-lexical (offline substitute for a dense embedding)"

RRF_K = 60
T_PAGES = 15
K_TRAJ = 15
# Coverage-greedy weights of A.5. The paper's text extraction lost the decimal points
# ("90 Delta_entity", "08 s_family"); read as hundredths so the rank score stays dominant.
W_ENTITY, W_FACET, W_ITEM, W_TERM = 0.090, 0.065, 0.030, 0.012
W_INVENTORY, W_COUNT, W_FAMILY = 0.018, 0.018, 0.075
# Routing as expansion: a page is followed when it holds two of the top ROUTE_HITS direct hits, and
# what it lifts never passes the first ROUTE_KEEP of them.
ROUTE_HITS = 10
ROUTE_KEEP = 3
# Routing to whom the question asks about: the first SPEAKER_KEEP messages of the packet stay as
# ranked, then the one participant the question names speaks first (chosen leave-one-out from
# 0/3/6/10/15 on the dev conversations; docs/dialogue.md, "Routing to the participant asked about").
SPEAKER_KEEP = 6


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


def score_trajectories(li: LoadedIndex, q: Query, cands: list[int]) -> tuple[list[int], dict]:
    """Dense and sparse trajectory ranks fused by RRF."""
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
    fused = rrf(_rank(dense), _rank(sparse))
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


def hit_pages(li: LoadedIndex, ranked: list[int], n: int = ROUTE_HITS, named: set[str] = frozenset()) -> list[int]:
    """Pages (not the index) holding at least two of the top ``n`` direct hits, best first: pages
    of an entity the question names (``named``: entity keys) before others, then the sum of their
    hits' reciprocal ranks. Evidence that the page groups what the question is about, which a
    page's own text (an average of its trajectories) does not give; a trajectory sits on the page
    of everyone it is about, so the question's own names break ties between them."""
    at = {t: r for r, t in enumerate(ranked[:n], 1)}
    held = {}
    for i, p in enumerate(li.raw["pages"]):
        if p["type"] == "index":
            continue
        hits = [1.0 / (RRF_K + at[t]) for t in p["trajs"] if t in at]
        if len(hits) >= 2:
            held[i] = sum(hits) + (1.0 if named & set(p.get("ents", ())) else 0.0)
    return _rank(held)


def expand_by_page(li: LoadedIndex, ranked: list[int], fused: dict,
                   named: set[str] = frozenset()) -> tuple[list[int], dict, int | None]:
    """The page that holds the most direct hits lifts all its trajectories by one first-place RRF
    vote, so its members the direct scores missed join the ranking near their siblings; the first
    ``ROUTE_KEEP`` direct hits keep their places, so routing adds to the hits and never displaces
    the best of them. No page holds two hits: the ranking is returned unchanged (page None)."""
    pages = hit_pages(li, ranked, named=named)
    if not pages:
        return ranked, fused, None
    lift = 1.0 / (RRF_K + 1)
    out = dict(fused)
    for t in li.raw["pages"][pages[0]]["trajs"]:
        out[t] = out.get(t, 0.0) + lift
    keep = ranked[:ROUTE_KEEP]
    kept = set(keep)
    return keep + [t for t in _rank(out) if t not in kept], out, pages[0]


def entity_pages(li: LoadedIndex, q: Query) -> list[int]:
    """Entity pages of the people and things the question names (its speakers, its known entity
    names): cheap at query time, no ranking needed."""
    named = q.ent_keys | q.speaker_keys
    return [i for i, p in enumerate(li.raw["pages"])
            if p["type"] == "entity" and set(p["ents"]) & named]


def expand_by_entity(li: LoadedIndex, q: Query, ranked: list[int], fused: dict) -> tuple[list[int], dict, list[int]]:
    """The trajectories about what the question names (on its entity pages) are lifted by one
    first-place RRF vote, so a fact said about the named person outranks the same words said about
    someone else; the first ``ROUTE_KEEP`` direct hits keep their places. A question naming no
    entity, or naming every participant, leaves the ranking unchanged."""
    pages = entity_pages(li, q)
    about = {t for i in pages for t in li.raw["pages"][i]["trajs"]}
    if not about or len(about) == len(ranked):
        return ranked, fused, []
    lift = 1.0 / (RRF_K + 1)
    out = dict(fused)
    for t in about:
        if t in out:
            out[t] += lift
    keep = ranked[:ROUTE_KEEP]
    kept = set(keep)
    return keep + [t for t in _rank(out) if t not in kept], out, pages


def asked_about(li: LoadedIndex, q: Query) -> str | None:
    """The one participant a question names ("What does Melanie do to destress?"), or None when it
    names none or several (then both people's words may answer it)."""
    if len(q.speaker_keys) != 1:
        return None
    return next((s for s in li.raw["speakers"] if s.lower() in q.speaker_keys), None)


def speaker_first(li: LoadedIndex, q: Query, order: list[int], keep: int | None = None) -> tuple[list[int], str | None]:
    """Message priority routed to the participant the question asks about: after the first ``keep``
    messages (the question's best direct matches, whoever said them), that participant's own
    messages come before the other's, each side in its ranked order. In a two-person dialogue a
    fact about someone is nearly always said by them ("I signed up for a pottery class"), and the
    question's words match the other's replies about it ("so passionate!") as well, which then
    crowd the budget. Unchanged when the question names no participant or several."""
    who = asked_about(li, q)
    if who is None:
        return order, None
    msgs = li.raw["messages"]
    keep = SPEAKER_KEEP if keep is None else keep
    head, rest = order[:keep], order[keep:]
    own = [mi for mi in rest if msgs[mi][1] == who]
    other = [mi for mi in rest if msgs[mi][1] != who]
    return head + own + other, who
