"""The rule beside an expected change the run never made, and the agent's own refusal of it.

A change the task expected and the run left unmade is read against the rule the system prompt
gives on it, judged on the record as the run's look-ups showed it (rule_reasons.py ``_reason``).
Where the agent told the user it could not, its words are quoted; where the record's fields close
the rule's permissions (every one, or all but a condition no field checks), the refusal kept to the
rule as written, and the page says that the task's expected call and the rule disagree rather than
teach the refusal as the mistake.
"""

from __future__ import annotations

import re

from . import rule_talk
from .reading import Reading
from .rule_facts import _facts, _name_words
from .rule_reasons import Reason, _head, _reason, _subject
from .rules import action_verb


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
    text = _refused_text(refused, name, allows, _ruled(found))
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
            ruled = _reason(r, name, _subject(name), _head(name), name, facts, set(), whole_call=True, missed=True,
                            before=_after_last(r))
            if _ruled(ruled):  # the rule, read on the record, is why it refused
                return Reason(f"{ruled.text} {_refused_text(refused, name, False, _ruled(ruled))}",
                              ruled.turns + [refused.turn], ruled.quoted)
            return Reason(_refused_text(refused, name, False), [refused.turn])
    return None


def _after_last(r: Reading) -> int:
    """A turn after every turn of the run: a change never made is judged on all the run was shown."""
    return max((t.turn for t in r.run.turns), default=0) + 1


def _refused(r: Reading, name: str):
    """The agent's first sentence saying it cannot do what ``name`` does: its object, with its verb
    too when other tools share the object ("reservation" of many tools)."""
    thing = _head(name)
    others = {c.name for c in r.calls} | {e.get("name", "") for e in r.memo.get("expected.all") or []}
    shared = any(thing & _name_words(n) for n in others if n and n != name)
    return rule_talk.refusal(r, thing, action_verb(name) if shared else frozenset())


_LEFT_OPEN = re.compile(r"So of this rule only (.+) could still have allowed this ")


def _ruled(found: Reason | None) -> str:
    """"closed" when the record's fields close every permission of the quoted rule, the quoted
    conditions left open when only conditions no field checks are left, "" otherwise."""
    if found is None or not found.closed:
        return ""
    left = _LEFT_OPEN.search(found.text)
    return left.group(1) if left else "closed"


def _refused_text(refused, name: str, allows: bool, ruled_out: str = "") -> str:
    said = f"The agent told the user at turn {refused.turn} that it could not: \"{refused.text}\""
    if ruled_out == "closed":  # the record's fields close the rule, and the task expected the change all the same
        return (f"{said}; the refusal keeps to the rule as the record's fields read, yet the task expected {name}: "
                "here the task's expected call and the rule as written disagree.")
    if ruled_out:  # the conditions left open are what the refusal passed over
        return (f"{said}; the task expected {name}, which the rule as the record's fields read allows only "
                f"{ruled_out}: unless that held, the task's expected call and the rule as written disagree.")
    return (f"The agent told the user at turn {refused.turn} that it could not: \"{refused.text}\"; the task expected "
            f"{name}{', which the rule quoted allows' if allows else ''}.")
