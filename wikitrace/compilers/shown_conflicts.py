"""A change sent against what a look-up of the same run had already shown.

Read off the JSON answers alone, with no field names known in advance:

- a count: an item the change sent (an entry of a list argument, such as a flight and its
  date) was shown by an earlier look-up with a table of numbers keyed by an option the change
  also sent (its cabin), and the number under that option was 0, or fewer than the entries
  of another list the change sent (its passengers). Said only of a change that failed with an
  error naming that item: the error bears the reading out, and a table of prices is never read
  as one of counts.
- a balance: a change paid an amount from a method (an id it sent beside the amount) whose
  record an earlier look-up showed holding one number, below that amount. Again only of a
  change that failed with an error naming that method.
- a date: a change that went through, and that the log does not record as expected, acted on
  a record fetched by an id it sent, made on a date the record holds, whose list entries dated
  from that day on, each naming a thing by a code, all fall before the current time the system prompt states (a trip already
  flown; a list of birth dates, before the record was made, is not read).

Each is one sentence with the turns that show it; the first of a run is said.
"""

from __future__ import annotations

import re
from datetime import datetime

from .arguments import _parsed
from .expected_calls import made_as_expected
from .reading import Call, Reading, leaves
from .record_facts import stated_now
from .schema import KeyFact
from .text import clip_words

_ISO_DAY = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:[T ][\d:]+)?$")
_NUMBER = (int, float)
_CODE = re.compile(r"(?=[^\s]*[A-Za-z])(?=[^\s]*\d)[A-Za-z0-9_-]{3,24}")


def _num(v) -> bool:
    return isinstance(v, _NUMBER) and not isinstance(v, bool)


def _dicts(node, out: list) -> list:
    """Every dict inside a parsed answer, outermost first, with the key it sat under (or "")."""
    queue = [("", node)]
    for key, n in queue:  # the queue grows as it is read: breadth first, each node once
        if isinstance(n, dict):
            out.append((key, n))
            queue.extend((str(k), v) for k, v in n.items() if isinstance(v, (dict, list)))
        elif isinstance(n, list):
            queue.extend((key, v) for v in n)
    return out


def _answers(r: Reading, before: int):
    """(look-up, its parsed answer's dicts) for each look-up that went through before a turn."""
    for x in _look_ups(r, before):
        yield x, _answer_dicts(r, x)


def _look_ups(r: Reading, before: int):
    """Each look-up that went through before a turn with a JSON answer, in order."""
    for x in r.calls:
        if x.n >= before:
            break
        if x.writes or x.error or not (x.turn.result or "").lstrip()[:1] in "{[":
            continue
        yield x


def _answer_dicts(r: Reading, x: Call) -> list:
    """The dicts of a look-up's parsed answer (``_dicts``), walked once per run."""
    memo = r.memo.setdefault("shown_conflicts.dicts", {})
    if x.n not in memo:
        data = _parsed(x.turn.result)
        memo[x.n] = _dicts(data, []) if isinstance(data, (dict, list)) else []
    return memo[x.n]


def _money(v: float) -> str:
    return f"${v:,.2f}".replace(".00", "")


def _items(args: dict) -> list[tuple[str, dict, list]]:
    """(list key, entry, the other lists of dicts the call sent) for each dict entry of a list argument."""
    lists = {k: v for k, v in args.items() if isinstance(v, list) and v and all(isinstance(e, dict) for e in v)}
    return [(k, e, [(ok, ov) for ok, ov in lists.items() if ok != k]) for k, v in lists.items() for e in v]


def _matches(entry: dict, d: dict, sent_to_look_up: set[str]) -> bool:
    """A shown dict is the entry's item: every string the entry holds is either the dict's value
    under the same key or a value the look-up was sent, and at least one matched inside the dict."""
    inside = False
    for k, v in entry.items():
        if not isinstance(v, str):
            continue
        if k in d:
            if d[k] != v:
                return False
            inside = True
        elif v not in sent_to_look_up:
            return False
    return inside


def _count(r: Reading, c: Call) -> KeyFact | None:
    args = c.turn.arguments
    options = {k: v for k, v in args.items() if isinstance(v, str) and v}
    sent_to: dict[int, set[str]] = {}  # each look-up's sent texts, made once, not once per entry
    for list_key, entry, others in _items(args):
        needed, of = max(((len(v), k) for k, v in others), default=(1, ""))
        for x, dicts in _answers(r, c.n):
            sent = sent_to.get(x.n)
            if sent is None:
                sent = sent_to[x.n] = {v for _p, v in leaves(x.turn.arguments) if isinstance(v, str)}
            for _k, d in dicts:
                if not _matches(entry, d, sent):
                    continue
                for table, numbers in d.items():
                    if not isinstance(numbers, dict) or not numbers or not all(_num(v) for v in numbers.values()):
                        continue
                    for opt_key, opt in options.items():
                        n = numbers.get(opt)
                        if n is None or n >= needed and n != 0:
                            continue
                        name = next((v for v in entry.values() if isinstance(v, str)
                                     and v in (c.turn.result or "")), None)
                        if name is None:
                            continue  # the error names another thing: it was refused for something else
                        fewer = "" if n == 0 or not of else f", fewer than the {needed} `{of}` the call sent"
                        kept = _kept(r, c, name, opt_key, opt)
                        return KeyFact(
                            f"{c.name} at turn {c.n} sent {name} with `{opt_key}` \"{opt}\", which {x.name}'s answer "
                            f"(turn {x.n}) showed with {n:g} under `{table}`.`{opt}`{fewer}; the call failed "
                            f"(\"{clip_words(' '.join((c.turn.result or '').split()), 80)}\")"
                            + (f", and the {c.name} that went through at turn {kept.n} kept {name} with `{opt_key}` "
                               f"\"{kept.turn.arguments[opt_key]}\" instead" if kept else "")
                            + ". Read what the look-up showed for the option before sending a change that needs it.",
                            [x.n, c.n] + ([kept.n] if kept else []), "shown-count", [c.name])
    return None


def _kept(r: Reading, c: Call, name: str, key: str, option: str) -> Call | None:
    """A later call of the same tool that went through still sending the item, with another option."""
    return next((x for x in r.calls if x.n > c.n and x.name == c.name and not x.error
                 and isinstance(x.turn.arguments, dict) and isinstance(x.turn.arguments.get(key), str)
                 and x.turn.arguments[key] != option
                 and any(v == name for _p, v in leaves(x.turn.arguments))), None)


def _balance(r: Reading, c: Call) -> KeyFact | None:
    for _k, part in _dicts(c.turn.arguments, []):
        amounts = [v for k, v in part.items() if _num(v)]
        ids = [v for v in part.values() if isinstance(v, str) and re.search(r"\d", v) and " " not in v]
        if len(amounts) != 1 or len(ids) != 1:
            continue
        paid, method = float(amounts[0]), ids[0]
        if method not in (c.turn.result or ""):
            continue  # the error names another thing: it was refused for something else
        for x, dicts in _answers(r, c.n):
            for key, d in dicts:
                if key != method and method not in d.values():
                    continue
                held = [(k, v) for k, v in d.items() if _num(v)]
                if len(held) != 1 or float(held[0][1]) >= paid:
                    continue
                field, balance = held[0]
                return KeyFact(
                    f"{c.name} at turn {c.n} paid {_money(paid)} from {method}, whose record in {x.name}'s answer "
                    f"(turn {x.n}) holds `{field}` {_money(float(balance))}, less than that; the call failed "
                    f"(\"{clip_words(' '.join((c.turn.result or '').split()), 80)}\"). Check a payment against the "
                    "balance a look-up showed before sending it.", [x.n, c.n], "shown-balance", [c.name])
    return None


def _day(v) -> datetime | None:
    m = _ISO_DAY.match(v) if isinstance(v, str) else None
    if m is None:
        return None
    try:
        return datetime.fromisoformat(m.group(1))
    except ValueError:
        return None


def _over(r: Reading, c: Call, now: datetime) -> KeyFact | None:
    """The change as a fact when the record it acted on is past (``_past``)."""
    found = _past(r, c, now)
    if found is None:
        return None
    named, key, when, x = found
    return KeyFact(f"{c.name} at turn {c.n} went through on {named}, whose {_dated(key, when, x, now)} Compare a "
                   "record's dates with the stated current time before acting on it.", [x.n, c.n], "shown-past", [c.name])


def _dated(key: str, when: str, x: Call, now: datetime) -> str:
    return (f"`{key}` in {x.name}'s answer (turn {x.n}) are all dated {when}, before the current time the system "
            f"prompt states ({now:%Y-%m-%d %H:%M}).")


def past_note(r: Reading, c: Call) -> tuple[str, list[int]]:
    """("Its `flights` in get_reservation_details's answer (turn 11) are all dated … , before the current
    time the system prompt states (…).", its turns) for a change whose record is past; ("", [])
    otherwise. Said beside a rule's case that allows the change: that case is not the whole rule."""
    now = stated_now(r)
    found = _past(r, c, now) if now is not None and isinstance(c.turn.arguments, dict) else None
    if found is None:
        return "", []
    _named, key, when, x = found
    return f"Its {_dated(key, when, x, now)}", [x.n]


def _past(r: Reading, c: Call, now: datetime) -> tuple[str, str, str, Call] | None:
    """(the record's id, the list field, its dates, the look-up) when a look-up fetched a record by
    an id the change then acted on, made on a date (a top-level date field), whose list entries
    dated on or after that day (what it booked, not who) all fall before the stated now. Once per
    change: the page's lead and the change's own fact both ask."""
    key = f"shown_conflicts.past:{c.n}"
    if key not in r.memo:
        r.memo[key] = _past_of(r, c, now)
    return r.memo[key]


def _past_of(r: Reading, c: Call, now: datetime) -> tuple[str, str, str, Call] | None:
    ids = {v for v in c.turn.arguments.values() if isinstance(v, str) and re.search(r"\d", v) and " " not in v}
    for x in reversed(list(_look_ups(r, c.n))):
        asked = [v for _p, v in leaves(x.turn.arguments)]
        if len(asked) != 1 or asked[0] not in ids:
            continue
        dicts = _answer_dicts(r, x)  # walked only for a look-up of one of the change's ids
        if not dicts or not isinstance(dicts[0][1], dict):
            continue
        record, named = dicts[0][1], asked[0]
        made = [d for v in record.values() if (d := _day(v)) is not None]
        if len(made) != 1:
            continue
        for key, entries in record.items():
            if not isinstance(entries, list) or not entries or not all(isinstance(e, dict) for e in entries):
                continue
            if not all(any(_CODE.fullmatch(v) for v in e.values() if isinstance(v, str)) for e in entries):
                continue  # entries that name a thing by a code (a flight), not people by their birth dates
            days = [d for e in entries for v in e.values() if (d := _day(v)) is not None]
            if len(days) < len(entries) or any(d < made[0].replace(hour=0, minute=0, second=0) for d in days) \
                    or max(days).date() >= now.date():
                continue
            told = sorted({f"{d:%Y-%m-%d}" for d in days})
            return named, key, told[0] if len(told) == 1 else f"{told[0]} to {told[-1]}", x
        return None  # the latest look-up of that id decides
    return None


def shown_conflicts(r: Reading) -> list[KeyFact]:
    """The first change of the run sent against what a look-up had shown (see the module's
    docstring), as one fact; empty when there is none. Once per run."""
    if "shown_conflicts" in r.memo:
        return r.memo["shown_conflicts"]
    found: list[KeyFact] = []
    now = None
    for c in r.calls:
        if not c.writes or not isinstance(c.turn.arguments, dict):
            continue
        if c.error:
            fact = _count(r, c) or _balance(r, c)
        else:
            if now is None:
                now = stated_now(r) or False
            fact = _over(r, c, now) if now and not made_as_expected(r, c) else None
        if fact is not None:
            found.append(fact)
            break
    r.memo["shown_conflicts"] = found
    return found
