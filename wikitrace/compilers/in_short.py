"""The "In short" of a compilation page: the one to three facts that most likely decided the
run, said plainly with the turns that show them.

Each fact comes from something the compiler establishes as data, never from its own
sentences: a comparison in the agent's own words that arithmetic proves wrong, a claim of when
a record was made that its own date and the log's stated now disprove (time_claims.py), a money
limit or a count the user gave that a number of the log contradicts (claim_facts.py), the answer against the one the task expected (answer_facts.py), an expected call against the
call sent (item by item), an expected change never made (each with the run's own rule on it and
the record fields that rule names, where one clearly governs: rule_reasons.py), errors no later
call got past, the harness's stop. Where none of these is established the page says so instead of guessing.

A failed run's page leads with why, when the log shows it: the expected changes acted on records a
listed look-up named and the run never opened, or on an offer the agent let drop (change_facts.py);
a user's word about a record that the record contradicts, taken up by the agent, and changes that
failed on dates already past by the stated current time (record_claims.py).
"""

from __future__ import annotations

from dataclasses import replace

from .agreed_terms import other_terms
from .answer_facts import answer_call, answer_fact
from .change_facts import LEADS, expected_facts, unread_facts
from .changes import what_ran
from .claimed_changes import unmade_claims
from .code_facts import chosen_purchase, edited_still_failing, fixed_then_passed, partial_score, passed_yet_failed, ran_name, said_back, what_changed
from .claim_facts import count_facts, limit_facts, wrong_comparisons
from .conclusions import reversed_conclusions
from .error_insights import found_by
from .expected_outputs import untold_fact
from .got_past import got_past
from .harness_facts import harness_fact
from .expected_calls import call_text, differences, expected_changes, made_as_expected, missed_changes, no_such_call
from .unshown_values import retry_note
from .unseen_names import unseen_names_fact
from .unread_edits import unread_edit_fact
from .arguments import wrong_kind
from .insight_words import answer_seen_in, expected_answer, gives_answer, hands_off, join
from .page_items import lacking_support
from .page_causes import _QUOTES, _in_quote_marks
from .page_notes import listed_names
from .qa_facts import qa_facts
from .record_claims import contradicted, past_dates, unchecked
from .record_facts import stated_now
from .shown_conflicts import shown_conflicts
from .picked_values import record_ids
from .reading import Call, Reading
from . import rule_reasons, success_lessons
from .trial_record import RESTATES
from .schema import KeyFact
from .text import clip
from .time_claims import time_facts

MAX_FACTS = 3


def _kind(facts: list[KeyFact], kind: str) -> list[KeyFact]:
    return [replace(f, kind=kind) for f in facts]


def in_short(r: Reading) -> list[KeyFact]:
    """The facts, most telling first: a checked claim in the run's own words, then what the
    log's own records establish for this outcome. Once per run (its memo): a success that changed
    nothing asks which look-ups they cite before its page's decisions are chosen."""
    if "in_short" not in r.memo:
        r.memo["in_short"] = _in_short(r)
    return list(r.memo["in_short"])


def _in_short(r: Reading) -> list[KeyFact]:
    own = wrong_comparisons(r) + reversed_conclusions(r)  # the agent's own words, refuted by its own figures
    facts = (_kind(own[:1], "comparison") + _kind(time_facts(r)[:1], "time")
             + _kind(limit_facts(r)[:1], "limit") + _kind(count_facts(r)[:1], "count"))
    if r.run.outcome.success:
        claim = contradicted(r)  # the user's word the record denied: a success that took it succeeded by luck
        facts += _success_facts(r) + ([claim.fact(succeeded=True)] if claim is not None else [])
    else:
        failed = _failure_facts(r)
        leads = r.memo.get(LEADS, [])
        facts = [f for f in failed if f.text in leads] + facts + [f for f in failed if f.text not in leads]
    facts = qa_facts(r, facts)
    kept: list[KeyFact] = []
    for f in facts:
        if f.text not in (k.text for k in kept):
            kept.append(replace(f, turns=sorted(set(f.turns))))
    if kept:
        return _folded(kept[:MAX_FACTS], kept[MAX_FACTS:])
    referenced = expected_changes(r) is not None or expected_answer(r) is not None
    fact = KeyFact(NOTHING_SETTLED[r.run.outcome.success, referenced])
    return _restating(r, [fact]) if r.run.outcome.success else [fact]


# kinds whose ``about`` names the calls or arguments a fact is on, each counted across runs
_ITEM_KINDS = ("arguments", "unexpected-change", "missed-change")


def _folded(shown: list[KeyFact], left: list[KeyFact]) -> list[KeyFact]:
    """The shown facts, and of those left out for room: the calls or arguments they name, joined to
    the shown fact of their kind, and whole, after the others, a fact of a kind none shown has. The
    insight layer counts a run once per kind of fact and per call it names (corpus/checked_facts.py)
    and links the run's page for it: a change cut from the page went through all the same, and the
    page must say so wherever a count includes the run."""
    out = list(shown)
    for f in left:
        at = next((i for i, g in enumerate(out) if g.kind == f.kind), None) if f.kind else None
        if at is None and f.kind:
            out.append(f)
        elif at is not None and f.kind in _ITEM_KINDS:
            out[at] = replace(out[at], about=list(dict.fromkeys([*out[at].about, *f.about])))
    return out


# What an offline page says when no fact is established. It speaks of the offline compiler's
# items, so a model's page leaves it out. Keyed by (success, whether the log holds expected calls or an
# expected answer): a log that never has them (a coding session) is not told it lacks them.
NOTHING_SETTLED = {
    (False, True): "The log records nothing that settles this run on its own: no expected calls or answer to compare "
                   "with, no error left standing, no stop by the harness. The items below are the compiler's ranking "
                   "of what the run did, not an established cause.",
    (True, True): "The log records nothing that shows what decided this success: no expected calls or answer to "
                  "compare with. The decisions below are what the run did, in order.",
    (False, False): "The log records no error left standing and no stop by the harness, and holds no expected result "
                    "to compare with. The items below are the compiler's ranking of what the run did, not an "
                    "established cause.",
    (True, False): "The log holds no expected result to compare with. The decisions below are what the run did, "
                   "in order.",
}


# --- what the log's own records establish --------------------------------------------------------


def _standing_errors(r: Reading) -> tuple[list[KeyFact], list[KeyFact]]:
    """Errors the run never got past (got_past.py), one fact per tool, changes first: (the run's
    own errors, programs the machine lacks). A missing program says where the run ran, and
    runs that succeed meet it too, so it comes after the harness's stop."""
    past = got_past(r)
    standing: dict[str, list[Call]] = {}
    for c in r.calls:
        if c.error and c.n not in past:
            standing.setdefault(what_ran(c.turn), []).append(c)
    own: list[KeyFact] = []
    lacking: list[KeyFact] = []
    for key, errs in sorted(standing.items(), key=lambda kv: (not kv[1][0].writes, kv[1][0].n)):
        ns = [e.n for e in errs]
        turns = f"turn {ns[0]}" if len(ns) == 1 else "turns " + join(list(map(str, ns)), 6)
        same = len({" ".join((e.turn.result or "").split()) for e in errs}) == 1
        # a look-up the run never got to answer, and a change made after it all the same: what it went on without
        after = None if errs[-1].writes or lacking_support(errs[-1], False) is not None else next(
            (c for c in r.calls if c.n > ns[-1] and c.writes and not c.error), None)
        fact = KeyFact(f"{ran_name(errs[0])} failed at {turns} ({'' if same else 'the last: '}"
                       f"{said_back(errs[-1])}), "
                       f"and no later {key} call went through"
                       + ("." if after is None else f"; it answered with {after.name} at turn {after.n} all the same."
                          if gives_answer(r, after) else f"; {after.name} made a change at turn {after.n} all the same."),
                       ns[:3] + ([ns[-1]] if len(ns) > 3 else []) + ([after.n] if after else []))
        (lacking if lacking_support(errs[0], False) is not None else own).append(fact)
    return own, lacking


def _wrong_kind(r: Reading, c: Call) -> KeyFact | None:
    """A yes or no given to a question that asks what, which or who: the kind of answer, not its
    value, was wrong (step-0208 said "yes" to "During what war …")."""
    asked = wrong_kind(r, str(c.turn.arguments))
    if asked is None:
        return None
    given = " ".join(str(c.turn.arguments).split()).rstrip(".!").casefold()
    return KeyFact(f"The answer \"{given}\" (turn {c.n}) is a yes or no, but the question asks \"{asked.group(0)}\": "
                   "it wants a thing named, not whether something holds.", [c.n], "wrong-kind", [c.name or ""])


def _failure_facts(r: Reading) -> list[KeyFact]:
    answer = answer_call(r)
    facts = [f for f in [answer_fact(r, answer, False) if answer is not None else None] if f is not None]
    kind = _wrong_kind(r, answer) if answer is not None else None
    if kind is not None:  # why first: the answer was of the wrong kind
        facts.insert(0, kind)
        r.memo.setdefault(LEADS, []).append(kind.text)
    own, lacking = _standing_errors(r)
    untold = [f for f in [untold_fact(r)] if f is not None]
    still = edited_still_failing(r)  # tells the test command's failures, and what came between them
    own = [f for f in own if not still or not set(f.turns) <= set(still[0].turns)]
    facts += still + expected_facts(r) + untold + own + harness_fact(r) + lacking + unread_facts(r)
    facts += passed_yet_failed(r)
    facts += partial_score(r)
    facts += unseen_names_fact(r)
    facts += unread_edit_fact(r)
    claim = contradicted(r)  # why first: the agent took the user's word where the record said otherwise
    past = past_dates(r, stated_now(r))  # or changes failed on dates already past: their errors said once, here
    facts = [f for f in facts if past is None or f not in own or not set(f.turns) <= set(past.turns)]
    agreed = next((o.fact() for c in r.calls if c.writes and (o := other_terms(r, c)) is not None), None)
    shown = next(iter(shown_conflicts(r)), None)
    if shown is not None and _failed_then_went_through(r, shown):  # a failed call the run got past: after what still stood
        facts, shown = facts + [shown], None
    told = next(iter(unmade_claims(r)), None)
    # a past date that failed a change to a record no expected change touches did not keep the run from the
    # changes it was judged by: said after them
    aside = past if past is not None and _off_expected(r, past) else None
    whys = [f for f in (agreed, shown, told, claim.fact() if claim is not None and claim.echoed_at else None,
                        None if aside else past) if f is not None]
    r.memo.setdefault(LEADS, []).extend(f.text for f in whys)
    facts = whys + facts + ([aside] if aside else []) + ([claim.fact()] if claim is not None and not claim.echoed_at else [])
    facts += [f for f in [unchecked(r) if claim is None else None] if f is not None]
    writes = [c for c in r.calls if c.writes and not c.error]
    if not facts and expected_changes(r) is not None and writes and all(made_as_expected(r, c) for c in writes):
        facts.append(KeyFact("Every change this run made is one the log records as expected, and none it expected is "
                             "missing: the log does not show what else was judged.", [c.n for c in writes[:3]]))
    return facts


def _off_expected(r: Reading, fact: KeyFact) -> bool:
    """Whether every failed change a fact is on (at its turns) was on another record than each
    expected change of its tool: an id both send under one key, with another value (a reservation
    the task did not ask to change; a shared payment id says nothing of which), where the log
    records expected changes."""
    expected = [record_ids(e["arguments"]) for e in expected_changes(r) or () if e["name"] in fact.about]
    calls = [record_ids(c.turn.arguments) for c in r.calls if c.n in fact.turns and c.writes and c.error]
    return bool(expected and calls) and all(any(k in e and e[k] != v for k, v in mine.items())
                                            for mine in calls for e in expected)


def _failed_then_went_through(r: Reading, fact: KeyFact) -> bool:
    """Whether the call a fact is about (at its last turn) failed and a later call of its tool went
    through."""
    tool, last = (fact.about or [""])[0], max(fact.turns or [0])
    failed = any(c.n == last and c.name == tool and c.error for c in r.calls)
    return failed and any(c.name == tool and not c.error and c.n > last for c in r.calls)


def _got_past(r: Reading) -> list[KeyFact]:
    """The run's first error and the later call of the same program that went through, with what
    the log shows of how: it sent a name the error listed, or left out the quote marks the
    failed call had put around its text."""
    fixed = fixed_then_passed(r)  # a coding run's fail, edit, pass: what was changed comes first
    if fixed:
        return fixed
    err = next((c for c in r.calls if c.error), None)
    fix = None if err is None else next((x for x in r.calls if x.n > err.n and not x.error
                                         and what_ran(x.turn) == what_ran(err.turn)), None)
    if fix is None:
        return []
    how = ""
    sent = fix.turn.arguments
    if isinstance(sent, str):
        listed = {" ".join(n.split()).casefold(): n for n in listed_names(err.turn.result or "")}
        if " ".join(sent.split()).casefold() in listed:
            how = f", sending \"{listed[' '.join(sent.split()).casefold()]}\", a name the error had listed"
        # not where a call that failed between them sent its text without marks too: the marks were not it
        bare_failed = any(c.error and c.name == err.name and err.n < c.n < fix.n
                          and not _in_quote_marks(c.turn.arguments) for c in r.calls)
        if _in_quote_marks(err.turn.arguments) and not any(q in sent for q in _QUOTES) and not bare_failed:
            how += "; the failed call had sent its text inside quote marks, this one none"
    how = how or found_by(r, err, fix)  # the search between them that returned the path it then sent
    note, shown = retry_note(r, err, fix)  # a value sent that nothing had shown, and where the right one came from
    apart, held = _led_elsewhere(r, fix)
    return [KeyFact(f"{ran_name(err)} failed at turn {err.n}; a later {what_ran(fix.turn)} call went through at turn {fix.n}"
                    f"{how}{note}{apart}.", [err.n, fix.n] + shown + held)]


def _led_elsewhere(r: Reading, fix: Call) -> tuple[str, list[int]]:
    """"; what it returned does not hold the answer, which came from the look-up at turn 3" when the
    run's answer stands in a later look-up and not in the retry's: a retry that went through is not
    the way the answer was found (a listed name can be another person's page)."""
    answer = answer_call(r)
    given = str(answer.turn.arguments).strip() if answer is not None else ""
    if not given or answer.n < fix.n:
        return "", []
    source = answer_seen_in(r, given, answer, after=fix.n)
    if source is None or answer_seen_in(r, given, answer, after=fix.n - 1) is not source:
        return "", []  # no later look-up held it, or the retry's own answer did
    return f"; what it returned does not hold the answer, which came from the look-up at turn {source.n}", [source.n]




def _restating(r: Reading, facts: list[KeyFact]) -> list[KeyFact]:
    """Notes facts that restate what a success did: a contrast with its failed trials, when the
    corpus holds them, says more and takes their place (corpus/trial_contrast.py)."""
    r.memo.setdefault(RESTATES, []).extend(f.text for f in facts)
    return facts


def _allowed_case(r: Reading, writes: list[Call]) -> list[KeyFact]:
    """The case of the system prompt's rule that let a success's expected change through, read on
    the record's fields ("business flights can always be cancelled", `cabin` "business"): why the
    change was right, which stays on the page when a contrast with its failed trials takes the place
    of what it restates."""
    for c in writes:
        if made_as_expected(r, c):
            reason = rule_reasons.for_call(r, c, set())
            if reason is not None and reason.allows:
                return [KeyFact(f"{c.name} at turn {c.n} was a change the task expected. {reason.text}",
                                [c.n] + reason.turns)]
    return []


def _refused_unexpected(r: Reading, expected: list[dict] | None) -> list[KeyFact]:
    """A success saved by a refusal: a change of a tool the task expected no call of, sent and
    refused, with no later call of that tool going through. It reads as a run that held back; it
    tried, and the tool said no."""
    if expected is None:
        return []
    tools = {e.get("name") for e in expected}
    for c in r.calls:
        if c.writes and c.error and c.name not in tools and not any(
                x.name == c.name and not x.error and x.n > c.n for x in r.calls):
            return [KeyFact(f"{c.name} at turn {c.n} failed (\"{clip(c.turn.result or '', 90)}\"), and the task "
                            f"expected no {c.name} call: this run succeeded because that change was refused, not "
                            "because it held back from sending it.", [c.n])]
    return []


def _success_facts(r: Reading) -> list[KeyFact]:
    answer = answer_call(r)
    if answer is not None:
        fact = answer_fact(r, answer, True)
        return _restating(r, [fact] if fact is not None else []) + _got_past(r)
    writes = [c for c in r.calls if c.writes and not c.error]
    expected = expected_changes(r)
    facts: list[KeyFact] = []
    if expected is not None:
        made = [c for c in writes if made_as_expected(r, c)]
        if expected and len(made) == len(writes) == len(expected):
            facts.append(KeyFact(f"Make the {'change' if len(made) == 1 else f'{len(made)} changes'} the task expected "
                                 "as this run did, with the same arguments: "
                                 + success_lessons.made_from(r, made) + ".", [c.n for c in made[:3]]))
        elif not expected and not writes:
            facts.append(KeyFact(f"The task expected no change, and the run made none: it answered after "
                                 f"{len(r.calls)} look-up call{'s' if len(r.calls) != 1 else ''}.",
                                 [r.calls[-1].n] if r.calls else []))
        elif not expected:
            facts.append(KeyFact("The task expected no change; the run's only state-changing "
                                 + ("call was " if len(writes) == 1 else "calls were ")
                                 + join([f"{c.name} at turn {c.n}" for c in writes], 3) + ".", [c.n for c in writes[:3]],
                                 "unexpected-change", list(dict.fromkeys(c.name for c in writes))))
        else:  # the run succeeded all the same: where a change differs, or one is missing, is said, not weighed
            # (each fact keeps the kind a failed run's would have: the insight layer counts both sides), after
            # the expected changes it made as expected, which are what the success rests on
            if made:  # some of them: said with the count of those the task expected, not as all of them
                which = ("the change" if len(expected) == 1 else f"all {len(expected)} changes"
                         if len(made) == len(expected) else f"{len(made)} of the {len(expected)} changes")
                facts.append(KeyFact(f"This run made {which} the task expected with the same arguments: "
                                     + success_lessons.made_from(r, made) + ".", [c.n for c in made[:3]]))
            missed = missed_changes(r)
            if missed:
                facts.append(KeyFact(f"The task expected {join([call_text(e) for e in missed], 2)}; the run never made "
                                     + ("it" if len(missed) == 1 else "them") + " and succeeded all the same.", [],
                                     "missed-change", list(dict.fromkeys(e["name"] for e in missed))))
            for c in writes:
                diffs = differences(r, c)
                if diffs is None:
                    facts.append(KeyFact(f"{c.name} at turn {c.n} went through, though the task expected "
                                         f"{no_such_call(r, c)}, and the run still succeeded.", [c.n],
                                         "unexpected-change", [c.name]))
                elif diffs:
                    names = list(dict.fromkeys(k.split('[')[0].split('.')[0] for k, _, _ in diffs))
                    facts.append(KeyFact(f"{c.name} at turn {c.n} went through; the expected {c.name} call differs "
                                         f"from it in {join([f'`{k}`' for k in names], 3)}, and the run still succeeded.",
                                         [c.n], "arguments", [f"{c.name}.{k}" for k in names]))
        # nothing changed where the task expected no change or only a hand-off: what made that right
        if len(facts) == 1 and (not expected or (writes and all(e.get("name") == writes[0].name for e in expected))
                                or (not writes and all(hands_off(e.get("name") or "") for e in expected))):
            lesson = success_lessons.refused(r, writes, expected_handoff=bool(expected))
            if lesson is not None:  # what made it right to change nothing: it takes the restating fact's
                # place, keeping its kind (the insight layer counts that kind on both sides)
                return [replace(lesson, kind=facts[0].kind, about=facts[0].about)] + _got_past(r)
    _restating(r, facts)
    facts = _refused_unexpected(r, expected) + facts + _got_past(r)
    if expected:
        facts += _allowed_case(r, writes)
    if not facts and writes:
        facts += what_changed(r)
    facts += unseen_names_fact(r)
    if not facts and writes:
        facts += chosen_purchase(r, writes[-1])
    if not facts and writes:
        last = writes[-1]
        facts += _restating(r, [KeyFact(f"The run's last state-changing call, {last.name} at turn {last.n}, went through.",
                                        [last.n])])
    return facts
