"""The number a quoted rule makes of a count the change sent: the deciding fact of a wrong count.

A page that quotes "3 free checked bags for each economy passenger" beside `nonfree_baggages` 1
still leaves the reader to do the sum. Where the rule's words, the call and the records settle
every term, the sum is done here and said: the rule's number per item, the items the call (or the
record it acted on) lists, the allowance that makes, the total the call sent, and so the count the
rule gives against the one sent.

Read by structure only: a quoted sentence holding "<N> <quality> … <thing> for each|per <unit>",
where
- the thing names the argument's own thing (a "bag" for ``nonfree_baggages``);
- the argument's name is that quality negated ("nonfree" of "free": the count beyond the
  allowance) or the quality itself ("free": the count within it);
- the unit is one word naming a list the call sends (or the record it acted on holds), the words in
  front of it, if any, being a value a record of the run holds as it stands ("economy" of
  ``cabin`` "economy"; "basic economy" is another case);
- the call sends one other count of the same thing (``total_baggages``): the whole.
Exactly one case of the quote may pass; the number said must be the one the task expected where the
log records one, and differ from the one sent: a sum that does not explain the difference is not
said, nor one the expected call contradicts (the rule was then read otherwise than the task's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .reading import Call, Reading
from .rule_blocks import _loosely_names
from .rule_facts import _NAME_PARTS, _Fact
from .rules import _stem

_TOKEN = re.compile(r"[A-Za-z][A-Za-z-]*|\d+")
_STOP = frozenset("a an the and or nor but if of in on to at by as with than is are be for per each every".split())
_NEGATIONS = ("non", "not", "un")


@dataclass(frozen=True)
class _Case:
    number: int
    quality: str  # "free"
    thing: str  # "checked bags": the words after the quality, as written
    unit: str  # "passenger"
    before_unit: str  # "economy" ("" when the unit stands alone)


def _cases(text: str) -> list[_Case]:
    """Every "<N> <quality> <words> for each <unit>" of a sentence."""
    words = _TOKEN.findall(text)
    out = []
    for i, w in enumerate(words):
        if not w.isdigit():
            continue
        j = i + 1
        middle: list[str] = []
        while j < len(words) and len(middle) <= 3 and words[j].lower() not in ("for", "per"):
            middle.append(words[j])
            j += 1
        if not middle or j >= len(words) or any(m.isdigit() for m in middle):
            continue
        j += 1  # "for" or "per"
        if words[j - 1].lower() == "for":
            if j >= len(words) or words[j].lower() not in ("each", "every"):
                continue
            j += 1
        elif j < len(words) and words[j].lower() in ("each", "every"):
            j += 1
        unit: list[str] = []
        while j < len(words) and len(unit) < 3 and words[j].lower() not in _STOP and not words[j].isdigit():
            unit.append(words[j])
            j += 1
        if unit:
            out.append(_Case(int(words[i]), middle[0].lower(), " ".join(middle[1:]), unit[-1].lower(),
                             " ".join(unit[:-1]).lower()))
    return out


def _root(word: str) -> str:
    """A word's stem, a plain plural "s" dropped first ("bags" and "bag" alike)."""
    w = word.lower()
    return _stem(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w)


def _parts(name: str) -> list[str]:
    return [w.lower() for w in _NAME_PARTS.split(name or "") if w]


def _mode(key: str, quality: str) -> str | None:
    """"beyond" when the argument's name is the quality negated, "within" when it is the quality."""
    first = _parts(key)[0] if _parts(key) else ""
    if first == quality:
        return "within"
    if any(first == neg + quality for neg in _NEGATIONS):
        return "beyond"
    return None


def _listed(unit: str, *sources: dict) -> tuple[str, int] | None:
    """(where, how many) of the one list field naming the unit ("passengers" for "passenger"), the
    call's own arguments first, then the record the change acted on."""
    head = frozenset({_root(unit)})
    for where, source in zip(("the call's", "the record's"), sources):
        found = [k for k, v in source.items() if isinstance(v, list) and v and _parts(k)
                 and _loosely_names(frozenset({_root(_parts(k)[-1])}), head)]
        if len(found) == 1:
            return f"{where} `{found[0]}`", len(source[found[0]])
    return None


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def sum_for(r: Reading, c: Call, key: str, quoted: list[str], facts: list[_Fact], record: dict | None,
            expected: dict) -> str:
    """The sentence doing the rule's sum for the argument ``key`` of call ``c`` ("" when the words,
    the call or the records leave a term open, or the sum does not explain the difference)."""
    args = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    sent = _count(args.get(key))
    parts = _parts(key)
    if sent is None or len(parts) < 2:
        return ""
    head = frozenset({_root(parts[-1])})
    phrases = {f.phrase for f in facts if f.phrase}
    found = []
    for text in quoted:
        for case in _cases(text):
            mode = _mode(key, case.quality)
            thing = frozenset(_root(w) for w in case.thing.split())
            if mode is None or not _loosely_names(thing, head) or (case.before_unit and case.before_unit not in phrases):
                continue
            listed = _listed(case.unit, args, record or {})
            if listed is not None:
                found.append((case, mode, listed))
    if len(found) != 1:
        return ""
    case, mode, (where, items) = found[0]
    wholes = [k for k, v in args.items() if k != key and _count(v) is not None and _parts(k)
              and _loosely_names(frozenset({_root(_parts(k)[-1])}), head) and _mode(k, case.quality) is None]
    if len(wholes) != 1:
        return ""
    whole, total = wholes[0], args[wholes[0]]
    allowance = case.number * items
    owed = max(0, total - allowance) if mode == "beyond" else min(total, allowance)
    if owed == sent or (key in expected and expected[key] != owed):
        return ""
    unit = f"{case.before_unit} {case.unit}".strip()
    named = f"{case.quality} {case.thing}".strip()
    side = "beyond" if mode == "beyond" else "within"
    return (f"By that rule, {items} {unit}{'s' if items != 1 else ''} ({where}) "
            f"{'gets' if items == 1 else 'get'} {case.number} × {items} = "
            f"{allowance} {named}; of the {total} the call sent as `{whole}`, {owed} "
            f"{'is' if owed == 1 else 'are'} {side} that, and the call sent `{key}` {sent}.")
