"""The append-only claim lifecycle of a trajectory (TrajWiki A.3): each new claim is ADDed,
REVISEs an earlier one (same subject and attribute, a new value; a later stage of a plan; a new
count), or DEPRECATEs it (a negation, a plan abandoned) — only for claims about the speaker's
own world, never about what a shared photo shows."""

from __future__ import annotations

import re

from .extract import Claim, Snapshot
from .lexicon import ENDING_VERBS, VERB_FORMS, stage_of
from .text import MONTHS, STOPWORDS, keywords, stem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .trajectories import Trajectory

MAX_PREVIOUS = 3            # previous claims shortlisted for claim_transition_judge


def strip_speakers(text: str, speakers: list[str]) -> str:
    """Participants' names carry no continuity (everything is about them): drop them, and the
    offline extractor's "X said:" scaffolding, before keywords and embeddings."""
    for sp in speakers:
        text = re.sub(r"\b" + re.escape(sp) + r"(?:'s)?\b", " ", text)
    return re.sub(r"\bsaid:|\bshared a photo:|\breports that\b", " ", text)


def _norm_claim(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]+", " ", text.lower()).split())


# source: closed class - English negation and aspect particles
_NEGATION = re.compile(r"\b(not|never|no longer|anymore|any more)\b|n't\b", re.I)
# source: closed class - English cardinal numerals
_COUNT_PAIR = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+"
                         r"([a-z]{3,})(?:\s+([a-z]{3,}))?", re.I)
# source: closed class - English cardinal numerals
_NUMBER = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_RESOLVED = re.compile(r"= ([^)]+)\)")


# source: closed class - English time nouns, deictic time words and weekdays
TEMPORAL_WORDS = re.compile(r"(?i)\b(yesterday|today|tonight|tomorrow|last|next|this|past|ago|week|weekend|"
                            r"month|year|day|days|weeks|months|years|night|morning|evening|few|couple|monday|tuesday|"
                            r"wednesday|thursday|friday|saturday|sunday|went|had|got)\b")


_MONTHS = re.compile(r"(?i)\b(?:" + "|".join(m[:3] for m in MONTHS) + r")[a-z]*\b")


def claim_counts(text: str) -> dict[str, int]:
    """Counted nouns of a claim ("2 cats" -> {"cat": 2}); dates and resolved anchors are not counts."""
    out = {}
    text = _MONTHS.sub(" ", re.sub(r"\([^)]*=[^)]*\)", " ", text))
    for n, *nouns in _COUNT_PAIR.findall(text):      # "2 stray kittens": the noun is one of the two
        v = int(n) if n.isdecimal() else _NUMBER.get(n.lower())
        for noun in nouns:
            if v is not None and noun and noun.lower() not in STOPWORDS and not TEMPORAL_WORDS.fullmatch(noun):
                out.setdefault(stem(noun.lower()), v)
    return out


def _content(text: str, subject: str) -> set[str]:
    """Content stems of a claim without its subject and its time expressions (two events that both
    happened "last week" share no content for that)."""
    text = TEMPORAL_WORDS.sub(" ", _RESOLVED.sub(")", text))
    return set(keywords(strip_speakers(text, [subject] if subject else [])))


# source: closed class - English future and intention auxiliaries (a plan not yet carried out)
_FUTURE = re.compile(r"\b(going to|gonna|wanna|will|about to|'ll)\b", re.I)
# source: closed class - English aspect adverbs of cessation
_CEASED = re.compile(r"\b(no longer|anymore|any more)\b", re.I)


def staged(text: str) -> tuple[int, set[str]] | None:
    """(stage, content stems of what the stage verb is about - the few words after it) for the first
    stage marker of a claim (its main verb: in "still searching for a place to open" the search is
    what is stated, not the opening), with stage verbs from WordNet (lexicon.stage_of): intended
    (plan, hope, try ... to; or a future auxiliary), under way (start, learn, practise ...), done
    (finish, win, buy, open, adopt ...). "applied to adoption agencies" -> (1, {adopt, agenc})."""
    text = _RESOLVED.sub(")", text)
    ws = [(m.group(0).lower(), m.start(), m.end()) for m in re.finditer(r"[A-Za-z']+", text)]
    fut = _FUTURE.search(text)
    for k, (w, start, end) in enumerate(ws):
        if fut and fut.start() <= start:
            return 0, set(keywords(" ".join(text[fut.end():].split()[:5])))
        if k + 1 < len(ws) and stage_of(f"{w} {ws[k + 1][0]}") is not None:     # "looking for"
            w, end = f"{w} {ws[k + 1][0]}", ws[k + 1][2]
        st = stage_of(w)
        if st == 0 and not (w.endswith("ing") or (k + 1 < len(ws) and ws[k + 1][0] in ("to", "for", "on"))):
            st = None                       # intention verbs state a plan with "to ..." or as "-ing"
        if st is not None:
            return st, set(keywords(" ".join(text[end:].split()[:5])))
    if fut:
        return 0, set(keywords(" ".join(text[fut.end():].split()[:5])))
    return None


def ends(text: str, old_words: set[str] = frozenset()) -> bool:
    """Does a claim say something stopped holding: "no longer" / "anymore", or a verb of giving up,
    cancelling, selling or losing (WordNet) that is not itself negated ("never give up") and, when
    ``old_words`` are given, is about one of them?"""
    if _CEASED.search(text):
        return True
    ws = re.findall(r"[a-z']+", text.lower())
    for k, w in enumerate(ws):
        base = VERB_FORMS.get(f"{w} {ws[k + 1]}" if k + 1 < len(ws) else "") or VERB_FORMS.get(w)
        if base in ENDING_VERBS and not any(_NEGATION.fullmatch(x) or x.endswith("n't") for x in ws[max(0, k - 2):k]):
            if not old_words or set(keywords(" ".join(ws[k + 1:k + 7]))) & old_words:
                return True
    return False


def later_stage(new: Claim, old: Claim) -> bool:
    """The same person's same plan or project, further along: a higher stage whose object shares
    at least two content words with the earlier one's ("looking into adoption agencies" ->
    "applied to adoption agencies" -> "passed the adoption agency interviews")."""
    if not new.subject or new.subject != old.subject:
        return False
    a, b = staged(new.text), staged(old.text)
    return bool(a and b and a[0] > b[0] and len(a[1] & b[1]) >= 2)


def about_own_world(c: Claim) -> bool:
    """A claim the speaker makes about their own life: its subject is the one who said it, and it
    is no description of a shared photo (what a picture shows is no fact that can change)."""
    return bool(c.subject) and c.subject == c.speaker and not c.supporting_quote.startswith("[shares a photo:")


def offline_transition_judge(new: Claim, previous: list[Claim]) -> tuple[str, Claim | None]:
    """Deterministic stand-in for claim_transition_judge, on the structure of two claims by the
    same speaker about their own world, from different exchanges:
    REVISE - the same counted thing with a new count ("2 cats" -> "3 cats"), the same plan further
    along (stage verbs), the same event on another date, or a hedged plan now stated as done;
    DEPRECATE - nearly the same statement, now negated or given up (no longer, quit, sold...)."""
    if not about_own_world(new):
        return "ADD", None
    nk = _content(new.text, new.subject)
    ncount = claim_counts(new.text)
    ndates = set(_RESOLVED.findall(new.text))
    for p in previous:
        if p.subject != new.subject or not about_own_world(p) or p.snapshot == new.snapshot or \
                set(p.source_message_ids) & set(new.source_message_ids):
            continue                       # two sentences of one exchange are not a revision
        pk = _content(p.text, p.subject)
        shared = nk & pk
        pcount = claim_counts(p.text)
        if any(k in pcount and pcount[k] != v for k, v in ncount.items()):
            return "REVISE", p             # a new count of the same thing
        sim = len(shared) / len(nk | pk) if nk | pk else 0.0
        if later_stage(new, p):
            return "REVISE", p             # the same plan or project, now further along
        if len(shared) >= 2 and sim >= 0.3 and ends(new.text, pk) and not ends(p.text):
            return "DEPRECATE", p          # the same statement, now negated or given up
        if sim < 0.4 or len(shared) < 3:
            continue
        pdates = set(_RESOLVED.findall(p.text))
        if ndates and pdates and not ndates & pdates and sim >= 0.6:
            return "REVISE", p             # the same event, another date
        if p.status == "needs-confirmation" and new.status == "active" and sim >= 0.5:
            return "REVISE", p             # the plan happened (or is now stated as fact)
    return "ADD", None


def apply_claims(T: Trajectory, snap: Snapshot, judge=None, elsewhere: list[Claim] = ()) -> dict:
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
        own = about_own_world(c)           # only a speaker's own world changes; photos never do
        # the same person's world may have been told in another thread: their active claims there
        # that share two content words (or a counted thing) are compared too
        ncounted = set(claim_counts(c.text))
        others = [p for p in elsewhere if p.status != "deprecated" and p.subject == c.subject
                  and (len(nk & set(keywords(p.text))) >= 2 or ncounted & set(claim_counts(p.text)))]
        for p in ((T.active_claims() + others) if own else ()):
            if not about_own_world(p):
                continue
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
        if decision in ("REVISE", "DEPRECATE") and target is not None:
            target.status = "deprecated"
            target.replaced_by = c.id
            c.replaces = target.id
            T.ops.append({"op": decision, "claim": c.id, "previous": target.id, "snapshot": snap.id,
                          "status": c.status})
            T.update_links.append([target.snapshot, snap.id])
            counts[decision] += 1
        else:
            T.ops.append({"op": "ADD", "claim": c.id, "snapshot": snap.id, "status": c.status})
            counts["ADD"] += 1
    return counts
