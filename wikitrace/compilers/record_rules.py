"""What a change did to a record against a rule of the system prompt on the record's own parts,
checked by comparing the call's values (and the record its answer shows) with the record a look-up
gave before it. Two shapes of rule sentence are read, both plain English, by structure:

- a change allowed "without changing the A, B and C": each of A, B, C that names a field of the
  record (the field's own name words, all of them) is compared: the call sends the field with
  another value, or the record's value was among its items' same-named fields before the call and
  is in none of them after (the reservation's ``destination`` "PHL", its flights ending at DFW and
  EWR). Only a sentence of the prompt's block on the call's own thing (its label, or its heading
  naming the call's action) is read: a rule on changing the cabin says nothing of a flight change.
- "X must be the same across all the Y": the call sets X to a new value for a list of Y that is
  part of the record's Y (some left out, none added): X then changed for some of them, not all;
  or the call's Y items carry X with more than one value. This states what a record must look
  like, so it is read wherever it stands.

- a thing the record is "cannot be modified" ("Basic economy flights cannot be modified", in the
  block labelled "Change flights"): the sentence before its negation names a value the record
  holds as a term of its own (``cabin`` "basic_economy"), and the call changed the thing the
  block's label names (its ``flights`` are not the record's).

Items of two lists are the same item when every string field they share agrees (a flight sent as
number and date is the one the record lists with its price and airports). Nothing else is
concluded; a field no call value or answer shows is not guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import lazy_re
from .arguments import _parsed
from .insight_words import join
from .arguments import _last_key
from .reading import Call, Reading, leaves
from .rule_blocks import _Block, _blocks, _loosely_names
from .rules import _stem, _words

_WITHOUT = lazy_re.compile(r"\bwithout\s+(?:chang|alter|modif|touch)\w*\s+(?:the\s+|its\s+|their\s+|any\s+)?([^.;:()]+)",
                           re.I)
_SAME = lazy_re.compile(r"\b((?:[a-z]+\s+){0,2}[a-z]+)\s+(?:must|should|has to|have to)\s+be\s+the\s+same\s+"
                        r"(?:across|for|on|in|between)\s+(?:all|every|each)\s+(?:of\s+)?(?:the\s+)?([a-z]+)", re.I)
_DENIED = lazy_re.compile(r"\b(?:cannot|can't|can not|may not|must not|(?:is|are) not allowed to)\s+(?:be\s+)?"
                          r"(?:modif|chang|alter|mov|edit|updat)\w*", re.I)
_LIST = lazy_re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|nor)\s+", re.I)
_NAME_PARTS = lazy_re.compile(r"[\W_]+|(?<=[a-z])(?=[A-Z])")


@dataclass(frozen=True)
class Breach:
    text: str  # what the call did against the rule, with the fields and turns
    quote: str  # the rule sentence as the prompt has it
    turns: tuple[int, ...]


def _name_words(name: str) -> frozenset[str]:
    return frozenset(_stem(w) for w in _NAME_PARTS.split(name or "") if len(w) >= 3)


def _field(phrase: str, record: dict) -> str | None:
    """The record's field the phrase names: every word of the field's name is in the phrase, and
    they are at least half of its words ("origin" names ``origin``, "cabin class" ``cabin``; "trip
    type" does not name ``flight_type``)."""
    said = frozenset(w for w in _words(phrase) if len(w) >= 3) - {"the", "its", "all", "any", "their"}
    found = [k for k in record if (nw := _name_words(k)) and nw <= said and 2 * len(nw) >= len(said)]
    return found[0] if len(found) == 1 else None


def _same_item(a: dict, b: dict) -> bool:
    shared = [k for k in a if k in b and isinstance(a[k], str) and isinstance(b[k], str)]
    return bool(shared) and all(a[k] == b[k] for k in shared)


def _label(item: dict, keys) -> str:
    """An item by the fields the call named its items by (a flight's number and date)."""
    return " ".join(item[k] for k in keys if isinstance(item.get(k), str))[:40] or "?"


def _items(value) -> list[dict] | None:
    return value if isinstance(value, list) and value and all(isinstance(x, dict) for x in value) else None


def _shown(value) -> str:
    return f"\"{value}\"" if isinstance(value, str) else str(value)


def _objects(r: Reading) -> list[dict]:
    """Every object of every answer of the run, once per run: where an item sent by number alone
    (a flight as number and date) is shown with its other fields."""
    memo = r.memo.get("record_rules.objects")
    if memo is None:
        memo = r.memo["record_rules.objects"] = []
        stack = [_parsed(c.turn.result or "") for c in r.calls if not c.error]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                memo.append(node)
                stack.extend(v for v in node.values() if isinstance(v, (dict, list)))
            elif isinstance(node, list):
                stack.extend(v for v in node if isinstance(v, (dict, list)))
    return memo


def _resolved(r: Reading, items: list[dict], key: str) -> list[dict] | None:
    """The items with ``key`` as some answer of the run showed them (None when one is not shown)."""
    out = []
    for x in items:
        if key in x:
            out.append(x)
            continue
        found = next((o for o in _objects(r) if key in o and _same_item(x, o)), None)
        if found is None:
            return None
        out.append(found)
    return out


def _unchanged(r: Reading, args: dict, after: dict, n: int | None, record: dict, where: str,
               phrase: str) -> str | None:
    """What the change made of the parts the phrase lists: what it changed, "" when each part it
    touches is seen kept, None when what it made of one is not shown."""
    verdict = ""
    for part in _LIST.split(phrase.strip()):
        key = _field(part, record) if part else None
        if key is None or isinstance(record[key], (dict, list)) or record[key] in (None, ""):
            continue
        was = record[key]
        if key in args and not isinstance(args[key], (dict, list)):
            if args[key] != was:
                return f"the call sent `{key}` {_shown(args[key])} where {where} gave {_shown(was)}"
            continue
        for list_key, before in record.items():
            items = _items(before)
            if items is None or not any(key in x for x in items) or was not in [x.get(key) for x in items]:
                continue
            sent = _items(args.get(list_key))
            if sent is None:
                continue  # the change leaves this list as it was
            shown, source = (sent, "the call sent") if all(key in x for x in sent) else (None, "")
            if shown is None and _items(after.get(list_key)):
                shown, source = _items(after[list_key]), f"its answer at turn {n} lists"
            if shown is None or not all(key in x for x in shown):
                shown, source = _resolved(r, sent, key), "the run's answers show"
            if shown is None:
                return None
            if was not in [x[key] for x in shown]:
                values = list(dict.fromkeys(_shown(x[key]) for x in shown))
                return (f"{where} gave `{key}` {_shown(was)}, and after the call no item of `{list_key}` has "
                        f"`{key}` {_shown(was)} ({source} {join(values, 4)}): the call changed `{key}`")
    return verdict


def _same_across(args: dict, after: dict, n: int | None, record: dict, where: str, phrase: str, noun: str) -> str:
    """What the call did against "<phrase> must be the same across all the <noun>" (and, where its
    answer shows the record after it without the items left out, that they were dropped)."""
    key = _field(phrase, record)
    list_key = next((k for k in args if _items(args[k]) and _name_words(k) and _name_words(k) <= _words(noun)), None)
    if list_key is None:
        return ""
    sent = _items(args[list_key])
    if key is not None and all(key in x for x in sent):
        values = list(dict.fromkeys(_shown(x[key]) for x in sent))
        if len(values) > 1:
            return f"the call sent `{list_key}` with `{key}` {join(values, 4)}"
    if key is None or key not in args or args[key] == record[key] or isinstance(args[key], (dict, list)):
        return ""
    had = _items(record.get(list_key))
    if not had or not all(any(_same_item(x, y) for y in had) for x in sent):
        return ""  # new items: the list was replaced, and the new value holds for all of it
    left = [y for y in had if not any(_same_item(x, y) for x in sent)]
    if not left:
        return ""
    keys = list(dict.fromkeys(k for x in sent for k, v in x.items() if isinstance(v, str)))
    text = (f"the call sent `{key}` {_shown(args[key])} ({where} gave {_shown(record[key])}) with "
            f"{len(sent)} of the record's {len(had)} `{list_key}` ({join([_label(x, keys) for x in sent], 3)}), leaving "
            f"out {join([_label(y, keys) for y in left], 3)}")
    now = _items(after.get(list_key))
    if now and not any(_same_item(x, y) for x in now for y in left):
        text += (f"; its answer at turn {n} has no {join([_label(y, keys) for y in left], 3)} in `{list_key}`: the call "
                 f"dropped {'it' if len(left) == 1 else 'them'}")
    return text


def _changed(args: dict, record: dict, label: frozenset[str]) -> str:
    """What the call changed of the thing a block's label names: an argument named by the label
    (loosely: "flights" for ``flights``) whose value is not the record's ("" when none)."""
    for key, sent in args.items():
        if key not in record or not _loosely_names(label, _name_words(key)):
            continue
        had = record[key]
        items, had_items = _items(sent), _items(had)
        if items is not None and had_items is not None:
            same = len(items) == len(had_items) and all(any(_same_item(x, y) for y in had_items) for x in items)
            if not same:
                keys = list(dict.fromkeys(k for x in items for k, v in x.items() if isinstance(v, str)))
                return (f"the call changed `{key}` (it sent {join([_label(x, keys) for x in items], 3)}, where the "
                        f"record had {join([_label(y, keys) for y in had_items], 3)})")
        elif not isinstance(sent, (dict, list)) and not isinstance(had, (dict, list)) and sent != had:
            return f"the call changed `{key}` (it sent {_shown(sent)}, where the record had {_shown(had)})"
    return ""


def _on_the_call(block: _Block, head: frozenset[str], verb: frozenset[str]) -> bool:
    return _loosely_names(block.label_words, head) if block.label else bool(block.heading & verb)


def pairs(args) -> frozenset[tuple[str, str]]:
    """(argument name, value) of every string a call sends (three characters or more)."""
    return frozenset((_last_key(p), v) for p, v in leaves(args) if isinstance(v, str) and len(v) >= 3)


def sent_by(r: Reading, c: Call) -> frozenset[tuple[str, str]]:
    """A call's (name, value) pairs, once per run: every finding of the run asks about the same calls."""
    memo = r.memo.setdefault("rule_reasons.sent", {})
    found = memo.get(c.n)
    if found is None:
        found = memo[c.n] = pairs(c.turn.arguments)
    return found


def looked_up(r: Reading, c: Call) -> tuple[Call, dict] | None:
    """The record the change acted on as a look-up last showed it: the answer of the latest look-up
    before it that was sent one of the change's own (name, value) pairs and holds that pair itself,
    with no change sent that pair in between (what was shown before it may be old)."""
    sent = sent_by(r, c)
    for e in reversed(r.calls):
        if e.n >= c.n or e.error:
            continue
        shared = sent & sent_by(r, e)
        if not shared:
            continue
        if e.writes:
            return None
        answer = _parsed(e.turn.result or "")
        if isinstance(answer, dict) and any(answer.get(k) == v for k, v in shared):
            return e, answer
    return None


@lru_cache(maxsize=16)  # runs of one benchmark share one prompt: its sentences are matched once, not per call
def _shaped(text: str) -> tuple:
    """(block, sentence, same-across match, without-changing match, cannot-be-modified match) of
    the prompt's sentences that have one of the shapes read here."""
    out = []
    for block in _blocks(text):
        for s in block.sentences:
            found = (_SAME.search(s.text), _WITHOUT.search(s.text), _DENIED.search(s.text))
            if any(found):
                out.append((block, s, *found))
    return tuple(out)


def _against(r: Reading, sent: dict, shown: dict, n: int | None, record: dict, where: str, block: _Block,
             same, without, named) -> str:
    """What a call sending ``sent`` (its answer ``shown``) did against one sentence's shapes:
    "" when it is seen to keep them, None when one cannot be told."""
    found = _same_across(sent, shown, n, record, where, same.group(1), same.group(2)) if same else ""
    if not found and without:
        found = _unchanged(r, sent, shown, n, record, where, without.group(1))
    if not found and named is not None:
        changed = _changed(sent, record, block.label_words)
        found = f"{where} gave `{named[0]}` {named[1]}, and {changed}" if changed else ""
    return found


def breaches(r: Reading, c: Call, record: dict, where: str, head: frozenset[str], verb: frozenset[str],
             expected: dict | None = None, keyed=None) -> list[Breach]:
    """The rule sentences this change went against, each with what it did (empty when none is
    seen). With ``expected`` (the arguments of the call the task expected instead), a rule that
    call is not seen to keep is left out: it is not where this change went wrong. ``keyed`` gives
    the record's field a text names by its value ((field, value as shown) or None)."""
    if r.system is None or not isinstance(record, dict):
        return []
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    answer = _parsed(c.turn.result or "")
    after = answer if isinstance(answer, dict) else {}
    out: list[Breach] = []
    for block, s, same, without, denied in _shaped(r.system.content or ""):
        own = _on_the_call(block, head, verb)
        without = without if own else None
        denied = denied if own and block.label and keyed is not None else None
        named = keyed(s.text[:denied.start()]) if denied else None
        if not same and not without and named is None:
            continue
        found = _against(r, args, after, c.n, record, where, block, same, without, named)
        if found and (expected is None or _against(r, expected, {}, None, record, where, block, same, without, named) == ""):
            out.append(Breach(found, s.text, (c.n,)))
    return out
