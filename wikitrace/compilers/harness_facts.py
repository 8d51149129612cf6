"""The "In short" fact of a run a harness stopped (a step limit, cost, context): why it stopped, and
what the calls the limit allowed went to, so the page says more than "halted" (compilers/in_short.py
puts it among a failed run's facts).
"""

from __future__ import annotations

from .arguments import is_chosen
from .changes import what_ran
from .error_listings import listed_in_errors
from .insight_parts import edits_of
from .insight_words import answer_seen_in, expected_answer, join
from .model_cost import model_cost
from .near_words import near_look_up, near_phrase
from .reading import Reading, harness_reason
from .schema import KeyFact
from .text import clip


def _repeats(r: Reading) -> list[tuple[int, int]]:
    """(turn, the earlier turn it repeated) for each call sent with the arguments of an earlier call
    of the same tool that had got the same answer: a call spent on nothing new."""
    seen: dict[tuple, int] = {}
    out = []
    for c in r.calls:
        key = (c.sig, c.turn.result or "")  # the call's signature, encoded once per run (as ``repeats`` groups)
        if key in seen:
            out.append((c.n, seen[key]))
        else:
            seen[key] = c.n
    return out


ALIKE = 3  # calls in a row answered alike before a limit: past chance, the words sent were not what mattered


def _answered_alike(r: Reading) -> list:
    """The calls that ended the run, one tool's, each sent other arguments and each given the same
    answer as the one before (at least ``ALIKE``): the tool had nothing else to give for what they
    asked, and the limit came while the run only reworded it."""
    tail = []
    for c in reversed(r.calls):
        if tail and (c.name != tail[-1].name or (c.turn.result or "") != (tail[-1].turn.result or "")
                     or c.sig == tail[-1].sig):
            break
        tail.append(c)
    return tail[::-1] if len(tail) >= ALIKE and len({c.sig for c in tail}) == len(tail) else []


HARNESS_STOPPED = "The harness stopped the run"  # how the fact of a run the harness ended opens
HELD_UNGIVEN = "had been returned by the look-up at turn"  # such a run had the expected answer and never gave it


def harness_fact(r: Reading) -> list[KeyFact]:
    """A run the harness stopped: why, what its calls went to (repeats, one call reworded, the calls
    before its first edit, its model cost) and, for a question with an expected answer, whether a
    look-up or an error's list had held it."""
    reason = harness_reason(r)
    if reason is None:
        return []
    at = r.harness[-1].turn if r.harness else (r.calls[-1].n if r.calls else None)
    text = f"{HARNESS_STOPPED}: {clip(reason, 100).rstrip('.')}." + _spent(r) + _before_first_edit(r)
    again = _repeats(r)
    if again:  # where a limit ended the run, a call that got nothing new was one of too few
        pairs = join([f"turn {n} repeated turn {m}" for n, m in again], 3)
        text += (f" {len(again)} of its {len(r.calls)} calls sent an earlier call's arguments again and got the same "
                 f"answer ({pairs}).")
    alike = _answered_alike(r)
    if alike:  # the limit came while the run reworded one call that answered alike whatever it was sent
        text += (f" Its last {len(alike)} calls (turns {alike[0].n} to {alike[-1].n}) each sent {alike[0].name} other "
                 f"arguments and each got the same answer (\"{clip(alike[-1].turn.result or '', 60)}\"): the limit "
                 "came while the run reworded a call that gave nothing new.")
        again = again + [(c.n, c.n) for c in alike]
    gold = expected_answer(r)
    if gold is not None and not is_chosen(r, gold) and not any(c.writes and not c.error for c in r.calls):
        seen = answer_seen_in(r, gold)
        listed = None if seen else listed_in_errors(r, gold, None)
        near = None if seen or listed else near_look_up(r, gold, None)
        text += (f" No answer had been given; the expected \"{clip(gold, 80)}\" {HELD_UNGIVEN} {seen.n}." if seen else
                 f" No answer had been given; the expected \"{clip(gold, 80)}\" appeared in no look-up that went "
                 f"through, only in {listed.where('answered')}." if listed else
                 f" No answer had been given, and no look-up had returned the expected \"{clip(gold, 80)}\" as written"
                 f"{near_phrase(near)}." if near else
                 f" No answer had been given, and no look-up had returned the expected \"{clip(gold, 80)}\".")
        return [KeyFact(text, ([at] if at is not None else []) + sorted({t for pair in again for t in pair}) + (
            [seen.n] if seen else listed.turns if listed else [near[0].n] if near else []))]
    return [KeyFact(text, ([at] if at is not None else []) + sorted({t for pair in again for t in pair}))]


def _before_first_edit(r: Reading) -> str:
    """" 6 of its 7 calls came before its first file edit (turn 7), 3 of them failing (mvn, javac,
    open)." for a stopped run that edited a file: how much of what the limit allowed went before
    the change, and on what."""
    edits = edits_of(r)
    if not edits:
        return ""
    first = edits[0][0].n
    before = [c for c in r.calls if c.n < first]
    if not before:
        return ""
    failed = list(dict.fromkeys(what_ran(c.turn) for c in before if c.error))
    return (f" {len(before)} of its {len(r.calls)} calls came before its first file edit (turn {first})"
            + (f", {sum(c.error for c in before)} of them failing ({join(failed, 4)})." if failed else "."))


def _spent(r: Reading) -> str:
    """What the log records the run's model calls cost (SWE-agent's ``model_stats``): a run stopped
    for cost may have made no more calls than its siblings, only dearer ones."""
    spent = model_cost(r)
    if spent is None:
        return ""
    cost, calls = spent
    made = f" over {calls} model call{'s' if calls != 1 else ''}" if calls else ""
    return f" The log records its model cost as {cost:g}{made}."
