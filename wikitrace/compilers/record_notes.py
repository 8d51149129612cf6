"""What a compilation page says of the records a run looked up: the rule of the system prompt
on the record an id argument points at, and the record a later change took a value from. Split
from compilers/page_notes.py, which says the rest; each sentence has its check in
tests/test_page_sentences.py."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from .arguments import _NOT_JSON, _last_key, check_arguments
from .arguments import _parsed as _parsed_text
from .insight_parts import rules_once
from .page_notes import _val
from .reading import Call, Reading, leaves

def _record_holding(node, key: str, value: str, looked_up: bool = False):
    """The first JSON object (walked in order) whose own id is ``value``: it holds it as ``id``,
    or it is the whole answer of a call that was sent it under the argument's name (the look-up
    of that record). An object that merely holds it under the argument's name (a reservation's
    ``user_id``) is another record that refers to it: its fields are not the one pointed at."""
    if looked_up and isinstance(node, dict) and node.get(key) == value:
        return node
    if not key.endswith("id"):  # below the whole answer only an ``id`` can match, and only for such a key
        return None
    return _by_id(node).get(value)


_ID_INDEXES: dict[int, tuple[object, dict]] = {}  # id(answer) -> (the answer, kept alive; its index)


def _by_id(answer) -> dict:
    """Each string ``id`` of a parsed answer -> the first object (walked in order, the answer
    itself first) holding it: one walk per answer, where every argument pointing into it walked
    it again. The few latest answers are kept (a run's notes ask about the same ones)."""
    hit = _ID_INDEXES.get(id(answer))
    if hit is not None and hit[0] is answer:
        return hit[1]
    index: dict = {}
    stack = [answer]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            own = node.get("id")
            if isinstance(own, str):
                index.setdefault(own, node)
            node = list(node.values())
        if isinstance(node, list):
            stack.extend(reversed(node))
    if len(_ID_INDEXES) >= 512:  # as many as arguments._parsed keeps: fewer were walked again and again
        _ID_INDEXES.clear()
    _ID_INDEXES[id(answer)] = (answer, index)
    return index


@lru_cache(maxsize=1024)
def _lower(sentence: str) -> str:
    return sentence.lower()  # a run's few dozen rule sentences, asked for every field of every record


def _names(r: Reading, sentence: str, value: str) -> bool:
    """Whether a sentence names a value as a term of its own: "economy" in "economy flights", not
    in "basic economy flights" when the log shows ``basic_economy`` as a term of its own."""
    phrase = " ".join(value.lower().replace("_", " ").split())
    low = _lower(sentence)
    if phrase not in low:  # most pairs: no regex needed
        return False
    for m in re.finditer(r"(?:(\w+)\s+)?(?<!\w)" + re.escape(phrase) + r"(?!\w)", low):
        before = m.group(1)
        seen = r.memo.get("notes.answers")
        if seen is None and before:
            seen = r.memo["notes.answers"] = " ".join((c.turn.result or "") for c in r.calls).lower()
        if not before or not any(f"{before}{sep}{phrase.replace(' ', sep)}" in seen for sep in ("_", " ", "-")):
            return True
    return False


def record_rule_notes(r: Reading, c: Call, limit: int = 2) -> list[str]:
    """Rules of the system prompt on the record a change acted on: an id argument taken from a
    look-up's answer points at a record there, and a rule naming the call's action and every word
    of one of that record's plain values (a cabin class, a status) bears on the change though no
    argument names it. Said as what the log shows, never as a breach."""
    from .rules import _DIGIT, _rules, _words, action_verb

    if r.system is None or not c.writes:
        return []
    action = _words((c.name or "").replace("_", " ")) - {"the", "and"}
    # an "at most N" rule is counted against the arguments (rules_for): kept, it says nothing here
    verb = action_verb(c.name or "")
    rules = [rule for rule in _rules(r) if not rule.limits and verb & rule.words]
    pointers = [a for a in check_arguments(r, c.turn) if a.seen_in == "observation" and isinstance(a.value, str)]
    if not rules or not pointers:
        return []
    told = {h.sentence for h in rules_once(r, c)}
    by_n = {x.n: x for x in r.calls}
    notes: list[str] = []
    for a in pointers:
        src = by_n.get(a.seen_at)
        if src is None:
            continue
        key = _last_key(a.path)
        parsed = _parsed(r, src)  # each answer parsed once per run, however many arguments point into it
        sent = any(_last_key(p) == key and v == a.value for p, v in leaves(src.turn.arguments))
        record = _record_holding(parsed, key, a.value, sent)
        fields = [(k, v) for k, v in (record or {}).items() if isinstance(v, str) and v.strip()
                  and not _DIGIT.search(v) and len(v.split()) <= 3 and _words(v.replace("_", " ")) - action]
        if not fields:
            continue
        for rule in rules:
            if rule.sentence in told or len(notes) >= limit:
                continue
            named = next(((k, v) for k, v in fields if _names(r, rule.sentence, v)), None)
            if named is not None:
                told.add(rule.sentence)
                notes.append(f"The record `{a.path}` points at has `{named[0]}` {json.dumps(named[1])} ({src.name}'s "
                             f"answer, turn {src.n}); a rule of the system prompt (turn {r.system.turn}) on this "
                             f"action names it: \"{rule.sentence}\"")
    return notes


RECORD_WIDTH = 240


def _parsed(r: Reading, c: Call):
    """A call's answer as JSON, or None when it is no JSON object or list: the argument checks'
    parse of the same text (a bare JSON string or number holds no record either)."""
    parsed = _parsed_text(c.turn.result or "")
    return None if parsed is _NOT_JSON else parsed


def used_record(r: Reading, c: Call, taken: list[tuple[str, object]]) -> str | None:
    """For a look-up whose JSON answer supplied values a later change sent, the support naming the
    record one of them came from, shown as JSON: the part of a long answer that mattered, where
    its first characters rarely do. None for an answer that is no JSON or holds no such record."""
    parsed = _parsed(r, c)
    if parsed is None:
        return None
    for path, value in taken:
        if not isinstance(value, str) or not value.strip():
            continue
        key = _last_key(path)
        record = _record_holding(parsed, key, value)
        if record is not None and record is not parsed:
            shown = json.dumps(record, ensure_ascii=False)
            if len(shown) > RECORD_WIDTH:
                shown = shown[: RECORD_WIDTH - 1].rstrip() + "…"
            return f"It returned the record a later call took `{key}` {_val(value)} from: {shown}"
    return None
