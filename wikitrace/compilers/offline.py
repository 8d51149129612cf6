"""The offline compiler: a deterministic reading of the turn log, no model involved.

It cannot know *why* a run went the way it did, so it says only what the log
shows and labels itself ``compiler: offline``. Items are ranked, not taken in
order, and the page says how many calls it left out:

- success: the last state-changing call (what settled the outcome), the other
  state-changing calls that went through, every call that got past an error
  (a recovery), the look-ups whose observations supplied an argument of those
  calls, the first look-up and the last one before the settling change (every
  distinct look-up when the only change is the answer);
- failure, ranked so that the first cause is the turn the log most points at:
  state-changing calls shown in full, their arguments checked against what the
  run had seen or been told before them and against the rules of its own system
  prompt (a call where either check fails comes first); errors the run never got
  past (a program the machine lacks after the run's own changes: runs that
  succeed meet it too); identical calls repeated; a run that never acted; a run
  the harness stopped before any change, with what its look-ups had returned. An
  ending by the harness is stated as such, never as the run's own error.

Each change carries what the agent wrote before it (its reasoning, or its last
message since its previous call): the why of the call, in the agent's own words.

One call is told once: a retry or an edit inside a fail-edit-pass item, or an
error inside its repetition, gets no item of its own. A call that answered
nothing (a think tool) is quoted as what the agent wrote before its next change.

Insights (run_insights.py) name the run's own tools, argument keys, errors and rules.
"""

from __future__ import annotations

import json

from collections import Counter

from ..runs.errors import tests_passed
from ..runs.model import Run
from .base import CompileStats
from .changes import Edit, edit_of, what_ran
from .grounding import ground
from .in_short import in_short
from .insight_words import answer_seen_in, expected_answer, free_form, gives_answer, join, report_message
from .expected_calls import change_notes, differs_from_expected, made_as_expected, missed_notes
from .option_choices import item_note, option_note
from .verdict_evidence import verdict_note
from .value_sources import source_notes
from .page_items import (FOUND_NEAR_ANSWER, answered_nothing, diff_phrase, found_notes, halted_evidence, label,
                         lacking_support, looked_up, short_call, shown_answer, silent_items)
from .page_notes import (answer_context, asked_note, check_notes, followed_note, listed_note,
                         given_answer_note, reason_note, record_rule_notes, used_record, wrong_answer)
from .page_causes import Item, answer_text as _answer, quote_marks_note, same_error_once
from .record_words import messages_notes, named_field_notes
from .run_insights import insights_for
from .run_patterns import patterns_of
from .arguments import check_arguments
from .reading import Call, Reading, command_of, full_arguments, harness_reason, read_run
from .schema import MAX_INSIGHTS, MAX_ITEMS, Compilation, Evidence
from .text import clip, quote_of, short_task, signature


class OfflineCompiler:
    name = "offline"
    model = None

    def __init__(self) -> None:
        self._stats = CompileStats()

    def stats(self) -> CompileStats:
        return self._stats

    async def compile(self, run: Run) -> Compilation:
        self._stats.runs += 1
        return compile_offline(run)


def compile_offline(run: Run) -> Compilation:
    reading = read_run(run)
    items = _success_items(reading) if run.outcome.success else _failure_items(reading)
    chosen = _choose(items)
    if run.outcome.success:  # decisions read as the run's procedure; causes stay ranked, likeliest first
        chosen.sort(key=lambda i: min(i.evidence.turns or [0]))
    # a look-up error the run got past is how it found its way, not why it failed: the insights still
    # read it, the page leaves it out when it has a cause to show
    shown = [i for i in chosen if not i.got_past] or chosen
    if not run.outcome.success:  # where the values worth checking came from: once a page, at their first call shown
        told = source_notes(reading, [i.call for i in shown if i.kind == "write" and i.call is not None])
        for i in shown:
            if i.kind == "write" and i.call is not None and i.call.n in told:
                i.evidence.notes.append(told[i.call.n])
    cited = {n for i in shown for n in i.evidence.turns}
    calls = reading.calls
    errors = sum(1 for c in calls if c.error)
    tools = list(dict.fromkeys(c.name for c in calls))
    verb = "succeeded" if run.outcome.success else "failed"
    description = (
        f"The agent {verb} after {len(calls)} tool call{'s' if len(calls) != 1 else ''}"
        f" ({errors} returned an error)"
        + (f", using {', '.join(tools[:6])}{' and more' if len(tools) > 6 else ''}." if tools
           else ", without calling a tool.")
    )
    reason = harness_reason(reading)
    if reason:
        description += f" The harness stopped the run: {reason}."
    comp = Compilation(
        title=f"[{run.outcome.label}] {short_task(run.task.instruction)}",
        description=description,
        outcome=run.outcome.label,
        evidence=[i.evidence for i in shown],
        insights=insights_for(reading, chosen)[:MAX_INSIGHTS],
        compiler="offline",
        left_out=sum(1 for c in calls if c.n not in cited),
        patterns=patterns_of(reading),
        in_short=in_short(reading),
    )
    return ground(comp, run)


def _changes(item: Item) -> bool:
    """An item about a state change that went through (an edit, a submit, a booking)."""
    return item.call is not None and item.call.writes and not item.call.error and item.kind in ("write", "recovery")


def _choose(items: list[Item]) -> list[Item]:
    """The MAX_ITEMS best-ranked items, with up to half the slots kept for state changes that
    went through, file edits first: when slots run short, look-ups and errors of look-ups
    give way before the edit or the submit that decided the run."""
    ranked = sorted(items, key=lambda i: (-i.rank, min(i.evidence.turns or [0])))
    chosen = ranked[:MAX_ITEMS]
    changes = [i for i in ranked if _changes(i)]
    # the best-ranked change (the one that settled the run), then file edits, then the rest
    wanted = (changes[:1] + sorted(changes[1:], key=lambda i: edit_of(i.call.turn) is None))[: MAX_ITEMS // 2]
    for item in wanted:
        if item in chosen:
            continue
        out = next((i for i in reversed(chosen) if not _changes(i)), None)
        if out is None:
            break
        chosen[chosen.index(out)] = item
    return sorted(chosen, key=lambda i: (-i.rank, min(i.evidence.turns or [0])))


def _call_line(call: Call) -> str:
    """The call, and when the log kept the text as sent (an action after blank lines) that text
    quoted too: what a harness refused may be its form, not its arguments."""
    sent = call.turn.extra.get("sent")
    return f"{call.name}({full_arguments(call.turn)})" + (f"\nsent as: {json.dumps(sent)}" if isinstance(sent, str) else "")


def _recoveries(calls: list[Call]) -> list[tuple[Call, Call]]:
    """(error, the first later call of the same program that went through): a shell call is
    matched by the program it ran, any other call by its tool."""
    out, open_errors = [], {}
    for c in calls:
        key = what_ran(c.turn)
        if c.error:
            open_errors.setdefault(key, c)
        elif key in open_errors:
            out.append((open_errors.pop(key), c))
    return out


def _edits_between(calls: list[Call], start: int, end: int) -> list[tuple[Call, Edit]]:
    """The file edits that went through between two turns."""
    return [(c, e) for c in calls if start < c.n < end and c.writes and not c.error and (e := edit_of(c.turn))]


def _edits_phrase(edits: list[tuple[Call, Edit]]) -> str:
    """``Edit changed `a.py` (in `total`) at turns 6 and 8``: edits of one place told once."""
    places: dict[tuple[str, str], list[int]] = {}
    for c, e in edits:
        places.setdefault((c.name, e.phrase()), []).append(c.n)
    parts = [f"{name} changed {where} at turn{'s' if len(ns) > 1 else ''} "
             + (", ".join(map(str, ns[:-1])) + f" and {ns[-1]}" if len(ns) > 1 else str(ns[0]))
             for (name, where), ns in list(places.items())[:3]]
    return "; ".join(parts) + (f" (and {len(places) - 3} more places)" if len(places) > 3 else "")


def _same_again(err: Call, fix: Call) -> str:
    """How the call that went through relates to the failed one, in a phrase."""
    before, after = command_of(err.turn), command_of(fix.turn)
    if before is not None and before == after:
        return "the same command"
    return "the same call" if not _changed_keys(err, fix) else label(fix, 80)


def _changed_keys(a: Call, b: Call) -> list[str]:
    x, y = a.turn.arguments, b.turn.arguments
    if isinstance(x, dict) and isinstance(y, dict):
        return [k for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
    return [] if x == y else ["the argument"]


def _success_items(r: Reading) -> list[Item]:
    calls = r.calls
    if not calls:
        last = next((t for t in reversed(r.run.turns) if t.type == "message" and t.role == "assistant"), None)
        return [Item(100, Evidence(
            decision="Answered without calling any tool.",
            support="The run was judged a success with no environment call" + (
                ": what the agent told the user rests on the user's messages and its system prompt alone."
                if r.has_interlocutor else ".") + (
                        f" Its last message (turn {last.turn}) is quoted below." if last else ""),
            turns=[last.turn] if last else [], quote=quote_of(last.content) if last else None,
            notes=messages_notes(r, -1, last.turn if last else None)), "idle")]
    items: list[Item] = []
    writes = [c for c in calls if c.writes and not c.error]
    supplied: dict[int, list[str]] = {}  # turn -> the argument keys a later change took from its answer
    taken: dict[int, list[tuple[str, object]]] = {}  # turn -> (argument path, value) a later change took
    for w in writes:
        for a in check_arguments(r, w.turn):
            if a.seen_at is not None and a.seen_in == "observation":
                supplied.setdefault(a.seen_at, []).append(a.path.split(".")[0].split("[")[0])
                taken.setdefault(a.seen_at, []).append((a.path, a.value))
    recovered = _recoveries(calls)
    fixes = {fix.n for _, fix in recovered}  # one call, one item: a retry or an edit told in a recovery
    for err, fix in recovered:  # is not told again on its own
        changed = _changed_keys(err, fix)
        edits = _edits_between(calls, err.n, fix.n)
        fixes.update(c.n for c, _ in edits[:3] if not c.confirmed)  # an agreed edit keeps its own line
        passed = tests_passed(fix.turn.result)
        if edits:  # fail, edit, pass: what was changed and that the same check then went through
            again = _same_again(err, fix)
            items.append(Item(80, Evidence(
                decision=f"After {label(err, 80)} failed at turn {err.n}, {_edits_phrase(edits)}; "
                         f"{again} then went through at turn {fix.n}"
                         + (f" and its tests passed ({clip(passed, 80)})." if passed else "."),
                support=f"The first call returned an error ({clip(err.turn.result, 100)}); "
                        f"after the edit it returned: {clip(fix.turn.result, 100)}",
                turns=[err.n] + [c.n for c, _ in edits[:3]] + [fix.n], quote=quote_of(err.turn.result),
                call=_call_line(edits[-1][0])), "recovery", fix))
            continue
        took = list(dict.fromkeys(supplied.get(fix.n, [])))  # the retry's own look-up line is folded in here
        items.append(Item(80, Evidence(
            decision=f"After {err.name} failed at turn {err.n}, called it again at turn {fix.n}"
            + (f" with {', '.join(changed)} changed" if changed else " with the same arguments")
            + (f"; a later call took {', '.join(took[:4])} from what it returned." if took else "."),
            support=f"The first call returned an error ({clip(err.turn.result, 100)}); "
                    f"the second returned: {clip(fix.turn.result, 100)}",
            turns=[err.n, fix.n], quote=quote_of(err.turn.result), call=_call_line(fix),
            notes=listed_note(calls, err) + quote_marks_note(err, fix)), "recovery", fix))
    last_write = writes[-1] if writes else None
    # a free-text answer (a QA run's Finish[...]) ends the run but changes nothing: never worded as a change
    answers = {c.n for c in writes if free_form(c) is not None and gives_answer(r, c)}
    seen: set[str] = set()
    for c in reversed(writes):  # the latest of identical state changes is the one that stood
        key = signature(c.turn)
        if key in seen or c.n in fixes:
            continue
        seen.add(key)
        final = c is last_write
        edit = edit_of(c.turn)
        notes = reason_note(r, c) + (given_answer_note(r, c) if final else []) + item_note(r, c) + option_note(r, c) \
            + verdict_note(r, c)
        items.append(Item(100 if final else 60 + c.n / 10_000, Evidence(notes=notes,
            decision=f"Called {c.name} at turn {c.n}" + (f", changing {edit.phrase()}" if edit else "") + diff_phrase(c)
            + (", after the user agreed" if c.confirmed else "")
            + (("; the answer that ended the run." if c.n in answers else "; the run's last state-changing call.")
               if final else "."),
            support=f"The environment accepted it: {shown_answer(c.turn.result)}" if c.turn.result
            else "The environment accepted it.",
            turns=[c.n], quote=quote_of(c.turn.result), call=_call_line(c)), "write", c))
    # look-ups: those whose observation supplied a value the state-changing calls used, then the first
    first = next((c for c in calls if not c.writes and not c.error), None)
    # and the last one before the change that settled the run: what it acted on when no argument shows it
    # (a hand-off after reading the booking it could not change)
    latest = next((c for c in reversed(calls) if last_write is not None and c.n < last_write.n and not c.writes
                   and not c.error and not answered_nothing(c)), None)
    first_change = min((w.n for w in writes if w.n not in answers), default=None)
    told: set[str] = set()
    # with no state change at all, or none but the answer that ended the run (a QA log's Finish), the
    # look-ups are what the answer rests on: each distinct one counts
    acted = writes if not (len(writes) == 1 and gives_answer(r, writes[0])) else []
    for c in calls:
        if c.writes or c.error or c.n in fixes or answered_nothing(c) or (
                c.n not in supplied and c is not first and c is not latest and (acted or signature(c.turn) in told)):
            continue
        told.add(signature(c.turn))
        keys = list(dict.fromkeys(supplied.get(c.n, [])))
        items.append(Item(55 if keys else 50 - c.n / 10_000, Evidence(
            decision=f"Looked up with {short_call(c)} at turn {c.n}"
            + (f"; a later call took {', '.join(keys[:4])} from what it returned." if keys
               else " before any change." if first_change is not None and c.n < first_change else "."),
            support=(keys and used_record(r, c, taken[c.n])) or (
                f"It returned: {shown_answer(c.turn.result)}" if c.turn.result else "It returned nothing."),
            turns=[c.n], quote=quote_of(c.turn.result), notes=followed_note(r, c) + named_field_notes(r, c)),
            "lookup", c))
    items += _silent(r, 58)
    said = report_message(r) if not any(c.writes for c in calls) else None  # look-ups only, none a failed change
    if said is not None:  # settled without a change: what it told the user is the answer a reader needs
        items.append(Item(90, Evidence(
            decision=f"Answered after {len(calls)} look-up call{'s' if len(calls) != 1 else ''} "
                     f"({join(list(dict.fromkeys(c.name for c in calls)), 3)}) without a change.",
            support=f"The run was judged a success. What the agent wrote after its last call (turn {said.turn}) "
                    "is quoted below.", turns=[said.turn], quote=quote_of(said.content, 240),
            notes=messages_notes(r, said.turn, None)), "idle"))
    return items


def _silent(r: Reading, rank: float) -> list[Item]:
    """Calls that sent text and answered nothing (a think tool), with the text they hold."""
    return [Item(rank + c.n / 10_000, Evidence(decision=decision, support=support, turns=[c.n], quote=quote),
                 "note", c) for c, decision, support, quote in silent_items(r)]


def _failure_items(r: Reading) -> list[Item]:
    calls = r.calls
    items: list[Item] = []
    told: set[str] = set()
    ran = {c.n: what_ran(c.turn) for c in calls}
    changed = any(c.writes and not c.error for c in calls)
    afters: dict[int, str] = {}  # what became of each error: "; no later javac call went through."
    for c in calls:
        if not c.error or signature(c.turn) in told:
            continue
        told.add(signature(c.turn))
        prev = next((p for p in reversed(calls) if p.n < c.n), None)
        # got past: a later run of the same program (or call of the same tool) went through
        past = next((x for x in calls if x.n > c.n and not x.error and ran[x.n] == ran[c.n]), None)
        edits = _edits_between(calls, c.n, past.n) if past is not None else []
        if past is None:
            after = f"; no later {ran[c.n]} call went through."
        else:
            after = (f"; a later {ran[c.n]} call went through at turn {past.n}"
                     + (f", after {_edits_phrase(edits)}." if edits else "."))
        afters[c.n] = after
        lacking = lacking_support(c, changed)  # a missing program: below the run's own changes
        items.append(Item(30 if past else 45 + c.n / 10_000 if lacking and changed else 80 + c.n / 10_000, Evidence(
            decision=(f"Called {c.name} at turn {c.n}" if c.writes else f"Called {short_call(c)} at turn {c.n}")
            + (f", right after {prev.name} at turn {prev.n}" if prev else "") + after,
            support=lacking or f"The environment answered with an error: {clip(c.turn.result)}",
            turns=([prev.n] if prev else []) + [c.n], quote=quote_of(c.turn.result),
            call=_call_line(c) if c.writes else None,
            # a change that never went through: how it differs from the one the log expected
            notes=listed_note(calls, c) + (change_notes(r, c) if c.writes and past is None else [])), "error", c,
            got_past=past is not None and not c.writes))
    # a loop: the same call answered the same way, three times or more (the same command in
    # another folder, or answered differently, is no repetition)
    repeats = Counter((signature(c.turn), _answer(c)) for c in calls)
    for key, n in repeats.items():
        if n < 3:
            continue
        same = [c for c in calls if (signature(c.turn), _answer(c)) == key]
        errs = sum(1 for c in same if c.error)
        if errs == n:
            how = "each of them was answered with an error"
        elif errs:
            how = f"{errs} of them were answered with an error"
        else:
            how = "none of them was answered with an error"
        shown = same if n <= 6 else same[:5] + [same[-1]]  # the last one is quoted, so it is cited
        # one call, one item: the error first met at this call is told by the repetition
        first_error = next((i for i in items if i.kind == "error" and i.call is same[0]), None)
        if first_error is not None:
            items.remove(first_error)
        listed = (", ".join(str(c.n) for c in same[:5]) + ", …, " + str(same[-1].n) if n > 6
                  else ", ".join(str(c.n) for c in same))
        # what became of the error it repeated: "no later Finish call went through"
        after = afters[first_error.call.n] if first_error else "."
        items.append(Item(first_error.rank if first_error else 60, Evidence(
            decision=f"Repeated the same call {short_call(same[0], 60)} {n} times (turns {listed}){after}",
            support=f"Nothing in the arguments or the answer changed and {how}; each returned: {clip(same[-1].turn.result, 100)}",
            turns=[c.n for c in shown], quote=quote_of(same[-1].turn.result),
            call=_call_line(same[0]) if same[0].writes else None,
            notes=change_notes(r, same[0]) if same[0].writes and not any(
                x.n > same[0].n and not x.error and ran[x.n] == ran[same[0].n] for x in calls) else []),
            *(("error", same[0]) if first_error else ("loop", same[-1]))))  # the lesson stays the error's
    items = same_error_once(items, afters)
    writes = [c for c in calls if c.writes and not c.error]
    # only the last change, and only when the agent (not the harness) ended the run, is the
    # answer that ended it: a WebShop click on a product before the purchase ended nothing
    answered = writes[-1] if writes and harness_reason(r) is None else None
    for c in writes:
        notes, flagged = check_notes(r, c)
        notes = change_notes(r, c) + reason_note(r, c) + notes
        missed = missed_notes(r) if c is writes[-1] else []
        notes += missed
        if free_form(c) is None:
            notes = notes + record_rule_notes(r, c)
        else:
            notes = notes + answer_context(r, c) + item_note(r, c) + option_note(r, c) + verdict_note(r, c)
            gold = expected_answer(r)
            if c is answered and gives_answer(r, c) and not (gold and answer_seen_in(r, gold, c)):
                # what it read, where no page held the expected answer: the last pages before the answer
                notes += found_notes(looked_up(r, c.n)[-FOUND_NEAR_ANSWER:])
        last = c is writes[-1]
        edit = edit_of(c.turn)
        # the task asked for this very change: context, ranked below the causes (unless it carries the changes
        # missed; a look-up it skipped is no reason to rank a change made as expected first)
        expected = made_as_expected(r, c) and not any(n.startswith("The log records ") and " expected change" in n
                                                       for n in missed)
        if expected:
            notes = [n for n in notes if not n.startswith("The log records this same ")]
        rank = (20 if expected else 90 if flagged else 70 if last else 55 if edit else 50) + c.n / 10_000
        items.append(Item(rank, Evidence(
            decision=f"Called {c.name} at turn {c.n}" + (f", changing {edit.phrase()}" if edit else "") + diff_phrase(c)
            + (", after the user agreed." if c.confirmed else "."),
            support=(wrong_answer(r, c) if c is answered else None) or (
                "The call went through, and the log records this same call among those the task expected." if expected else
                "The call went through, but it is not the call the log records as expected for this task: the first "
                "note below says where they differ." if differs_from_expected(r, c) else
                "The call went through, yet the run was judged a failure, so the change it made may not be "
                "what the task asked for" + (" (see the checks below)." if flagged else ".")),
            turns=[c.n], quote=quote_of(c.turn.result), call=_call_line(c), notes=notes), "write", c))
    items += _silent(r, 25)  # context, shown when slots are left: never in place of a cause
    ended = halted_evidence(r, writes)
    if ended is not None:  # below the errors no later call got past: those may be why nothing went through
        ended.notes += missed_notes(r)  # it also tells a run of look-ups only: no second item for that
        items.append(Item(79, ended, "idle"))
    elif not writes and not any(c.error for c in calls):
        last = next((t for t in reversed(r.run.turns) if t not in r.harness), None)
        said = report_message(r)
        if calls:
            decision = (f"Made {len(calls)} look-up call{'s' if len(calls) != 1 else ''} "
                        f"({join(list(dict.fromkeys(c.name for c in calls)), 3)}) and "
                        + ("gave no answer." if expected_answer(r) is not None else "no call that changes state."))
            support = ("The run was judged a failure without giving an answer." if expected_answer(r) is not None
                       else "The run was judged a failure without any state-changing call.")
        else:
            decision = "Ended the run without calling any tool."
            support = "The run was judged a failure without a single environment call."
        if said is not None:  # what the agent last told the user: where it left the request
            support += f" What the agent wrote after its last call (turn {said.turn}) is quoted below."
            last = said
        items.append(Item(40, Evidence(decision=decision, support=support, turns=[last.turn] if last else [],
                                       quote=quote_of(said.content, 240) if said is not None else None,
                                       notes=(asked_note(r, calls[-1].n + 1) if calls else []) + missed_notes(r)),
                          "idle"))
    return items

