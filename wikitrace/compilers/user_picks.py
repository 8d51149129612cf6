"""Whether the user's words picked one record among several a change could have meant.

A value the agent sent is no choice of its own when the user singled out its record: wrote
values only that record holds (its route, its date), or wrote names the agent then tied to the
value in one message ("your trip from Lisbon to Oslo is X1Y2Z3") that no look-up could have
told it, in one sentence. Values are matched in every rendering ``renderings.py`` knows, and a value two of the
records share picks neither, so "gift card" picks no one gift card among two.

Nothing here knows a benchmark: the records are found by their own ids in the run's answers.
"""

from __future__ import annotations

import re

from .arguments import _NOT_JSON, _parsed
from .reading import Reading, is_read_only, leaves, t_is_user
from .renderings import rendering_pattern


def _own_records(node, value: str) -> list:
    """The objects of a parsed answer whose own id is ``value``: held as ``id`` or filed under it."""
    found, stack = [], [node]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("id") == value:
                found.append(node)
            for k, v in node.items():
                if k == value and isinstance(v, dict):
                    found.append(v)
                elif isinstance(v, (dict, list)):
                    stack.append(v)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return found


def record_values(r: Reading, value: str, before: int) -> set[str]:
    """The text values (three characters or more, not bare numbers) of the record ``value`` names,
    as the answers before turn ``before`` showed it: the whole answer of a look-up sent that value,
    or an object holding it as its own id. Lower case, the value itself left out."""
    out: set[str] = set()
    for t in r.facts:
        if t.turn >= before or t.type != "function_call":
            continue
        data = _parsed(t.result or "")
        if data is _NOT_JSON:
            continue
        # a look-up sent the value answers with its record; a change sent it answers with the record it changed
        sent = is_read_only(t) and isinstance(t.arguments, (dict, list)) and any(v == value for _p, v in leaves(t.arguments))
        for record in ([data] if sent else []) + _own_records(data, value):
            out.update(v.lower() for _p, v in leaves(record)
                       if isinstance(v, str) and len(v) >= 3 and not v.strip().isdigit())
    out.discard(value.lower())
    return out


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][\w'-]*")


def _names_written(text: str) -> set[str]:
    """Capitalised words the user wrote inside a sentence (not its first word, not "I"): the names
    of places, people and things, lower case."""
    out: set[str] = set()
    for sentence in _SENTENCE.split(text or ""):
        words = _WORD.findall(sentence)
        out.update(w.lower() for w in words[1:] if len(w) >= 3 and w.isalpha() and w[0].isupper() and w[1:].islower())
    return out


def singled_out(r: Reading, before: int, chosen: str, candidates: list[str]) -> bool:
    """Whether the user's words before turn ``before`` pick ``chosen``'s record among the
    ``candidates``' records (``chosen`` among them). Either the user wrote more of the values only
    its record holds than of any other record's, or an agent message before the call named
    ``chosen`` in one sentence with a name the user wrote that no answer before it held, and named
    no other candidate beside that name (the agent matched the user's description to the record,
    and said so)."""
    said = [t for t in r.facts if t.turn < before and t_is_user(t)]
    if not said:
        return False
    user_text = "\n".join(r.lower(t) for t in said)
    records = {v: record_values(r, v, before) for v in dict.fromkeys(candidates)}
    shared = {x for v, xs in records.items() for x in xs if any(x in ys for w, ys in records.items() if w != v)}

    def score(v: str) -> int:
        return sum(1 for x in records.get(v, ()) if x not in shared and rendering_pattern(x).search(user_text))

    mine = score(chosen)
    if mine and all(score(v) < mine for v in records if v != chosen):
        return True
    answers = " ".join(r.lower(t) for t in r.facts if t.turn < before and t.type == "function_call")
    names = {n for t in said for n in _names_written(t.content or "")
             if not re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", answers)}
    if not names:
        return False
    others = [v.lower() for v in records if v != chosen]
    for t in r.run.turns:
        if t.turn >= before or t.type != "message" or t.role != "assistant" or not isinstance(t.content, str):
            continue
        if chosen.lower() not in t.content.lower():
            continue
        sentences = [s for s in _SENTENCE.split(t.content.lower()) if s.strip()]
        named = lambda n, s: re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", s) is not None  # noqa: E731
        for n in names:
            # the name beside the value in one sentence, and never beside another candidate in the message
            if any(chosen.lower() in s and named(n, s) and not any(o in s for o in others) for s in sentences) and \
                    not any(named(n, s) and any(o in s for o in others) for s in sentences):
                return True
    return False
