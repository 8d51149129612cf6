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

from .expected_calls import missed_changes
from .reading import Reading
from .rule_facts import _facts, _on_its_own
from .rule_refusals import _refused

CITED = 2  # record values kept per refusal: a reason names one or two


def refused(r: Reading, query) -> dict | None:
    """{"tool", "turn", "text", "cites": [[key, value, look-up tool, its query, its turn], ...]} for
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
            return {"tool": name, "turn": said.turn, "text": said.text, "cites": cites[:CITED]}
        return None
    return None
