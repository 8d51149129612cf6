"""The offline compiler: a deterministic reading of the turn log, no model involved.

It cannot know *why* a run went the way it did, so it says only what the log
shows and labels itself ``compiler: offline``. Items are ranked, not taken in
order, and the page says how many calls it left out:

- success: the last state-changing call (what settled the outcome), the other
  state-changing calls that went through, every call that got past an error
  (a recovery), the look-ups whose observations supplied an argument of those
  calls, the first look-up and the last one before the settling change (every
  distinct look-up when the only change is the answer);
- failure (failure_items.py), ranked so that the first cause is the turn the log most points at:
  state-changing calls shown in full, their arguments checked against what the
  run had seen or been told before them and against the rules of its own system
  prompt (a call where either check fails comes first); errors the run never got
  past (a program the machine lacks after the run's own changes: runs that
  succeed meet it too), errors it got past below every change (got_past.py); identical calls repeated; a run that never acted; a run
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

from ..runs.errors import failure_line, tests_passed
from ..runs.model import Run
from .base import CompileStats
from .changes import edit_of, what_ran
from .failure_items import agreed_phrase, failure_items
from .grounding import ground
from .in_short import in_short
from .insight_words import free_form, gives_answer, is_hand_off, join, report_message
from .option_choices import item_note, option_note
from .verdict_evidence import verdict_note
from .value_sources import answer_source, source_notes
from .page_items import answered_nothing, diff_phrase, label, shown_answer, short_call
from .page_notes import followed_note, given_answer_note, listed_note, reason_note
from .record_notes import used_record
from .error_insights import error_key, missing_programs
from .page_causes import Item, call_line, edits_between, edits_phrase, quote_marks_note, silent
from .record_words import messages_notes, named_field_notes
from .run_insights import insights_for
from .run_patterns import patterns_of
from .value_rules import value_rules
from .trial_record import decisive
from .arguments import FREE_FORM, check_arguments
from .reading import Call, Reading, command_of, harness_reason, leaves, read_run
from .schema import MAX_INSIGHTS, MAX_ITEMS, Compilation, Evidence
from .text import clip, named_turns, quote_of, short_task


# where a run read by the offline build's reader keeps its compilation (compilers/offline_reader.py):
# not a field, so never hashed, compared or written
PRECOMPILED = "_wikitrace_offline_compilation"


class OfflineCompiler:
    name = "offline"
    model = None

    def __init__(self) -> None:
        self._stats = CompileStats()

    def stats(self) -> CompileStats:
        return self._stats

    async def compile(self, run: Run) -> Compilation:
        self._stats.runs += 1
        made = run.__dict__.pop(PRECOMPILED, None)
        return made if made is not None else compile_offline(run)


def compile_offline(run: Run) -> Compilation:
    reading, chosen = chosen_items(run)
    # a look-up error the run got past is how it found its way, not why it failed: the insights still
    # read it, the page leaves it out when it has a cause to show
    shown = [i for i in chosen if not i.got_past] or chosen
    if not run.outcome.success:  # where the values worth checking came from: once a page, at their first call shown
        told = source_notes(reading, [i.call for i in shown if i.kind == "write" and i.call is not None])
        for i in shown:
            if i.kind == "write" and i.call is not None and i.call.n in told:
                i.evidence.notes.append(told[i.call.n])
    facts = in_short(reading)
    shown = _unchanged_lookups(reading, shown, facts) if run.outcome.success else shown
    # the calls the page shows: at turns its items link, or that its facts and notes name
    cited = {n for i in shown for n in (*i.evidence.turns, *i.covers)} | {n for f in facts for n in f.turns}
    cited |= set(named_turns(" ".join(t for i in shown for t in (i.evidence.decision, i.evidence.support,
                                                                     *i.evidence.notes))))
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
        patterns=(patterns := patterns_of(reading)),
        in_short=facts,
        value_rules=value_rules(reading, patterns),
    )
    first = min((c.n for c in reading.calls if c.writes and not c.error), default=None)
    keys = {id(i.evidence): cause_keys(i, first) for i in shown} if not run.outcome.success else {}
    comp = ground(comp, run)
    comp.decisive = decisive(reading, comp)
    causes = [[keys.get(id(e)), list(e.turns)] for e in comp.evidence]
    if any(isinstance(c, list) for c, _t in causes) and any(c == "change" for c, _t in causes):
        comp.decisive["causes"] = causes  # corpus/cause_contrast.py sets them against the successes
    return comp


def _unchanged_lookups(r: Reading, shown: list[Item], facts: list) -> list[Item]:
    """A success that changed nothing: of its look-ups, the page keeps the first, the last and
    those its "In short" cites. Each look-up in order, read as a decision of equal weight, hid
    what the run answered in the end among them."""
    if any(c.writes for c in r.calls):
        return shown
    looks = [i for i in shown if i.kind == "lookup"]
    cited = {n for f in facts for n in f.turns}
    keep = {id(i) for i in looks[:1] + looks[-1:]} | {id(i) for i in looks if cited & set(i.evidence.turns)}
    return [i for i in shown if i.kind != "lookup" or id(i) in keep]


def cause_keys(item: Item, first_change: int | None) -> list[str] | str | None:
    """What a failure cause is, for the contrast with the successful runs of its task type:
    "change" for a state change that went through; for an error met before the run's first
    change, the pattern keys the insights count it as (each program the shell lacked on its
    own, else the error's key); else None. An error after a change answers that change (tests
    still failing after the edit), which a success's same error before its own fix does not. An
    error the run got past another way is ranked below its changes already: none."""
    call = item.call
    if call is None or item.otherwise:
        return None
    if _changes(item):
        return "change"
    if not call.error or first_change is None or max((call.n, *item.evidence.turns)) >= first_change:
        return None
    return [f"missing|{p}" for p in missing_programs(call)] or [error_key(call)]


def chosen_items(run: Run, with_notes: bool = True) -> tuple[Reading, list[Item]]:
    """The run's reading and the items its page shows and its lessons are drawn from. The LLM
    path needs only the lessons (compilers/llm_offline.py): ``with_notes`` False leaves out the
    notes under each item, page text that nothing else reads."""
    reading = read_run(run)
    items = _success_items(reading, with_notes) if run.outcome.success else failure_items(reading, with_notes)
    chosen = _choose(items)
    if run.outcome.success:  # decisions read as the run's procedure; causes stay ranked, likeliest first
        chosen.sort(key=lambda i: min(i.evidence.turns or [0]))
    return reading, chosen


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


def _later(calls: list[Call]) -> str:
    """The later call named by its tool and turn ("Finish at turn 3"), or "a later call"."""
    return f"{calls[0].name} at turn {calls[0].n}" if len(calls) == 1 else "a later call"


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


def _success_items(r: Reading, with_notes: bool = True) -> list[Item]:
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
            notes=messages_notes(r, -1, last.turn if last else None) if with_notes else []), "idle")]
    items: list[Item] = []
    writes = [c for c in calls if c.writes and not c.error]
    supplied: dict[int, list[str]] = {}  # turn -> the argument keys a later change took from its answer
    taken: dict[int, list[tuple[str, object]]] = {}  # turn -> (argument path, value) a later change took
    # a value the look-up was itself sent is no value taken from its answer: the change sent the same one
    # (a plain-text query sent whole as a later answer was sent, not taken from what the search returned)
    sent = {c.n: {str(v).casefold() for _p, v in leaves(c.turn.arguments)} if isinstance(c.turn.arguments, dict)
            else {c.turn.arguments.strip().casefold()} for c in calls
            if not c.writes and isinstance(c.turn.arguments, (dict, str))}
    fresh: dict[int, set[str]] = {}  # turn -> argument keys with a value its answer held and its arguments did not
    resent: dict[int, list[Call]] = {}  # turn -> later changes that sent a value the look-up was itself sent
    by_turn = {c.n: c.name for c in calls}
    for w in writes:
        names = frozenset(v.lower() for _p, v in leaves(w.turn.arguments) if isinstance(v, str) and len(v) > 2)
        for a in check_arguments(r, w.turn):
            if a.seen_at is None or a.seen_in != "observation":
                continue
            at = a.seen_at
            if str(a.value).casefold() not in sent.get(at, ()) and a.path != FREE_FORM:
                # a value the look-up was not sent is credited where the page's "In short" and source
                # notes credit it: a value the user gave is not taken from an answer that also held it
                # (a free-form text, an answer or a query, is one text: the last turn that held it)
                source = answer_source(r, w, a, by_turn, names)
                if source is None:
                    continue
                at = source.turn
            supplied.setdefault(at, []).append(a.path.split(".")[0].split("[")[0])
            taken.setdefault(at, []).append((a.path, a.value))
            if str(a.value).casefold() not in sent.get(at, ()):
                fresh.setdefault(at, set()).add(a.path.split(".")[0].split("[")[0])
            elif w not in resent.setdefault(at, []):
                resent[at].append(w)  # the later call that sent what this look-up was itself sent
    recovered = _recoveries(calls)
    fixes = {fix.n for _, fix in recovered}  # one call, one item: a retry or an edit told in a recovery
    for err, fix in recovered:  # is not told again on its own
        changed = _changed_keys(err, fix)
        edits = edits_between(calls, err.n, fix.n)
        fixes.update(c.n for c, _ in edits[:3] if not c.confirmed)  # an agreed edit keeps its own line
        passed = tests_passed(fix.turn.result)
        if edits:  # fail, edit, pass: what was changed and that the same check then went through
            again = _same_again(err, fix)
            items.append(Item(80, Evidence(
                decision=f"After {label(err, 80)} failed at turn {err.n}, {edits_phrase(edits)}; "
                         f"{again} then went through at turn {fix.n}"
                         + (f" and its tests passed ({clip(passed, 80)})." if passed else "."),
                support=f"The first call returned an error ({clip(failure_line(err.turn.result) or err.turn.result, 100)}); "
                        f"after the edit it returned: {clip(passed or fix.turn.result, 100)}",
                turns=[err.n] + [c.n for c, _ in edits[:3]] + [fix.n], quote=quote_of(err.turn.result),
                call=call_line(edits[-1][0])), "recovery", fix))
            continue
        keys = list(dict.fromkeys(supplied.get(fix.n, [])))  # the retry's own look-up line is folded in here
        same = [k for k in keys if k not in fresh.get(fix.n, ())]  # values the retry was itself sent
        took = [k for k in keys if k not in same]
        # the calls of the tool that failed between them: the retry that went through was not the next one
        between = [c for c in calls if err.n < c.n < fix.n and c.error and c.name == err.name]
        also = (f" and again at turn{'s' if len(between) > 1 else ''} {join([str(c.n) for c in between], 4)}"
                if between else "")
        items.append(Item(80, Evidence(
            decision=f"After {err.name} failed at turn {err.n}{also}, called it again at turn {fix.n}"
            + (f" with {', '.join(changed)} changed" if changed else " with the same arguments")
            + (f"; a later call took {', '.join(took[:4])} from what it returned" if took else "")
            + (f"{' and' if took else ';'} {_later(resent.get(fix.n, []))} sent the same {', '.join(same[:4])}"
               if same else "") + ".",
            support=f"The first call returned an error ({clip(err.turn.result, 100)}); "
                    + "".join(f"the call at turn {c.n} another error ({clip(c.turn.result, 80)}); " for c in between[:2])
                    + f"{'the last' if between else 'the second'} returned: {clip(fix.turn.result, 100)}",
            turns=[err.n] + [c.n for c in between[:2]] + [fix.n], quote=quote_of(err.turn.result), call=call_line(fix),
            notes=listed_note(calls, err) + quote_marks_note(err, fix, between) if with_notes else []), "recovery", fix))
    last_write = writes[-1] if writes else None
    # a free-text answer (a QA run's Finish[...]) ends the run but changes nothing: never worded as a change
    answers = {c.n for c in writes if free_form(c) is not None and gives_answer(r, c)}
    seen: set[str] = set()
    for c in reversed(writes):  # the latest of identical state changes is the one that stood
        key = c.sig
        if key in seen or c.n in fixes:
            continue
        seen.add(key)
        final = c is last_write
        edit = edit_of(c.turn)
        notes = reason_note(r, c) + (given_answer_note(r, c) if final else []) + item_note(r, c) + option_note(r, c) \
            + verdict_note(r, c) if with_notes else []
        items.append(Item(100 if final else 60 + c.n / 10_000, Evidence(notes=notes,
            decision=f"Called {c.name} at turn {c.n}" + (f", changing {edit.phrase()}" if edit else "") + diff_phrase(c)
            + agreed_phrase(r, c)
            + (("; the answer that ended the run." if c.n in answers else
                # a hand-off passes the talk to a person and changes no record: not called a state change
                "; the hand-off that ended the run." if is_hand_off(c) else "; the run's last state-changing call.")
               if final else "."),
            support=f"The environment accepted it: {shown_answer(c.turn.result)}" if c.turn.result
            else "The environment accepted it.",
            turns=[c.n], quote=quote_of(c.turn.result), call=call_line(c)), "write", c))
    # look-ups: those whose observation supplied a value the state-changing calls used, then the first
    first = next((c for c in calls if not c.writes and not c.error), None)
    # and the last one before the change that settled the run: what it acted on when no argument shows it
    # (a hand-off after reading the booking it could not change)
    latest = next((c for c in reversed(calls) if last_write is not None and c.n < last_write.n and not c.writes
                   and not c.error and not answered_nothing(c)), None)
    first_change = min((w.n for w in writes if w.n not in answers), default=None)
    # a success that changed nothing: the look-ups its "In short" cites (the check that settled it) come first
    cited = {n for f in in_short(r) for n in f.turns} if not writes else set()
    told: set[str] = set()
    # with no state change at all, or none but the answer that ended the run (a QA log's Finish), the
    # look-ups are what the answer rests on: each distinct one counts
    acted = writes if not (len(writes) == 1 and gives_answer(r, writes[0])) else []
    for c in calls:
        if c.writes or c.error or c.n in fixes or answered_nothing(c) or (c.n not in cited and
                c.n not in supplied and c is not first and c is not latest and (acted or c.sig in told)):
            continue
        told.add(c.sig)
        keys = list(dict.fromkeys(supplied.get(c.n, [])))
        same = [k for k in keys if k not in fresh.get(c.n, ())]  # every value of it was one the look-up was sent
        took = [k for k in keys if k not in same]
        items.append(Item(55 if keys or c.n in cited else 50 - c.n / 10_000, Evidence(
            decision=f"Looked up with {short_call(c)} at turn {c.n}"
            + (f"; a later call took {', '.join(took[:4])} from what it returned" if took else "")
            + (f"{' and' if took else ';'} {'' if took else _later(resent.get(c.n, [])) + ' '}sent the same "
               f"{', '.join(same[:4])}" if same else "")
            + ("." if keys else " before any change." if first_change is not None and c.n < first_change else "."),
            support=(keys and used_record(r, c, taken[c.n])) or (
                f"It returned: {shown_answer(c.turn.result)}" if c.turn.result else "It returned nothing."),
            turns=[c.n], quote=quote_of(c.turn.result), notes=followed_note(r, c) + named_field_notes(r, c) if with_notes else []),
            "lookup", c))
    items += silent(r, 58)
    said = report_message(r) if not any(c.writes for c in calls) else None  # look-ups only, none a failed change
    if said is not None:  # settled without a change: what it told the user is the answer a reader needs
        items.append(Item(90, Evidence(
            decision=f"Answered after {len(calls)} look-up call{'s' if len(calls) != 1 else ''} "
                     f"({join(list(dict.fromkeys(c.name for c in calls)), 3)}) without a change.",
            support=f"The run was judged a success. What the agent wrote after its last call (turn {said.turn}) "
                    "is quoted below.", turns=[said.turn], quote=quote_of(said.content, 240),
            notes=messages_notes(r, said.turn, None) if with_notes else []), "idle"))
    return items
