"""Noun phrases of a claim: what it is about, in its own words ("Caroline went to an LGBTQ
conference" -> "LGBTQ conference"), so pages split and are titled by the things the speakers own
or do rather than by the rarest words of their messages.

A phrase is the run of words after a determiner or a possessive ("a", "her", "Jon's") up to a
closed-class word, punctuation or a number; its last word is its head. A head that is among the
most frequent English words ("time", "lot", "way") names nothing a page could be about. General
English only: a closed-class list below and the frequency list and WordNet nouns of lexicon.py."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .lexicon import FAMILIES, FREQUENT, NOT_IN_WORDNET, STOP_TOP, function_words, rank
from .claim_lifecycle import TEMPORAL_WORDS
from .text import stem

# source: closed class - English articles, demonstratives, possessive determiners and quantifiers
_DETERMINERS = frozenset("a an the this that these those my your his her its our their some another "
                         "every each any few several many much lot lots bit couple".split())
# source: closed class - English subject pronouns
_SUBJECTS = frozenset("i you he she it we they".split())
# source: closed class - English prepositions, conjunctions, auxiliaries, pronouns and numerals
_CLOSED = frozenset(
    "about above across after against along among around as at before behind below beside between "
    "beyond but by down during for from in into like near of off on onto out over past since than "
    "through to toward towards under until up upon with within without and or nor so yet because "
    "if while when where whether which who whom whose what that this these those "
    "am is are was were be been being have has had having do does did done will would shall should "
    "can could may might must i me my you your he him his she her it its we us our they them their "
    "myself yourself himself herself itself ourselves themselves not no just also too very really "
    "one two three four five six seven eight nine ten first last next".split())
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d+|[^\sA-Za-z\d]")
# source: LoCoMo's photo caption format as the claim templates keep it (extract.offline_claims)
_PHOTO = re.compile(r"^[^:]{0,60}\bshared a photo:\s*", re.I)
# source: LoCoMo's photo caption format as the claim templates keep it (extract.offline_claims)
_CAPTION_LEAD = re.compile(r"^[^:]{0,60}\bshared a photo:\s*(?:an?\s+photo(?:graph|graphy)?\s+of\s+)?", re.I)
MAX_WORDS = 3                   # "online clothing store": longer runs are clauses, not names


@dataclass(frozen=True)
class Phrase:
    text: str                   # as the claim spells it (lowercase unless a capitalised word)
    head: str                   # stem of its last word: what groups "dogs" with "dog"
    family: str | None          # the WordNet kind of thing its head is (pet, food, place ...)


def _family_of() -> dict[str, str]:
    out: dict[str, str] = {}
    for fam in sorted(FAMILIES):
        for w in FAMILIES[fam]:
            out.setdefault(w, fam)
    return out


_FAMILY_OF = _family_of()
_TOO_COMMON = frozenset(FREQUENT[:STOP_TOP]) | NOT_IN_WORDNET
_FUNCTION = function_words()


def _names_a_thing(head: str, names: frozenset[str]) -> bool:
    """A word that can head a noun phrase: a WordNet noun of a kind (pet, food, place ...), or a
    word neither among the most frequent English words nor shaped like a verb form."""
    if head in _FAMILY_OF:
        return True
    return len(head) > 2 and head.isalpha() and head not in _TOO_COMMON and head not in names and \
        rank(head) >= STOP_TOP and not head.endswith(("ed", "ing")) and not TEMPORAL_WORDS.fullmatch(head)


def is_caption(text: str) -> bool:
    """A claim that only reports what a shared photo shows (not the speaker's world)."""
    return bool(_PHOTO.match(text))


def verbs_of(texts, names: frozenset[str]) -> frozenset[str]:
    """Words this dialogue uses as verbs: those right after a subject pronoun or a person's name
    ("it means", "Jon makes"), so "support means" is not read as one noun phrase."""
    out = set()
    for text in texts:
        toks = _TOKEN.findall(text.replace("’", "'"))
        for a, b in zip(toks, toks[1:]):
            if (a.lower() in _SUBJECTS or a.lower() in names) and b[:1].isalpha() and b.lower() not in _CLOSED:
                out.add(b.lower())
    return frozenset(out)


def noun_phrases(text: str, names: frozenset[str] = frozenset(),
                 verbs: frozenset[str] = frozenset()) -> list[Phrase]:
    """The noun phrases of one claim, in order. ``names`` (lowercased participant and entity
    names) never head or start a phrase: a page already says whose it is. A word of ``verbs``
    (see ``verbs_of``) or an adverb in -ly ends a phrase after its first word."""
    text = _CAPTION_LEAD.sub("", text)      # the caption's frame ("a photo of") is no object
    toks = _TOKEN.findall(text.replace("’", "'"))
    out: list[Phrase] = []
    i = 0
    while i < len(toks):
        low = toks[i].lower()
        owner = low[:-2] if low.endswith("'s") else ""
        opens = low in _DETERMINERS or owner in names or \
            (owner and toks[i][:1].isupper() and owner not in _CLOSED and owner not in _TOO_COMMON)
        if not opens:
            i += 1
            continue
        run: list[str] = []
        j = i + 1
        while j < len(toks) and len(run) < MAX_WORDS:
            w = toks[j]
            lw = w.lower().rstrip("'")
            if not w[:1].isalpha() or lw in _CLOSED or lw in _DETERMINERS or lw.endswith("'s") or \
                    "'" in lw or lw in names or (lw.endswith("ed") and len(lw) > 4 and lw not in _FAMILY_OF):
                break           # ... or a participle: "a cat named Bailey" is about a cat
            if run and lw in _FUNCTION and lw not in verbs:
                run = []        # "hard work": its head is too common a word to name a thing
                break
            if run and (lw in verbs or (lw.endswith("ly") and lw not in _FAMILY_OF)):
                break
            run.append(w)
            j += 1
        i = j if run else i + 1
        if run and low in ("this", "that") and run[0].endswith("s") and not run[0].endswith("ss"):
            run = []            # "that sounds lovely": a singular demonstrative before a verb
        if run and not _names_a_thing(run[-1].lower(), names):
            run = []            # "a great time", "that gives": no head, no phrase
        if run:
            words = run             # as spelled: "LGBTQ conference", "The Lean Startup"
            head = run[-1].lower()
            out.append(Phrase(" ".join(words), stem(head), _FAMILY_OF.get(head)))
    return out
