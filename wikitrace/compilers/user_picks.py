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
from collections import Counter
from functools import lru_cache

from .arguments import _NOT_JSON, _parsed
from .reading import Reading, is_read_only, leaves, t_is_user
from .renderings import _ISO_DATE, rendering_pattern
from .text import stands_alone


@lru_cache(maxsize=256)
def _records_by_id(text: str) -> dict[str, frozenset[str]]:
    """For a JSON answer: each object's own id (held as ``id``, or the key it is filed under) ->
    the text values inside that object (three characters or more, not bare numbers), lower case.
    One walk per answer text, however many values ask about it."""
    data = _parsed(text)
    if data is _NOT_JSON:
        return {}
    out: dict[str, set[str]] = {}
    stack: list[tuple[object, str | None]] = [(data, None)]
    while stack:
        node, filed_under = stack.pop()
        if isinstance(node, dict):
            own = {v for v in (node.get("id"), filed_under) if isinstance(v, str)}
            if own:
                values = _text_values(node)
                for v in own:
                    out.setdefault(v, set()).update(values)
            stack.extend((v, k) for k, v in node.items() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, None) for v in node if isinstance(v, (dict, list)))
    return {k: frozenset(v) for k, v in out.items()}


@lru_cache(maxsize=256)
def _answer_values(text: str) -> frozenset[str]:
    data = _parsed(text)
    return frozenset() if data is _NOT_JSON else frozenset(_text_values(data))


def _text_values(node) -> set[str]:
    """A record's text values that can name it: three characters or more, and a string of digits
    only at four or more (a card's "last_four" "7238", which users cite; "12" names nothing); and a
    number of two digits or more as an amount of money is written ("$262": "the gift card with a
    $262 balance" names the card whose amount is 262, a bare 262 would not)."""
    out = set()
    for _p, v in leaves(node):
        if isinstance(v, str):
            if len(v) >= 3 and not (v.strip().isdigit() and len(v.strip()) < 4):
                out.add(v.lower())
        elif isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) >= 10:
            out.add(f"${v:g}")
    return out


def record_values(r: Reading, value: str, before: int) -> set[str]:
    """The text values (``_text_values``) of the record ``value`` names,
    as the answers before turn ``before`` showed it: the whole answer of a look-up sent that value,
    or an object holding it as its own id. Lower case, the value itself left out."""
    facts, shown = _records_shown(r)
    key = f"user_picks.cut:{before}"
    cut = r.memo.get(key)
    if cut is None:  # where the answers before the turn end: once per turn asked, not per value
        cut = r.memo[key] = next((i for i, t in enumerate(facts) if t.turn >= before), len(facts))
    out: set[str] = set()
    added: set[int] = set()  # an answer text repeated (the same look-up again) is one set: added once
    for at, values in shown.get(value, ()):
        if at >= cut:
            break
        if id(values) not in added:
            added.add(id(values))
            out.update(values)
    out.discard(value.lower())
    return out


def _records_shown(r: Reading) -> tuple[list, dict[str, list[tuple[int, frozenset[str]]]]]:
    """Every record the run's answers showed, by the value that names it: (place of the answer
    among the run's facts, the record's values) in the facts' order. Built in one pass over the
    run (its memo), so a change asks only about its own candidates, not the whole run again."""
    found = r.memo.get("user_picks.records")
    if found is not None:
        return found
    facts = list(r.facts)
    index: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for at, t in enumerate(facts):
        if t.type != "function_call" or not (t.result or "").lstrip().startswith(("{", "[")):
            continue
        for own, values in _records_by_id(t.result or "").items():
            index.setdefault(own, []).append((at, values))
        # a look-up sent a value answers with its record; a change sent it answers with the record it changed
        if is_read_only(t) and isinstance(t.arguments, (dict, list)):
            whole = _answer_values(t.result or "")
            for _p, v in leaves(t.arguments):
                if isinstance(v, str):
                    index.setdefault(v, []).append((at, whole))
    found = r.memo["user_picks.records"] = (facts, index)
    return found


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"[A-Za-z][\w'-]*")


@lru_cache(maxsize=1024)
def _names_written(text: str) -> frozenset[str]:
    """Capitalised words the user wrote inside a sentence (not its first word, not "I"): the names
    of places, people and things, lower case. Once per message, though every turn a change asks
    about reads the messages before it again."""
    out: set[str] = set()
    for sentence in _SENTENCE.split(text or ""):
        words = _WORD.findall(sentence)
        out.update(w.lower() for w in words[1:] if len(w) >= 3 and w.isalpha() and w[0].isupper() and w[1:].islower())
    return frozenset(out)


def _names_no_answer_held(r: Reading, before: int) -> set[str]:
    """The names the user wrote before turn ``before`` that no answer before it held (once per turn)."""
    key = f"user_picks.names:{before}"
    found = r.memo.get(key)
    if found is None:
        said = [t for t in r.facts if t.turn < before and t_is_user(t)]

        def held(name: str) -> bool:  # only the facts holding the name are read (a name is one word)
            return any(f.turn < before and f.type == "function_call" and stands_alone(name, r.lower(f))
                       for f in (r.facts[k] for k in r.facts_holding(name)))

        found = r.memo[key] = {n for t in said for n in _names_written(t.content or "") if not held(n)}
    return found


def _user_words(r: Reading, before: int) -> tuple[list, str, str]:
    """The user's messages before turn ``before``, their text in lower case, and that text with
    ``_`` read as a space: once per turn asked, however many values a change picked."""
    key = f"user_picks.said:{before}"
    found = r.memo.get(key)
    if found is None:
        said = [t for t in r.facts if t.turn < before and t_is_user(t)]
        user_text = "\n".join(r.lower(t) for t in said)
        found = r.memo[key] = (said, user_text, user_text.replace("_", " "))
    return found


def _written(x: str, user_text: str, user_spaced: str) -> bool:
    """Whether the user's text holds the value ``x`` in any rendering. A value of letters only is
    written with its first word whatever its rendering: a substring test passes over most values
    before the pattern is built."""
    date = _ISO_DATE.fullmatch(x)
    if date:  # every spelling of a date writes its day in digits
        if str(int(date.group(3))) not in user_text:
            return False
    elif x.replace("_", " ").split()[0] not in user_spaced:
        return False
    return rendering_pattern(x).search(user_text) is not None


def _candidate_records(r: Reading, before: int, candidates: tuple[str, ...]) -> tuple[dict[str, set[str]], set[str]]:
    """Each candidate's record values as shown before turn ``before``, and the values two of the
    records hold. Once per listing and turn: a change's arguments often ask about the same listing."""
    asked = r.memo.setdefault(f"user_picks.candidates:{before}", {})
    found = asked.get(candidates)
    if found is None:
        records = {v: record_values(r, v, before) for v in candidates}
        # a value two candidates' records hold: counted once per record, so one pass, not one per pair
        holders = Counter(x for xs in records.values() for x in xs)
        found = asked[candidates] = (records, {x for x, n in holders.items() if n > 1})
    return found


def singled_out(r: Reading, before: int, chosen: str, candidates: list[str]) -> str | None:
    """How the user's words pick ``chosen``'s record among the ``candidates``' (``singled_out_at``),
    said for a page to cite, or None."""
    found = singled_out_at(r, before, chosen, candidates)
    return found[0] if found else None


def singled_out_at(r: Reading, before: int, chosen: str, candidates: list[str]) -> tuple[str, int] | None:
    """Whether the user's words before turn ``before`` pick ``chosen``'s record among the
    ``candidates``' records (``chosen`` among them). Either the user wrote more of the values only
    its record holds than of any other record's, or an agent message before the call named
    ``chosen`` in one sentence with a name the user wrote that no answer before it held, and named
    no other candidate beside that name (the agent matched the user's description to the record,
    and said so). Returns how, with its turn, for the page to cite ("the user wrote at turn 3
    what only its record holds"), and that turn; or None."""
    said, user_text, user_spaced = _user_words(r, before)
    if not said:
        return None
    candidates = tuple(dict.fromkeys(candidates))
    # each value tested once per set of user messages (the turns asked about between two of them read the
    # same words), though scoring, citing and the change's other arguments ask
    found: dict[str, bool] = r.memo.setdefault(f"user_picks.written:{[t.turn for t in said]}", {})

    def written(x: str) -> bool:
        hit = found.get(x)
        if hit is None:
            hit = found[x] = _written(x, user_text, user_spaced)
        return hit

    # the user wrote none of the chosen record's values: no count can favour it, and the other
    # records (a long listing's) need not be gathered
    if any(written(x) for x in record_values(r, chosen, before)):
        records, shared = _candidate_records(r, before, candidates)

        def score(v: str) -> int:
            return sum(1 for x in records.get(v, ()) if x not in shared and written(x))

        mine = score(chosen)
        if mine and all(score(v) < mine for v in records if v != chosen):
            own = [x for x in records[chosen] if x not in shared and written(x)]
            first = next(t for t in said if any(rendering_pattern(x).search(r.lower(t)) for x in own))
            return f"the user wrote at turn {first.turn} what only its record holds", first.turn
    names = _names_no_answer_held(r, before)
    if not names:
        return None
    others = [v.lower() for v in candidates if v != chosen]
    mark = chosen.lower()
    for t in r.run.turns:
        if t.turn >= before or t.type != "message" or t.role != "assistant" or not isinstance(t.content, str):
            continue
        low = r.lower(t)  # a message's lower case made once, however many values ask about it
        if mark not in low:
            continue
        sentences = [s for s in _SENTENCE.split(low) if s.strip()]
        named = stands_alone
        for n in names:
            # the name beside the value in one sentence, and never beside another candidate in the message
            if any(chosen.lower() in s and named(n, s) and not any(o in s for o in others) for s in sentences) and \
                    not any(named(n, s) and any(o in s for o in others) for s in sentences):
                return f"the agent tied it at turn {t.turn} to names the user wrote", t.turn
    return None
