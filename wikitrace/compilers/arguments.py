"""Where each value a call sent came from: the last earlier turn that showed it (a user message,
an observation, an earlier call that went through), or, when none did, an observation that gave
the same field other values. Looked up once per call and kept on the ``Reading``.

Nothing here knows a benchmark: argument paths, field names and the run's own turns are the only
vocabulary."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .. import lazy_re
from ..runs.model import Turn
from .json_fields import fields_at_depth
from .reading import _COMMAND_KEYS, Reading, _occurs, leaves, runs_a_command, t_is_user
from .renderings import held_before, is_default
from .told_numbers import _NUMBER_WORDS, _last_key, _told_number


def _as_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


FREE_FORM = "argument"  # the path of a call's only argument when it is a plain string


def _seen(value, key: str, turn: Turn, low: str, names: frozenset[str] = frozenset()) -> bool:
    """Did this observation or user message (``low``: its text in lower case) show the value?
    A number counts when the observation gives it under the same field, or inside a record
    that also names something the call names (``names``: its string values, lower case), as a
    flight's price beside the flight number the call books."""
    text = _as_text(value)
    if key != FREE_FORM and (isinstance(value, (int, float)) or text.isdecimal()):
        if turn.type == "function_call":
            if (turn.result or "").strip() in (text, text + ".0"):
                return True
            if text in _field_texts(turn.result or "").get(key, ()):
                return True
            return bool(names) and any(text in numbers and names & named
                                       for numbers, named in _records(turn.result or ""))
        return _told_number(text, key, low)
    return _occurs(text, low) or ("_" in text and any(_occurs(text.replace("_", sep), low) for sep in " -"))


_NOT_JSON = object()


@lru_cache(maxsize=512)
def _parsed(text: str):
    """An observation's JSON, parsed once for every check that reads it (or _NOT_JSON)."""
    if not text.lstrip().startswith(("{", "[")):
        return _NOT_JSON
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return _NOT_JSON


@lru_cache(maxsize=512)
def _json_field_list(text: str) -> tuple[tuple[str, Any], ...]:
    data = _parsed(text)
    if data is _NOT_JSON:
        return ()
    places = fields_at_depth(data)  # each scalar's field carried along one walk, no path string split per scalar
    if places is not None:
        return tuple((k, v) for k, _d, v, _h in places)
    return tuple((_last_key(path), v) for path, v in leaves(data))


@lru_cache(maxsize=512)
def _records(text: str) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """For each object of a JSON observation that has names of its own (string fields): the
    numbers anywhere inside it (nested objects without names of their own, such as a price
    table, belong to it) and its own names, lower case."""
    data = _parsed(text)
    if data is _NOT_JSON:
        return ()
    out: list[tuple[frozenset[str], frozenset[str]]] = []

    def numbers_in(node: Any) -> set[str]:
        """The numbers of ``node`` and of its nested objects that have no names of their own."""
        found: set[str] = set()
        for v in (node.values() if isinstance(node, dict) else node):
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                found.add(_as_text(v))
            elif isinstance(v, dict) and not any(isinstance(x, str) for x in v.values()):
                found |= numbers_in(v)
        return found

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            named = frozenset(v.lower() for v in node.values() if isinstance(v, str) and len(v) > 2)
            if named:
                out.append((frozenset(numbers_in(node)), named))
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            return
        for child in children:
            if isinstance(child, (dict, list)):
                walk(child)

    walk(data)
    return tuple(out)


def _json_fields(text: str) -> tuple[tuple[str, Any], ...]:
    """(last key, scalar) for every scalar of a JSON observation; nothing for other text."""
    return _json_field_list(text)


@lru_cache(maxsize=512)
def _field_texts(text: str) -> dict[str, frozenset[str]]:
    """Each field of a JSON observation -> the texts of the scalars it holds anywhere: looked up
    per argument and per earlier answer, where the answer's fields were scanned each time."""
    found: dict[str, set[str]] = {}
    for k, v in _json_field_list(text):
        found.setdefault(k, set()).add(_as_text(v))
    return {k: frozenset(v) for k, v in found.items()}


def _same_field(t: Turn, path: str, args: list, names: frozenset[str]) -> list:
    """The values an observation gives the field an argument sets, on the same thing: a field of
    the one object there that is the own record of a name the call sent (the certificate it
    pays with, the reservation it changes). An object is a name's own record when it holds it
    as ``id``, is filed under it, or is the whole answer of a call that was sent that name
    under the same field (the look-up of that record). A field of the same name elsewhere (a
    payment's ``amount`` in a reservation's history; the dob of another passenger; the
    ``flight_type`` of a reservation that merely holds the user's id) is another thing's."""
    objects, count = _shapes(t.result or "")
    key = _last_key(path)
    top = objects[0][0] if objects and objects[0][2] else {}
    looked_up = {str(v).lower() for p, v in leaves(t.arguments) if isinstance(v, str) and top.get(_last_key(p)) == v}
    named = [(fields, {v.lower() for v in ids if count[v] == 1} | (looked_up if is_top else set()))
             for fields, ids, is_top in objects if key in fields]
    # the names beside the argument in its own object (the certificate id beside an amount) come
    # first; only when none names an object here does any name the call sent
    parent = path[:len(path) - len(key)].rstrip(".")
    near = {str(v).lower() for p, v in args if isinstance(v, str) and p[:len(p) - len(_last_key(p))].rstrip(".") == parent}
    for pick in (near, names):
        found = [fields[key] for fields, ids in named if ids & pick]
        if found:
            return found
    return []


@lru_cache(maxsize=256)
def _shapes(text: str) -> tuple[list, dict]:
    """A JSON observation's objects, in order: each one's own scalar fields, the names that are
    its own (its ``id``, the key it is filed under) and whether it is the whole answer; and how
    many objects each such name names."""
    data = _parsed(text)
    objects: list[tuple[dict, set, bool]] = []
    count: dict[str, int] = {}
    if data is _NOT_JSON:
        return objects, count
    stack = [(data, None)]
    while stack:
        node, filed_under = stack.pop()
        if isinstance(node, dict):
            fields = {k: v for k, v in node.items() if not isinstance(v, (dict, list))}
            ids = {v for v in (fields.get("id"), filed_under) if isinstance(v, str)}
            objects.append((fields, ids, node is data))
            for v in ids:
                count[v] = count.get(v, 0) + 1
            children = [(v, k) for k, v in node.items() if isinstance(v, (dict, list))]
        else:
            children = [(v, None) for v in node if isinstance(v, (dict, list))]
        stack.extend(reversed(children))
    return objects, count


@dataclass
class ArgCheck:
    """One argument of a call set against what the run had seen or been told before it."""

    path: str
    value: Any
    seen_at: int | None  # a turn whose observation or user message holds the value
    seen_in: str | None  # "observation" | "user message" | "earlier call" (its arguments)
    other: list | None = None  # the values an earlier observation gave the same field, when the call's was never seen
    other_at: int | None = None
    held_at: int | None = None  # unseen: an earlier turn whose text holds the value in some rendering

    @property
    def unsourced(self) -> bool:
        """No earlier turn holds the value in any rendering and it is no default (0, "", false):
        the only case in which a page may say no earlier turn held it."""
        return self.seen_at is None and self.held_at is None and not is_default(self.value)


def check_arguments(reading: Reading, call: Turn) -> list[ArgCheck]:
    """For every scalar argument: the last earlier turn that showed the value, or, if none
    did, an earlier observation that gave the same field another value (cached per call)."""
    hit = reading.checks.get(call.turn)
    if hit is None:
        hit = reading.checks[call.turn] = _check_arguments(reading, call)
    return hit


def is_label(answer: str) -> bool:
    """A verdict from a fixed set of labels (``SUPPORTS``, ``NOT ENOUGH INFO``): upper case, a few words."""
    return bool(re.search(r"[A-Z]{2}", answer)) and answer == answer.upper() and len(answer.split()) <= 4


def is_verdict(r: Reading, answer: str) -> bool:
    """A label of the task's closed set of answers: shaped like one (``is_label``) and one of
    the answer set its importer recorded (``task.metadata["answer_labels"]``, for a log that
    prints no instructions) or of the labels the run's instructions (system prompt or task
    text) offer as alternatives (``offered_labels``: "SUPPORTS, REFUTES or NOT ENOUGH INFO").
    An upper-case name the question merely mentions (a station's call sign ``KXII``, a company
    ``VIVA``) is an answer, not a verdict. A verdict is chosen, not looked up: no observation
    is expected to hold it."""
    answer = answer.strip()
    if not is_label(answer):
        return False
    labels = (r.run.task.metadata or {}).get("answer_labels")
    if isinstance(labels, list) and answer in {str(x).strip() for x in labels}:
        return True
    rules, question = (r.system.content if r.system is not None else None) or "", r.run.task.instruction or ""
    # the instructions offer verdicts even in a question ("Which applies: SUPPORTS or REFUTES?"); the
    # task's own question asking which of its names ("Which of VIVA or NME ...?") offers none
    return answer in offered_labels(rules) or answer in offered_labels(question, asked=True)


def yes_or_no(answer: str) -> bool:
    """The answer to a yes-or-no question: a judgement, never a look-up's words ("No Results" holds no
    answer "no")."""
    return answer.strip().rstrip(".!").casefold() in ("yes", "no")


def is_chosen(r: Reading, answer: str) -> bool:
    """A verdict (``is_verdict``) or the answer to a yes-or-no question: chosen, never returned by a
    look-up as written, so no page says that no look-up held it."""
    return is_verdict(r, answer) or yes_or_no(answer)


_ASKS_WHAT = lazy_re.compile(r"\b(?:what|which|who|whom|whose|when|where|how many|how much)\b(?:\s+[\w-]+)?", re.I)
# a question opening with one of these asks whether something holds, whatever "which" clause follows
_ASKS_WHETHER = lazy_re.compile(r"\s*(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should)\b", re.I)


def asks_a_thing(question: str) -> re.Match | None:
    """The words by which a question asks for a thing named (what, which, who, when, where, how
    many), not whether something holds; None for a yes-or-no question."""
    if _ASKS_WHETHER.match(question or ""):
        return None
    return _ASKS_WHAT.search(question or "")


def wrong_kind(r: Reading, answer: str) -> re.Match | None:
    """A yes or no given to a question that asks for a thing named: the words that ask for it."""
    given = " ".join(answer.split()).rstrip(".!").casefold()
    return asks_a_thing(r.run.task.instruction or "") if given in ("yes", "no") else None


# An upper-case label of up to four words, alone (not the head of a capitalised word).
_LABEL = r"(?<![\w'-])[A-Z][A-Z0-9'-]*(?: [A-Z][A-Z0-9'-]*){0,3}(?![\w'-])"
# Two or more labels offered as alternatives: "A, B or C", "A or B", "A/B", "one of A, B".
_OFFERED = lazy_re.compile(rf"{_LABEL}(?:(?:\s*,\s*(?:or\s+)?|\s+or\s+|\s*/\s*){_LABEL})+")

_LIST_GOES_ON = lazy_re.compile(r"\s*(?:,|and\b|or\b)\s*\w")
_LIST_WENT_ON = lazy_re.compile(r"\w\s*,\s*\Z")


# a question that asks which of the things it names: "Which of VIVA or NME ...?", "Who was born
# first, ABBA or KISS?"
_PICK = lazy_re.compile(r"\b(?:which|who|whom|whose)\b", re.I)
_SENTENCE_END = lazy_re.compile(r"[.!?\n]")


def _options_asked_among(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` stands in a question asking which of its items: those are
    the things the question is about, each a name to look up, not a set of verdicts."""
    head = max(text.rfind(mark, 0, start) for mark in (". ", "! ", "? ", "\n")) + 1
    tail = _SENTENCE_END.search(text, end)
    return tail is not None and tail.group() == "?" and bool(_PICK.search(text, head, tail.start()))


_JOINED = lazy_re.compile(r"[\"'”’]?\s*(?:,\s*)?(?:\band\b|\bor\b)", re.I)
_OR_AFTER = lazy_re.compile(r"[\"'”’]?\s*(?:,\s*)?\bor\b", re.I)


def _asked(text: str, end: int) -> bool:
    """Whether the sentence ``text`` holds at ``end`` is a question (ends with "?")."""
    tail = _SENTENCE_END.search(text, end)
    return tail is not None and tail.group() == "?"


def asked_option(question: str, answer: str) -> bool:
    """Whether ``answer`` is one of the things a question asks which of ("Which of Jonny Craig
    and Pete Doherty ...?", "Who was born first, ABBA or KISS?", "Is Velvetpark or Shape written
    more for ...?"): the question holds it, joined to another item by "and", "or" or a comma, in a
    sentence asking which or who; or joined by "or" in any question, which offers the choice itself."""
    flat, want = " ".join(question.split()), " ".join(answer.split()).strip(" .").casefold()
    if not want:
        return False
    low = flat.casefold()
    start = low.find(want)
    while start >= 0:
        end = start + len(want)
        whole = (start == 0 or not low[start - 1].isalnum()) and (end == len(low) or not low[end].isalnum())
        before, after = flat[max(0, start - 7):start], flat[end:end + 7]
        joined = (_JOINED.match(after) is not None
                  or re.search(r"(?:\band|\bor|,)\s*[\"'“‘]?\Z", before, re.I) is not None)
        either = (_OR_AFTER.match(after) is not None or re.search(r"\bor\s*[\"'“‘]?\Z", before, re.I) is not None)
        if whole and joined and (_options_asked_among(flat, start, end) or either and _asked(flat, end)):
            return True
        start = low.find(want, start + 1)
    return False


@lru_cache(maxsize=256)
def offered_labels(text: str, asked: bool = False) -> frozenset[str]:
    """The labels ``text`` offers as a set of alternatives to answer with: every label of a list
    of two or more joined by commas, "or" or slashes, when the list holds nothing else; in the
    task's question (``asked``), not the options of a question asking which of them."""
    found: set[str] = set()
    for m in _OFFERED.finditer(text):
        if _LIST_GOES_ON.match(text, m.end()) or _LIST_WENT_ON.search(text[max(0, m.start() - 16):m.start()]):
            continue  # labels within a longer list of other words ("the USA, UK and France")
        if asked and _options_asked_among(text, m.start(), m.end()):
            continue
        items = [x.strip() for x in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+|\s*/\s*", m.group(0))]
        labels = [x for x in items if is_label(x)]
        if len(labels) >= 2:
            found.update(labels)
    return frozenset(found)


_CODE = lazy_re.compile(r"[(){};=|&<>$`\[\]]")


def _value_like(key: str, text: str) -> bool:
    """A value the run could have looked up or been told (an id, a name, a date, a number),
    not text the agent wrote itself: a command, code, an edit, a summary or a message."""
    if key in _COMMAND_KEYS or "\n" in text or len(text.split()) > 8:
        return False
    return not (len(text.split()) > 2 and _CODE.search(text))


def _last_showing(reading: Reading, before: list[Turn], value, key: str, names: frozenset[str],
                  turn: int) -> Turn | None:
    """The last turn of ``before`` (the facts before ``turn``) that showed the value (``_seen``).
    A value read as text can only be shown by a turn that holds one of its spellings, so only
    those are checked: found in the run's facts joined once, not by a test of every fact."""
    text = _as_text(value)
    if key != FREE_FORM and (isinstance(value, (int, float)) or text.isdecimal()):  # a number: field by field
        return next((t for t in reversed(before) if _seen(value, key, t, reading.lower(t), names)), None)
    spellings = [text.lower()] + ([text.replace("_", sep).lower() for sep in " -"] if "_" in text else [])
    found = [reading.facts_holding(s) for s in spellings]
    if all(places is not None for places in found):  # only the facts holding a spelling, latest first
        facts = reading.facts
        for k in sorted({k for places in found for k in places}, reverse=True):
            t = facts[k]
            if t.turn < turn and _seen(value, key, t, reading.lower(t), names):
                return t
        return None
    for t in reversed(before):
        low = reading.lower(t)
        if any(s in low for s in spellings) and _seen(value, key, t, low, names):
            return t
    return None


def _check_arguments(reading: Reading, call: Turn) -> list[ArgCheck]:
    if runs_a_command(call):
        return []
    before = [t for t in reading.facts if t.turn < call.turn]
    out = []
    args = call.arguments if isinstance(call.arguments, (dict, list)) else {}
    if isinstance(call.arguments, str) and call.arguments.strip():
        if is_verdict(reading, call.arguments):
            return []  # a label of the task's answer set is chosen, not a value some turn showed
        args = {FREE_FORM: call.arguments.strip()}  # one free-form argument (an answer, a query)
    arg_leaves = leaves(args)
    names = frozenset(v.lower() for _p, v in arg_leaves if isinstance(v, str) and len(v) > 2)
    for path, value in arg_leaves:
        if value is None or isinstance(value, bool) or not _value_like(_last_key(path), str(value)):
            continue
        text = _as_text(value)
        maybe = text.lower() in _NUMBER_WORDS or reading.anywhere_before(text, call.turn) or \
            ("_" in text and any(reading.anywhere_before(text.replace("_", sep), call.turn) for sep in " -"))
        hit = _last_showing(reading, before, value, _last_key(path), names, call.turn) if maybe else None
        if hit is None and text.lower() in ("yes", "no"):  # a yes/no the user gave in words about the field
            topic = [w for w in re.split(r"[\W_]+", _last_key(path).lower()) if len(w) > 3]
            hit = next((t for t in reversed(before) if t_is_user(t) and topic
                        and all(_occurs(w, reading.lower(t)) for w in topic)), None)
        check = ArgCheck(path, value, hit.turn if hit else None,
                         None if hit is None else ("user message" if t_is_user(hit) else "observation"))
        if hit is None:  # a value the run already used in a call that went through (a converted date, say)
            key = _last_key(path)
            used = next((c for c in reversed(reading.calls) if c.n < call.turn and not c.error
                         and any(_last_key(p) == key and v == value for p, v in leaves(c.turn.arguments))), None)
            if used is not None:
                check.seen_at, check.seen_in = used.n, "earlier call"
        if check.seen_at is None and not is_default(value):
            check.held_at = held_before(reading, value, call.turn)
        if check.seen_at is None:
            key = _last_key(path)
            for t in reversed(before):
                if t_is_user(t) or key not in _field_texts(t.result or ""):
                    continue
                other = list(dict.fromkeys(v for v in _same_field(t, path, arg_leaves, names)
                                           if v not in (None, "") and _as_text(v) != text))
                if other:  # every value the observation gave that field, not one picked at random
                    check.other, check.other_at = other, t.turn
                    break
        out.append(check)
    return out
