"""The fields of a look-up's JSON answer that the agent's own later words name.

A page that shows a long record clipped after its first fields hides the one field the run
turned on (a booking's cabin, its insurance). What the agent wrote after reading it says
which field that was: a field counts when a later sentence of the agent (a message, the
reasoning of a call, a free-text argument such as a hand-off summary) holds its value as
words of its own. A value of one word counts only beside a word of its field's name, or one
sharing its first five letters ("no" with "insurance", "gold" with "member" for ``membership``),
since one short word occurs in most sentences by chance. Values with a
digit (ids, dates, prices), a field named as an id, and a value the user had already said before
the look-up are left out: they say which record, not what the look-up brought.
"""

from __future__ import annotations

import json
from bisect import bisect_right
import re
from functools import lru_cache

from .arguments import _parsed
from .reading import Call, Reading, leaves
from .text import clip_words, stands_alone
from .told_numbers import _last_key

FIELDS_SHOWN = 3
SENTENCE_WIDTH = 200


@lru_cache(maxsize=4096)
def _phrase_words(value: str) -> tuple[str, ...] | None:
    """The value as words (``basic_economy`` as "basic economy"), or None for a value that is no
    plain term: a digit, no letter, or more than four words."""
    words = re.sub(r"[_\s]+", " ", value).strip().lower().split()
    if not words or len(words) > 4 or any(re.search(r"\d", w) for w in words) \
            or not any(re.search(r"[^\W\d_]", w) for w in words):
        return None
    return tuple(words)


@lru_cache(maxsize=4096)
def _phrase(words: tuple[str, ...]) -> re.Pattern:
    """The words as a phrase of their own, any run of spaces, _ or - between them: compiled only
    for a value whose first word the agent wrote somewhere (most values are in no sentence)."""
    return re.compile(r"(?<![\w-])" + r"[\s_-]+".join(map(re.escape, words)) + r"(?![\w-])")


def _holds_phrase(words: tuple[str, ...], low: str) -> bool:
    """Whether a lower-case text holds the words as a phrase of their own (``_phrase``). One word
    is tested by hand at the places it occurs (nothing of a word, nor a hyphen, either side):
    most values are one word, and a pattern compiled for each cost more than the test."""
    if len(words) > 1:
        return _phrase(words).search(low) is not None
    return stands_alone(words[0], low, _joins)


def _joins(ch: str) -> bool:
    return ch.isalnum() or ch == "_" or ch == "-"  # what the pattern's [\w-] matches


@lru_cache(maxsize=4096)
def _starting(prefix: str) -> re.Pattern:
    """A word starting with ``prefix``: compiled once per field-name prefix, not per sentence."""
    return re.compile(r"(?<!\w)" + re.escape(prefix))


@lru_cache(maxsize=4096)
def _key_words(key: str) -> tuple[str, ...]:
    return tuple(w for w in re.split(r"[_\W]+", key.lower()) if len(w) > 2)


@lru_cache(maxsize=4096)
def sentences(text: str) -> tuple[str, ...]:
    """A text's sentences and lines, whitespace folded: the unit a quote is cut to."""
    parts = re.split(r"(?<=[.!?])\s+|\n+", text or "")
    return tuple(s for s in (" ".join(p.split()) for p in parts) if s)


def agent_words(r: Reading, after: int) -> list[tuple[int, str]]:
    """(turn, sentence) of what the agent wrote after a turn, up to and with the next change that
    went through (what it did with what it had read): its messages, its reasoning and the
    free-text values of its calls' arguments, in order. A question is left out: a value named
    among options it asks about is not one it acted on."""
    until = next((x.n for x in r.calls if x.n > after and x.writes and not x.error), None)
    flat = r.memo.get("record_words.flat")
    if flat is None:  # every sentence with its turn, once per run: each look-up asks for a stretch of them
        flat = [(n, s) for n, said in _agent_sentences(r) for s in said]
        turns = [n for n, _s in flat]
        flat = r.memo["record_words.flat"] = (flat, turns if all(a <= b for a, b in zip(turns, turns[1:])) else None)
    flat, turns = flat
    if turns is not None:  # in turn order: the stretch is found by bisection
        return flat[bisect_right(turns, after):len(turns) if until is None else bisect_right(turns, until)]
    return [(n, s) for n, s in flat if n > after and (until is None or n <= until)]


def _agent_sentences(r: Reading) -> list[tuple[int, list[str]]]:
    """(turn, its sentences but questions) of each assistant turn of the run not the harness's,
    in log order: worked out once per run, asked for after every look-up."""
    found = r.memo.get("record_words.said")
    if found is not None:
        return found
    harness = {t.turn for t in r.harness}
    found = r.memo["record_words.said"] = []
    for t in r.run.turns:
        if t.turn in harness or t.role != "assistant":
            continue
        texts = [t.content] if t.type == "message" else [t.reasoning] + [
            v for _, v in leaves(t.arguments) if isinstance(v, str) and len(v.split()) > 3]
        found.append((t.turn, [s for text in texts if text for s in sentences(text) if not s.endswith("?")]))
    return found


def named_fields(r: Reading, c: Call) -> list[tuple[str, str, list[tuple[int, str]], bool]]:
    """(field, value, [(turn, sentence)], listed) for each plain field of the call's JSON answer that a
    later sentence of the agent names: its first sentence and, from another turn, its last;
    ``listed``: the value is one item of the field's list, not the field's whole value.
    Worked out once per call: the page's look-up notes and its "In short" both ask."""
    key = f"record_words.named:{c.n}"
    if key not in r.memo:
        r.memo[key] = _named_fields(r, c)
    return r.memo[key]


def _named_fields(r: Reading, c: Call) -> list[tuple[str, str, list[tuple[int, str]], bool]]:
    parsed = _parsed(c.turn.result or "")  # the argument checks' parse of the same answer
    if not isinstance(parsed, (dict, list)):
        return []
    said = _about_this_record(c, r, agent_words(r, c.n))
    if not said:
        return []
    # what the user had already said is no news the look-up brought (the booking code, the towns)
    told = " ".join((t.content or "") for t in r.run.turns if t.turn < c.n and t.type == "message"
                    and t.role == "user").lower()
    # each sentence lowered once per call, and all of them as one text: a value whose first word
    # is nowhere in it is named by none (most of a record's values)
    said_low = [(n, s, s.lower()) for n, s in said]
    all_said = "\n".join(low for _n, _s, low in said_low)
    out, seen = [], set()
    items = _item_words(parsed)
    for path, value in leaves(parsed):
        if not isinstance(value, str) or (value.lower() in seen):
            continue
        words = _phrase_words(value)
        if words is None or words[0] not in all_said:
            continue
        first, single = words[0], len(words) == 1
        key = _last_key(str(path))
        if _key_words(key)[-1:] in (("id",), ("ids",)) or key.lower().endswith("id"):
            continue  # an id says which record, not what it holds
        if first in told and _holds_phrase(words, told):  # tested only for a field that is no id
            continue  # the user had said it
        item = _item_of(str(path))
        hits = [(n, s) for n, s, low in said_low if first in low and _holds_phrase(words, low)
                and (not single or any(_starting(w[:5]).search(low) for w in _key_words(key)))
                and (item is None or any(w != value.lower() and _names(w, low) for w in items.get(item, ())))]
        if not hits:
            continue
        seen.add(value.lower())
        quoted = [hits[0]] + ([hits[-1]] if hits[-1][0] != hits[0][0] else [])
        out.append((key, value, [(n, clip_words(s, SENTENCE_WIDTH)) for n, s in quoted], str(path).endswith("]")))
        if len(out) >= FIELDS_SHOWN:
            break
    return out


_ITEM = re.compile(r"^(.+?)(?:\.[^.\[\]]+|\[\d+\])$")


def _item_of(path: str) -> str | None:
    """The item of a collection a nested field belongs to ("payment_methods.gift_card_3871331" of its
    ``source``, "flights[0]" of its ``origin``); None for a field of the record itself."""
    m = _ITEM.match(path)
    parent = m.group(1) if m else ""
    return parent if ("." in parent or "[" in parent) else None


def _item_words(parsed) -> dict[str, set[str]]:
    """item -> its own key and the values of its fields, lowered: what a sentence about that item
    (not about another gift card, another flight) names beside the field."""
    out: dict[str, set[str]] = {}
    for path, value in leaves(parsed):
        item = _item_of(str(path))
        if item is None or isinstance(value, bool) or value is None:
            continue
        words = out.get(item)
        if words is None:  # an item's own key, once: its fields share it
            words = out[item] = set()
            tail = _ITEM_PARTS.split(item)[-1].rstrip("]").lower()
            if len(tail) >= 3 and not tail.isdigit():
                words.add(tail)
        text = ("%g" % value) if isinstance(value, (int, float)) else str(value).lower()
        if len(text) >= 3 or isinstance(value, (int, float)) and len(text) >= 2:
            words.add(text)
    return out


_ITEM_PARTS = re.compile(r"[.\[]")


def _names(word: str, low: str) -> bool:
    """Whether a lowered sentence names an item's word: a number as a whole number ("$67", not 1967)."""
    if word.replace(".", "", 1).isdigit():
        # the plain test first: most sentences hold no such number, and each pattern is compiled
        return word in low and re.search(rf"(?<![\w.]){re.escape(word)}(?![\w]|\.\d)", low) is not None
    return word in low


def _about_this_record(c: Call, r: Reading, said: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """The sentences that can be about the record ``c`` fetched: those before the same tool fetched
    another record, and later ones that name this record's own argument ("GV1N64"); never one that
    names another record the same tool fetched and not this one. After three reservations were
    looked up, "downgrade from business" is about the last, not each one whose cabin was business;
    "upgrade XEHM4B to economy" is about XEHM4B, not the economy reservation fetched after it."""
    def sent_values(call: Call) -> set[str]:
        sent = call.turn.arguments if isinstance(call.turn.arguments, dict) else {}
        return {v for _p, v in leaves(sent) if isinstance(v, str) and len(v) >= 3}

    own = sent_values(c)
    fetched = [x for x in r.calls if x.name == c.name and x.turn.arguments != c.turn.arguments]
    others = set().union(*(sent_values(x) for x in fetched)) - own
    next_other = min((x.n for x in fetched if x.n > c.n), default=None)

    def names(text: str) -> tuple[bool, bool]:  # (names this record, names another one)
        return any(v in text for v in own), any(v in text for v in others)

    by_turn: dict[int, tuple[bool, bool]] = {}  # a sentence naming no record is about what its message names
    for n, s in said:
        mine, other = names(s)
        was = by_turn.get(n, (False, False))
        by_turn[n] = (was[0] or mine, was[1] or other)
    out = []
    for n, s in said:
        mine, other = names(s)
        if not (mine or other):
            mine, other = by_turn[n]
        if (mine or next_other is None or n < next_other) and (mine or not other):
            out.append((n, s))
    return out


def named_field_notes(r: Reading, c: Call) -> list[str]:
    """One note per set of the agent's later sentences, quoting them, with the fields of the answer they
    name: one sentence naming three flights' origins is one note, not three that quote it again."""
    groups: dict[tuple, list[str]] = {}
    for key, value, quoted, listed in named_fields(r, c):
        groups.setdefault(tuple(quoted), []).append(
            f"`{key}` {'holds' if listed else 'is'} {json.dumps(value, ensure_ascii=False)}")
    return [(", ".join(fields[:-1]) + " and " if len(fields) > 1 else "") + fields[-1]
            + f" in this answer, and the agent's own words name {'them' if len(fields) > 1 else 'it'}: "
            + "; ".join(f"turn {n}: \"{s}\"" for n, s in quoted) for quoted, fields in groups.items()]


MESSAGES_SHOWN = 3
MESSAGE_WIDTH = 240


def messages_notes(r: Reading, after: int, skip: int | None) -> list[str]:
    """The agent's messages after a turn (but the one a page already quotes), each from its start:
    in a run that changed nothing, what it asked for, explained or declined is the whole answer."""
    harness = {t.turn for t in r.harness}
    said = [t for t in r.run.turns if t.turn > after and t.turn != skip and t.turn not in harness
            and t.type == "message" and t.role == "assistant" and (t.content or "").strip()]
    return [f"The agent wrote at turn {t.turn}: \"{clip_words(t.content, MESSAGE_WIDTH)}\""
            for t in said[:MESSAGES_SHOWN]]
