"""Lessons the offline compiler draws from one run, in the run's own words.

A lesson says what the run shows: which tool, the error it met, what got past it
(or did not), and the condition under which that applies. Its vocabulary comes
only from the run: tool names, argument keys, the observations' first lines, the
task and the sentences of the run's own system prompt. Values that hold only in
this episode (ids, amounts, dates) are masked. A lesson is written only where
the run bears it out: no "gather less" for a run that called nothing, no "change
the arguments" for a call that never failed. Success lessons live here, failure
lessons in lessons_failure.py.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .lesson_words import (call_words, earlier_plan, for_kind, free_form, is_hand_off, is_label, join, last_said, lookup_chain,
                           reasoned, said_by, rule_quote, sources, such_as, task_gist, what_changed, what_it_did)
from .lessons_failure import _failure, _hand_off_lesson
from .changes import edit_of
from .reading import Call, Reading, runs_a_command
from .rules import _words, rules_for
from .schema import MAX_INSIGHTS, CandidateInsight
from .text import clip, first_line

if TYPE_CHECKING:
    from .offline import Item

# --- success ---------------------------------------------------------------------------------


def _procedure(r: Reading, w: Call) -> CandidateInsight:
    if is_hand_off(w):
        return _hand_off_lesson(r, w, success=True)
    answer = free_form(w)
    if answer is not None:
        tools, _, unseen = sources(r, w)
        chain = lookup_chain(r, w, changes=True)
        where = ("a verdict label" if is_label(answer) else f"a value {join(list(tools), 2)} had returned" if tools else
                 "a value of its own, not one a look-up returned" if unseen else "a value the request itself named")
        gist = task_gist(r, call_words(w))
        return CandidateInsight(
            title=f"{w.name} with what {join(list(tools), 2)} showed" if tools else f"Settle the task with {w.name}",
            guideline=f"This run ended with {w.name}[{answer}], {where}" + (f", after {chain}" if chain else "")
                      + reasoned(r, w) + ", and was judged a success"
                      + (f", following a plan from an earlier failed attempt: \"{plan}\"" if (plan := earlier_plan(r)) else "")
                      + ": look up each thing the request names before answering.",
            applicability=f"Applies to {for_kind(r)} that end in {w.name}"
                          + (f", such as: \"{gist}\"" if gist else "") + "; the values belong to that task, not to yours.",
        )
    tools, user, unseen = sources(r, w)
    parts = [f"{join(keys)} from {tool}" for tool, keys in tools.items()]
    if user:
        parts.append(f"{join(user)} from the user's own words")
    lookups = [c.name for c in r.calls if c.n < w.n and not c.writes and not c.error]
    made = [what_it_did(c) for c in r.calls if c.n < w.n and c.writes and not c.error]
    if runs_a_command(w.turn):  # a command line: what it ran, after which look-ups and changes
        guide = (f"This run ended its work with {what_it_did(w)}"
                 + (f", after changes with {join(list(dict.fromkeys(made)), 3)}" if made else "")
                 + (f", after looking with {join(list(dict.fromkeys(lookups)), 3)}" if lookups else ""))
    elif not parts and made:  # an argument-less finish (submit): the changes before it are the procedure
        guide = (f"This run made its change with {join(list(dict.fromkeys(made)), 3)}"
                 + (f", after looking with {join(list(dict.fromkeys(lookups)), 3)}" if lookups else "")
                 + f", then called {w.name}")
    elif parts:
        guide = f"Before {w.name}, take {'; '.join(parts)}: this run's {w.name} went through with its arguments built that way"
    elif lookups:
        guide = f"Call {join(lookups, 3)} before {w.name} and build its arguments from what they return, as this run did"
    else:
        guide = f"This run called {w.name} without a look-up first and it went through"
    if unseen:
        guide += f" ({join(unseen)} it set itself)"
    gist = task_gist(r, call_words(w))
    when = f"Applies to {for_kind(r)} that end in {w.name}"
    when += f", such as: \"{gist}\"" if gist else ""
    return CandidateInsight(
        title=f"Build {w.name} from {join(list(tools), 2)}" if tools else f"Settle the task with {w.name}",
        guideline=guide + ".",
        applicability=when + "; check each value against the current request, not this run's.",
    )


def _recovery(r: Reading, err: Call, fix: Call) -> CandidateInsight:
    said = first_line(err.turn.result, 100)
    changed = what_changed(err, fix) if fix.name == err.name else ""
    if fix.name != err.name:
        how = f"{fix.name} got past it"
    elif changed.startswith("with the same arguments"):
        how = "the same call went through later, after the run did something else first"
    else:
        how = f"call it again {changed}"
    between = [c.name for c in r.calls if err.n < c.n < fix.n and c.name != err.name]
    edits = [e for c in r.calls if err.n < c.n < fix.n and c.writes and not c.error and (e := edit_of(c.turn))]
    if edits:  # fail, edit, pass: the edit got it past, not what changed in the call
        named = {}  # one place per file, with its function when an edit showed one
        for e in edits:
            named[e.file] = named.get(e.file) or e.function
        places = [f.rsplit("/", 1)[-1] + (f" ({fn})" if fn else "") for f, fn in named.items()]
        how = f"change the code it points at before running it again, as this run changed {join(places, 2)}"
    elif between and how.startswith("call it again"):
        how += f", after checking with {join(between, 2)}"
    return CandidateInsight(
        title=f"Get past \"{clip(said, 40)}\" from {err.name}",
        guideline=f"When {err.name} answers \"{said}\", {how}{reasoned(r, fix)}; that is what got this run past it.",
        applicability=f"Applies to {for_kind(r)} when {err.name} gives this error{such_as(r, err, said)}; another error from it may need another fix.",
    )


def _confirmation(r: Reading, w: Call) -> CandidateInsight | None:
    hits = [h for h in rules_for(r, w) if re.search(r"confirm", h.sentence, re.I)]
    if not hits or not w.confirmed:
        return None
    keys = list(w.turn.arguments) if isinstance(w.turn.arguments, dict) else []
    prior = next((t for t in reversed(r.run.turns) if t.turn < w.n and t.type == "message" and t.role == "user"), None)
    heard = said_by(r, prior.content, 60) if prior is not None else ""
    return CandidateInsight(
        title=f"Confirm {w.name} details with the user first",
        guideline=f"State {('the ' + join(keys, 3)) if keys else 'the details'} of the {w.name} call and wait for the user's yes"
                  + (f" (here: \"{heard}\")" if heard else "") + f", as the system prompt asks: \"{rule_quote(hits[0].sentence)}\"",
        applicability=f"Applies to {w.name} and other calls that change records in {for_kind(r)}{such_as(r, w)}; not to look-ups.",
    )


def _answer_from(r: Reading) -> CandidateInsight:
    # a success whose every call failed still names its tools (indexing an empty list crashed)
    lookups = list(dict.fromkeys(c.name for c in r.calls if not c.error)) or list(dict.fromkeys(c.name for c in r.calls))
    gist = task_gist(r, _words(" ".join(lookups).replace("_", " ")))
    return CandidateInsight(
        title=f"Answer from {lookups[0]} results",
        guideline=f"Use {join(lookups, 4)} to find what the request needs and answer from what they return; "
                  f"this run changed nothing and succeeded{last_said(r)}.",
        applicability=f"Applies to {for_kind(r)} that only ask for information"
                      + (f", such as: \"{gist}\"" if gist else "") + "; not when a change is asked for.",
    )


def _success(r: Reading, chosen: list[Item]) -> list[CandidateInsight]:
    if not r.calls:
        gist = task_gist(r, set())
        return [CandidateInsight(
            title="Answer directly when no look-up is needed",
            guideline="This run settled the request from what it already knew, without a tool call, and succeeded.",
            applicability="Applies when the task needs no state from the environment"
                          + (f", such as: \"{gist}\"" if gist else "") + "; not when facts must be checked first.",
        )]
    out: list[CandidateInsight] = []
    # every change that went through, shown as a decision or as a recovery
    writes = [i.call for i in sorted(chosen, key=lambda i: i.call.n if i.call else -1)
              if i.kind in ("write", "recovery") and i.call is not None and i.call.writes]
    if writes:
        out.append(_procedure(r, writes[-1]))
    for i in chosen:
        if i.kind == "recovery" and i.call is not None:
            err = next(c for c in reversed(r.calls) if c.n < i.call.n and c.error and c.name == i.call.name)
            out.append(_recovery(r, err, i.call))
            break
    for w in reversed(writes):
        lesson = _confirmation(r, w)
        if lesson:
            out.append(lesson)
            break
    if not writes:
        out.insert(0, _answer_from(r))
    return out


def lessons_for(r: Reading, chosen: list[Item]) -> list[CandidateInsight]:
    out = _success(r, chosen) if r.run.outcome.success else _failure(r, chosen)
    seen, unique = set(), []
    for lesson in out:
        if lesson.guideline not in seen:
            seen.add(lesson.guideline)
            unique.append(lesson)
    return unique[:MAX_INSIGHTS]
