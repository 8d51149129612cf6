"""The rules a run's own system prompt states, and which of them a state-changing call meets.

The system prompt is cut into sentences; a sentence with a rule word (must, cannot,
only, at most, ...) bears on a call when it names the call's action (the verb the
tool name starts with) and one of its argument values. Two breaches are checked, not guessed:
an "at most N thing" limit exceeded in the arguments, and a confirmation rule the log plainly
shows broken (compilers/consent.py: the user's last message before the call agreed to nothing,
held the agent back, or asked for something new after an agreed change).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .arguments import _as_text
from .stems import stem as _stem
from .reading import Call, Reading, leaves

RULE = re.compile(r"\b(must|must not|should not|shouldn't|cannot|can't|can not|never|not allowed|"
                   r"only|at most|no more than|do not|don't|required|requires|need to|needs to)\b", re.I)
_CONFIRM_WORDS = re.compile(r"\bconfirm", re.I)
_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
            "nine": 9, "ten": 10}
_LINK = r"(?!(?:per|for|in|on|each|and|or|of|to|with|at|by|from)\b)"
_BLOCKS = re.compile(r"\n\s*\n|\n\s*[-*]\s+|\n#+\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(])")
_WORD = re.compile(r"[a-z]{3,}")
_DIGIT = re.compile(r"\d")
_VALUE_SPLIT = re.compile(r"[\s_-]+")
_AT_MOST = re.compile(r"\b(?:at most|no more than|up to)\s+(\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
                      rf"\s+({_LINK}[a-z]+(?:\s{_LINK}[a-z]+){{0,2}})", re.I)


def sentences(text: str) -> list[str]:
    """The system prompt cut into sentences and list items, whitespace folded."""
    return [own for _quoted, own in _quotable(text)]


def _quotable(text: str) -> list[tuple[str, str]]:
    """(as quoted, the sentence itself) per sentence: a sentence that opens by pointing back
    ("Otherwise, ...") is quoted with the sentence before it in its item, since it means nothing
    without it; what it is about is still read off its own words."""
    out = []
    for block in _BLOCKS.split(text or ""):
        before = ""
        for s in _SENTENCE_END.split(block):
            s = " ".join(s.split()).lstrip("-* ").strip()
            if len(s) > 12:
                out.append((f"{before} {s}" if before and points_back(s) else s, s))
                before = s
    return out


# the words that open a sentence whose rule is the exception or the rest of the one before it
_BACK = re.compile(r"(?:otherwise|however|instead|else|in (?:that|this|such a) case|if (?:not|so)|then)\b", re.I)


def points_back(sentence: str) -> bool:
    """Whether a sentence opens by pointing back ("Otherwise, ..."): quoted alone it misleads."""
    return bool(_BACK.match(sentence))


@lru_cache(maxsize=1 << 14)
def _words(text: str) -> frozenset[str]:
    """The stemmed words of ``text`` (frozen: the result is shared between callers)."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()))


@dataclass(frozen=True)
class _Rule:
    """A rule sentence of the system prompt, read once per run: its stemmed words, its
    "at most N thing" limits and whether it asks for a confirmation."""

    sentence: str
    words: frozenset[str]
    limits: tuple[re.Match, ...]
    confirm: bool
    caps: tuple[tuple[int, str, str], ...] = ()  # per limit: (N, the stemmed thing to count, the thing as written)


def _caps(limits: tuple[re.Match, ...]) -> tuple[tuple[int, str, str], ...]:
    """What each "at most N thing" limit counts, worked out once per prompt, not per call."""
    heads = [_stem(m.group(2).split()[-1]).rstrip("s") for m in limits]
    out = []
    for m, head in zip(limits, heads):
        limit = int(m.group(1)) if m.group(1).isdecimal() else _NUMBERS[m.group(1).lower()]
        # the last word names the thing unless another limit here shares it ("credit card",
        # "gift card"): then the whole phrase must occur in the value
        phrase = " ".join(_stem(w) for w in m.group(2).lower().split()).rstrip("s")
        out.append((limit, head if heads.count(head) == 1 else phrase, m.group(2)))
    return tuple(out)


def _rules(reading: Reading) -> tuple[_Rule, ...]:
    """The system prompt's rule sentences, cut and stemmed once per run, not once per call."""
    return _rules_of(reading.system.content or "" if reading.system is not None else "")


def has_rules(reading: Reading) -> bool:
    """Whether the run's system prompt holds any rule sentence a refusal could rest on."""
    return bool(_rules(reading))


@lru_cache(maxsize=16)  # runs of one benchmark share a system prompt; a few prompts are kept, not all
def _rules_of(text: str) -> tuple[_Rule, ...]:
    rules = []
    for quoted, s in _quotable(text):
        if RULE.search(s):
            limits = tuple(_AT_MOST.finditer(s))
            rules.append(_Rule(quoted, _words(s), limits, bool(_CONFIRM_WORDS.search(s)), _caps(limits)))
    return tuple(rules)


@lru_cache(maxsize=1024)
def action_verb(tool: str) -> frozenset[str]:
    """The action a tool's name says it does, stemmed: its first word (``cancel`` of
    ``cancel_reservation``, ``update`` of ``updateBooking``). A rule bears on a call only when it
    names this, not when it merely shares a noun (a cancellation rule names flights too)."""
    first = next((w for w in re.split(r"[\W_]+|(?<=[a-z])(?=[A-Z])", tool or "") if len(w) >= 3), "")
    return _words(first)


@dataclass
class RuleHit:
    sentence: str
    turn: int  # the system prompt's turn
    broken: str | None  # what the call did against it, when that is checked; None: the rule names this call
    order: int = 2


def rules_for(reading: Reading, call: Call) -> list[RuleHit]:
    """Sentences of the run's system prompt that bear on this state-changing call.

    Two checks are made, not guessed: an "at most N thing" rule whose thing appears more
    than N times in the arguments, and a confirmation rule for a call that no user
    agreement preceded, in a log where a person answers the agent. Other rule sentences
    are returned when they name both the call's action (the verb its tool name starts with) and
    one of its argument values, and a confirmation rule that names the action."""
    if reading.system is None or not call.writes:
        return []
    action = _words((call.name or "").replace("_", " ")) - {"the", "and"}
    verb = action_verb(call.name or "")
    flat = [(p, _as_text(v)) for p, v in leaves(call.turn.arguments if isinstance(call.turn.arguments, (dict, list)) else {})]
    values = set()  # words of the values (not the keys: a key names a field, not what was done)
    for p, v in flat:
        if not _DIGIT.search(v) and len(v.split()) <= 3:  # ids, amounts and prose say nothing about a rule
            values |= _words(v.replace("_", " "))
    stemmed: list[str] = []  # each value's words stemmed, made at the first limit that needs them
    hits: list[RuleHit] = []
    for rule in _rules(reading):
        s, words = rule.sentence, rule.words
        if not rule.caps and not verb & words:
            continue  # nothing to count, and it names no word of the action: it cannot bear on the call
        broken = None
        for limit, thing, written in rule.caps:
            if not stemmed:
                stemmed = [" ".join(_stem(w) for w in _VALUE_SPLIT.split(v.lower())) for _, v in flat]
            count = sum(1 for v in stemmed if thing in v)
            if count > limit:
                broken = f"the arguments hold {count} {written} values; the rule allows {limit}"
        order = 0 if broken else 1
        # a missing agreement is a breach only where a person answers the agent in this log, and only
        # where the log plainly shows it (consent.py): in doubt the call is neither confirmed nor a breach
        if broken is None and rule.confirm and reading.has_interlocutor and call.unagreed and verb & words:
            broken = call.unagreed.sentence()
        confirm_rule = rule.confirm and bool(verb & words)  # kept or broken, it bears on the call
        if broken or confirm_rule or (verb & words and values & words - action):
            hits.append(RuleHit(s, reading.system.turn, broken, order if broken else 2))
    hits.sort(key=lambda h: h.order)  # counted breaches, then a missing confirmation, then rules named
    return hits[:3]
