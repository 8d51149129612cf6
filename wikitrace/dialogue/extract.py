"""Exchange-level snapshots and source-grounded atomic claims (TrajWiki A.1).

Offline extractor (the default): deterministic, one claim per informative sentence,
the supporting quote is the exact sentence, first/second person resolved to speaker
names, relative dates resolved against the session date. Claims from any extractor
(offline or LLM) go through ``validate_claims``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from .dates import parse_date, resolve_relative
from .lexicon import NOT_IN_WORDNET, generic_words, stage_of
from .load import Dialogue, Message
from .text import STOPWORDS, alias_map, display_keywords, entities, entity_key, exact_terms, facets, tokens

STATUSES = ("active", "deprecated", "contradictory", "needs-confirmation")
EXCHANGE_SIZE = 2          # messages per exchange (a turn and its reply)


@dataclass
class Claim:
    id: str
    text: str
    status: str
    source_message_ids: list[str]
    supporting_quote: str
    snapshot: str = ""
    trajectory: str = ""
    subject: str = ""
    speaker: str = ""                    # who said it (the subject's own words when they match)
    replaces: str | None = None          # claim id this one revises
    replaced_by: str | None = None
    duplicate_of: str | None = None      # an identical earlier claim in the same trajectory


@dataclass
class Snapshot:
    id: str
    session: str
    date: str | None
    timestamp: str | None
    message_ids: list[str]
    speakers: list[str]
    summary: str
    context: str
    keywords: list[str]
    claims: list[Claim] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    exact_terms: list[str] = field(default_factory=list)
    facets: list[str] = field(default_factory=list)
    temporal: list[dict] = field(default_factory=list)   # {surface, resolved, message}
    trajectory: str = ""
    match: dict = field(default_factory=dict)            # trajectory decision diagnostics
    extractor: str = "offline"


# ---------------------------------------------------------------- exchanges

def exchanges(d: Dialogue) -> list[list[Message]]:
    """Consecutive messages of one session, EXCHANGE_SIZE at a time (the last may be shorter)."""
    out: list[list[Message]] = []
    cur: list[Message] = []
    for m in d.messages:
        if cur and (cur[0].session != m.session or len(cur) == EXCHANGE_SIZE):
            out.append(cur)
            cur = []
        cur.append(m)
    if cur:
        out.append(cur)
    return out


# ---------------------------------------------------------------- offline claim extraction

_SENT = re.compile(r"[^.!?\[]+(?:[.!?]+|$)|\[shares a photo: [^\]]*\]")
# source: closed class - English epistemic adverbs and modal hedges
_HEDGE = re.compile(r"\b(maybe|might|perhaps|probably|not sure|i think|i guess|possibly|hopefully|someday)\b", re.I)
# source: closed class - English personal pronouns and determiners
_PRONOUN_OPEN = frozenset("i my we our you your he she they his her their it its this that the a an".split())
_OPENERS = generic_words() | NOT_IN_WORDNET


def hedged(sentence: str) -> bool:
    """A hedge, or an intention not yet carried out ("plan to", "hoping to", "thinking about";
    intention verbs from WordNet, see lexicon.stage_of)."""
    if _HEDGE.search(sentence):
        return True
    ws = re.findall(r"[a-z']+", sentence.lower())
    return any(stage_of(w) == 0 and (w.endswith("ing") or (k + 1 < len(ws) and ws[k + 1] in ("to", "about", "of")))
               for k, w in enumerate(ws))


def greeting(sentence: str) -> bool:
    """Opens with a word too common (or too informal for WordNet) to carry news: "Thanks", "Wow",
    "Sounds", "Hey" - by the frequency list, not a typed list of greetings."""
    m = re.match(r"\s*([A-Za-z']+)", sentence.replace("’", "'"))
    w = m.group(1).lower() if m else ""
    return bool(w) and w not in _PRONOUN_OPEN and (w in _OPENERS or w in STOPWORDS)


_COUNT_IN = re.compile(r"\b\d+\s+[a-z]+", re.I)     # "2 cats": a count is content on its own


def _other(speaker: str, speakers: list[str]) -> str | None:
    others = [s for s in speakers if s != speaker]
    return others[0] if len(others) == 1 else None


# source: closed class - English first and second person pronouns
_FIRST_SECOND = re.compile(r"\b(I|I'm|I've|I'd|I'll|me|my|mine|myself|you|your|you're|you've|yourself)\b", re.I)


def _VOCATIVE(speakers: list[str]) -> re.Pattern:
    """A participant addressed by name ("Nice one, Gina!", "Hey Jon,"): not a fact about them."""
    names = "|".join(re.escape(n) for sp in speakers for n in dict.fromkeys([sp, sp.split()[0]]))
    return re.compile(r"(?:^|[,;:])\s*(?:[A-Za-z']+\s+)?(?:" + names
                      + r")\s*(?=[,.!?;:]|$)", re.I)


def resolve_person(sentence: str, speaker: str, speakers: list[str]) -> str:
    """First person -> the speaker's name, second person -> the other participant (two-party talk)."""
    s = sentence
    subs = [(r"\bI'm\b", f"{speaker} is"), (r"\bI am\b", f"{speaker} is"), (r"\bI've\b", f"{speaker} has"),
            (r"\bI have\b", f"{speaker} has"), (r"\bI'd\b", f"{speaker} would"), (r"\bI'll\b", f"{speaker} will"),
            (r"\bI was\b", f"{speaker} was"), (r"\bI\b", speaker), (r"\b[Mm]y\b", f"{speaker}'s"),
            (r"\b[Mm]yself\b", speaker), (r"\bme\b", speaker), (r"\bmine\b", f"{speaker}'s")]
    other = _other(speaker, speakers)
    if other:
        subs += [(r"\b[Yy]ou're\b", f"{other} is"), (r"\b[Yy]ou've\b", f"{other} has"),
                 (r"\b[Yy]our\b", f"{other}'s"), (r"\b[Yy]ourself\b", other), (r"\b[Yy]ou\b", other)]
    for pat, rep in subs:
        s = re.sub(pat, rep.replace("\\", "\\\\"), s)
    return s[0].upper() + s[1:] if s else s


def sentences(text: str) -> list[str]:
    return [m.group(0).strip() for m in _SENT.finditer(text) if m.group(0).strip()]


def offline_claims(m: Message, speakers: list[str], anchor: date | None) -> list[tuple[str, str, str]]:
    """``[(claim_text, status, quote)]`` for one message."""
    out = []
    for sent in sentences(m.text):
        if sent.startswith("[shares a photo:"):
            cap = sent[len("[shares a photo:"):].rstrip("]").strip()
            out.append((f"{m.speaker} shared a photo: {cap}.", "active", sent))
            continue
        if sent.endswith("?"):
            continue
        content = tokens(sent)
        if (len(content) < 2 and not (content and _COUNT_IN.search(sent))) or \
                (greeting(sent) and len(content) < 4):
            continue
        text = resolve_person(sent, m.speaker, speakers)
        if not any(sp in _VOCATIVE(speakers).sub(" ", sent) for sp in speakers) and \
                not _FIRST_SECOND.search(sent):
            # about no participant: a fact only when it names something specific (a name, a count,
            # a title, a date) - otherwise it is small talk ("Nice one!") and not a claim
            if not exact_terms(sent, tuple(speakers)):
                continue
            head = text.split(" ", 1)[0]
            if head.lower() in STOPWORDS:           # "The opening is ..." -> "... that the opening is"
                text = text[0].lower() + text[1:]
            text = f"{m.speaker} reports that {text}"
        for surface, resolved in resolve_relative(sent, anchor):
            text = text.rstrip(".!") + f" ({surface} = {resolved})."
        status = "needs-confirmation" if hedged(sent) else "active"
        out.append((text, status, sent))
    return out


# ---------------------------------------------------------------- validation

def _norm_ws(s: str) -> str:
    return " ".join(s.replace("’", "'").split()).lower()


def validate_claims(raw: list[dict], by_id: dict[str, Message], speakers: list[str]) -> tuple[list[dict], dict]:
    """Keep claims whose source ids exist, whose text is non-empty, whose quote occurs in a
    cited source, whose status is known, and whose capitalised terms occur in the sources."""
    kept, dropped = [], {"unknown_ids": 0, "empty": 0, "ungrounded_quote": 0, "ungrounded_terms": 0,
                         "bad_status": 0}
    for c in raw:
        text = str(c.get("text") or "").strip()
        ids = [str(i) for i in (c.get("source_message_ids") or [])]
        quote = str(c.get("supporting_quote") or "").strip()
        status = str(c.get("status") or "active")
        if not text:
            dropped["empty"] += 1
            continue
        if not ids or any(i not in by_id for i in ids):
            dropped["unknown_ids"] += 1
            continue
        if status not in STATUSES:
            dropped["bad_status"] += 1
            continue
        src = " ".join(by_id[i].text for i in ids)
        if not quote or _norm_ws(quote) not in _norm_ws(src):
            dropped["ungrounded_quote"] += 1
            continue
        allowed = set(re.findall(r"[a-z0-9]+", (src + " " + " ".join(speakers) + " "
                                               + text_dates(ids, by_id)).lower().replace("’", "'")))
        terms = set()
        for e in entities(text):
            terms.update(re.findall(r"[a-z0-9]+", re.sub(r"['’]s\b", "", e.lower())))
        if terms - allowed - {"s"}:
            dropped["ungrounded_terms"] += 1
            continue
        kept.append({"text": text, "status": status, "source_message_ids": ids, "supporting_quote": quote})
    return kept, dropped


def text_dates(ids, by_id) -> str:
    """Date words a claim may legitimately add (resolved relative dates)."""
    out = []
    for i in ids:
        d = parse_date(by_id[i].date)
        if d:
            out.append(d.strftime("%B %Y %A"))
            for _, res in resolve_relative(by_id[i].text, d):
                out.append(res)
    return " ".join(out)


# ---------------------------------------------------------------- snapshots

def _summary(msgs: list[Message], claims: list[dict]) -> str:
    """The exchange in its own claims (the two most specific), else its first message."""
    if claims:
        ranked = sorted(claims, key=lambda c: -len(exact_terms(c["text"])))[:2]
        text = " ".join(c["text"] for c in sorted(ranked, key=claims.index))
    else:
        text = f"{msgs[0].speaker}: {msgs[0].text}"
    return text if len(text) <= 240 else text[:237].rstrip() + "..."


def build_snapshots(d: Dialogue, llm_claims=None) -> tuple[list[Snapshot], dict]:
    """Snapshots with validated claims. ``llm_claims(exchange) -> list[dict] | None`` may supply
    model claims; ``None`` (or failure) uses the offline extractor for that exchange."""
    by_id = {m.id: m for m in d.messages}
    stats = {"exchanges": 0, "claims": 0, "llm_exchanges": 0, "fallback_exchanges": 0,
             "dropped": {"unknown_ids": 0, "empty": 0, "ungrounded_quote": 0, "ungrounded_terms": 0,
                         "bad_status": 0}}
    snaps: list[Snapshot] = []
    claim_no = 0
    for n, ex in enumerate(exchanges(d)):
        stats["exchanges"] += 1
        anchor = parse_date(ex[0].date)
        raw = None
        extractor = "offline"
        if llm_claims is not None:
            raw = llm_claims(ex)
            if raw is None:
                stats["fallback_exchanges"] += 1
                extractor = "offline-fallback"
            else:
                stats["llm_exchanges"] += 1
                extractor = "llm"
        if raw is None:
            raw = [{"text": t, "status": s, "source_message_ids": [m.id], "supporting_quote": q}
                   for m in ex for (t, s, q) in offline_claims(m, d.speakers, anchor)]
        kept, dropped = validate_claims(raw, by_id, d.speakers)
        for k, v in dropped.items():
            stats["dropped"][k] += v
        if extractor == "llm" and not kept:
            # every model claim failed validation (or there were none): deterministic preservation fallback
            stats["invalid_fallback_exchanges"] = stats.get("invalid_fallback_exchanges", 0) + 1
            extractor = "offline-fallback"
            raw = [{"text": t, "status": s, "source_message_ids": [m.id], "supporting_quote": q}
                   for m in ex for (t, s, q) in offline_claims(m, d.speakers, anchor)]
            kept, _ = validate_claims(raw, by_id, d.speakers)
        text = " ".join(m.text for m in ex)
        sid = f"snap-{n + 1:04d}"
        claims = []
        for c in kept:
            claim_no += 1
            said_by = by_id[c["source_message_ids"][0]].speaker
            subj = next((s for s in d.speakers if c["text"].startswith(s)
                         and not c["text"].startswith(s + " reports that")), "")
            if not subj and re.search(r"\b(I|I'm|I've|my)\b", c["supporting_quote"].replace("’", "'")):
                subj = said_by            # "Big news: I quit ..." is the speaker's own news
            claims.append(Claim(id=f"claim-{claim_no:05d}", text=c["text"], status=c["status"],
                                source_message_ids=c["source_message_ids"],
                                supporting_quote=c["supporting_quote"], snapshot=sid, subject=subj,
                                speaker=said_by))
        stats["claims"] += len(claims)
        temporal = [{"surface": s, "resolved": r, "message": m.id}
                    for m in ex for s, r in resolve_relative(m.text, parse_date(m.date))]
        ents = entities(text, tuple(d.speakers))
        date_s = ex[0].date
        ctx = (f"Session {ex[0].session}" + (f", {ex[0].timestamp}" if ex[0].timestamp else "")
               + f"; {', '.join(dict.fromkeys(m.speaker for m in ex))}")
        snaps.append(Snapshot(
            id=sid, session=ex[0].session, date=date_s, timestamp=ex[0].timestamp,
            message_ids=[m.id for m in ex], speakers=list(dict.fromkeys(m.speaker for m in ex)),
            summary=_summary(ex, kept), context=ctx, keywords=display_keywords(text, limit=12), claims=claims,
            entities=ents, exact_terms=exact_terms(text, tuple(d.speakers)), facets=facets(text),
            temporal=temporal, extractor=extractor))
    # learned from the conversation itself: a capitalised word its speakers also write in lower case
    # ("Congrats", "Pride", "Woah") is an ordinary word at the start of a phrase, not a name
    lower = {w for m in d.messages for w in re.findall(r"\b[a-z][a-z'’]+\b", m.text)}
    for s in snaps:
        s.entities = [e for e in s.entities if " " in e or e in d.speakers or e.lower() not in lower]
    aliases = alias_map([e for s in snaps for e in s.entities], d.speakers)
    if aliases:
        for s in snaps:
            s.entities = list(dict.fromkeys(aliases.get(e, e) for e in s.entities))
            s.exact_terms = list(dict.fromkeys(aliases.get(e, e) for e in s.exact_terms
                                               if aliases.get(e, e) not in d.speakers))
    stats["aliases"] = aliases
    return snaps, stats


def about(c: Claim, speakers: list[str], known: set[str], aliases: dict[str, str]) -> str:
    """Whom or what a claim is about: its subject when it is a participant's own news or a
    participant addressed ("your gym" -> the other one), else the first name the claim's words
    carry ("Mel reports that Max ..." -> Max), a nickname resolved to its person; a report that names
    nothing is the reporter's. Names are the dialogue's cleaned entities, so an opener such as
    "Wow" is never what a claim is about."""
    if c.subject:
        return c.subject
    body = _VOCATIVE([*speakers, *aliases]).sub(" ", c.text)      # "Guess what, Pri, ..." names no topic
    for sp in speakers:
        if body.startswith(sp + " reports that "):
            body = body[len(sp) + len(" reports that "):]
            break
    names = sorted({*speakers, *known, *aliases}, key=lambda n: (-len(n), n))
    first = None
    for n in names:              # the earliest name in the claim; at one place, the longest
        m = re.search(r"(?<![\w'’])" + re.escape(n) + r"(?![\w])", body)
        if m and (first is None or m.start() < first[0]):
            first = (m.start(), n)
    if first:
        return aliases.get(first[1], first[1])
    return c.speaker


def entity_keys(names) -> list[str]:
    return list(dict.fromkeys(entity_key(n) for n in names if entity_key(n)))
