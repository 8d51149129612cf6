"""Lessons about the system prompt's rules and hand-offs, taught by either outcome: the rule a run
kept or broke (one lesson per rule sentence, ``rule|<hash>``), and when to hand off
(``hand-off|<tool>``). A success teaches keeping the rule, a failure checking calls against it;
the contrast across runs says which goes with the outcome."""

from __future__ import annotations

import re

from .insight_parts import kind_of_tasks, make_insight, rules_once, short_hash
from .insight_words import clip_words, rule_title
from .reading import Call, Reading
from .rules import _CONFIRM_WORDS, _rules_of, _words
from .schema import CandidateInsight

RULE_TITLE = "Keep the rule: "  # a rule lesson's title opens so, the rule's words after it


def rule_opening(title: str, words: int = 5) -> str:
    """The opening words of the rule a rule lesson's title quotes ("" for another title): a fact
    quoting them is about that rule, not another one of the same prompt."""
    if not title.startswith(RULE_TITLE):
        return ""
    return " ".join(title.removeprefix(RULE_TITLE).split()[:words]).rstrip(" …")

def hand_off_insight(r: Reading, w: Call, success: bool) -> CandidateInsight:
    rule = rule_naming(r, w.name)
    said = f" The system prompt's rule on it: \"{clip_words(rule, 300)}\"" if rule else ""
    if success:
        guide = (f"Hand the request off with {w.name} when none of the other tools can do what it asks, "
                 f"and say why in the hand-off.{said}")
    else:
        guide = (f"Before handing off with {w.name}, check whether the other tools can do what the request asks; "
                 f"hand off only when they cannot or a rule requires it.{said}")
    return make_insight(f"hand-off|{w.name}", f"When to hand off with {w.name}", guide,
                   f"In {kind_of_tasks(r)}, when a hand-off with {w.name} is considered.", f"turn {w.n}: handed off", success)


def rule_insight(r: Reading, sentence: str, detail: str, kept: bool) -> CandidateInsight:
    """One lesson per rule of the system prompt, whichever call met it: kept by a run that
    succeeded, broken by one that failed (the contrast says which goes with the outcome)."""
    rule = clip_words(sentence, 300).replace('"', "'")
    if kept:
        asks = " (state the details, wait for the user's yes)" if _CONFIRM_WORDS.search(sentence) else ""
        guide = f"Before each call this rule covers, do what it asks{asks}: \"{rule}\""
    else:
        guide = f"Check each state-changing call against this rule of the system prompt before making it: \"{rule}\""
    return make_insight(f"rule|{short_hash(sentence)}", f"{RULE_TITLE}{rule_title(sentence)}", guide,
                   f"In {kind_of_tasks(r)}, before any call the rule names.", detail, kept)


def rule_naming(r: Reading, name: str) -> str:
    """The system prompt's sentence that names most words of the tool (the first on a tie)."""
    words = _words(name.replace("_", " "))
    if r.system is None or not words:
        return ""
    best, score = "", 0
    for rule in _rules_of(r.system.content or ""):  # the prompt's rule sentences, cut and stemmed once
        shared = len(words & rule.words)
        if shared > score:
            best, score = rule.sentence, shared
    return best if score >= min(2, len(words)) else ""


def confirmation(r: Reading, w: Call) -> CandidateInsight | None:
    hits = [h for h in rules_once(r, w) if re.search(r"confirm", h.sentence, re.I)]
    if not hits or not w.confirmed:
        return None
    return rule_insight(r, hits[0].sentence, f"turn {w.n}: confirmed {w.name} with the user first", True)


def confirmation_broken(r: Reading, w: Call) -> str | None:
    """The key of the system prompt's confirmation rule a change plainly went ahead without (the
    same key a failed run's lesson on that rule has): a run is counted among those that broke the
    rule whichever lesson it was filed under."""
    if w.unagreed is None:
        return None
    hits = [h for h in rules_once(r, w) if re.search(r"confirm", h.sentence, re.I)]
    return f"rule|{short_hash(hits[0].sentence)}" if hits else None
