"""What was said about a quoted rule: the user's own words on a condition only the user can state,
and the agent telling the user it could not make a change the task expected.

A rule such as "a full refund if the user needs to cancel for health reasons" turns on something no
record holds: the user's reason, or wish. The records a page names cannot say whether it was met, so
the user's own sentence on it is quoted instead (the user message nearest before the change that
shares the condition's words, or that answers the agent's question on them), and no verdict is
given. A change the task expected and the run never made is often one the agent refused: its own
sentence saying it could not (a negation in the sentence that names the tool's thing) is quoted
beside the expected call, with whether the quoted rule grants that thing ("can modify passengers").
Both need a person who answered the agent: logs without one get neither.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import lazy_re
from . import rule_verdicts
from .reading import Reading
from .rule_facts import _on_its_own
from .rules import _words, sentences
from .text import clip_words

# a condition on what the person the agent serves says or wants: "if the user needs to …"
_ON_PERSON = lazy_re.compile(r"\b(?:if|unless|when|provided)\s+(?:the\s+)?(?:user|customer|client|caller)\b([^.;,]*)", re.I)
# verbs that carry a wish, not its content: "needs to cancel … given health reasons" turns on the reasons
_CARRIERS = frozenset(_words("need needs want wants wish would like have has get make given because due must should "
                              "could shall will able "
                              "with that this from into their them they then than your what which there"))
_NOT_ABLE = lazy_re.compile(r"\b(?:cannot|can't|can not|unable|not able|not allowed|not permitted|not possible|"
                            r"won't be able|will not be able|isn't possible|is not possible)\b", re.I)
_DENIES = ("not", "Not", "NOT", "n't", "N'T", "nable", "NABLE")  # one is in every negation above: a cheap first look
# "if you can't find the id" is the user's inability, not the agent saying what it will not do
_YOU = lazy_re.compile(r"\byou(?:'re|\s+are)?\s+$", re.I)
_GRANT = lazy_re.compile(r"\b(?:can|may|allowed to)\b(?!\s+not\b)", re.I)
_CLAUSE = lazy_re.compile(r"[,;:.]")
# a permission under a condition ("can be cancelled within 24 hours", "only if …") is no grant the
# page can state without checking the condition
_CONDITIONAL = lazy_re.compile(r"\b(?:if|unless|only|within|when|whenever|provided|otherwise|after|before|until)\b", re.I)
_WIDTH = 200


@dataclass(frozen=True)
class Said:
    text: str
    turn: int


def condition_words(quoted: list[str], verb: frozenset[str]) -> frozenset[str]:
    """The words of a quoted rule's condition on the person's doing the action itself ("if the user
    needs to cancel … given health or weather reasons": "health", "weather", "reason"; the caller
    takes out the words naming its thing, section or record fields). A condition on another act of
    theirs ("if the user wants to buy …") is not one on this action."""
    out: set[str] = set()
    for s in quoted:
        for m in _ON_PERSON.finditer(s):
            said = _words(m.group(1))
            if verb & said:
                out |= said
    return frozenset(w for w in out - verb - _CARRIERS if len(w) >= 4)  # "the", "or" name nothing


def _people(r: Reading):
    """The messages of the person the agent serves, and of the agent, in order (none without a person)."""
    if not r.has_interlocutor:
        return []
    harness = {t.turn for t in r.harness}
    return [t for t in r.run.turns if t.type == "message" and t.turn not in harness and t.content
            and t.role in ("user", "assistant") and t.extra.get("written_by") != "harness"]


def users_words(r: Reading, words: frozenset[str], before: int | None) -> Said | None:
    """The user's sentence that states the condition: the nearest user message before ``before``
    that shares its words, or that answers an agent question sharing them."""
    if not words:
        return None
    asked = False
    found = None
    for t in _people(r):
        if before is not None and t.turn >= before:
            break
        said = t.content or ""
        if t.role == "assistant":
            asked = "?" in said and bool(words & _words(said))
            continue
        own = [s for s in sentences(said) if words & _words(s)]
        if own or asked:
            found = Said(clip_words(" ".join(own) if own else said, _WIDTH), t.turn)
        asked = False
    return found


def refusal(r: Reading, thing: frozenset[str], verb: frozenset[str]) -> Said | None:
    """The agent's first sentence to the user saying it could not do something to the tool's thing
    (a negation of ability or permission in a sentence naming ``thing``, a prefix standing for it),
    or naming the tool's ``verb`` when given instead (a thing other tools act on names no one action)."""
    if not r.has_interlocutor:
        return None
    for turn, s in _denials(r):
        if _refuses(s, verb or thing):
            return Said(clip_words(s, _WIDTH), turn)
    return None


def _denials(r: Reading) -> list[tuple[int, str]]:
    """(turn, sentence) of the agent's messages to the user that say something cannot be done, in
    order: cut once per run, whichever tools' refusals are then looked for."""
    key = "rule_talk.denials"
    if key not in r.memo:
        harness = {t.turn for t in r.harness}
        out = []
        for t in r.run.turns:
            if t.role != "assistant" or t.type != "message" or not t.content or t.turn in harness \
                    or t.extra.get("written_by") == "harness" or not any(w in t.content for w in _DENIES):
                continue  # most messages deny nothing: not cut into sentences
            out += [(t.turn, s) for s in sentences(t.content) if _NOT_ABLE.search(s)]
        r.memo[key] = out
    return r.memo[key]


def _refuses(sentence: str, names: frozenset[str]) -> bool:
    """A clause of the sentence says the agent cannot do the named act, and no clause says it can:
    "flights cannot be modified, so consider cancellation" denies no cancel, and "you can modify
    passenger details, but the number of passengers cannot be changed" draws a line, not a refusal."""
    said = False
    for clause in _CLAUSE.split(sentence):
        if not _names(_words(clause), names):
            continue
        denied = [m for m in _NOT_ABLE.finditer(clause) if not _YOU.search(clause[max(0, m.start() - 12):m.start()])]
        if denied:
            said = True
        elif _GRANT.search(clause):
            return False
    return said


def grants(quoted: list[str], thing: frozenset[str]) -> bool:
    """Whether a quoted rule grants an act on the thing outright: a clause naming it with an
    unnegated "can" or "may" and no condition ("The user can modify passengers", "passengers may
    be renamed"; not "reservations can be cancelled within 24 hours")."""
    return any(_GRANT.search(c) and not _CONDITIONAL.search(c) and _names(_words(c), thing)
               for s in quoted for c in _CLAUSE.split(s))


def allowed_on(r: Reading, phrase: str, fields: frozenset[str]) -> Said | None:
    """The system prompt's sentence that allows, on a record with the value a refusal named
    (``phrase``, as a sentence writes it), a change of one of ``fields`` (the stemmed names of the
    fields the expected call changes on that record): a sentence with no condition or negation that
    names the value on its own and has a clause that grants (an unnegated "can" or "may") naming
    the field ("all reservations, including basic economy, can change cabin without changing the
    flights", for a call that changes `cabin`). None when no sentence does: the refusal may be right."""
    if r.system is None or not phrase or not fields:
        return None
    for s in sentences(r.system.content or ""):
        low = s.lower()
        if phrase not in low or _CONDITIONAL.search(s) or _NOT_ABLE.search(s) or not _on_its_own(low, phrase):
            continue
        if any(_GRANT.search(clause) and fields & _words(clause) for clause in _CLAUSE.split(s)):
            return Said(clip_words(s, _WIDTH), r.system.turn)
    return None


def _names(words: frozenset[str], thing: frozenset[str]) -> bool:
    return any(a == b or (min(len(a), len(b)) >= 5 and (a.startswith(b) or b.startswith(a)))
               for a in words for b in thing)


def outside_the_list(r: Reading, texts: list[str], user: Said, before: int) -> str:
    """The check of a listed condition ("given health or weather reasons") against the reason the
    user stated, said as a check ("" when the user named no reason in so many words, or may have
    named a listed one)."""
    items, noun, written = rule_verdicts.listed_reasons(texts)
    if not items:
        return ""
    every = frozenset().union(*(_words(t.content or "") for t in _people(r)
                                if t.role == "user" and t.turn < before))
    stated = rule_verdicts.reason_outside(items, noun, user.text, every, _words)
    if not stated:
        return ""
    return (f" The user's reason, \"{stated}\" (turn {user.turn}), is not one of the ones the rule lists "
            f"(\"{written}\"): no user message before the call says " + _either(items) + ".")


def _either(items: tuple[str, ...]) -> str:
    shown = [f"\"{i}\"" for i in items]
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
