"""Why a change differed from the expected one: the run's own rule on it, and the facts it turns on.

A page that says "`nonfree_baggages` 1 where the task expected 0" says what went wrong, not why.
The why is usually a rule of the run's system prompt (a policy) applied to values of the records the
run looked up: a checked-bag allowance that depends on the booking user's membership and cabin, a
cancellation allowed within a day of booking or with insurance. Here such a rule is found and quoted
with the record fields it names. What the rule's own words settle on those fields (a span of time
past, an "only if" the record fails) is said by rule_verdicts.py; nothing else is concluded.

The prompt is read once per distinct text into blocks (a paragraph or list item, with the heading
above it and the short label that opens it, "Checked bag allowance:"). A block is on the topic when
its label names the argument's thing (a shorter word standing for a longer one: a "bag" label for
``nonfree_baggages``) or, for a whole call, when it is an unlabelled rule of the section whose heading
names the call's action; where the prompt has a section on the action, no other section's rules are
used. Of those, a sentence is quoted only when it names a value the run's records hold, as a term of
its own ("gold", "basic economy"; not "economy" inside "basic economy"), or states a span of time and
the record has a timestamp. When two blocks rank alike, or parallel sentences of the block (one per
membership tier) name the same fields, nothing is quoted: a wrong rule quoted is worse than none.
One exception: for an expected change never made, the one labelled block of the action's own section
on the tool's thing ("Change passengers:") is quoted without a fact, as what the policy allowed.
A block another rule leans on by its label ("travel insurance") is left out when the record says it
has none of that thing. What the user said of a rule's condition, and the agent's own refusal of an
expected change, are added beside the rule (rule_talk.py); the prompt is cut in rule_blocks.py.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import timedelta
from functools import lru_cache

from . import rule_talk, rule_verdicts
from .arguments import _last_key, _parsed
from .reading import Call, Reading, leaves
from .record_facts import _when, stated_now
from .rule_blocks import _Block, _Sentence, _blocks, _loosely_names
from .rules import _stem, _words, action_verb
from .insight_words import join
from .text import clip_words

_NAME_PARTS = re.compile(r"[\W_]+|(?<=[a-z])(?=[A-Z])")
_DIGIT = re.compile(r"\d")
_WIDTH = 260  # one quoted sentence at most; a rule is quoted, not summarised
_MAX_SENTENCES = 3


@lru_cache(maxsize=1024)  # a few dozen field and argument names, asked for every sentence
def _name_words(name: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _NAME_PARTS.split(name or "") if len(w) >= 3)


@dataclass
class Reason:
    text: str
    turns: list[int]
    quoted: list[str] = field(default_factory=list)  # the rule's sentences as the prompt has them
    # what the rule is about, counted across runs as a fact of its own: [the tool, what the rule is
    # on, the quote as the page gives it]; runs quoting the same words share one lead (corpus/fact_leads.py)
    about: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Fact:
    key: str
    value: object
    where: str  # "get_user_details (turn 6) gave", or "the call sent" (what the page says of its place)
    turn: int | None
    shown: str  # the value as the page prints it
    moment: bool = False  # a timestamp: named by a sentence that states a span of time
    phrase: str = ""  # the value as a sentence would write it ("basic economy"); "" when no sentence names it so
    key_words: frozenset[str] = frozenset()


def _fact(key: str, value, where: str, turn: int | None) -> _Fact:
    """A field with what the sentence tests need worked out once, not once per sentence."""
    moment = isinstance(value, str) and _when(value) is not None
    v = value if isinstance(value, str) and not moment else ""
    nameable = v.lower() not in ("yes", "no", "true", "false") and any(len(w) >= 4 for w in re.split(r"[\W_]+", v))
    return _Fact(key, value, where, turn, json.dumps(value, ensure_ascii=False), moment,
                 " ".join(v.lower().replace("_", " ").split()) if nameable else "", _name_words(key))


def _plain(value) -> str | None:
    """A scalar a rule can name: a word or three, or a flag; ids, amounts and prose left out."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):
        v = value.strip()
        if v and not _DIGIT.search(v) and len(v.split()) <= 3:
            return v
    return None


def _pairs(args) -> frozenset[tuple[str, str]]:
    """(argument name, value) of every string a call sends (three characters or more)."""
    return frozenset((_last_key(p), v) for p, v in leaves(args) if isinstance(v, str) and len(v) >= 3)


def _sent_by(r: Reading, c: Call) -> frozenset[tuple[str, str]]:
    """A call's (name, value) pairs, once per run: every finding of the run asks about the same calls."""
    memo = r.memo.setdefault("rule_reasons.sent", {})
    found = memo.get(c.n)
    if found is None:
        found = memo[c.n] = _pairs(c.turn.arguments)
    return found


def _facts(r: Reading, args: dict, before: int | None, skip: set[str], own: str = "the call sent") -> list[_Fact]:
    """The plain top-level fields of the records this change rests on (the whole answer of a
    look-up before it that was sent one of the change's own argument values, and no change of the
    same record between them), latest first, then the change's own other arguments."""
    # a look-up counts when it was sent a value under the same name the change sends it (the
    # ``reservation_id`` it cancels, the ``user_id`` it books for): that record is the one acted on
    sent = _pairs(args)
    out: dict[str, _Fact] = {}
    stale: set[tuple[str, str]] = set()  # records an earlier change acted on: what was looked up before it may be old
    for c in reversed(r.calls):
        if c.error or (before is not None and c.n >= before):
            continue
        shared = sent & _sent_by(r, c)
        if c.writes:
            if before is not None:  # a change never made has no moment of its own: every look-up is as it was shown
                stale |= shared
            continue
        if not shared - stale:
            continue
        answer = _parsed(c.turn.result or "")
        if not isinstance(answer, dict):
            continue
        for key, value in answer.items():
            if key in out or key in skip:
                continue
            plain = _plain(value)
            if plain is None and isinstance(value, str) and value[:4].isdigit() and ("T" in value or ":" in value) \
                    and _when(value) is not None:
                plain = value  # a moment the record was made or changed (a date alone is a birthday, a flight day)
            if plain is not None:
                out[key] = _fact(key, value, f"{c.name} (turn {c.n}) gave", c.n)
    for key, value in args.items():
        plain = _plain(value)
        if plain is not None and key not in out and key not in skip:
            out[key] = _fact(key, value, own, None)
    return list(out.values())


def _named(r: Reading, s: _Sentence, facts: list[_Fact], subject: frozenset[str]) -> tuple[list[_Fact], list[_Fact]]:
    """(by value, by name) the facts a sentence names. By value: a value as a term of its own (a
    word of four letters or more, not a bare flag), or a moment when the sentence states a span of
    time. By name: the field's own name, in a sentence that names the subject too."""
    by_value, by_name = [], []
    low = s.text.lower()
    for f in facts:
        if f.moment:
            if s.span:
                by_value.append(f)
        elif f.phrase and f.phrase in low and _on_its_own(low, f.phrase):
            by_value.append(f)
        elif f.key_words and f.key_words <= s.words and subject & s.words:
            by_name.append(f)
    return by_value, by_name


# words that leave the noun after them whole: "each economy passenger", "a gold member", "or economy"
_FUNCTION_WORDS = frozenset("a an the or and nor for each every per of in on to at by as is are be any all no not "
                            "with than if its their his her your".split())


def _on_its_own(low: str, phrase: str) -> bool:
    """Whether a sentence (lower case) names a value (as a phrase) without another word in front
    that makes it another thing ("basic economy" is not "economy"), whatever the records show."""
    for m in re.finditer(r"(?:(\w+)\s+)?(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", low):
        if m.group(1) is None or m.group(1) in _FUNCTION_WORDS:
            return True
    return False


def _own_section(blocks: tuple[_Block, ...], tool: str, verb: frozenset[str], known: set[str]) -> set[frozenset[str]]:
    """The heading of the prompt's section on this tool's action: the one that names the action, else
    the one section whose labels name what the tool's siblings (the run's other tools of the same
    action: ``update_reservation_flights`` beside ``update_reservation_passengers``) act on. Empty
    when neither settles it."""
    named = {b.heading for b in blocks if b.heading & verb}
    if named or not verb:
        return named
    things = set().union(*(_head(n) for n in known if n and n != tool and action_verb(n) == verb))
    found = {b.heading for b in blocks if b.label and b.label_words & things}
    return found if len(found) == 1 else set()


def _labelled(blocks: tuple[_Block, ...], own: set[frozenset[str]], head: frozenset[str]):
    """For a change never made that no rule ties to a value the records hold: the one block of the
    action's own section whose label names the thing the tool acts on ("Change passengers:" for
    ``update_reservation_passengers``), its sentences on that thing quoted, no fact named. What the
    rule allows is then beside what the run left undone (a refusal the policy did not call for)."""
    if not own:
        return None
    found = [b for b in blocks if b.heading in own and _loosely_names(b.label_words, head)]
    if len(found) != 1:
        return None
    quoted = [(found[0], j) for j, s in enumerate(found[0].sentences) if s.rule and head & s.words][:_MAX_SENTENCES - 1]
    return (quoted, []) if quoted else None


def _choose(r: Reading, tool: str, subject: frozenset[str], head: frozenset[str], whole_call: bool, facts: list[_Fact],
            missed: bool = False):
    """(the block, its quoted sentences, facts named) of the one block that clearly bears on the
    subject, or None: none does, two rank alike, or the best block's sentences name the same
    fields alike (one per membership tier, the record's tier unknown)."""
    verb = action_verb(tool)
    known = {c.name for c in r.calls} | {e.get("name", "") for e in r.memo.get("expected.all") or []}
    others = set()
    for name in known:
        if name and name != tool:
            others |= action_verb(name) - verb
    ranked = []
    blocks = _blocks(r.system.content or "")
    own = _own_section(blocks, tool, verb, known)
    for i, b in enumerate(blocks):
        if not subject & b.words or (b.heading & others and not b.heading & verb) or (own and b.heading not in own):
            continue  # silent on the subject, or in a section on another action
        if not (_loosely_names(b.label_words, head) or (whole_call and not b.label and b.heading & verb)):
            continue  # its label names another thing, or it is no general rule of the action's own section
        said = []
        for j, s in enumerate(b.sentences):
            if s.rule:
                by_value, by_name = _named(r, s, facts, subject)
                if by_value:  # it turns on a value the run's records hold
                    said.append((j, by_value, by_name))
        if said:
            ranked.append((max(len(v) for _, v, _ in said), i, b, said))
    if not ranked:
        return _labelled(blocks, own, head) if missed else None
    ranked.sort(key=lambda x: x[0], reverse=True)
    if len(ranked) > 1 and ranked[1][0] == ranked[0][0]:
        return None  # two blocks bear on it alike: which one governs is not clear
    _, i, block, said = ranked[0]
    top = max(said, key=lambda x: (len(x[1]), len(x[2])))
    if top[1] and any(j != top[0] and len(v) == len(top[1]) and {f.key for f in v} == {f.key for f in top[1]}
                      for j, v, _ in said):
        return None  # parallel sentences name the same fields: the one that applies is not settled
    chosen = {top[0]}
    top_keys = {f.key for f in top[1]}
    alternatives = {j for j, v, _ in said if j != top[0] and top_keys & {f.key for f in v}}
    valued = {j for j, v, _ in said}
    for j, s in enumerate(block.sentences):  # the block's other sentences on what the record holds, or
        # on the argument's own thing; never the alternatives to the one chosen (another tier's allowance)
        if len(chosen) < _MAX_SENTENCES - 1 and j != top[0] and j not in alternatives and s.rule \
                and (j in valued or (not whole_call and head & s.words)):
            chosen.add(j)
    quoted = [(block, j) for j in sorted(chosen)]
    named: list[_Fact] = []
    for j in sorted(chosen):
        by_value, by_name = _named(r, block.sentences[j], facts, subject)
        named += [f for f in by_value + by_name if f not in named]
    text = " ".join(block.sentences[j].text for j in chosen).lower()
    for other in blocks:  # a rule that names another block's label ("travel insurance") leans on it,
        # unless the record says it has none of that thing (`insurance` "no"): its rule then bears on nothing
        if other is block or len(other.label) < 4 or other.label not in text \
                or any(f.key_words and f.key_words <= other.label_words and _absent(f.value) for f in facts):
            continue
        extra = next((k for k, s in enumerate(other.sentences) if s.rule and subject & s.words), None)
        if extra is not None:
            quoted.append((other, extra))
            break
    return quoted, named


def _absent(value) -> bool:
    """A field saying the record has none of its thing: a false flag, "no", "none"."""
    return value is False or (isinstance(value, str) and value.strip().lower() in ("no", "none", "false"))


def _quote(block: _Block, j: int) -> str:
    """A sentence as written, its block's label in front when it opens the block."""
    s = block.sentences[j].text
    return clip_words(f"{block.label_text}: {s}" if j == 0 and block.label_text else s, _WIDTH)


def _fact_text(r: Reading, f: _Fact) -> str:
    if isinstance(f.value, str) and _when(f.value) is not None:
        now, when = stated_now(r), _when(f.value)
        if now is not None and when is not None and when <= now:
            hours = int((now - when).total_seconds() // 3600)
            days, left = divmod(now - when, timedelta(days=1))
            gap = f"{hours} hours" if hours < 48 else f"{'over ' if left else ''}{days} days"
            return f"`{f.key}` {f.shown} ({gap} before the current time the system prompt gives)"
    return f"`{f.key}` {f.shown}"


def _reason(r: Reading, tool: str, subject: frozenset[str], head: frozenset[str], about: str, facts: list[_Fact],
            said: set[str], whole_call: bool = False, missed: bool = False, before: int | None = None) -> Reason | None:
    if r.system is None or not subject:
        return None
    found = _choose(r, tool, subject, head, whole_call, facts, missed)
    if found is None:
        return None
    quoted, named = found
    texts = [b.sentences[j].text for b, j in quoted]
    quote = " ".join(f"\"{_quote(b, j)}\"" for b, j in quoted)
    if quote in said:
        return None  # said once on the page is enough
    said.add(quote)
    text = f"The system prompt's rule on {about} (turn {r.system.turn}): {quote}"
    turns = [r.system.turn]
    by_place: dict[str, list[str]] = {}
    for f in named:
        by_place.setdefault(f.where, []).append(_fact_text(r, f))
        if f.turn is not None:
            turns.append(f.turn)
    if by_place:
        text += "; " + "; ".join(f"{where} " + join(parts, 4)
                                 for where, parts in by_place.items())
    text = text if text.endswith(('."', '!"', '?"')) else text + "."
    if whole_call and before is not None:  # a change that went through: what the rule concludes on its fields
        settled = rule_verdicts.verdict(
            texts, [(f.key, _when(f.value)) for f in named if f.moment and _when(f.value) is not None],
            [(f.key, f.key_words, f.shown) for f in named if _absent(f.value)], stated_now(r), _words,
            lambda part: any(f.phrase and f.phrase in part.lower() and _on_its_own(part.lower(), f.phrase)
                             for f in facts), tool)
        if settled:
            text += " " + settled
    words = rule_talk.condition_words(texts, action_verb(tool))
    if words:  # less the words naming the action's thing, its sections and the record's fields
        words -= head.union(*(b.heading | b.label_words for b, _ in quoted), *(f.key_words for f in facts))
    user = rule_talk.users_words(r, words, before) if words else None
    if user is not None:  # a condition no record holds: the user's own words on it, no verdict
        text += f" The user's words on its condition (turn {user.turn}): \"{user.text}\""
        turns.append(user.turn)
    return Reason(text, turns, texts, about=[tool, about.strip("`"), quote])


def for_arguments(r: Reading, c: Call, paths: list[str], said: set[str]) -> Reason | None:
    """The rule on the first differing argument that has one, with the facts it names."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    for path in paths:
        key = path.split("[")[0].split(".")[0]
        found = _reason(r, c.name or "", _name_words(key), _head(key), f"`{key}`", _facts(r, args, c.n, {key}), said)
        if found is not None:
            return found
    return None


def _head(name: str) -> frozenset[str]:
    """The thing a name names: its last word (``baggage`` of ``nonfree_baggages``, ``reservation``
    of ``cancel_reservation``), an ``id`` suffix passed over: a reservation id names a record, and
    a rule on the record is not a rule on which record was picked."""
    parts = [w for w in _NAME_PARTS.split(name or "") if len(w) >= 3]
    return frozenset({_stem(parts[-1])}) if parts else frozenset()


def _subject(tool: str) -> frozenset[str]:
    """What a whole call is about: the verb its name starts with and the object it ends with."""
    return action_verb(tool) | _head(tool)


def for_call(r: Reading, c: Call, said: set[str]) -> Reason | None:
    """The rule on a change the task did not expect, with the facts of the record it acted on."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    name = c.name or ""
    return _reason(r, name, _subject(name), _head(name), name, _facts(r, args, c.n, set()), said, whole_call=True,
                   before=c.n)


def for_missed(r: Reading, expected: dict, said: set[str]) -> Reason | None:
    """The rule on an expected change the run never made."""
    name = expected.get("name") or ""
    args = expected.get("arguments") if isinstance(expected.get("arguments"), dict) else {}
    facts = _facts(r, args, None, set(), own="the expected call sends")
    found = _reason(r, name, _subject(name), _head(name), name, facts, said, whole_call=True, missed=True)
    thing = _head(name)
    others = {c.name for c in r.calls} | {e.get("name", "") for e in r.memo.get("expected.all") or []}
    shared = any(thing & _name_words(n) for n in others if n and n != name)  # "reservation" of many tools
    refused = rule_talk.refusal(r, thing, action_verb(name) if shared else frozenset())
    if refused is None:
        return found
    # the agent's own "I cannot" beside the change the task expected: what went wrong, in its words
    allows = found is not None and rule_talk.grants(found.quoted, thing)
    text = (f"The agent told the user at turn {refused.turn} that it could not: \"{refused.text}\"; the task expected "
            f"{name}{', which the rule quoted allows' if allows else ''}.")
    if found is None:
        return Reason(text, [refused.turn])
    return Reason(f"{found.text} {text}", found.turns + [refused.turn], found.quoted)
