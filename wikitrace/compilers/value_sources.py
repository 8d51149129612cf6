"""Where the argument values of a failed run's changes came from, said once per page and only
for the values a reader checks: a value that differs from the call the log records as expected,
or, where the log records none of this tool, a value the agent picked among several an answer
listed that the user's words did not pick. A value no earlier turn held is told by the call's
checks (``page_notes.check_notes``), never here too.

A value is credited only where the log shows it came from, matched as a whole token: an answer
to a call that was itself sent the value shows what the agent already had and is no source. A
distinctive value (an id, a flight number) is credited to the answer about the record the user's
words picked or the change acts on, else to the one look-up that held it, else to every answer
that held it (``id_sources``). A common one (a word, a number, a date) is credited to the user's latest message that
wrote it (a number or a word of a few letters only where the message names its field), else to
the turn that showed the id it was sent beside (a flight's date with its number), else to the
one look-up that gave it under its own field; when several records gave it (the changed
record among them) and the user never wrote it, the page names no source.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ..runs.model import Turn
from .arguments import _NOT_JSON, _as_text, _json_fields, _last_key, _parsed, _seen, check_arguments
from .expected_calls import _ABSENT, _differing, expected_changes, made_as_expected
from .id_sources import item_values, other_item, read_from, records, several
from .insight_words import free_form, join, top_key
from .picked_values import picked, user_described
from .reading import Call, Reading, _occurs, leaves, t_is_user
from .text import clip_words, sorted_json
from .told_numbers import _number_patterns, _told_number
from .renderings import held_before


def _distinctive(value) -> bool:
    """A value whose whole-token match is strong evidence of where it came from: text mixing
    letters and digits (an id, a flight number, a card) or long enough to be one record's own.
    A short word, a number or a date may stand in many places, so a match alone proves little."""
    if isinstance(value, (int, float)):
        return False
    return _distinctive_text(_as_text(value))


@lru_cache(maxsize=4096)
def _distinctive_text(text: str) -> bool:
    """Per text: the same few ids are asked about for every call that sends or sits beside them."""
    return (any(ch.isdigit() for ch in text) and any(ch.isalpha() for ch in text) and len(text) >= 5) or (
        len(text) >= 12 and " " not in text.strip())


def _beside(c: Call, a) -> list[str]:
    """The distinctive values the call sends in the same object as the argument (a flight's
    number beside its date), lower case."""
    parent = a.path[:len(a.path) - len(_last_key(a.path))].rstrip(".")
    if not parent:
        return []
    return [_as_text(v).lower() for p, v in leaves(c.turn.arguments) if p != a.path and _distinctive(v)
            and p[:len(p) - len(_last_key(p))].rstrip(".") == parent]


def _names_field(key: str, low: str) -> bool:
    """Whether a user message names the argument's field (a word of its key, as in "cabin")."""
    return any(w in low and re.search(rf"(?<![a-z]){re.escape(w)}", low) for w in _field_heads(key))


@lru_cache(maxsize=1024)
def _field_heads(key: str) -> tuple[str, ...]:
    """The first four letters of each word of three or more of a key: asked per message and value."""
    return tuple(w[:4] for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3)


def _holding(r: Reading, spellings: list[str]) -> list[Turn]:
    """The facts whose lower-case text holds one of ``spellings``, in order: found in the run's
    facts joined once, where testing every fact for every value of every change cost the most."""
    out: set[int] = set()
    for x in spellings:
        places = r.facts_holding(x)
        if places is None:  # a match could span two facts: each fact is tested on its own
            out.update(k for k, f in enumerate(r.facts) if x in r.lower(f))
        else:
            out.update(places)
    return [r.facts[k] for k in sorted(out)]


@lru_cache(maxsize=512)
def _lower_fields(result: str) -> tuple[frozenset[str], frozenset[tuple[str, str]]]:
    """A JSON answer's scalar values in lower case, and its (field, value in lower case) pairs:
    every argument of every change asks whether an earlier answer holds its value."""
    fields = [(k, _as_text(v).lower()) for k, v in _json_fields(result)]
    return frozenset(v for _k, v in fields), frozenset(fields)


def _value_texts(result: str) -> frozenset[str]:
    return _lower_fields(result)[0]


def _echoes(t: Turn, text: str) -> bool:
    """An answer to a call that was itself sent the value: it shows what the agent already had."""
    return any(_as_text(v).lower() == text for _p, v in leaves(t.arguments))


def _source_turns(r: Reading, c: Call, a, names: frozenset[str]) -> list[Turn]:
    """The turn the value came from; several answers when the log does not single one out; none
    when it does not tell (see the module's docstring)."""
    found = _source_turn(r, c, a, names)
    return found if isinstance(found, list) else [] if found is None else [found]


def _source_turn(r: Reading, c: Call, a, names: frozenset[str]) -> Turn | list[Turn] | None:
    key = _last_key(a.path)
    if isinstance(a.value, (int, float)) or _as_text(a.value).isdecimal():
        names = frozenset()  # a number is credited only where its own field (or the user) gave it, not beside a name
    text = _as_text(a.value).lower()
    spellings = [text] + [text.replace("_", sep) for sep in " -" if "_" in text]
    numeric = isinstance(a.value, (int, float)) or text.isdecimal()  # a user writes numbers in words too
    # a number may be written in words: every fact is read; a text only where a spelling is
    places = [t for t in (r.facts if numeric else _holding(r, spellings)) if t.turn < c.n
              and _seen(a.value, key, t, r.lower(t), names) and (
        t_is_user(t) or _parsed(t.result or "") is _NOT_JSON  # in a JSON answer: as a value, not a key
        or text in _value_texts(t.result or ""))]
    beside = [] if _distinctive(a.value) else _beside(c, a)
    paired = [t for t in places if any(_occurs(b, r.lower(t)) for b in beside)]
    if paired:  # sent beside an id of the same object (a flight's date): read where that id was
        return paired[-1]
    sent = _first_sent(r, c, a)
    if sent is not None and places:  # an answer after the agent first sent it may echo the agent: no source
        places = [t for t in places if t_is_user(t) or t.turn < sent.turn]
        if not places and (not isinstance(a.value, str) or text.isdecimal() or held_before(r, a.value, sent.turn) is None):
            return sent  # the agent's own: no turn before its first sending held a text value in any form
    places = [t for t in places if t_is_user(t) or not _echoes(t, text)]
    if not places:  # a user message that answered about the field in other words ("no need for insurance")
        said = next((t for t in r.facts if t.turn == a.seen_at), None) if a.seen_in == "user message" else None
        return said if said is not None and _names_field(key, r.lower(said)) else None
    if _distinctive(a.value):
        return read_from(r, c, a, places)  # an id matched whole: the answer about its record, or all that held it
    users = [t for t in places if t_is_user(t)]
    if users:  # a common value the user wrote: their latest message holding it (a number or a short
        # lower-case word, which any message may hold, only where the message names its field)
        plain = numeric or (len(text) <= 3 and _as_text(a.value).islower())
        told = [t for t in users if not plain or _names_field(key, r.lower(t))
                or (numeric and _told_number(text, key, r.lower(t)))]
        return told[-1] if told else None
    fielded = [t for t in places
               if _parsed(t.result or "") is _NOT_JSON or (key, text) in _lower_fields(t.result or "")[1]]
    asked = {sorted_json(t.arguments) for t in fielded}
    if len(asked) == 1:  # one look-up (asked once or again) gave it under its own field
        return fielded[-1]
    return None  # a common value several records (or no field of its name) held: the log does not say which


def _first_sent(r: Reading, c: Call, a) -> Turn | None:
    """The first call before ``c`` (through or not) that sent the value under the same key: an
    answer at or after it may only repeat what the agent chose, so it is no source of the value."""
    sent = r.memo.get("value_sources.sent")
    if sent is None:  # (key, value) -> the calls that sent it, in order: built once per run, not per value asked
        sent = r.memo["value_sources.sent"] = {}
        for x in r.calls:
            for p, v in leaves(x.turn.arguments):
                senders = sent.setdefault((_last_key(p), _as_text(v).lower()), [])
                if not senders or senders[-1] is not x:
                    senders.append(x)
    return next((x.turn for x in sent.get((_last_key(a.path), _as_text(a.value).lower()), ()) if x.n < c.n), None)


def _place(r: Reading, t: Turn, first_sent: bool = False) -> str:
    if first_sent:  # the agent's own choice: no user message or answer before it showed the value
        return f"the agent's own {t.name} call (turn {t.turn}) before any user message or answer gave it"
    return f"the user (turn {t.turn})" if t_is_user(t) else f"{t.name}'s answer (turn {t.turn})"


def credited(r: Reading, c: Call, paths: set[str] | None = None) -> dict[str, list[str]]:
    """The places named for each top-level argument of the change (see ``_credits``); a key
    absent here was credited nowhere."""
    return _credits(r, c, paths)[0]


def credited_kinds(r: Reading, c: Call, paths: set[str] | None = None) -> dict[str, set[str]]:
    """The kinds of the places ``credited`` names for each argument: "user", "answer" (a tool's
    answer, a look-up's or a change's), "call" (the agent's earlier call) or "own" (the agent's
    own pick before anything gave the value)."""
    kept, _at, kind_of = _credits(r, c, paths, kinds=True)
    return {k: {kind_of[w] for w in places} for k, places in kept.items()}


def _credits(r: Reading, c: Call, paths: set[str] | None = None, kinds: bool = False):
    """The places named for each top-level argument of the change (only those holding one of
    ``paths``, when given): each value credited to its place (``_source_turn``), and a
    place left out when the places showing more of the argument's values show its values too;
    and for each argument the latest turn its places name (and with ``kinds``, each place's kind)."""
    by_turn = {x.n: x.name for x in r.calls}
    checks = [a for a in check_arguments(r, c.turn) if paths is None or a.path in paths]
    names = frozenset(v.lower() for _p, v in leaves(c.turn.arguments) if isinstance(v, str) and len(v) > 2)
    shown: dict[str, dict[str, list]] = {}
    turn_of: dict[str, Turn | None] = {}
    at: dict[str, int] = {}  # the turn each place names
    kind_of: dict[str, str] = {}
    for a in checks:
        place = _value_place(r, c, a, by_turn, names)
        if place is None:
            continue
        where, turn, fact, kind = place
        at[where], kind_of[where] = turn, kind
        shown.setdefault(top_key(a.path), {}).setdefault(where, []).append(a)
        turn_of[where] = fact
    kept = {k: _fewest_places(r, c, by_place, turn_of) for k, by_place in shown.items()}
    latest = {k: max(at[w] for w in places) for k, places in kept.items()}
    return (kept, latest, kind_of) if kinds else (kept, latest)


def _value_place(r: Reading, c: Call, a, by_turn: dict[int, str],
                 names: frozenset[str]) -> tuple[str, int, Turn | None, str] | None:
    """Where one argument value of the change came from: (the place's words, its turn, the turn
    that showed it when it was not the agent's own, the place's kind as ``credited_kinds`` names
    it), or None. Once per run for each value: the
    page's source notes and its "In short" ask about the same values of the same change."""
    key = f"credit:{c.n}:{a.path}"
    if key in r.memo:
        return r.memo[key]
    place = None
    if a.seen_at is None:
        pass  # held nowhere, or only in another rendering: the call's checks tell it
    elif a.seen_in == "earlier call":
        place = f"the earlier {by_turn.get(a.seen_at, 'call')} call (turn {a.seen_at})", a.seen_at, None, "call"
    else:
        facts = _source_turns(r, c, a, names)
        if len(facts) > 1:  # answers the log does not choose among: all named; a tool only when they share it
            shared = facts[-1] if len({t.name for t in facts}) == 1 else None
            place = several(facts), facts[-1].turn, shared, "answer"
        elif facts:
            fact = facts[0]
            own = fact is _first_sent(r, c, a)
            kind = "own" if own else "user" if t_is_user(fact) else "answer"
            words = _told_words(fact, a) if kind == "user" else ""
            place = _place(r, fact, own) + words, fact.turn, None if own else fact, kind
    r.memo[key] = place
    return place


def answer_source(r: Reading, c: Call, a, by_turn: dict[int, str], names: frozenset[str]) -> Turn | None:
    """The one tool answer ``_value_place`` credits the value to, or None: a value credited to the
    user, to the agent's own earlier call or pick, to several answers or to nowhere was taken from
    no one answer, so no page may say a call took it from what a look-up returned."""
    place = _value_place(r, c, a, by_turn, names)
    if place is None or place[3] != "answer" or place[2] is None:
        return None
    return place[2] if place[0] == _place(r, place[2]) else None  # one answer, not several sharing a tool


def _told_words(t: Turn, a) -> str:
    """For a number a user message gave in words near its field's word ("two checked bags"), those
    words, and the key's words they lack: "2 from the user" alone would read as if the user had
    said "two nonfree bags" when they gave a count of all bags."""
    value = a.value
    if isinstance(value, bool) or not isinstance(value, int):
        return ""
    key = _last_key(a.path)
    text = " ".join(str(t.content or "").split())
    found = [m for p in _number_patterns(str(value), key) or () if (m := p.search(text.lower())) is not None]
    if not found:
        return ""
    m = min(found, key=lambda m: m.start())
    stems = tuple(w[:3] for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3)
    near = list(re.finditer(r"\w+", text[m.start():]))[:8]  # the number's phrase: to its last word of the field
    end = max([m.end()] + [m.start() + w.end() for w in near if w.group().lower().startswith(stems)])
    end += len(re.match(r"\w*", text[end:]).group())  # the field's word whole ("bags", not "bag")
    said = text[m.start():end].strip(" ,.;:")
    missing = [w for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3 and w[:3] not in said.lower()]
    return f", whose words were \"{clip_words(said, 60)}\"" + (
        f", with no word for \"{join(missing, 3)}\"" if missing else "")


def provenance(r: Reading, c: Call, paths: set[str] | None = None) -> str:
    """``key from place`` for each top-level argument ``credited`` names places for, joined with "; "."""
    return _worded(credited(r, c, paths))


def _worded(credit: dict[str, list[str]]) -> str:
    return "; ".join(f"`{k}` from {join(places, 3)}" for k, places in credit.items())


def _fewest_places(r: Reading, c: Call, by_place: dict[str, list], turn_of: dict[str, Turn | None]) -> list[str]:
    """The places to name for one argument's values, weighed by how many of its values each shows;
    one is left out when the places kept before it show its values too (an id only as the item the
    call sends it for: a flight search of another date shows another flight of that number). The
    rest keep their order."""
    values = [a for credited in by_place.values() for a in credited]

    def shows(where: str, a) -> bool:
        f = turn_of.get(where)
        if f is None:
            return False
        item = item_values(c, a)
        held = records(f.result or "") if item and not t_is_user(f) else ()
        if held:  # a JSON answer: it shows a list item's value only in a record holding the whole item
            return any(item <= record for record in held)
        return _seen(a.value, _last_key(a.path), f, r.lower(f)) and not (
            _distinctive(a.value) and other_item(f, c, a))

    weight = {w: max(len(by_place[w]), sum(shows(w, a) for a in values)) for w in by_place}
    kept: list[str] = []
    for where in sorted(by_place, key=lambda w: -weight[w]):  # stable: ties keep their order
        if kept and all(any(shows(k, a) for k in kept) for a in by_place[where]):
            continue
        kept.append(where)
    return [w for w in by_place if w in kept]


def _worth_telling(r: Reading, c: Call) -> list[str]:
    """The argument paths of a change whose source a reader checks: those that differ from the
    expected call of this tool, or, where the log records none, the values picked unasked."""
    if free_form(c) is not None or made_as_expected(r, c):
        return []
    sent = c.turn.arguments if isinstance(c.turn.arguments, dict) else {}
    same = [e for e in expected_changes(r) or [] if e["name"] == c.name]
    if not same:
        return [p.path for p in picked(r, c)]
    best = min(same, key=lambda e: len(_differing(e["arguments"], sent)))
    differ = [path for path, _want, got in _differing(best["arguments"], sent) if got is not _ABSENT]
    return [a.path for a in check_arguments(r, c.turn)
            if any(a.path == d or a.path.startswith((d + ".", d + "[")) for d in differ)]


def _val(v) -> str:
    return json.dumps(v, ensure_ascii=False)


def source_notes(r: Reading, calls_in_page_order: list[Call]) -> dict[int, str]:
    """One note per change of a failed run's page (by turn): where the values worth checking came
    from, each value described at its first call on the page and referred to after."""
    # (argument key, value) -> the call on the page that told it, the latest turn its words name, and how
    # it was told ("pick", "described" or "place"): a reference stands for those words, so they must hold here too
    told: dict[tuple[str, str], tuple[int, int, str]] = {}
    out: dict[int, str] = {}
    for c in calls_in_page_order:
        paths = _worth_telling(r, c)
        if not paths:
            continue
        values = {a.path: a.value for a in check_arguments(r, c.turn)}
        picks = {p.path: p for p in picked(r, c) if p.path in paths}
        described = {p.path: p for p in user_described(r, c) if p.path in paths}
        fresh, refs = [], {}
        for path in paths:
            at, named, kind = told.get((_last_key(path), _as_text(values[path])), (None, None, None))
            here = "pick" if path in picks else "described" if path in described else "place"
            # a later call's note may name turns after this one, and a user message between two calls may
            # name a value an earlier note said no user message named
            if at is not None and at != c.n and named < c.n and kind == here:
                refs.setdefault(at, []).append(f"`{top_key(path)}`")
            else:
                fresh.append(path)
        parts = []
        for path in fresh:
            if path in picks:
                p = picks[path]
                others = [v for v in p.values if v != p.value]
                shown = ", ".join(_val(v) for v in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
                parts.append(f"`{path}` {_val(p.value)} is one of the {len(p.values)} values {p.source.name}'s answer "
                             f"(turn {p.source.n}) gave `{p.field}`, and no user message names it (the others: {shown})")
            elif path in described:  # a value that differs from the expected call, on the record the user described
                p = described[path]
                parts.append(f"`{path}` {_val(p.value)} is one of the {len(p.values)} values {p.source.name}'s "
                             f"answer (turn {p.source.n}) gave `{p.field}`, and {p.described}")
        plain = {p for p in fresh if p not in picks and p not in described}
        credit, named_by_key = _credits(r, c, plain) if plain else ({}, {})
        said = _worded(credit)
        parts += [said] if said else []
        parts += [f"{join(list(dict.fromkeys(keys)), 3)} as told for the call at turn {at}" for at, keys in refs.items()]
        for path in fresh:  # only what this note said: a value credited nowhere is no reference later
            p = picks.get(path) or described.get(path)
            if p is not None:
                named = max([p.source.n] + [int(n) for n in re.findall(r"at turn (\d+)", p.described or "")])
            elif top_key(path) in named_by_key:
                named = named_by_key[top_key(path)]
            else:
                continue
            kind = "pick" if path in picks else "described" if path in described else "place"
            told.setdefault((_last_key(path), _as_text(values[path])), (c.n, named, kind))
        if parts:
            out[c.n] = "Where its values came from: " + "; ".join(parts) + "."
    return out
