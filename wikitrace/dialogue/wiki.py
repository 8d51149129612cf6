"""Memory Wiki planning (TrajWiki A.4), deterministic: page seeds (index, entity, topic,
inventory), entity-facet splits, medium-granularity shards (target 4, max 6), topic
suppression at 80 % coverage, and a coverage audit adding rescue pages."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .embed import cos as sparse_cos
from .lexicon import FAMILY_WORDS, generic_words, rank
from .text import FAMILIES, IdfVectors, stem

# Words that name no topic: the words common enough in English that a page titled "able", "ever"
# or "might" routes nowhere (frequency list, lexicon.py), and the words of the package's own claim
# templates ("X shared a photo: ...", "X reports that ...", "X said: ...").
# source: wikitrace's own claim templates (extract.offline_claims)
_TEMPLATE_WORDS = frozenset("share shares shared photo photos report reports said".split())
GENERIC = generic_words() | _TEMPLATE_WORDS
TARGET_PAGE = 4
MAX_PAGE = 6
TOPIC_SUPPRESS = 0.50
TOPIC_MIN = 3                  # a topic keyword must recur in this many trajectories
SECTIONS = ("Overview", "Key Facts", "Items/Counts", "Linked Trajectories", "Conflicts/Uncertainty")


@dataclass
class TrajInfo:
    """What page planning needs to know about one trajectory."""
    id: str
    entities: list[str]            # entity display names (specific, not participants)
    participants: list[str]        # speakers whose claims the trajectory holds
    families: list[str]            # facet tags with values (activity, book, pet, ...)
    keywords: list[str]            # retrieval keywords (stems)
    exact_terms: list[str]
    counts: list[str]
    emb: dict
    owners: list[str] = field(default_factory=list)   # the participants its claims are about
    about: list[str] = field(default_factory=list)    # other entities its claims are about
    thread_words: list[str] | None = None              # words that may title it (not photo captions)


@dataclass
class Page:
    slug: str
    type: str                      # index | entity | topic | inventory
    title: str
    trajectories: list[str]
    entities: list[str] = field(default_factory=list)
    facet: str | None = None
    keywords: list[str] = field(default_factory=list)
    rescue: bool = False
    shard: int | None = None


def slugify(s: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")[:60] or "page"


def shard(ids: list[str], embs: dict[str, dict], target: int = TARGET_PAGE, maximum: int = MAX_PAGE) -> list[list[str]]:
    """Split a large seed into medium shards of similar trajectories: average-linkage agglomerative
    clustering of their vectors, merging the most similar pair of clusters whose union stays within
    ``maximum`` until ceil(n / target) clusters remain. Deterministic (ties by member ids)."""
    if len(ids) <= maximum:
        return [list(ids)]
    order = sorted(ids)
    clusters: list[list[str]] = [[t] for t in order]
    sim = {(i, j): sparse_cos(embs.get(order[i], {}), embs.get(order[j], {}))
           for i in range(len(order)) for j in range(i + 1, len(order))}
    alive = list(range(len(order)))
    want = math.ceil(len(order) / target)
    while True:
        # down to ceil(n / target) clusters; after that only a lone trajectory still joins one
        lone = len(alive) <= want
        best, pair = None, None
        for a_i, a in enumerate(alive):
            for b in alive[a_i + 1:]:
                if len(clusters[a]) + len(clusters[b]) > maximum or \
                        (lone and min(len(clusters[a]), len(clusters[b])) > 1):
                    continue
                v = sim[(a, b)] - (len(clusters[a]) + len(clusters[b])) * 1e-6   # ties: smaller
                if best is None or v > best:
                    best, pair = v, (a, b)
        if pair is None:
            break
        a, b = pair
        na, nb = len(clusters[a]), len(clusters[b])
        for c in alive:          # average linkage (Lance-Williams)
            if c in (a, b):
                continue
            ka, kb = (min(a, c), max(a, c)), (min(b, c), max(b, c))
            sim[ka] = (na * sim[ka] + nb * sim[kb]) / (na + nb)
        clusters[a] = sorted(clusters[a] + clusters[b])
        alive.remove(b)
    return sorted((clusters[c] for c in alive), key=lambda c: c[0])


def plan_pages(infos: list[TrajInfo], broad_threshold: int = MAX_PAGE) -> tuple[list[Page], dict]:
    """Deterministic page plan. Returns pages (index first) and planning statistics."""
    all_ids = [t.id for t in infos]
    stats = {"seeds": {"entity": 0, "inventory": 0, "topic": 0}, "facet_splits": 0, "shards": 0,
             "suppressed_topics": 0, "rescue_pages": 0}
    entity_seeds = _named_entity_seeds(infos) + _participant_seeds(infos, broad_threshold, stats)
    stats["seeds"]["entity"] = len(entity_seeds)
    inventory_seeds = _inventory_seeds(infos)
    stats["seeds"]["inventory"] = len(inventory_seeds)
    covered_by_structure = {i for *_, ids in entity_seeds for i in ids} | \
        {i for *_, ids in inventory_seeds for i in ids}
    kept_topics = _topic_seeds(infos, covered_by_structure, stats)

    planner = _PageWriter(infos, stats)
    for title, ent, facet, ids in entity_seeds:
        planner.add("entity", title, ids, entities=[ent], facet=facet)
    for title, fam, ids in inventory_seeds:
        planner.add("inventory", f"Inventory: {fam}", ids, facet=fam)
    for k, ids in kept_topics:
        planner.add("topic", f"Topic: {k}", ids, keywords=[k])
    orphans = _rescue_orphans(planner, all_ids)
    stats["pages"] = len(planner.pages)
    stats["orphans_rescued"] = len(orphans)
    return planner.pages, stats


def _named_entity_seeds(infos: list[TrajInfo]) -> list[tuple[str, str, str | None, list[str]]]:
    """Seeds (title, entity, facet, ids) for the specific entities two or more trajectories name or
    are about: a thing mentioned once needs no page of its own."""
    ent_members: dict[str, list[str]] = {}
    ent_name: dict[str, str] = {}
    for t in infos:
        for e in dict.fromkeys([*t.about, *t.entities]):
            key = slugify(e)
            ent_members.setdefault(key, []).append(t.id)
            ent_name.setdefault(key, e)
    seeds = []
    for key in sorted(ent_members):
        ids = sorted(set(ent_members[key]))
        if len(ids) >= 2:
            seeds.append((ent_name[key], ent_name[key], None, ids))
    return seeds


def _participant_seeds(infos: list[TrajInfo], broad_threshold: int,
                       stats: dict) -> list[tuple[str, str, str | None, list[str]]]:
    """Seeds for each participant: every trajectory with a claim about that person, whoever said it,
    so a person's facts sit together; a participant with more than ``broad_threshold`` trajectories
    is split into one page per main facet (facets held by a single trajectory stay together)."""
    owned: dict[str, list[TrajInfo]] = {}
    for t in infos:
        for who in t.owners or t.participants[:1]:
            owned.setdefault(who, []).append(t)
    seeds = []
    for p in sorted(owned):
        members = owned[p]
        if len(members) <= broad_threshold:
            seeds.append((p, p, None, sorted(t.id for t in members)))
            continue
        by_facet: dict[str, list[str]] = {}
        for t in members:
            by_facet.setdefault(t.families[0] if t.families else "", []).append(t.id)
        rest: list[str] = []
        for fam in sorted(by_facet):
            ids = sorted(by_facet[fam])
            if fam and len(ids) >= 2:
                stats["facet_splits"] += 1
                seeds.append((f"{p} - {fam}", p, fam, ids))
            else:
                rest += ids
        if rest:
            seeds.append((p, p, None, sorted(rest)))
    return seeds


def _inventory_seeds(infos: list[TrajInfo]) -> list[tuple[str, str, list[str]]]:
    """Seeds for item families that list-like trajectories (several exact terms, or counts) share:
    "what books / pets / ..." questions are answered from one page."""
    inv: dict[str, list[str]] = {}
    for t in infos:
        listy = len(t.exact_terms) >= 2 or t.counts
        if not listy:
            continue
        for fam in t.families:
            if fam in FAMILIES:
                inv.setdefault(fam, []).append(t.id)
    return [(fam, fam, sorted(set(ids))) for fam, ids in sorted(inv.items()) if len(set(ids)) >= 2]


def _topic_seeds(infos: list[TrajInfo], covered: set[str], stats: dict) -> list[tuple[str, list[str]]]:
    """Topics: retrieval keywords that recur across trajectories without being common, minus those
    repeating another topic's members or mostly ``covered`` by entity and inventory pages already."""
    kw_members: dict[str, list[str]] = {}
    for t in infos:
        for k in set(t.keywords):
            kw_members.setdefault(k, []).append(t.id)
    n = max(1, len(infos))
    topic_seeds = []
    for k in sorted(kw_members):
        ids = sorted(set(kw_members[k]))
        if TOPIC_MIN <= len(ids) <= max(3, n // 8) and len(k) > 3 and k.isalpha() and \
                stem(k) not in {stem(g) for g in GENERIC}:
            topic_seeds.append((k, ids))
    stats["seeds"]["topic"] = len(topic_seeds)
    kept_topics = []
    seen_sets: set[tuple[str, ...]] = set()
    for k, ids in sorted(topic_seeds, key=lambda x: (len(x[1]), x[0])):
        cov = sum(1 for i in ids if i in covered) / len(ids)
        if tuple(ids) in seen_sets or cov >= TOPIC_SUPPRESS:
            stats["suppressed_topics"] += 1
            continue
        seen_sets.add(tuple(ids))
        kept_topics.append((k, ids))
    return kept_topics


def _rescue_orphans(planner: "_PageWriter", all_ids: list[str]) -> list[str]:
    """Coverage audit: a trajectory reachable only through the index gets a rescue page (in chunks
    of ``TARGET_PAGE``). Returns the orphans found."""
    reach: set[str] = set()
    for p in planner.pages[1:]:
        reach.update(p.trajectories)
    orphans = [t for t in all_ids if t not in reach]
    if orphans:
        before = len(planner.pages)
        for i in range(0, len(orphans), TARGET_PAGE):
            chunk = orphans[i:i + TARGET_PAGE]
            planner.add("topic", f"Rescue {chunk[0]}", chunk, rescue=True)
        planner.stats["rescue_pages"] = len(planner.pages) - before
    return orphans


class _PageWriter:
    """Turns seeds into pages, index first: shards a large seed, titles each shard by its own thread
    and keeps slugs and titles unique across the plan (so it holds what every page so far used)."""

    def __init__(self, infos: list[TrajInfo], stats: dict):
        # shards group trajectories by their own words, weighted by how rare a word is in this
        # dialogue; a trajectory with no keyword falls back to its lexical vector (a dense endpoint
        # vector is another space, so it shares nothing with the others here: cosine 0)
        idf = IdfVectors([" ".join(t.keywords) for t in infos])
        self.embs = {t.id: idf(" ".join(t.keywords)) or (t.emb if isinstance(t.emb, dict) else {})
                     for t in infos}
        self.stats = stats
        self.pages: list[Page] = [Page(slug="index", type="index", title="Index",
                                       trajectories=sorted(t.id for t in infos))]
        self.used_slugs = {"index"}
        self.used_labels: set[str] = set()
        self.title_kw_of = {t.id: t.keywords if t.thread_words is None else t.thread_words for t in infos}
        self.generic = {stem(g) for g in GENERIC}

    def shard_words(self, part, others, title: str = "") -> list[str]:
        """Words naming a shard's thread, best first: frequent in it and absent from its sibling
        shards (a word the siblings share names the seed, not this part of it)."""
        named = set(re.findall(r"[a-z]+", title.lower()))      # the seed's own name says nothing new
        inside: dict[str, int] = {}
        for t in part:
            for k in self.title_kw_of.get(t, ()):
                if k.isalpha() and len(k) > 3 and stem(k) not in self.generic and k not in named:
                    inside[k] = inside.get(k, 0) + 1
        outside: dict[str, int] = {}
        for t in others:
            for k in set(self.title_kw_of.get(t, ())):
                outside[k] = outside.get(k, 0) + 1
        # ties (most words occur once) go to words that name a kind of thing (a family word: a pet,
        # a sport, a place), then to the more common English word - not to the alphabet's first
        return sorted(inside, key=lambda k: (k in outside, -inside[k], outside.get(k, 0),
                                             k not in FAMILY_WORDS, rank(k), k))

    def shard_label(self, title: str, part, others) -> str | None:
        """``title: word, word`` with the first pair of thread words no other page's title has."""
        words_ = self.shard_words(part, others, title)
        for i in range(0, max(1, len(words_) - 1)):
            label = f"{title}: {', '.join(words_[i:i + 2])}" if words_ else None
            if label is None or label not in self.used_labels:
                return label
        return None

    def add(self, type_, title, ids, entities=(), facet=None, keywords=(), rescue=False):
        """One page per shard of ``ids``, each with a unique slug and title."""
        parts = shard(ids, self.embs)
        if len(parts) > 1:
            self.stats["shards"] += len(parts)
        for i, part in enumerate(parts):
            label, kws = title, list(keywords)      # each shard names its own thread
            if len(parts) > 1:
                label = self.shard_label(title, part, [t for q in parts if q is not part for t in q]) or \
                    f"{title} ({i + 1}/{len(parts)})"
                if label.startswith(title + ": "):
                    kws = list(dict.fromkeys([*kws, *label[len(title) + 2:].split(", ")]))
            self.used_labels.add(label)
            base = slugify(f"{type_}-{title.split(': ', 1)[-1]}") + (f"-{i + 1}" if len(parts) > 1 else "")
            slug, j = base, 2
            while slug in self.used_slugs:
                slug, j = f"{base}-{j}", j + 1
            self.used_slugs.add(slug)
            self.pages.append(Page(slug=slug, type=type_, title=label,
                                   trajectories=part, entities=list(entities), facet=facet, keywords=kws,
                                   rescue=rescue, shard=(i + 1) if len(parts) > 1 else None))


def audit(pages: list[Page], all_ids: list[str]) -> list[str]:
    """Trajectories reachable only through the index page (should be empty after planning)."""
    reach = set()
    for p in pages:
        if p.type != "index":
            reach.update(p.trajectories)
    return [t for t in all_ids if t not in reach]
