"""The candidate causes of a failed run, ranked so that the first is the turn the log most
points at (offline.py chooses among them): errors no later call got past, identical calls
repeated, each state-changing call checked against what the run had seen, been told and the
log expected, and a run that never acted or that the harness stopped. Kept apart from the
success items because each side ranks by its own rules.
"""

from __future__ import annotations

from collections import Counter

from ..runs.errors import failing_part, reports_failing_tests, tests_passed
from ..runs.tool_kinds import SUBMIT
from .call_kinds import call_kind
from .changes import edit_of, what_ran
from .agreed_terms import other_terms, yes_to_another_thing
from .limit_insights import unsettled_edit
from .expected_calls import (change_notes, differs_from_expected, expected_changes, made_as_expected, missed_changes,
                             missed_notes)
from .insight_words import (answer_seen_in, expected_answer, free_form, gives_answer, is_hand_off, join,
                            report_message)
from .option_choices import item_note, option_note
from .page_causes import Item, answer_text as _answer, call_line, edits_between, edits_phrase, same_error_once, silent
from .got_past import got_past
from .page_items import (FOUND_NEAR_ANSWER, diff_phrase, found_notes, halted_evidence, label, lacking_support,
                         looked_up, short_call)
from .page_notes import answer_context, asked_note, check_notes, listed_note, reason_note, wrong_answer
from .record_notes import record_rule_notes
from .edit_lines import edit_lines
from .reading import Call, Reading, harness_reason
from .schema import Evidence
from .test_edits import test_only_edits, test_only_support
from .text import clip, quote_of
from .verdict_evidence import verdict_note

def agreed_phrase(r: Reading, c) -> str:
    """", after the user agreed", or what the yes was to when it named other amounts than the call's."""
    other = other_terms(r, c)
    if other is not None:
        return other.phrase()
    put = yes_to_another_thing(r, c)
    if put is not None and is_hand_off(c):  # its summary's words are the talk's: only its name would put it
        return (f", after the user said yes (turn {c.agreed_at}) to the agent's message at turn {put}, which named "
                f"no word of {c.name}")
    if put is not None:
        return (f", after the user said yes (turn {c.agreed_at}) to the agent's message at turn {put}, which named "
                f"neither a value this call sent nor a word of {c.name} or of its values")
    return ", after the user agreed" if c.confirmed else ""


def failure_items(r: Reading, with_notes: bool = True) -> list[Item]:
    """The candidate causes; ``with_notes`` False leaves out the notes under each (page text only:
    the lessons, patterns and ranks never read them)."""
    calls = r.calls
    items: list[Item] = []
    told: set[str] = set()
    ran = {c.n: what_ran(c.turn) for c in calls}
    changed = any(c.writes and not c.error for c in calls)
    afters: dict[int, str] = {}  # what became of each error: "; no later javac call went through."
    passed = got_past(r)
    for c in calls:
        if not c.error or c.sig in told:
            continue
        told.add(c.sig)
        prev = next((p for p in reversed(calls) if p.n < c.n), None)
        # got past: a later run of the same program (or call of the same tool) went through, or
        # a look-up that reached nothing and the run went on with another look-up, then acted (said
        # so, not that it got past it: the test it opened is not the source its search was for)
        how = passed.get(c.n)
        past = how.by if how is not None and not how.otherwise else None
        edits = edits_between(calls, c.n, past.n) if past is not None else []
        if how is None:
            after = f"; no later {ran[c.n]} call went through."
        elif how.otherwise:
            after = (f"; the run went on without it: {label(how.by, 60)} went through at turn {how.by.n}, "
                     f"and {how.then.name} made a change at turn {how.then.n}.")
        else:
            after = (f"; a later {ran[c.n]} call went through at turn {past.n}"
                     + (f", after {edits_phrase(edits)}." if edits else "."))
        afters[c.n] = after
        lacking = lacking_support(c, changed)  # a missing program: below the run's own changes
        # so is a failed call that changes nothing (a look-up, a shell line that never ran) in a run whose
        # own changes went through: those are what was judged, the failed look-up changed nothing
        # and a test run that reported failing tests: it checked the code, the edits before it are the cause
        below = changed and (lacking or not c.writes or reports_failing_tests(c.turn.result))
        items.append(Item(15 if how else 45 + c.n / 10_000 if below else 80 + c.n / 10_000, Evidence(
            decision=(f"Called {c.name} at turn {c.n}" if c.writes else f"Called {short_call(c)} at turn {c.n}")
            + (f", right after {prev.name} at turn {prev.n}" if prev else "") + after,
            support=lacking or f"The environment answered with an error: {clip(failing_part(c.turn.result))}",
            turns=([prev.n] if prev else []) + [c.n], quote=quote_of(c.turn.result),
            call=call_line(c) if c.writes else None,
            # a change that never went through: how it differs from the one the log expected
            notes=listed_note(calls, c) + (change_notes(r, c) if c.writes and past is None else []) if with_notes
            else [],
            # a look-up the run went on without, to a change that went through: it decided nothing
            context=how is not None and how.otherwise and changed), "error", c,
            got_past=past is not None and not c.writes, never_got_past=how is None,
            otherwise=how is not None and how.otherwise))
    # a loop: the same call answered the same way, three times or more (the same command in
    # another folder, or answered differently, is no repetition): only a call sent three times or more
    # is one, so only their answers are folded (once each)
    sent = Counter(c.sig for c in calls)
    looping = [c for c in calls if sent[c.sig] >= 3]
    answers = {c.n: _answer(c) for c in looping}
    repeats = Counter((c.sig, answers[c.n]) for c in looping)
    for key, n in repeats.items():
        if n < 3:
            continue
        same = [c for c in looping if (c.sig, answers[c.n]) == key]
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
            call=call_line(same[0]) if same[0].writes else None,
            notes=change_notes(r, same[0]) if with_notes and same[0].writes and same[0].n not in passed else []),
            *(("error", same[0]) if first_error else ("loop", same[-1])),  # the lesson stays the error's
            never_got_past=first_error.never_got_past if first_error else False))
    items = same_error_once(items, afters)
    writes = [c for c in calls if c.writes and not c.error]
    # only the last change, and only when the agent (not the harness) ended the run, is the
    # answer that ended it: a WebShop click on a product before the purchase ended nothing
    answered = writes[-1] if writes and harness_reason(r) is None else None
    unsettled = unsettled_edit(r, writes)
    handed_in_any = bool(writes) and _submits(r, writes[-1]) and any(edit_of(w.turn) for w in writes[:-1])
    for c in writes:
        # the task asked for this very change: context, ranked below the causes (unless it is the last
        # change and the run left expected changes unmade; a look-up it skipped is no reason to rank a change
        # made as expected first). Its "same call as expected" note is then left out: the support says so.
        as_expected = made_as_expected(r, c)
        expected = as_expected and not (c is writes[-1] and missed_changes(r))
        notes, flagged = check_notes(r, c)  # its flag ranks the change, with or without the notes
        if with_notes:
            notes = ([] if expected else change_notes(r, c)) + reason_note(r, c) + notes + (
                missed_notes(r) if c is writes[-1] else [])
            if free_form(c) is None:
                notes = notes + record_rule_notes(r, c)
            else:
                notes = notes + answer_context(r, c) + item_note(r, c) + option_note(r, c) + verdict_note(r, c)
                gold = expected_answer(r)
                if c is answered and gives_answer(r, c) and not (gold and answer_seen_in(r, gold, c)):
                    # what it read, where no page held the expected answer: the last pages before the answer
                    notes += found_notes(looked_up(r, c.n)[-FOUND_NEAR_ANSWER:])
        else:
            notes = []
        edit = edit_of(c.turn)
        # a submit only hands in the edits before it: the last of those is the change that settled the run
        handed_in = c is writes[-1] and _submits(r, c) and any(edit_of(w.turn) for w in writes[:-1])
        last = c is (next(w for w in reversed(writes) if edit_of(w.turn)) if handed_in_any else writes[-1])
        tests = any(t is c for t, _f in test_only_edits(r))  # the run changed the test, not the code: first
        rank = (20 if expected else 95 if tests else 90 if flagged else 70 if last else 55 if edit else
                52 if handed_in else 50) + c.n / 10_000
        # the last change, made as expected, with expected changes left unmade: what it decided is that the
        # run stopped there, said in the decision so that its heading is not read as the call being wrong
        unmade = len(missed_changes(r)) if as_expected and not expected else 0
        items.append(Item(rank, Evidence(
            decision=f"Called {c.name} at turn {c.n}" + (f", changing {edit.phrase()}" if edit else "") + diff_phrase(c)
            + agreed_phrase(r, c) + (", a test file, and no call of this run changed a file outside the tests" if tests
                                     else "")
            + (f"; the run made no change after it, and {unmade} change{'s' if unmade != 1 else ''} the task expected "
               f"{'were' if unmade != 1 else 'was'} never made" if unmade else "") + ".",
            support=(test_only_support(r) if tests else None) or (wrong_answer(r, c) if c is answered else None) or (
                "The call went through, and the log records this same call among those the task expected." if expected else
                "The call went through, but it is not the call the log records as expected for this task: the first "
                "note below says where they differ." if differs_from_expected(r, c) else
                # a test run changes nothing: what it said is told, not a change it never made
                f"Its tests passed ({clip(tests_passed(c.turn.result), 80)}), yet the run was judged a failure: a "
                "passing run of these tests did not settle the task." if tests_passed(c.turn.result) and not edit else
                # the last change, made as expected, with expected changes left unmade after it
                "The call went through and is one the task expected, but the run ended after it with "
                "changes the task expected still unmade (listed below)." if as_expected else
                # a hand-off changes no record: it left the request to someone else, not a wrong change made
                "The run handed the request off here; a hand-off changes no record, so the changes the task expected "
                "were left unmade (listed below)." if is_hand_off(c) and last and missed_changes(r) else
                "The run handed the request off here" + (", which the task did not expect" if expected_changes(r) is not None
                                                         else "")
                + ": a hand-off changes no record, so what decided the failure lies in what the run said or did before "
                "it." if is_hand_off(c) else
                # the limit ended the run before its last edit was submitted: what the edit did did not decide it
                f"The call went through, but the harness ended the run ({clip(harness_reason(r) or '', 80)}) "
                "before the change was submitted, so the run failed whatever the change did." if last and unsettled else
                _handed_in(r, c, writes) if handed_in else
                # a call before the last change may only have moved around (a page opened): "what it did"
                "The call went through, yet the run was judged a failure, so "
                + ("the change it made" if edit or last else "what it did") + " may not be "
                "what the task asked for" + (" (see the checks below)." if flagged else _what_it_wrote(r, c) if edit
                                             else ".")),
            turns=[c.n], quote=quote_of(c.turn.result), call=call_line(c), notes=notes, context=expected), "write", c))
    items += silent(r, 25, context=True)  # shown when slots are left: never in place of a cause
    ended = halted_evidence(r, writes)
    if ended is not None:  # below the errors no later call got past: those may be why nothing went through
        ended.notes += missed_notes(r) if with_notes else []  # it also tells a run of look-ups only: no second item for that
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
            support += (f" What the agent wrote after its last call (turn {said.turn}) is quoted below." if calls else
                        f" What the agent last wrote (turn {said.turn}) is quoted below.")
            last = said
        items.append(Item(40, Evidence(decision=decision, support=support, turns=[last.turn] if last else [],
                                       quote=quote_of(said.content, 240) if said is not None else None,
                                       notes=(asked_note(r, calls[-1].n + 1) if calls else []) + missed_notes(r)
                                       if with_notes else []),
                          "idle", covers=tuple(c.n for c in calls)))
    return items


def _what_it_wrote(r: Reading, c: Call) -> str:
    """": it took out `…` and put in `…`." of a file edit whose lines the log shows, so a reader sees
    what the judged change wrote instead of being told only that it went through; "." otherwise."""
    lines = edit_lines(r, c)
    if lines is None or not lines[1]:
        return "."
    removed, added = lines

    def first(xs: list[str]) -> str:
        more = len(xs) - 1
        return f"`{clip(xs[0], 90)}`" + (f" (and {more} more line{'s' if more != 1 else ''})" if more else "")

    return (f": it took out {first(removed)} and put in {first(added)}." if removed else f": it put in {first(added)}.")


def _handed_in(r: Reading, c: Call, writes: list[Call]) -> str:
    """What a submit that failed handed in: the edits before it, and whether a test run passed after
    the last of them (a submit itself changes nothing, so that is all it says)."""
    edit = next(w for w in reversed(writes) if w is not c and w.n < c.n and edit_of(w.turn))
    runs = [x for x in r.calls if edit.n < x.n < c.n and (tests_passed(x.turn.result)
                                                          or reports_failing_tests(x.turn.result))]
    last = runs[-1] if runs else None
    checked = ("with no test run after that edit" if last is None else
               f"after {label(last)} passed at turn {last.n} ({clip(tests_passed(last.turn.result), 60)})"
               if tests_passed(last.turn.result) else f"after {label(last)} still reported failing tests at turn {last.n}")
    return (f"It handed in the edits made before it, the last at turn {edit.n}, {checked}; the run was judged a "
            "failure, so what those edits do is where to look.")


def _submits(r: Reading, c: Call) -> bool:
    """Whether a call is a coding agent's submit (runs/tool_kinds.py): it hands in the edits made before it."""
    k = call_kind(r, c)
    return k is not None and k.kind == SUBMIT
