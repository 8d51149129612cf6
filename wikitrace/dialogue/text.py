"""Deterministic text helpers: tokens, stems, keywords, entities, exact terms,
facets and relative-date resolution. No randomness, no salted ``hash()``."""

from __future__ import annotations

import math
import re
import time
from functools import cache

try:  # the type hashlib.blake2b is; hashlib itself also loads OpenSSL (~2 ms a query) for nothing here
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

from .lexicon import (FAMILIES as _LEX_FAMILIES, NAME_TOP, RESIDENCE_FORMS, TRAVEL_FORMS, function_words,
                      generic_words)

# ---------------------------------------------------------------- tokens

# Stop words from the English frequency list and WordNet (see lexicon.py for the sources).
STOPWORDS = function_words()

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def stem(word: str) -> str:
    """A small, stable suffix stripper (enough to join research/researching/researched)."""
    w = word
    if len(w) <= 3:
        return w
    if w.endswith("'s"):
        w = w[:-2]
    for suf, rep, min_len in (("ies", "y", 4), ("sses", "ss", 4), ("ness", "", 5), ("ments", "", 6),
                              ("ment", "", 6), ("ingly", "", 6), ("edly", "", 6), ("ing", "", 5),
                              ("ed", "", 4), ("ly", "", 5), ("es", "", 5), ("s", "", 4)):
        if w.endswith(suf) and len(w) - len(suf) >= min_len - len(suf) and len(w) > len(suf) + 2:
            if suf == "s" and (w.endswith("ss") or w.endswith("us") or w.endswith("is")):
                continue
            if suf == "es" and not re.search(r"(sh|ch|x|z|ss)es$", w):
                continue
            w = w[: -len(suf)] + rep
            break
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiouls":
        w = w[:-1]          # running -> runn -> run
    if len(w) >= 4 and w.endswith("e"):
        w = w[:-1]          # create/creating -> creat
    return w


def words(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("’", "'"))


def tokens(text: str) -> list[str]:
    """Content tokens, stemmed, stopwords removed (the unit of BM25 and Jaccard)."""
    out = []
    for w in words(text):
        if w.endswith("'s"):
            w = w[:-2]
        if w in STOPWORDS or len(w) < 2:
            continue
        out.append(stem(w))
    return out


def keywords(text: str, limit: int | None = None) -> list[str]:
    """Distinct content stems in first-seen order."""
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t not in seen and not t.isdecimal():
            seen[t] = None
    ks = list(seen)
    return ks[:limit] if limit else ks


def display_keywords(text: str, limit: int | None = None) -> list[str]:
    """Distinct readable content words (lowercase surface forms), first-seen order, one per stem."""
    seen: dict[str, str] = {}
    for w in words(text):
        if w.endswith("'s"):
            w = w[:-2]
        if w in STOPWORDS or len(w) < 3 or w.isdecimal():
            continue
        seen.setdefault(stem(w), w)
    ks = list(seen.values())
    return ks[:limit] if limit else ks


def jaccard(a, b) -> float:
    a, b = set(a), set(b)
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def whitespace_tokens(text: str) -> int:
    return len(text.split())


# ---------------------------------------------------------------- hashed-lexical embedding

EMBED_DIM = 2048


def _h(s: str) -> int:
    return int.from_bytes(blake2b(s.encode("utf-8"), digest_size=8).digest(), "big")


def hashed_embedding(text: str) -> dict[int, float]:
    """Deterministic stand-in for a dense embedding: signed feature hashing of content
    stems and stem bigrams, sublinear tf, L2-normalised, stored sparsely."""
    toks = tokens(text)
    feats: dict[str, float] = {}
    for t in toks:
        feats[t] = feats.get(t, 0.0) + 1.0
    for a, b in zip(toks, toks[1:]):
        k = a + "_" + b
        feats[k] = feats.get(k, 0.0) + 0.5
    vec: dict[int, float] = {}
    for f, c in feats.items():
        hv = _h(f)
        idx = hv % EMBED_DIM
        sign = 1.0 if (hv >> 40) & 1 else -1.0
        vec[idx] = vec.get(idx, 0.0) + sign * (1.0 + math.log(c))
    norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
    return {k: round(v / norm, 5) for k, v in sorted(vec.items()) if v}


def sparse_cos(a: dict, b: dict) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(v * b.get(k, 0.0) for k, v in a.items())


def content_hash(text: str) -> str:
    import hashlib

    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------- entities and exact terms

class LazyRegex:
    """A regex compiled when first used. Retrieval (one process per ``wikitrace query``) uses
    none of the extraction patterns below; compiling them all was ~3 ms of its start-up."""

    __slots__ = ("_args", "_rx")

    def __init__(self, pattern: str, flags: int = 0):
        self._args, self._rx = (pattern, flags), None

    def __getattr__(self, name: str):
        if self._rx is None:
            self._rx = re.compile(*self._args)
        return getattr(self._rx, name)


# source: closed class - name particles of English and European surnames
_CAP = LazyRegex(r"\b([A-Z][a-zA-Z'’\-]+(?:\s+(?:of|the|and|de|la|van|von)?\s*[A-Z][a-zA-Z'’\-]+)*)")
_QUOTED = LazyRegex(r"[\"“]([^\"”]{2,80})[\"”]")
# source: closed class - English cardinal numerals and quantity words
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve twenty thirty "
                 "hundred dozen couple few several").split()
_COUNT = LazyRegex(r"\b(\d+(?:[.,]\d+)?|" + "|".join(_NUMBER_WORDS) + r")\s+([a-z]+(?:\s+[a-z]+)?)", re.I)
# English month and weekday names from the C library's C locale (Python never calls setlocale by
# itself); 1 January 2001 was a Monday. (time.strftime, not datetime: a query needs no dates, and
# the calendar module gives the same but costs an import too.)
MONTHS = [time.strftime("%B", (2001, m, 1, 0, 0, 0, 0, 1, 0)).lower() for m in range(1, 13)]
WEEKDAYS = [time.strftime("%A", (2001, 1, d, 0, 0, 0, d - 1, d, 0)).lower() for d in range(1, 8)]
COUNT_RE = _COUNT
# source: closed class - English deictic and relative time expressions
_TEMPORAL = LazyRegex(
    r"\b(yesterday|today|tonight|tomorrow|last night|this morning|"
    r"(?:last|next|this|past)\s+(?:week|weekend|month|year|summer|winter|spring|fall|autumn|"
    + "|".join(WEEKDAYS) + r")|"
    r"(?:a|one|two|three|four|five|six|a few|few|several|\d+)\s+(?:days?|weeks?|months?|years?)\s+ago|"
    r"(?:in|since|on)\s+(?:" + "|".join(MONTHS) + r")(?:\s+\d{4})?|"
    r"(?:19|20)\d{2})\b", re.I)

@cache
def _generic() -> frozenset:
    """Words too common to be a name (built on first use: retrieval never asks)."""
    return generic_words(NAME_TOP)


def not_entity_word(word: str) -> bool:
    """A capitalised word that names nothing: a stop word (pronouns, contractions, fillers), a word
    too common in English to be a name, or a weekday - by the frequency list, not by a typed list."""
    w = word.replace("’", "'").lower()
    return w in STOPWORDS or w in _generic() or w in WEEKDAYS or (w.endswith("'s") and w[:-2] in STOPWORDS)


def entities(text: str, extra: tuple[str, ...] = ()) -> list[str]:
    """Capitalised spans that look like names, places or titles (first-seen order)."""
    found: dict[str, None] = {}
    for name in extra:
        if name and re.search(r"\b" + re.escape(name) + r"\b", text):
            found[name] = None
    for m in _CAP.finditer(text):
        span = m.group(1).strip("'’-")
        parts = [p for p in span.split() if not not_entity_word(p)]
        for k in range(1, len(parts)):          # "Bye Joanna", "Woah Joanna": an address, not a name
            if " ".join(parts[k:]) in extra or parts[k] in extra:
                parts = parts[k:]
                break
        if not parts:
            continue
        span = " ".join(parts)
        start = m.start()
        # a lone capitalised word right after a sentence break is usually just an opener
        before = text[:start].rstrip()
        if len(parts) == 1 and (not before or before[-1] in ".!?:\"“(") and span not in extra:
            continue            # a lone capitalised sentence opener is usually not a name
        if span.lower() in STOPWORDS or len(span) < 2:
            continue
        found[span] = None
    return list(found)


def alias_map(names, speakers=()) -> dict[str, str]:
    """Participants' short forms, by a general rule: a one-word name of at least two letters (two
    only when it starts exactly one participant's name: "Jo" -> "Joanna") that
    starts exactly one longer known name, which resolves to a participant, is that participant's
    nickname ("Mel" -> "Melanie", "Caro" -> "Caroline"). A prefix of two participants' names stays
    as it is, and so do names that only extend a third party's name (two people may be "Ann" and
    "Anna")."""
    first = {sp.split()[0]: sp for sp in speakers if sp.split()}
    bare = (re.sub(r"['’]s$", "", n) for n in names)          # "Melanie's" is Melanie
    full = sorted({n for n in [*first, *bare] if n and " " not in n}, key=lambda n: (-len(n), n))
    out: dict[str, str] = {}
    for n in full:                      # longest first, so a mid-length alias is resolved already
        if len(n) < 2 or n in first or (len(n) == 2 and sum(f.startswith(n) for f in first) != 1):
            continue
        targets = {first.get(out.get(m, m), out.get(m, m)) for m in full if len(m) > len(n) and m.startswith(n)}
        targets &= set(speakers)          # a third party's longer name ("Mell", a typo) does not compete
        if len(targets) == 1:
            out[n] = targets.pop()
    return out


def entity_key(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def exact_terms(text: str, speakers: tuple[str, ...] = ()) -> list[str]:
    """Must-preserve surfaces (A.1): quoted titles, names/places, counts, temporal expressions."""
    out: dict[str, None] = {}
    for m in _QUOTED.finditer(text):
        out[m.group(1).strip()] = None
    for e in entities(text):
        if e not in speakers:
            out[e] = None
    for m in _COUNT.finditer(text):
        noun = m.group(2).split()[0].lower()
        if noun not in STOPWORDS:
            out[m.group(0).strip()] = None
    for m in _TEMPORAL.finditer(text):
        out[m.group(0).strip()] = None
    return list(out)


# ---------------------------------------------------------------- facets

# Families of relation/value words (A.2 facets; also the "item family" of A.5): WordNet nouns under
# a few root synsets, kept to common words by the frequency list (lexicon.py, lexicon.json).
FAMILIES: dict[str, tuple[str, ...]] = _LEX_FAMILIES
_FAMILY_BUCKETS: dict[str, list[tuple[str, str]]] = {}
for _fam, _ws in FAMILIES.items():
    for _w in _ws:
        _FAMILY_BUCKETS.setdefault(_w[:2], []).append((_w, _fam))
_FAMILY_STEMS: dict[str, dict[str, list[str]]] = {}


def families_of_stem(st: str) -> list[str]:
    """Families whose words share this stem. A stem keeps its word's first two letters, so family
    words are stemmed one two-letter bucket at a time, when first asked (a one-shot query stems
    a few dozen words, not the whole lexicon)."""
    key = st[:2]
    table = _FAMILY_STEMS.get(key)
    if table is None:
        table = _FAMILY_STEMS[key] = {}
        for w, fam in _FAMILY_BUCKETS.get(key, ()):
            fams = table.setdefault(stem(w), [])
            if fam not in fams:
                fams.append(fam)
    return table.get(st, [])

def _alternation(forms) -> str:
    return "|".join(sorted(forms, key=lambda f: (-len(f), f)))


_HOME = _alternation(RESIDENCE_FORMS)
_GO = _alternation(TRAVEL_FORMS - RESIDENCE_FORMS)
# Where someone is from, lives and goes: verbs of residence and travel from WordNet (lexicon.json),
# with the copula and prepositions of English grammar.
# source: closed class - English copula and prepositions (verbs from lexicon.json, WordNet)
_RELATION_PATTERNS = (
    (LazyRegex(r"\b(?:" + _HOME + "|" + _GO + r"|am|i'm|is|was)\s+from\s+([A-Z][a-zA-Z]+)"), "home_country"),
    (LazyRegex(r"\b(?:" + _HOME + r")\s+(?:in|to)\s+([A-Z][a-zA-Z]+)"), "home_location"),
    (LazyRegex(r"\b(?:" + _GO + r")\s+(?:to\s+)?(?:the\s+)?([A-Z][a-zA-Z]+)"), "activity_location"),
)
# source: typed - the one verb "research" (what someone studies)
_RESEARCH = (LazyRegex(r"\bresearch(?:ing|ed)?\s+(?:on\s+|into\s+)?([a-z]+(?:\s+[a-z]+)?)", re.I), "research_topic")


def facets(text: str) -> list[str]:
    """Facets as ``tag`` and ``tag=value`` strings, e.g. ``activity`` and ``activity=hik``."""
    out: dict[str, None] = {}
    for w in words(text):
        st = stem(w)
        for fam in families_of_stem(st):
            out[fam] = None
            out[f"{fam}={st}"] = None
    for pat, tag in (*_RELATION_PATTERNS, _RESEARCH):
        for m in pat.finditer(text):
            val = m.group(1).lower()
            if val not in STOPWORDS:
                out[tag] = None
                out[f"{tag}={val}"] = None
    if _TEMPORAL.search(text):
        out["event_type"] = None
    return list(out)


def families_of(text: str) -> set[str]:
    fams = set()
    for w in words(text):
        fams.update(families_of_stem(stem(w)))
    return fams


# ---------------------------------------------------------------- dialogue-weighted lexical vectors

class IdfVectors:
    """Sparse tf-idf vectors over content stems, with document frequencies from the dialogue's own
    snapshots: a word every exchange uses (the participants' daily vocabulary) weighs little, a
    word only one thread uses (a studio, a title, a pet's name) weighs much. Deterministic, and
    fitted on the input being compiled only - nothing learnt from other data.

    With ``stages`` (one label per text, e.g. its session, in the order they happened) the
    frequencies are those of the dialogue *so far*: after ``reach(i)`` they count the texts of
    text i's stage and every earlier one. Memory is then built as the conversation went, so a
    session added later cannot change how an earlier one was weighed (``dialogue add`` appends)."""

    def __init__(self, texts: list[str], stages: list | None = None):
        self._sets = [set(tokens(t)) for t in texts]
        rank: dict = {}
        self._stage = [rank.setdefault(st, len(rank)) for st in stages] if stages is not None else None
        self._seen = 0
        self.df: dict[str, int] = {}
        self.n = 1
        if stages is None:
            self._count(len(texts))

    def _count(self, upto: int) -> None:
        for k_set in self._sets[self._seen:upto]:
            for k in k_set:
                self.df[k] = self.df.get(k, 0) + 1
        self._seen = max(self._seen, upto)
        self.n = max(1, self._seen)

    def reach(self, i: int) -> bool:
        """Count every text up to the end of text ``i``'s stage; True when that counted more."""
        if self._stage is None or i < 0 or i >= len(self._sets):
            return False
        end = i + 1
        while end < len(self._stage) and self._stage[end] <= self._stage[i]:
            end += 1
        if end <= self._seen:
            return False
        self._count(end)
        return True

    def idf(self, stem_: str) -> float:
        return math.log((self.n + 1) / (self.df.get(stem_, 0) + 0.5))

    def __call__(self, text: str) -> dict[str, float]:
        tf: dict[str, float] = {}
        for t in tokens(text):
            if not t.isdecimal():
                tf[t] = tf.get(t, 0.0) + 1.0
        vec = {k: (1.0 + math.log(c)) * self.idf(k) for k, c in tf.items()}
        norm = math.sqrt(sum(v * v for v in vec.values())) or 1.0
        return {k: round(v / norm, 5) for k, v in sorted(vec.items()) if v > 0}
