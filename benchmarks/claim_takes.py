"""The claims of a corpus about where a call took its values from, for claim_turns.py: a look-up's
"a later call took a from what it returned" (*took*) and a procedure lesson's "taking a from T"
(*taking*); what each must hold is said in claim_turns's docstring."""

from __future__ import annotations

import re
from pathlib import Path

from claim_turns import Tally, _args, _astray, _distinctive, _is_user, _leaves, _text, _turns, _values, answered, holds


_TOOK = re.compile(r"at turn (\d+)(?: with [^;]*)?; a later call took ([\w, ]+?) from what it returned")


def _user_gave(t: dict, key: str, v) -> bool:
    """A user message that wrote the value: a number or a short word only where it names the field."""
    text = _text(t)
    if not holds(text, v):
        return False
    plain = isinstance(v, (int, float)) or len(str(v)) <= 3
    return not plain or any(w[:4] in text.lower() for w in re.split(r"[^a-z]+", key.lower()) if len(w) >= 3)


def check_took(root: str, step: str, line: str, tally: Tally, where: str) -> None:
    """Each argument a look-up line says a later call took from its answer: some later call sent a
    value under it that the answer held and the user did not give (see the module's docstring)."""
    m = _TOOK.search(line)
    if m is None:
        return
    turns = _turns(root, step)
    n = int(m.group(1))
    t = turns.get(n)
    for key in m.group(2).split(", "):
        tally.claims["took"] += 1
        ok = False
        sent = _values(turns, key, None, n) or [(c, u["arguments"]) for c, u in sorted(turns.items())
                                                if key == "argument" and c > n and u.get("type") == "function_call"
                                                and isinstance(u.get("arguments"), str)]  # one free-form text
        for c, v in sent:
            if t is None or not holds(_text(t), v) or v in [x for _p, x in _leaves(_args(t))]:
                continue
            users = [u for k, u in turns.items() if k < c and _is_user(u) and _user_gave(u, key, v)
                     and (not (_distinctive(v) or key == "argument") or k > n)]
            if not users:
                ok = True
                break
        if not ok:
            tally.wrong["took"] += 1
            tally.examples.append(f"took: {where} [{step} turn {n}] `{key}`")


_TAKING = re.compile(r"call (\w+), taking (.*?)\.(?= |$)", re.M)
_SOURCE = re.compile(r"^- \[(step-\d+)\].*?\): turn (\d+): (\w+)")


_COUNTED = re.compile(r" \((\d+) of (?:the )?(\d+)(?: successful runs here)?\)$")
_SOURCE_OUTCOME = re.compile(r"^- \[(step-\d+)\]\([^)]*\) \((success|failure)")


def _took_from(root: Path, step: str, at: int, key: str, place: str) -> bool:
    """Whether the run's call at turn ``at`` took ``key`` from ``place`` as the clause says: some
    turn of that kind before it holds a value the call sent under the key (see the module's docstring)."""
    turns = _turns(str(root), step)
    sent = [v for _c, v in _values(turns, key, at, -1)]
    before = [t for n, t in sorted(turns.items()) if n < at]
    if place == "the user's words":
        return any(_is_user(t) and (holds(_text(t), v) or answered(_text(t), key, v)) for t in before for v in sent)
    # an answer of that tool held it, about the call's own record when any answer about it held it
    held = [(t, v) for t in before for v in sent if t.get("type") == "function_call" and holds(_text(t), v)
            and v not in [x for _p, x in _leaves(_args(t))]]
    near = [(t, v) for t, v in held if not _distinctive(v) or not _astray(t, turns[at], key, v)] or held
    return any(t.get("name") == place for t, _v in near)


def check_taking(root: Path, page: Path, text: str, tally: Tally) -> None:
    """A procedure lesson's "call X, taking a and b from T; c from the user's words": some turn of
    the named kind before the run's call holds a value the call sent under each argument, and an
    answer so named is not only the echo of a call that was sent the value. A clause counted over
    the page's successful runs ("(7 of the 10 successful runs here)") is checked over those runs:
    at least that many took it so; its copy with the counts left out (What to do) is that claim."""
    clauses = list(_TAKING.finditer(text))
    sources = [m for m in map(_SOURCE.match, text.splitlines()) if m]
    if not clauses or not sources or sources[0].group(3) != clauses[0].group(1):
        return
    counted = next((c for c in clauses if "successful runs here" in c.group(2)), None)
    won = [(m.group(1), int(m.group(2))) for line in text.splitlines() if (o := _SOURCE_OUTCOME.match(line))
           and o.group(2) == "success" and (m := _SOURCE.match(line))]
    found = counted or clauses[0]
    step, at = sources[0].group(1), int(sources[0].group(2))
    for part in found.group(2).split("; "):
        n = _COUNTED.search(part)
        keys, _, place = (part[:n.start()] if n else part).rpartition(" from ")
        for key in re.split(r", | and ", keys):
            if not key or key.endswith(" more") or key in ("others", "another"):
                continue
            tally.claims["taking"] += 1
            if counted is not None and n is not None:
                ok = sum(_took_from(root, s, t, key, place) for s, t in won) >= int(n.group(1))
            else:
                ok = counted is None and _took_from(root, step, at, key, place)
            if not ok:
                tally.wrong["taking"] += 1
                tally.examples.append(f"taking: {page.name} [{step} turn {at}] `{key}` from {place}")
