"""The rule beside an expected change the run never made, and the agent's own refusal of it.

A change the task expected and the run left unmade is read against the rule the system prompt
gives on it, judged on the record as the run's look-ups showed it (rule_reasons.py ``_reason``).
Where the agent told the user it could not, its words are quoted; where the record's fields close
the rule's permissions (every one, or all but a condition no field checks), the refusal kept to the
rule as written, and the page says that the task's expected call and the rule disagree rather than
teach the refusal as the mistake. Where instead a sentence of the prompt allows, on a record with the
value the refusal named, a change of a field the expected call changes there (``allowed``), and the
agent never went back on its "no", the refusal is the mistake, and the page leads with it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from . import rule_talk
from .expected_calls import _record_keys
from .reading import Reading
from .rule_facts import _facts, _name_words, _on_its_own
from .rule_reasons import Reason, _head, _reason, _subject
from .rules import _words, action_verb


def for_missed(r: Reading, expected: dict, said: set[str]) -> Reason | None:
    """The rule on an expected change the run never made."""
    name = expected.get("name") or ""
    args = expected.get("arguments") if isinstance(expected.get("arguments"), dict) else {}
    facts = _facts(r, args, None, set(), own="the expected call sends")
    # what the rule settles on the record as the look-ups showed it, as of the run's end
    found = _reason(r, name, _subject(name), _head(name), name, facts, said, whole_call=True, missed=True,
                    before=_after_last(r))
    refused = _refused(r, name)
    if refused is None:
        return found
    # the agent's own "I cannot" beside the change the task expected: what went wrong, in its words
    allows = found is not None and rule_talk.grants(found.quoted, _head(name))
    answer = allowed(r, name, args, facts, refused)
    text = _refused_text(refused, name, allows, "" if answer else left_open(found), answer)
    if answer:
        return Reason(text, [refused.turn, answer.rule_turn], leads=True)
    if found is None:
        return Reason(text, [refused.turn])
    return Reason(f"{found.text} {text}", found.turns + [refused.turn], found.quoted)


def refused_one(r: Reading, missed: list[dict]) -> Reason | None:
    """Of several expected changes never made, the first the agent told the user it could not
    make, in its words (a rule is quoted only for a single change never made: for_missed)."""
    for e in missed:
        name = e.get("name") or ""
        refused = _refused(r, name)
        if refused is not None:
            args = e.get("arguments") if isinstance(e.get("arguments"), dict) else {}
            facts = _facts(r, args, None, set(), own="the expected call sends")
            answer = allowed(r, name, args, facts, refused)
            if answer:  # the prompt allows what it refused: that refusal is the mistake, whatever else it says
                return Reason(_refused_text(refused, name, False, "", answer), [refused.turn, answer.rule_turn],
                              leads=True)
            ruled = _reason(r, name, _subject(name), _head(name), name, facts, set(), whole_call=True, missed=True,
                            before=_after_last(r))
            if left_open(ruled):  # the rule, read on the record, is why it refused
                return Reason(f"{ruled.text} {_refused_text(refused, name, False, left_open(ruled))}",
                              ruled.turns + [refused.turn], ruled.quoted)
            return Reason(_refused_text(refused, name, False), [refused.turn])
    return None


def _after_last(r: Reading) -> int:
    """A turn after every turn of the run: a change never made is judged on all the run was shown."""
    return max((t.turn for t in r.run.turns), default=0) + 1


# the verbs English uses for one act of changing a thing: a tool named "update_…" is refused as
# "cannot be modified" or "cannot be changed" as often as in its own verb
_CHANGE_VERBS = _words("update modify change edit alter amend adjust")


def _refused(r: Reading, name: str):
    """The agent's first sentence saying it cannot do what ``name`` does: its object, with its verb
    too when other tools share the object ("reservation" of many tools); a tool whose verb is one
    of changing is named by any verb of changing."""
    thing = _head(name)
    others = {c.name for c in r.calls} | {e.get("name", "") for e in r.memo.get("expected.all") or []}
    shared = any(thing & _name_words(n) for n in others if n and n != name)
    verb = action_verb(name)
    return rule_talk.refusal(r, thing, (_CHANGE_VERBS if verb & _CHANGE_VERBS else verb) if shared else frozenset())


_LEFT_OPEN = re.compile(r"So of this rule only (.+) could still have allowed this ")


def left_open(found: Reason | None) -> str:
    """"closed" when the record's fields close every permission of the quoted rule, the quoted
    conditions left open when only conditions no field checks are left ("if the airline cancelled
    the flight"), "" otherwise."""
    if found is None or not found.closed:
        return ""
    left = _LEFT_OPEN.search(found.text)
    return left.group(1) if left else "closed"


@dataclass(frozen=True)
class Allowed:
    """A refusal the run's own system prompt answers: on a record whose `key` is ``value`` (the value
    the refusal named), a sentence allows a change of ``field``, which the expected call changes to
    ``sends``."""

    field: str
    key: str
    value: object
    sends: object
    rule: str
    rule_turn: int

    def what(self) -> str:
        return f"a `{self.field}` change on a record with `{self.key}` {json.dumps(self.value, ensure_ascii=False)}"


def went_back_on(r: Reading, name: str, args: dict, turn: int) -> bool:
    """Whether after its refusal at ``turn`` the run made a ``name`` change that went through on the
    record the expected call acts on (its record id, not a payment id the two may share): the agent
    went back on its "no"."""
    ids = {args[k] for k in _record_keys(name, args)}
    return any(c.name == name and c.writes and not c.error and c.n > turn and isinstance(c.turn.arguments, dict)
               and ids & set(map(str, c.turn.arguments.values())) for c in r.calls)


def allowed(r: Reading, name: str, args: dict, facts, refused) -> Allowed | None:
    """The prompt's answer to a refusal of an expected change: the refusal named a value of the
    record the change acts on, and a sentence of the system prompt allows, on a record with that
    value, a change of a field the expected call changes there (rule_talk.allowed_on). The tool's
    own thing is no such field: "without changing the flights" names flights too."""
    if went_back_on(r, name, args, refused.turn):
        return None  # the change was made after all: the refusal kept nothing from being made
    low = refused.text.lower()
    changed = [f for f in facts if f.turn is not None and f.key in args and args[f.key] != f.value
               and f.key_words - _head(name)]
    for f in facts:
        if f.turn is None or f.moment or not f.phrase or f.phrase not in low or not _on_its_own(low, f.phrase):
            continue  # a value the call itself sends, or one the refusal does not name as a term
        for c in changed:
            said = rule_talk.allowed_on(r, f.phrase, c.key_words - _head(name))
            if said is not None:
                return Allowed(c.key, f.key, f.value, args[c.key], said.text, said.turn)
    return None


def _refused_text(refused, name: str, allows: bool, ruled_out: str = "", answer: Allowed | None = None) -> str:
    said = f"The agent told the user at turn {refused.turn} that it could not: \"{refused.text}\""
    if answer:  # the run's own policy allows on that value what the agent refused
        return (f"{said}; yet the system prompt (turn {answer.rule_turn}) allows {answer.what()} (\"{answer.rule}\"), "
                f"and the task expected {name} with `{answer.field}` {json.dumps(answer.sends, ensure_ascii=False)} "
                "there: the refusal, not the policy, kept that change from being made.")
    if ruled_out == "closed":  # the record's fields close the rule, and the task expected the change all the same
        return (f"{said}; the refusal keeps to the rule as the record's fields read, yet the task expected {name}: "
                "here the task's expected call and the rule as written disagree.")
    if ruled_out:  # the conditions left open are what the refusal passed over
        return (f"{said}; the task expected {name}, which the rule as the record's fields read allows only "
                f"{ruled_out}: unless that held, the task's expected call and the rule as written disagree.")
    return (f"The agent told the user at turn {refused.turn} that it could not: \"{refused.text}\"; the task expected "
            f"{name}{', which the rule quoted allows' if allows else ''}.")
