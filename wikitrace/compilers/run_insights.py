"""The insights one run teaches (at most three), each under a structural key.

An insight is identified by what kind of thing it is about, never by how one run
narrates it: ``error|<tool>|<error shape>`` (the tool, its command word, and the
first failing line of the answer with ids, numbers, paths, quotes and bracketed
names masked), ``procedure|<final call>[:<where its answer came from>]`` (what a run
did to settle its task), ``unseen`` (a change made with values no earlier turn
held), ``rule|<rule>`` (a rule of the system prompt, kept by a success or broken
by a failure), ``hand-off|<tool>``, ``loop|<tool>`` (the same call answered the same
way three times), ``answer|<tool>|<why it was wrong>`` (a final answer judged wrong:
a verdict, one of the named options, part of the answer, more than the answer, an
answer the look-ups held, one they never showed), ``went-through|<tool>`` (the last
change went through and the run still failed), ``idle|none`` / ``idle|lookups``,
``answer-from`` (a success that changed nothing), ``direct`` (a success without a call).

Every text of an insight (title, guideline, applicability) is written from the key's
fields only, so two runs with the same key write the same text; what is particular to
the run goes into ``detail``, shown beside the run on the insight page. The guideline
says what to do; the counts and the contrast with successes are added across runs by
corpus/insights.py, from the patterns every run records (run_patterns.py: the same
keys, met whether or not the run's three-insight budget kept them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .call_kinds import FILE_EDIT, changed_with
from .answer_case import answer_case
from .error_insights import error_insight
from .failing_end import failing_end, failing_end_insight
from .limit_insights import limit_insight, unsettled_edit
from .option_choices import option_insight, partial_reasons
from .verdict_evidence import verdict_insight
from .insight_words import (WHY_WRONG, clip_words, expected_answer, free_form, gives_answer, is_hand_off, join,
                            last_said, top_key, why_wrong)
from .argument_places import unseen_paths
from .expected_calls import differences, made_as_expected
from .missed_insight import left_undone
from .picked_values import picked
from .qa_reasons import reflected_answer
from .changes import edit_of
from .coding_insights import edit_detail
from .test_edits import test_only_edits, test_only_insight
from .insight_parts import kind_of_tasks, main_edit, make_insight, rules_once, verb
from ..runs.errors import is_test_report
from .reading import _SHELL_TOOLS, Call, Reading, _head_word, harness_reason, runs_a_command
from .rule_lessons import hand_off_insight, rule_insight, rule_naming
from .rules import _CONFIRM_WORDS
from .success_insights import success_insights
from .schema import MAX_INSIGHTS, CandidateInsight
from .text import clip, shown_beside

if TYPE_CHECKING:
    from .page_causes import Item


# --- failure ---------------------------------------------------------------------------------


# how the detail of a run the harness stopped while it was still looking ends (corpus/fact_cases.py takes
# the run's fact of the stop as its case by it)
STOPPED_LOOKING = "stopped by the harness"


def _answer_insight(r: Reading, w: Call) -> CandidateInsight:
    why = why_wrong(r, w)
    if why in ("misread", "not-found") and reflected_answer(r, w) is not None:
        why = "reflected"  # a retry gave again a name its reflection on the failed attempt held
    gold = expected_answer(r)
    score = r.run.outcome.score
    given = str(w.turn.arguments)  # both shown whole when short: the difference is the lesson
    scored = isinstance(score, (int, float)) and not isinstance(score, bool)
    # a purchase scored in part: what the log shows it left out (an option, the price limit), before its score
    reasons = partial_reasons(r) if scored and 0 < score < 1 else []
    left_out = "".join(f"; {said}" for _kind, said, _turns in reasons)
    detail = (f"turn {w.n}: {'answered' if gives_answer(r, w) else 'ended with'} {w.name}"
              f"[{shown_beside(given, gold or '')}]" + (f", expected \"{shown_beside(gold, given)}\"" if gold else "")
              + left_out + (f"; score {score:g}" if scored else ""))
    title, guide = (x.format(t=w.name) for x in WHY_WRONG[why])
    insight = make_insight(f"answer|{w.name}|{why}", title, guide + ".",
                           f"In {kind_of_tasks(r)}, before the {w.name} call that ends the run.", detail, False)
    insight.case = answer_case(r, w)
    if reasons:  # counted by kind on the lesson's page (corpus/rewrites.partial_scores)
        insight.case["left_out"] = [kind for kind, _said, _turns in reasons]
    return insight


def broken_rule_insight(r: Reading, w: Call, h) -> CandidateInsight:
    """The lesson of a rule the change broke; a missing yes keeps what the user's last message
    did (corpus/failed_only_facts.unagreed counts it on the rule's page)."""
    insight = rule_insight(r, h.sentence, f"turn {w.n}: called {w.name} while {h.broken}", False)
    if w.unagreed is not None and h.broken == w.unagreed.sentence():
        insight.case = {"unagreed": "picked" if w.unagreed.picked else
                        "request" if w.unagreed.named or w.unagreed.request else "other"}
    return insight


def unseen_insight(r: Reading, w: Call) -> CandidateInsight | None:
    broken = [h for h in rules_once(r, w) if h.broken]
    if broken:
        return broken_rule_insight(r, w, broken[0])
    unseen = unseen_paths(r, w)
    if not unseen:
        return None
    keys = sorted(unseen)  # the paths, not their top keys: payment_methods' id may stand in a look-up, its amount not
    return make_insight("unseen", "Take argument values from look-ups and the user's words",
                   "Before a call that changes state, take each argument value from a look-up or from the user's own "
                   "words, or work it out from them (a total from the listed prices); a value that none of them holds "
                   "or yields is a guess: ask or look it up first.", f"In {kind_of_tasks(r)}, before any state-changing call.",
                   f"turn {w.n}: {w.name} with {join(keys, 3)} set to {'a value' if len(keys) == 1 else 'values'} no "
                   "look-up or user message before it held",
                   False)


# the went-through lesson's last step, which the page replaces by where successful runs took each
# argument when the task type shows it (corpus/rewrites.checklist)
CHECK_EACH = "check each argument against the part of the request it serves first"
GENERIC_CHECK = f"That the call went through does not show it was the change asked for: {CHECK_EACH}."


def _went_through_insight(r: Reading, w: Call) -> CandidateInsight:
    """A change that went through in a failed run: the lesson is the check before such a change,
    with the system prompt's rules on it quoted (those that name the action and one of its
    values, or else the rule that names the tool), since a call that goes through can still
    be the change the rules or the request did not allow."""
    v = changed_with(r, w)
    rules = list(dict.fromkeys(h.sentence for h in rules_once(r, w) if not _CONFIRM_WORDS.search(h.sentence)))[:2]
    rules = rules or [x for x in [rule_naming(r, w.name)] if x]
    quoted = "; ".join(f"\"{clip_words(x, 200)}\"" for x in rules)
    end = "" if quoted.endswith(('."', '…"')) else "."
    args = w.turn.arguments
    edit = edit_of(w.turn)
    if edit is not None:  # a file edit: the check is the file and what the change does there, not "arguments"
        text = (f"Before {v}, check that the file it changes is the one the task is about (named by the task text, "
                "or found by a search or a failing test's trace) and read the changed lines back: that an edit went "
                "through does not show it was the change asked for.")
    elif not args or (isinstance(args, str) and args.strip() == (w.name or "").strip()) or w.turn.extra.get("submits"):
        # SWE-agent's ``submit``, mini-swe-agent's submitting echo: it sends the changes made before it
        text = (f"Before {v}, check that the changes made before it do what the request asks: that {v} went "
                "through does not show they were the change asked for."
                + (f" Hold it against what the system prompt's rules say of it: {quoted}{end}" if rules else ""))
    else:
        text = ((f"Before {v}, hold the call against what the system prompt's rules say of it: {quoted}{end} " if rules
                 else "") + GENERIC_CHECK)
    ruled = bool(rules) or r.system is not None  # no "rules" in the title of a log that has none
    said = "making a file edit" if v == FILE_EDIT else f"calling {v}"
    return make_insight(f"went-through|{v}", f"Before {v}, check the request" + (" and the rules on it" if ruled else ""), text,
                   f"In {kind_of_tasks(r)}, before {said}.", f"turn {w.n}: {verb(w)} went through" + _unchecked(r, w)
                   + (f"; changed {edit_detail(r)}" if main_edit(r) is not None else ""), False)


def _unchecked(r: Reading, w: Call) -> str:
    """What the run's own log shows was not checked before a change: argument values taken
    unasked among several one answer listed, and values no earlier turn held."""
    chosen = _differing_keys(r, w, dict.fromkeys(top_key(p.path) for p in picked(r, w)))
    # the paths themselves: "payment_methods" alone would deny the payment_id a look-up had shown
    unseen = unseen_paths(r, w)
    differing = set(_differing_keys(r, w, {top_key(p) for p in unseen}))
    unseen = sorted(p for p in unseen if top_key(p) in differing)
    return ((f"; took {join(chosen, 3)} among several values an earlier answer listed, no user message naming "
             f"{'it' if len(chosen) == 1 else 'them'}" if chosen else "")
            + (f"; set {join(unseen, 3)} to {'a value' if len(unseen) == 1 else 'values'} no look-up or user message "
               "before it held" if unseen else ""))


def _differing_keys(r: Reading, w: Call, keys) -> list[str]:
    """``keys`` (in their order) but those the log's expected call of the tool sends as this call did:
    a value the task expected is no value the run should have checked, wherever it came from."""
    diffs = differences(r, w)
    if diffs is None:
        return list(keys)
    differing = {top_key(path) for path, _want, _sent in diffs}
    return [k for k in keys if k in differing]


def _loop_insight(r: Reading, c: Call, n: int) -> CandidateInsight:
    v = verb(c)
    return make_insight(f"loop|{v}", f"Do not send the same {v} call again after the same answer",
                   f"When {v} gives the same answer to the same arguments twice, change the arguments (another "
                   "query, a name or value an earlier answer showed) or the approach instead of sending it again.",
                   f"In {kind_of_tasks(r)}, whenever a {v} call is about to be repeated.",
                   f"turn {c.n}: the same {v} call {n} times with the same answer", False)


def _idle_insight(r: Reading) -> CandidateInsight:
    if not r.calls:
        return make_insight("idle|none", "Look the request's records up before answering or refusing",
                       "Before answering, or telling the user something cannot be seen or done, call the look-ups "
                       "that show the records the request is about: an answer given with no tool call rests on "
                       "nothing the environment showed.",
                       f"In {kind_of_tasks(r)} whose answer depends on the environment.", "answered without a tool call", False)
    looked = f"{len(r.calls)} look-up call{'s' if len(r.calls) != 1 else ''} " \
             f"({join(list(dict.fromkeys(verb(c) for c in r.calls)), 3)}), nothing settled"
    act = "give the answer" if expected_answer(r) is not None else "answer or make the change"  # a QA task changes nothing
    if harness_reason(r):  # stopped by the harness (a step limit) while still looking: its detail says so
        return make_insight("idle|lookups", "Answer or act before the harness stops the run",
                       f"Stop looking once the look-ups hold what the request asks, and {act} "
                       "then, before the harness's limit ends the run; when the look-ups keep missing, change "
                       "the query instead of sending more of the same kind.",
                       f"In {kind_of_tasks(r)} that a harness stops at a limit (steps, cost or context).",
                       f"{looked}; {STOPPED_LOOKING}", False)
    return make_insight("idle|lookups", "Act on what the look-ups found",
                   ("Once the look-ups have given the facts, give the answer the question asks for; do not end with "
                    "look-ups only." if expected_answer(r) is not None else
                    "Once the look-ups have given the facts, make the change or give the answer the request asks for, "
                    "or say why it cannot be done; do not end with look-ups only."),
                   f"In {kind_of_tasks(r)} that ask for " + ("an answer." if expected_answer(r) is not None
                                                              else "a change or an answer."), looked + last_said(r), False)


def stopped_browsing(r: Reading, writes: list[Call]) -> bool:
    """The harness ended the run while every call that went through was free text that settles
    nothing (a click, a move: no answer turn holds it): the run never took its last step."""
    return harness_reason(r) is not None and all(free_form(w) is not None and not gives_answer(r, w) for w in writes)


def _stopped_insight(r: Reading, last: Call) -> CandidateInsight:
    tools = join(list(dict.fromkeys(verb(c) for c in r.calls)), 3)
    return make_insight("stopped", "Take the step that settles the task before the harness stops the run",
                        "Take the step that settles the task before the harness's limit ends the run: once what "
                        "the calls have shown fits what the request asks, act on it instead of looking further; when "
                        "it keeps missing, change the query instead of sending more of the same kind.",
                        f"In {kind_of_tasks(r)} that a harness stops at a limit (steps, cost or context).",
                        f"{len(r.calls)} calls ({tools}), the last {last.name}[{free_form(last)}] at turn {last.n}; "
                        f"stopped by the harness: {clip(harness_reason(r) or '', 80)}", False)


def repeats(r: Reading) -> list[tuple[Call, int]]:
    """Calls sent three times or more with the same arguments and the same answer."""
    groups: dict[tuple[str, str], list[Call]] = {}
    for c in r.calls:
        groups.setdefault((c.sig, c.turn.result or ""), []).append(c)
    return [(cs[-1], len(cs)) for cs in groups.values() if len(cs) >= 3]


def _failure(r: Reading, chosen: list["Item"]) -> list[CandidateInsight]:
    out: list[CandidateInsight] = []
    writes = [c for c in r.calls if c.writes and not c.error]
    ranked = sorted((i for i in chosen if i.kind == "write" and i.call is not None), key=lambda i: -i.rank)
    for i in ranked:
        if is_hand_off(i.call):
            out.append(hand_off_insight(r, i.call, False))
            break
        if free_form(i.call) is not None and i.call is writes[-1] and harness_reason(r) is None:
            out.append(_answer_insight(r, i.call))  # only the call that ended the run is its answer
            break
        broken = [h for h in rules_once(r, i.call) if h.broken]
        if broken:
            out.append(broken_rule_insight(r, i.call, broken[0]))
            break
    # a listed option the task names, not chosen; what a verdict's reasoning quoted: before the errors
    option = option_insight(r, False) or verdict_insight(r)
    if option is not None:
        out.append(option)
    if writes and not out and stopped_browsing(r, writes):
        out.append(_stopped_insight(r, writes[-1]))
    elif not out and unsettled_edit(r, writes):  # the limit ended it before its edit was submitted
        out.append(limit_insight(r, writes))
    elif writes and not out and test_only_edits(r):  # it changed the test, not the code: that is the lesson
        out.append(test_only_insight(r))
    elif writes and not out:  # the change went through and no rule it broke explains it: the check before it
        # a test run checked the code; a shell tool's command that wrote no file and submitted nothing
        # (a profile, a script whose effect the log does not show) is no change the lesson could check
        changes = [w for w in writes if not (runs_a_command(w.turn) and is_test_report(w.turn.result))
                   and not (_head_word(w.name or "") in _SHELL_TOOLS and edit_of(w.turn) is None
                            and not w.turn.extra.get("submits"))
                   and not made_as_expected(r, w)]  # a change the log records as expected is no candidate mistake
        if changes:
            out.append(_went_through_insight(r, changes[-1]))
        else:  # every change was as expected: what it left undone failed it
            out.extend(left_undone(r))
    ended = failing_end(r) if writes else None
    if ended is not None:  # it settled on tests it had just seen fail: beside the check of what the edit wrote
        out.append(failing_end_insight(r, *ended))
    # an error the run got past another way ended nothing: it teaches no lesson of its own
    errors = [i for i in chosen if i.kind == "error" and i.call is not None and not is_hand_off(i.call)
              and not i.otherwise]
    told: set[str] = {verb(ended[0])} if ended is not None else set()  # its failing tests: the lesson above
    for i in sorted(errors, key=lambda i: -i.rank):  # the errors it never got past first, one per tool
        if verb(i.call) not in told and len(told) < 2 + (ended is not None):
            told.add(verb(i.call))
            out.append(error_insight(r, i.call))
    loops = repeats(r)
    if loops and not out:  # a generic lesson: it takes a place only when nothing more specific does
        c, n = max(loops, key=lambda x: (x[1], -x[0].n))
        out.append(_loop_insight(r, c, n))
    if not writes and not errors:
        out.append(_idle_insight(r))
    # what a run that made changes left undone, where the budget has room (repeats are dropped); a run
    # that made none has the lesson of ending after look-ups, whose page counts its changes never made
    return out + (left_undone(r) if writes else [])


def insights_for(r: Reading, chosen: list["Item"]) -> list[CandidateInsight]:
    out = success_insights(r, chosen) if r.run.outcome.success else _failure(r, chosen)
    seen, unique = set(), []
    for insight in out:
        if insight.key not in seen:
            seen.add(insight.key)
            unique.append(insight)
    return unique[:MAX_INSIGHTS]
