"""Memory Wiki planning (TrajWiki A.4), deterministic: page seeds (index, entity, topic,
inventory), medium-granularity shards (target 4, max 6) grouped and titled by the noun phrases
of the claims about the page's entity, topic suppression, and a coverage audit adding rescue
pages. A thread with no claim (small talk) is on the index only."""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass, field

from .embed import cos as sparse_cos
from .lexicon import generic_words
from .phrases import Phrase, is_caption, noun_phrases, verbs_of
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
    facts: dict[str, list[str]] = field(default_factory=dict)   # entity -> texts of its claims here
    has_claims: bool = True                            # False: small talk only, on the index alone


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
        planner.add("entity", title, ids, entities=[ent], facet=facet, focus=ent)
    for title, fam, ids in inventory_seeds:
        planner.add("inventory", f"Inventory: {fam}", ids, facet=fam, family=fam)
    for k, ids in kept_topics:
        planner.add("topic", f"Topic: {k}", ids, keywords=[k])
    orphans = _rescue_orphans(planner, [t.id for t in infos if t.has_claims])
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
    so a person's facts sit together (a large seed is split later by what those claims are about)."""
    owned: dict[str, list[str]] = {}
    for t in infos:
        if not t.has_claims:
            continue
        for who in t.owners or t.participants[:1]:
            owned.setdefault(who, []).append(t.id)
    return [(p, p, None, sorted(owned[p])) for p in sorted(owned)]


def _inventory_seeds(infos: list[TrajInfo]) -> list[tuple[str, str, list[str]]]:
    """Seeds for item families that list-like trajectories (several exact terms, or counts) share:
    "what books / pets / ..." questions are answered from one page. A trajectory joins a family's
    page when one of its spoken claims is about a thing of that family (a photo's content is not)."""
    inv: dict[str, list[str]] = {}
    for t in infos:
        listy = len(t.exact_terms) >= 2 or t.counts
        if not listy or not t.has_claims:
            continue
        spoken = [x for x in dict.fromkeys(x for texts in t.facts.values() for x in texts) if not is_caption(x)]
        kinds = Counter(ph.family for x in spoken for ph in noun_phrases(x) if ph.family in FAMILIES)
        if kinds:       # the kind of thing most of its claims are about
            fam = sorted(kinds, key=lambda f: (-kinds[f], f))[0]
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
    """Turns seeds into pages, index first: shards a large seed by what its trajectories' claims about
    the seed's entity are about (their noun phrases), titles each shard by the phrase most of its
    trajectories share, and keeps slugs and titles unique across the plan."""

    def __init__(self, infos: list[TrajInfo], stats: dict):
        self.by_id = {t.id: t for t in infos}
        # a trajectory's own words, weighted by rarity in this dialogue: a weak tie-breaker between
        # trajectories whose claims share no noun phrase
        idf = IdfVectors([" ".join(t.keywords) for t in infos])
        self.word_vec = {t.id: idf(" ".join(t.keywords)) for t in infos}
        self.names = frozenset(w.lower() for t in infos for e in (*t.facts, *t.participants, *t.entities)
                               for w in re.findall(r"[A-Za-z]+", e))
        self.generic = {stem(g) for g in GENERIC}
        self.verbs = verbs_of((x for t in infos for xs in t.facts.values() for x in xs), self.names)
        self.stats = stats
        self.pages: list[Page] = [Page(slug="index", type="index", title="Index",
                                       trajectories=sorted(t.id for t in infos))]
        self.used_slugs = {"index"}
        self.used_labels: set[str] = set()

    def phrases(self, tid: str, focus: str | None, family: str | None = None) -> list[Phrase]:
        """Noun phrases of the claims a page would state about ``focus`` (all claims without one),
        spoken claims first: a shared photo's caption counts only when nothing else was said."""
        t = self.by_id[tid]
        if not t.facts:         # a caller that knows no claims: the trajectory's own words stand in
            words = t.keywords if t.thread_words is None else t.thread_words
            return [Phrase(k, stem(k), None) for k in words
                    if k.isalpha() and len(k) > 3 and stem(k) not in self.generic]
        texts = t.facts.get(focus, []) if focus else [x for xs in t.facts.values() for x in xs]
        spoken = [x for x in dict.fromkeys(texts) if not is_caption(x)]
        out = [ph for x in (spoken or list(dict.fromkeys(texts))) for ph in noun_phrases(x, self.names, self.verbs)]
        return [ph for ph in out if family is None or ph.family == family] or out

    def vectors(self, ids, focus, family) -> dict[str, dict]:
        """Per trajectory: its phrase heads (weight 1, rarer across the seed weighs more), the kinds
        of thing they are (0.5: a dog and a cat are both pets) and its own keywords (0.3)."""
        feats = {}
        for t in ids:
            f: dict[str, float] = {}
            for ph in self.phrases(t, focus, family):
                f["h:" + ph.head] = 1.0
                if ph.family:
                    f["f:" + ph.family] = 0.5
            feats[t] = f
        df: dict[str, int] = {}
        for f in feats.values():
            for k in f:
                df[k] = df.get(k, 0) + 1
        n = len(ids)
        out = {}
        for t, f in feats.items():
            v = {k: w * math.log(1 + n / df[k]) for k, w in f.items()}
            for k, w in self.word_vec.get(t, {}).items():
                v["w:" + k] = 0.3 * w
            out[t] = v
        return out

    def shard_phrases(self, part, others, focus, family) -> list[str]:
        """Noun phrases naming a shard, best first: the head most of its trajectories share, then one
        its sibling shards lack, then a kind of thing (pet, food ...) over a word of no known kind;
        each head shown in the spelling the shard's claims use most."""
        inside: dict[str, set] = {}
        spelled: dict[str, dict[str, int]] = {}
        kind: dict[str, bool] = {}
        for t in part:
            for ph in self.phrases(t, focus, family):
                inside.setdefault(ph.head, set()).add(t)
                spelled.setdefault(ph.head, {})
                spelled[ph.head][ph.text] = spelled[ph.head].get(ph.text, 0) + 1
                kind[ph.head] = kind.get(ph.head, False) or ph.family is not None
        outside: dict[str, int] = {}
        for t in others:
            for h in {ph.head for ph in self.phrases(t, focus, family)}:
                outside[h] = outside.get(h, 0) + 1
        heads = sorted(inside, key=lambda h: (-len(inside[h]), outside.get(h, 0), not kind[h], h))
        return [(h, sorted(spelled[h], key=lambda x: (-spelled[h][x], len(x), x))[0]) for h in heads]

    def merge_same_topic(self, parts: list[list[str]], focus, family) -> list[list[str]]:
        """Shards of one seed whose claims are most about the same thing become one page while it
        stays within ``MAX_PAGE`` (two small "Ines: rescue dog" pages are one page; so do shards
        whose claims name no thing at all)."""
        merged: list[list[str]] = []
        top: list[str | None] = []
        for part in parts:
            named = self.shard_phrases(part, [], focus, family)
            head = named[0][0] if named else None
            k = next((i for i, h in enumerate(top) if h == head
                      and len(merged[i]) + len(part) <= MAX_PAGE), None)
            if k is None:
                merged.append(list(part))
                top.append(head)
            else:
                merged[k] = sorted(merged[k] + part)
        return sorted(merged, key=lambda c: c[0])

    def shard_label(self, title: str, part, others, focus=None, family=None) -> str | None:
        """``title: phrase`` with the first phrase no other page's title has; two phrases when no
        phrase is shared by two of the shard's trajectories (the page then holds two threads)."""
        names = [text for _, text in self.shard_phrases(part, others, focus, family)]
        counts = {}
        for t in part:
            for ph in {p.head for p in self.phrases(t, focus, family)}:
                counts[ph] = counts.get(ph, 0) + 1
        alone = len(part) > 1 and max(counts.values(), default=0) < 2
        singles = [f"{title}: {ph}" + (f", {names[i + 1]}" if alone and i + 1 < len(names) else "")
                   for i, ph in enumerate(names)]
        pairs = [f"{title}: {a}, {b}" for i, a in enumerate(names[:4]) for b in names[i + 1:5]]
        if not names:
            singles = [f"{title}: other threads"]       # claims about no nameable thing
        return next((label for label in [*singles, *pairs] if label not in self.used_labels), None)

    def add(self, type_, title, ids, entities=(), facet=None, keywords=(), rescue=False, focus=None,
            family=None):
        """One page per shard of ``ids``, each with a unique slug and title."""
        parts = shard(ids, self.vectors(ids, focus, family))
        if len(parts) > 1:
            parts = self.merge_same_topic(parts, focus, family)
        if len(parts) > 1:
            self.stats["shards"] += len(parts)
        for i, part in enumerate(parts):
            label, kws = title, list(keywords)      # each shard names its own thread
            if len(parts) > 1:
                label = self.shard_label(title, part, [t for q in parts if q is not part for t in q],
                                         focus, family) or f"{title} ({i + 1}/{len(parts)})"
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
