"""Lessons from a failed run (and the hand-off lesson a success shares): each says what
the run shows went wrong, in the run's own words (see lessons.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .lesson_words import (answer_seen_in, call_label, call_words, earlier_plan, expected_answer, for_kind, free_form, is_hand_off,
                           is_label, join, last_said, lookup_chain, reasoned, said_by, record_facts, rule_for_call, rule_on,
                           rule_quote, sources, stated_reason, such_as, task_gist, the_expected, what_changed, what_it_did)
from .changes import what_ran
from .reading import Call, Reading, _occurs, harness_reason, runs_a_command
from .rules import RULE, _words, rules_for, sentences
from .schema import CandidateInsight
from .text import clip, first_line, generic, signature

if TYPE_CHECKING:
    from .offline import Item


def _unseen_lesson(r: Reading, w: Call, notes: list[str]) -> CandidateInsight | None:
    broken = [h for h in rules_for(r, w) if h.broken]
    if broken:
        h = broken[0]
        prior = next((t for t in reversed(r.run.turns) if t.turn < w.n and t.type == "message" and t.role == "user"), None)
        heard = said_by(r, prior.content, 70) if prior is not None else ""
        gist = task_gist(r, call_words(w))
        return CandidateInsight(
            title=f"Respect the rule before {w.name}",
            guideline=f"The system prompt says \"{rule_quote(h.sentence)}\"; this failed run called {w.name} while "
                      f"{h.broken}" + (f" (the user's last words before it: \"{heard}\")" if heard else "") + ".",
            applicability=f"Applies whenever {w.name} is called in {for_kind(r)}"
                          + (f", such as: \"{gist}\"" if gist else "") + "; the rule's own words decide.",
        )
    tools, user, unseen = sources(r, w)
    if not unseen:
        return None
    known = [f"{join(k, 3)} from {t}" for t, k in tools.items()] + ([f"{join(user, 3)} from the user"] if user else [])
    return CandidateInsight(
        title=f"Check {join(unseen, 2)} before {w.name}",
        guideline=f"This failed run called {w.name} with {join(unseen)} set to values no earlier look-up, user "
                  f"message or call held" + (f" (it took {'; '.join(known)})" if known else "")
                  + f"; confirm {join(unseen)} with a look-up or with the user first.",
        applicability=f"Applies to {w.name} in {for_kind(r)}"
                      + (f", such as: \"{task_gist(r, call_words(w))}\"" if r.run.task.instruction else "")
                      + "; a failed run's lesson is a caution, not a recipe.",
    )


def _error_lesson(r: Reading, err: Call) -> CandidateInsight:
    said = first_line(err.turn.result, 100)
    later = [c for c in r.calls if c.n > err.n]
    same = [c for c in later if signature(c.turn) == signature(err.turn)]
    retries = [c for c in later if what_ran(c.turn) == what_ran(err.turn)]  # a shell's other programs are no retry
    passed = next((c for c in retries if not c.error), None)
    if passed is not None:
        what = f"this run got past it {what_changed(err, passed)}{reasoned(r, passed)}{_what_followed(r, passed)}"
    elif same:
        what = (f"this run sent the same {err.name} call again {len(same)} more time{'s' if len(same) != 1 else ''} "
                f"and never got past it; change what the message points at before calling again")
    elif retries:
        what = f"this run tried {err.name} again with other arguments and it failed each time; read the message for the value it rejects"
    elif any(is_hand_off(c) for c in later):
        what = f"this run did not call {err.name} again and handed off with {next(c.name for c in later if is_hand_off(c))}"
    else:
        what = f"this run did not call {err.name} again and ended without what it was for"
    return CandidateInsight(
        title=f"{err.name} failing with \"{clip(said, 40)}\"",
        guideline=f"When {err.name} answers \"{said}\", {what}.",
        applicability=f"Applies to {for_kind(r)} when {err.name} returns this error{such_as(r, err, said)}; a different error needs its own reading.",
    )


def _what_followed(r: Reading, passed: Call) -> str:
    """How a failed run went on after a call got past an error: the answer it ended with and
    whether the expected answer was in what that call returned, or the change it then made."""
    final = r.calls[-1] if r.calls else None
    answer = free_form(final) if final is not None and final.writes else None
    if answer is not None and final is not passed:
        gold = expected_answer(r)
        said = f", then ended with {final.name}[{answer}] and was judged a failure"
        if gold is None:
            return said + ": getting past the error did not settle the request"
        held = answer_seen_in(r, gold, final)
        if is_label(gold) or _occurs(gold, (r.run.task.instruction or "").lower()):
            return said + f"; the expected answer was \"{clip(generic(gold), 40)}\""
        if held is passed:
            return said + f"; {the_expected(gold)} was in what {call_label(passed)} returned, so the look-up " \
                "was right and the answer drawn from it was not"
        if held is not None:
            return said + f"; {the_expected(gold)} was in what {call_label(held)} returned, not in the page " \
                "the error led to"
        return said + f"; {the_expected(gold)} appears in none of what the run looked up: the page the error " \
            "led to did not settle it"
    later = [c for c in r.calls if c.n > passed.n and c.writes and not c.error]
    if not later and not passed.writes:  # it looked on and never settled anything
        reason = harness_reason(r)
        return (", then made no call that settles the task" + (f" before the harness stopped it — {reason} —" if reason else "")
                + " and was judged a failure: getting past the error was not enough to reach an answer")
    w = later[-1] if later else passed
    unseen = sources(r, w)[2]
    if unseen:
        return (f", yet the run failed: its {w.name} went through with {join(unseen, 3)} set to values no earlier "
                f"look-up, user message or call held; check those against the request")
    return (f", yet the run failed after {w.name} went through: a call that goes through is not yet the one "
            "the task asked for")


def _hand_off_lesson(r: Reading, w: Call, success: bool = False) -> CandidateInsight:
    words = _words(w.name.replace("_", " "))
    reason = stated_reason(r, w)
    # the rule the run's own stated reason rests on; else the rule that names the hand-off
    rule = rule_on(r, reason, words)
    said = f"; the system prompt's rule closest to that reason: \"{rule_quote(rule)}\"" if rule else ""
    if not rule:
        scored = [(len(words & _words(s)), s) for s in sentences(r.system.content or "") if RULE.search(s)] if r.system else []
        best = max(scored, key=lambda x: x[0], default=(0, ""))
        rule = best[1] if best[0] >= 2 or (best[0] == 1 and len(words) == 1) else ""
        said = f"; the system prompt allows it as it says: \"{rule_quote(rule)}\"" if rule else ""
    chain = lookup_chain(r, w)
    gist = task_gist(r, words | _words(reason))
    stating = f", stating \"{reason}\"," if reason else ""
    if success:
        return CandidateInsight(
            title=f"Hand off with {w.name} when the tools cannot settle it",
            guideline=f"This run handed the request off with {w.name}" + (f" after {chain}" if chain else "")
                      + f"{stating} and was judged a success{said}.",
            applicability=f"Applies to {for_kind(r)} the other tools cannot settle"
                          + (f", such as: \"{gist}\"" if gist else "") + "; not when a tool can make the change.",
        )
    return CandidateInsight(
        title=f"Decide on {w.name} from the task and the rules",
        guideline=f"This run handed the conversation off with {w.name}" + (f" after {chain}" if chain else "")
                  + f"{stating} and was judged a failure{said}. Before handing off, check whether the request can "
                  "be done with the other tools.",
        applicability=f"Applies to {for_kind(r)} where a hand-off is considered"
                      + (f", such as: \"{gist}\"" if gist else "") + "; when the rules require the hand-off, make it.",
    )


def _idle_lesson(r: Reading) -> CandidateInsight:
    gist = task_gist(r, set())
    if not r.calls:
        return CandidateInsight(
            title="Check with the environment before answering",
            guideline="This run answered without a single tool call" + last_said(r) + " and was judged a failure; use the tools to "
                      "confirm the facts the task depends on before answering.",
            applicability=f"Applies to {for_kind(r)}" + (f" such as: \"{gist}\"" if gist else "")
                          + "; not when the answer needs nothing from the environment.",
        )
    tools = list(dict.fromkeys(c.name for c in r.calls))
    chain = lookup_chain(r, None, limit=5)
    return CandidateInsight(
        title=f"Act on what {tools[0]} found",
        guideline=f"This run made {len(r.calls)} look-up call{'s' if len(r.calls) != 1 else ''} "
                  + (f"({chain}) " if chain else f"with {join(tools, 4)} ")
                  + "and never made the call that changes state or settles the task; it was judged a failure. Once "
                  "the look-ups have given the facts, act on them, or say why it cannot be done.",
        applicability=f"Applies to {for_kind(r)}" + (f" such as: \"{gist}\"" if gist else "")
                      + "; not when the task only asks for a spoken answer.",
    )


def _loop_lesson(r: Reading, c: Call, n: int) -> CandidateInsight:
    return CandidateInsight(
        title=f"Stop repeating {c.name} unchanged",
        guideline=f"This run sent the same {c.name} call {n} times (the last answer: \"{first_line(c.turn.result, 80)}\") "
                  f"and was judged a failure; when a call gives the same answer twice, change the arguments or the approach.",
        applicability=f"Applies to {c.name} in {for_kind(r)}{such_as(r, c)}; not to polling a state that is expected to change.",
    )


def _part_of(w: Call, gold: str) -> str:
    """How a wrong answer overlaps the expected one: "less" when the expected answer holds all
    of its words and more, "more" the other way round, else ""."""
    said = set(re.findall(r"\w+", str(w.turn.arguments).casefold()))
    wanted = set(re.findall(r"\w+", gold.casefold()))
    if not said or not wanted or said == wanted:
        return ""
    return "less" if said < wanted else "more" if wanted < said else ""


def _free_form_failure(r: Reading, w: Call) -> CandidateInsight:
    chain = lookup_chain(r, w, changes=True)
    _, _, unseen = sources(r, w)
    answer = free_form(w) or ""
    gist = task_gist(r, call_words(w))
    gold = expected_answer(r)
    held = answer_seen_in(r, gold, w) if gold and not is_label(gold) else None
    if gold and is_label(gold):  # a verdict from a fixed set (SUPPORTS, REFUTES): no page holds it
        why = (f"; the expected verdict was \"{clip(gold, 40)}\": before {w.name}, check each part of "
               f"\"{gist}\" against what the look-ups returned")
    elif gold and _occurs(gold, (r.run.task.instruction or "").lower()):  # one of the options the request named
        why = (f"; {the_expected(gold)} was one the request itself named: before {w.name}, compare what the "
               f"look-ups returned for each option of \"{gist}\"")
    elif gold and _part_of(w, gold) == "less":  # a near miss: the form of the answer, not the fact, was wrong
        why = (f"; it gave only part of {the_expected(gold).rstrip(',')}: answer in the full form the observations "
               f"state for \"{gist}\"")
    elif gold and _part_of(w, gold) == "more":
        why = (f"; {the_expected(gold)} is only part of what it answered: answer with just what \"{gist}\" asks, "
               "in the form the observations state")
    elif gold and held is not None:  # the look-ups had it: the answer was misread, not missing
        why = (f"; {the_expected(gold)} was in what {call_label(held)} returned: before {w.name}, answer with "
               f"what the observations say about exactly what the request asks, \"{gist}\"")
    elif gold:
        why = (f"; {the_expected(gold)} appears in none of what its look-ups returned: look up every part of "
               f"the request \"{gist}\" before {w.name}")
    else:
        why = f": the look-ups did not settle the request \"{gist}\"; look up every part of it before {w.name}"
    return CandidateInsight(
        title=f"{w.name} judged wrong after {join([c.name for c in r.calls if c.n < w.n and not c.writes], 2) or 'no look-up'}",
        guideline=f"This run ended with {w.name}[{answer}]" + (f" after {chain}" if chain else "")
                  + (", a value no look-up had shown" if unseen and not is_label(answer) else "")
                  + reasoned(r, w) + f" and was judged a failure{why}."
                  + (f" It had been given a plan from an earlier failed attempt, \"{plan}\", and it did not get it there."
                     if (plan := earlier_plan(r)) else ""),
        applicability=f"Applies to {for_kind(r)} that end in {w.name}; a failed run's lesson is a caution, not a recipe.",
    )


def _failure(r: Reading, chosen: list[Item]) -> list[CandidateInsight]:
    out: list[CandidateInsight] = []
    writes = [i for i in chosen if i.kind == "write" and i.call is not None]
    for i in sorted(writes, key=lambda i: -i.rank):
        if is_hand_off(i.call):
            out.append(_hand_off_lesson(r, i.call))
            break
        if free_form(i.call) is not None:
            out.append(_free_form_failure(r, i.call))
            break
        lesson = _unseen_lesson(r, i.call, i.evidence.notes)
        if lesson:
            out.append(lesson)
            break
    errors = [i.call for i in chosen if i.kind == "error" and i.call is not None and not is_hand_off(i.call)]
    unrecovered = [i.call for i in chosen if i.kind == "error" and i.rank >= 80 and i.call is not None and not is_hand_off(i.call)]
    told: set[str] = set()
    for err in unrecovered or errors:  # one lesson per failing tool, at most two
        if err.name not in told and len(told) < 2:
            told.add(err.name)
            out.append(_error_lesson(r, err))
    for i in chosen:
        if i.kind == "loop" and i.call is not None and not any(i.call.name in o.title for o in out):
            answer = " ".join((i.call.turn.result or "").split())  # a repetition: the same call, answered the same
            out.append(_loop_lesson(r, i.call, sum(1 for c in r.calls if signature(c.turn) == signature(i.call.turn)
                                                   and " ".join((c.turn.result or "").split()) == answer)))
            break
    if not writes and not errors:
        out.append(_idle_lesson(r))
    if not out and writes and runs_a_command(writes[-1].call.turn):
        w = max((i.call for i in writes), key=lambda c: c.n)  # the last change it made
        made = list(dict.fromkeys(what_it_did(c) for c in r.calls if c.writes and not c.error))
        out.append(CandidateInsight(
            title=f"Check the change before {w.name}",
            guideline=f"This run changed things with {join(made, 3)}, ended with {w.name} and was judged a failure; "
                      f"before {w.name}, check that the change does what the request asks: "
                      f"\"{task_gist(r, call_words(w))}\".",
            applicability=f"Applies to {w.name} in {for_kind(r)}; a failed run's lesson is a caution, not a recipe.",
        ))
    elif not out and writes:
        w = writes[-1].call
        out.append(_went_through_lesson(r, w))
    return out


def _went_through_lesson(r: Reading, w: Call) -> CandidateInsight:
    """A failed run whose last change used only values it had seen: what the look-up said about
    the thing changed and the system prompt's rule on the action closest to that and the request."""
    chain = lookup_chain(r, w)
    gist = task_gist(r, call_words(w))
    tool, facts = record_facts(r, w)
    # a fact speaks by its value (``basic_economy``), or by its key when the value is a flag (``no``)
    told = {(k, v): {x for x in _words((v if len(v) > 3 else k).replace("_", " ")) if len(x) >= 4} for k, v in facts}
    rule = rule_for_call(r, w, gist + " " + " ".join(x for words in told.values() for x in words))
    shown = [kv for kv, words in told.items() if words & _words(rule)][:4]
    fields = ", ".join(f"{k} '{v}'" for k, v in shown)
    said = (f"; {tool} had shown {fields}" if shown else "") + \
        (f", and the system prompt's rule on {w.name} closest to this: \"{rule_quote(rule)}\"" if rule else "")
    return CandidateInsight(
        title=f"Re-read the request before {w.name}",
        guideline=f"This run's {w.name} used only values it had seen" + (f" (after {chain})" if chain else "")
                  + f", went through, and the run still failed{said}; before {w.name}, check that the call does what "
                  f"the request asks" + (" and what the rule allows" if rule else "") + f": \"{gist}\".",
        applicability=f"Applies to {w.name} in {for_kind(r)}; a failed run's lesson is a caution, not a recipe.",
    )
