"""The record values an agent's refusal names, kept in its run's record so another trial can answer it.

A failed run that told the user it could not make a change the task expected usually gave a reason
drawn from the record the change acts on ("with basic economy reservations, changes to passenger
names are not allowed"). When a successful trial of the same task looked up the same record and
made that change, the value the refusal named did not forbid it: that is the condition a reader
should stop refusing on. Here the refusal is found (rule_talk.refusal, through rule_reasons) and
each value of the looked-up record it names as a term of its own is kept with the look-up that
showed it; the pages that set trials against each other (corpus/trial_contrast.py,
corpus/one_run.py) say the rest, since only they see the successful trial.
"""

from __future__ import annotations

import json

from .expected_calls import expected_changes, missed_changes
from .reading import Reading
from .arguments import _parsed
from .rule_facts import _fact, _facts, _on_its_own
from .rule_refusals import _refused, allowed

CITED = 2  # record values kept per refusal: a reason names one or two


def refused(r: Reading, query) -> dict | None:
    """{"tool", "turn", "text", "cites": [[key, value, look-up tool, its query, its turn], ...],
    "allowed": {"field", "key", "value", "rule", "rule_turn"} when the system prompt allows it} for
    the first expected change the run never made and told the user it could not make, when the
    sentence names a value of the record that change acts on; None otherwise. ``query``: a look-up's
    one value as trials compare it (trial_record._query)."""
    if r.run.outcome.success or not r.has_interlocutor:
        return None
    for expected in missed_changes(r):
        name = expected.get("name") or ""
        said = _refused(r, name)
        if said is None:
            continue
        args = expected.get("arguments") if isinstance(expected.get("arguments"), dict) else {}
        low = said.text.lower()
        by_turn = {c.n: c for c in r.calls}
        cites = []
        for f in _facts(r, args, said.turn, set()):
            if f.turn is None or f.moment or not f.phrase or f.phrase not in low or not _on_its_own(low, f.phrase):
                continue  # a value the call itself sends, or one the sentence does not name as a term
            look = by_turn.get(f.turn)
            query_ = query(look) if look is not None else ""
            if query_:
                cites.append([f.key, f.value, look.name, query_, f.turn])
        if cites:
            out = {"tool": name, "turn": said.turn, "text": said.text, "cites": cites[:CITED]}
            answer = allowed(r, name, args, _facts(r, args, None, set()), said)
            if answer is not None:  # the run's own prompt allows what it refused: no trial needed to say so
                out["allowed"] = {"field": answer.field, "key": answer.key, "value": answer.value,
                                  "rule": answer.rule, "rule_turn": answer.rule_turn}
            return out
        return None
    return None


def declined(r: Reading) -> list[dict]:
    """On a success with a person on the other side: each change tool of the run or its task that the
    agent told the user it could not use before any change of its own with that tool, and never sent
    on that record after (a refusal it went back on is no "no" its failed trials missed), with the values
    of the last look-up before that sentence (the record it had in view):
    [{"tool", "turn", "text", "on": [[key, value], ...]}]. A failed trial that made that change on
    that record is set against it (corpus/trial_contrast.py): the success's "no" is the step it missed."""
    if not r.run.outcome.success or not r.has_interlocutor:
        return []
    expected_changes(r)  # reads the task's expected calls into the run's memo
    names = list(dict.fromkeys([c.name for c in r.calls if c.writes and c.name]
                               + [e.get("name") or "" for e in r.memo.get("expected.all") or [] if e.get("name")]))
    out = []
    for name in names:
        said = _refused(r, name)
        made = min((c.n for c in r.calls if c.name == name and c.writes and not c.error), default=None)
        if said is None or (made is not None and made < said.turn):
            continue
        look = _named_record(r, said)
        if look is not None:
            ids = {v for v in look.turn.arguments.values() if isinstance(v, str)}
            if any(c.name == name and c.writes and c.n > said.turn and isinstance(c.turn.arguments, dict)
                   and ids & set(map(str, c.turn.arguments.values())) for c in r.calls):
                continue  # it sent that change after all, and only the tool's error stopped it: no "no" to learn from
            on = [[k, v] for k, v in look.turn.arguments.items() if isinstance(v, str)]
            out.append({"tool": name, "turn": said.turn, "text": said.text, "on": on})
    return out


def _named_record(r: Reading, said):
    """The one look-up before the refusal whose record the sentence names most values of as terms of
    their own ("basic economy", "insurance" "no" is not a term): the record the "no" was about. None
    when no record's values are named, or two records' alike (which one it refused is not settled)."""
    low = said.text.lower()
    scored = []
    for c in r.calls:
        if c.n >= said.turn or c.writes or c.error or not isinstance(c.turn.arguments, dict):
            continue
        answer = _parsed(c.turn.result or "")
        if not isinstance(answer, dict):
            continue
        named = {(k, f.phrase) for k, v in answer.items() if isinstance(v, str)
                 and (f := _fact(k, v, "", c.n)).phrase and f.phrase in low and _on_its_own(low, f.phrase)}
        if named:
            scored.append((len(named), frozenset(named), c))
    if not scored:
        return None
    best = max(n for n, _v, _c in scored)
    top = [(values, c) for n, values, c in scored if n == best]
    if len({values for values, _c in top}) != 1 or len({json.dumps(c.turn.arguments, sort_keys=True) for _v, c in top}) != 1:
        return None  # two records hold what it named: which one it refused is not settled
    return top[-1][1]
