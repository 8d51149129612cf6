"""An insight page's Cases quote, for a few of its runs, the checked fact each run's own page leads
with about that lesson: a reader sees the rule, the figures and the turn the advice came from, and
what a successful run did that decided it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.schema import CandidateInsight, KeyFact
from wikitrace.corpus.fact_cases import SHOWN, lesson_fact as _fact_of

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
CORPORA = {"tau_bench": {}, "react_reflexion": {},
           "coding_corpus": {"outcomes": FIXTURES / "coding_corpus" / "claude-code" / "outcomes.json"}}


def _plain(md: str) -> str:
    return re.sub(r"\\([\[\]`<>\\*_|#])", r"\1", md)


def _in_short(page: str) -> list[str]:
    """A compilation page's In short facts, without the turn links the page adds."""
    block = page.split("## In short\n", 1)[1].split("\n\n", 1)[0]
    return [_plain(re.sub(r"(?<!\\)\[(step-\d+)\]\(step-\d+\.md\)", r"\1", re.sub(r" \(turns? \[.*$", "", line[2:])))
            for line in block.splitlines() if line.startswith("- ")]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for name, extra in CORPORA.items():
        out[name] = tmp_path_factory.mktemp(name) / "wiki"
        build(BuildOptions(inputs=[FIXTURES / name], out=out[name], offline=True, quiet=True, **extra))
    return out


def test_each_case_is_a_failed_source_s_own_checked_fact_about_the_lesson(built):
    assert sum(_checked_cases(out) for out in built.values()) >= 5  # the fixtures' failed runs give cases


def test_the_dev_tau_bench_cases_hold_too(tau_bench_corpus):
    assert _checked_cases(tau_bench_corpus[0]) >= 10


def test_a_lesson_of_successful_runs_shows_what_they_did(built, tau_bench_corpus):
    """A page whose runs all succeeded shows what the runs' own pages say decided them, and a page
    both outcomes taught shows a successful run's case after the failed runs'."""
    for out in (built["coding_corpus"], tau_bench_corpus[0]):
        data = json.loads((out / "corpus.json").read_text())
        won = [e for e in data["insights"] if not e["counts"]["failure"] and any(
            c.get("outcome") == "success" for c in e.get("cases") or [])]
        assert won, out
    coding = json.loads((built["coding_corpus"] / "corpus.json").read_text())
    fixes = [c["text"] for e in coding["insights"] if e["key"].startswith("procedure|")
             for c in e.get("cases") or [] if c.get("outcome") == "success"]
    assert any("changed" in t and ("passed" in t or "this run wrote `" in t) for t in fixes), fixes  # what the fix was


def _checked_cases(out: Path) -> int:
    """Checks every case a page shows of its own runs; returns how many there were."""
    shown = 0
    data = json.loads((out / "corpus.json").read_text())
    runs = {r["step"]: r for r in data["runs"]}
    for entry in data["insights"]:
        cases = [c for c in entry.get("cases") or [] if c.get("checked")]  # not an answer's own cases
        if not cases:
            continue
        sources = {s["step"]: s for s in entry["sources"]}
        assert len(cases) <= SHOWN, entry["id"]
        tasks = [(c.get("outcome"), runs[c["step"]].get("task_id") or c["step"]) for c in cases]
        assert len(set(tasks)) == len(tasks), entry["id"]  # one case per task on each side
        page = (out / "insight" / f"{entry['id']}.md").read_text()
        outcomes = [sources[c["step"]]["outcome"] for c in cases]
        assert outcomes == sorted(outcomes), entry["id"]  # the failed runs' cases first
        for case in cases:
            won = sources[case["step"]]["outcome"] == "success"
            assert case.get("outcome", "failure") == sources[case["step"]]["outcome"], (entry["id"], case)
            facts = _in_short((out / "compilation" / f"{case['step']}.md").read_text())
            text, _, trial = case["text"].partition("The successful trial ")
            text = text.rstrip() or None
            if trial:  # what a successful trial wrote instead: the run page's line on it, the run named by its step
                assert not won and any(f.replace("this run", case["step"]).replace(" of this task ", " of its task ")
                                       .startswith(f"The successful trial {trial}".rstrip("….")) for f in facts), trial
            # the page may add what other runs showed of the same fact ("; also met by …")
            assert text is None or any(f.startswith(text.rstrip("….")) for f in facts), (text, facts)
            kind, _, rest = entry["key"].partition("|")
            # a call's lesson, not a class of error ("error|missing-program") nor a lesson without a tool
            by_call = kind in ("went-through", "hand-off") or kind == "error" and "|" in rest
            call = rest.split("|")[0].split(":")[0].split(" ") if by_call else []
            names = call[:2] if won else call[:1]  # a success's shell call may go by the program it ran
            # a success's line against the failed trials of its task says what decided it (its page's own line)
            if names and text and not (won and "failed trial" in text):
                # or the user's word the run took against a record, which bears on any change it made
                assert any(n in text for n in names) or text.startswith("The user said") and not entry[
                    "key"].startswith("error|"), (entry["id"], text)
            marked = " (successful)" if won else ""
            assert f"- [{case['step']}](../compilation/{case['step']}.md){marked}: " in page
            shown += 1
    return shown


def lesson_fact(comp, lesson) -> str:
    return _fact_of(comp, lesson).get("fact", "")


def _lesson(key: str, detail: str) -> CandidateInsight:
    return CandidateInsight("t", "g", "a", key=key, detail=detail)


class _Comp:
    def __init__(self, outcome: str, facts: list[KeyFact]):
        self.outcome, self.in_short = outcome, facts


ANSWER = KeyFact('The answer "Viacom" (turn 3) was judged wrong; the answer appears in what Search returned at turn 2.',
                 [2, 3], "")
FAILING = KeyFact('Search failed at turns 1 and 2 ("Could not find that page"), and no later Search call went through.',
                  [1, 2], "")
MISSED = KeyFact("The task expected cancel_reservation(reservation_id=\"Z7\"), and the run never made that change.", [],
                 "missed-change")


def test_an_error_lesson_takes_the_fact_of_its_tool_failing_not_another_fact_naming_the_tool():
    comp = _Comp("failure", [ANSWER, FAILING])
    assert lesson_fact(comp, _lesson("error|Search|Could not find that page", "turn 2: Search answered …")) == FAILING.text
    # a fact on other turns than the lesson's error is about something else
    assert lesson_fact(comp, _lesson("error|Search|Could not find that page", "turn 5: Search answered …")) == ""


def test_a_missed_change_lesson_takes_a_missed_change_fact_and_a_success_keeps_none():
    comp = _Comp("failure", [ANSWER, MISSED])
    assert lesson_fact(comp, _lesson("missed", "made no change")) == MISSED.text
    assert lesson_fact(_Comp("success", [ANSWER, MISSED]), _lesson("missed", "made no change")) == ""
    # any other lesson: a fact on a turn its own detail names, else none
    assert lesson_fact(comp, _lesson("idle|lookups", "turn 3: answered")) == ANSWER.text
    assert lesson_fact(comp, _lesson("idle|lookups", "answered without a tool call")) == ""


def test_a_run_the_harness_stopped_while_looking_takes_the_fact_of_its_stop():
    """The "answer before the harness stops the run" lesson names no tool and no turn: its case is
    the run's own fact of the stop (what its calls repeated, whether a page had held the answer),
    not none (HotpotQA rater: the page had no Cases)."""
    stop = KeyFact("The harness stopped the run: halted (step limit reached). 1 of its 6 calls sent an earlier "
                   "call's arguments again and got the same answer (turn 3 repeated turn 1).", [1, 3], "")
    comp = _Comp("failure", [ANSWER, stop])
    looked = "6 look-up calls (Search and Lookup), nothing settled; stopped by the harness"
    assert lesson_fact(comp, _lesson("idle|lookups", looked)) == stop.text
    assert lesson_fact(_Comp("failure", [ANSWER]), _lesson("idle|lookups", looked)) == ""


def test_an_error_lesson_takes_no_fact_quoting_another_message_of_its_kind():
    """A run whose certificate error was followed by gift-card errors: its fact quotes the last one,
    which is not the lesson's."""
    other = KeyFact('pay failed at turns 3 and 5 (the last: "Error: gift card balance is not enough"), and no later '
                    'pay call went through.', [3, 5], "")
    key = "error|pay|Error: certificate cannot be used to update reservation"
    assert lesson_fact(_Comp("failure", [other]), _lesson(key, "turn 3: tried other arguments")) == ""
    same = KeyFact(other.text.replace("gift card balance is not enough", "certificate cannot be used to update "
                                      "reservation"), [3, 5], "")
    assert lesson_fact(_Comp("failure", [other, same]), _lesson(key, "turn 3: tried other arguments")) == same.text


def test_a_rule_lesson_takes_only_a_fact_that_quotes_its_rule():
    rule = CandidateInsight("Keep the rule: Each reservation can use at most one travel certificate", "g", "a",
                            key="rule|ab12", detail="turn 15: book_trip went through")
    bags = KeyFact('book_trip at turn 15 sent `bags` 1 where the task expected 0. The system prompt\'s rule on `bags` '
                   '(turn 0): "Each extra bag is 50 dollars."', [15], "arguments")
    certs = KeyFact('book_trip at turn 15 sent 2 certificates. The system prompt\'s rule (turn 0): "Each reservation '
                    'can use at most one travel certificate."', [15], "arguments")
    assert lesson_fact(_Comp("failure", [bags]), rule) == ""
    assert lesson_fact(_Comp("failure", [bags, certs]), rule) == certs.text


def test_a_change_lesson_takes_the_user_s_word_the_run_took_against_the_record():
    claim = KeyFact('The user said "Gold member" (turn 1), but get_user_details (turn 4) gives `membership` "regular".',
                    [1, 4, 10], "user-claim", ["membership"])
    made = KeyFact("send_certificate at turn 12 went through, but the task expected no change at all.", [12],
                   "unexpected-change", ["send_certificate"])
    comp = _Comp("failure", [claim, made])
    assert lesson_fact(comp, _lesson("went-through|send_certificate", "turn 12: send_certificate went through")) == claim.text
    # an error lesson is about its error, not the claim
    assert lesson_fact(comp, _lesson("error|send_certificate|Error: x", "turn 12: tried")) == ""


def test_the_cases_show_first_the_runs_whose_fact_is_of_the_kind_the_lesson_leads_with():
    """A lesson leading with quote marks in Search shows a run that quoted, not first a run that
    answered a listed name wrong (which reads as if following the advice failed)."""
    from wikitrace.corpus.fact_cases import annotate

    def member(n: int, kind: str) -> tuple[dict, dict]:
        return ({"step": f"step-{n:04d}", "outcome": "failure", "task_id": str(n)},
                {"fact": f"fact of run {n}", **({"fact_kind": kind} if kind else {})})

    entry = {"id": "insight-0001", "key": "error|Search|Could not find", "checked": {"kind": "quoted-name"}}
    annotate([entry], {"insight-0001": [member(1, ""), member(2, "quoted-name"), member(3, ""), member(4, "quoted-name")]})
    assert [c["step"] for c in entry["cases"]] == ["step-0002", "step-0004", "step-0001"]
    plain = {"id": "insight-0002", "key": "error|Search|Could not find"}  # no lead: step order
    annotate([plain], {"insight-0002": [member(1, ""), member(2, "quoted-name")]})
    assert [c["step"] for c in plain["cases"]] == ["step-0001", "step-0002"]


def test_a_successful_run_s_case_follows_its_failed_ones_and_takes_one_place_of_the_three():
    from wikitrace.corpus.fact_cases import annotate

    def member(n: int, outcome: str, task: str) -> tuple[dict, dict]:
        return ({"step": f"step-{n:04d}", "outcome": outcome, "task_id": task}, {"fact": f"fact of run {n}"})

    entry = {"id": "insight-0001", "key": "error|Search|Could not find"}
    annotate([entry], {"insight-0001": [member(1, "success", "a"), member(2, "failure", "b"), member(3, "failure", "c"),
                                        member(4, "failure", "d"), member(5, "success", "e")]})
    assert [(c["step"], c.get("outcome")) for c in entry["cases"]] == [
        ("step-0002", None), ("step-0003", None), ("step-0001", "success")]
    alone = {"id": "insight-0002", "key": "procedure|cancel"}  # successes only: up to three, one per task
    annotate([alone], {"insight-0002": [member(1, "success", "a"), member(2, "success", "a"), member(3, "success", "b")]})
    assert [c["step"] for c in alone["cases"]] == ["step-0001", "step-0003"]


def test_an_error_page_leading_with_a_check_shows_the_change_that_check_is_about():
    """An error whose advice became the check of the change's arguments (the page's lead counts the
    run) shows, for a run that kept no fact on the error itself, its fact on that tool from another of
    its lessons: the worked example of the check. A run the lead does not count, or a fact on another
    tool, gives no case."""
    from wikitrace.corpus.fact_cases import annotate

    bags = ("update_reservation_baggages at turn 22 sent `nonfree_baggages` 1 where the task expected 0. The system "
            "prompt's rule on `nonfree_baggages` (turn 0): \"2 free checked bag for each economy passenger\".")
    flights = "update_reservation_flights at turn 20 sent `flights[2].flight_number` \"HAT084\" where the task expected \"HAT290\"."

    def run(n: int, facts: list[str]) -> dict:
        return {"step": f"step-{n:04d}", "outcome": "failure", "task_id": str(n),
                "lessons": [{"key": "went-through|x", "fact": f} for f in facts] + [{"key": "error|y", "fact": ""}]}

    members = [(run(1, [flights, bags]), {"fact": ""}), (run(2, [bags]), {"fact": ""}), (run(3, [flights]), {"fact": ""})]
    entry = {"id": "insight-0001", "key": "error|update_reservation_baggages|Error: gift card balance is not enough",
             "checked": {"kind": "rule", "steps": ["step-0001", "step-0003"]}}
    annotate([entry], {"insight-0001": members})
    assert [(c["step"], c["text"]) for c in entry["cases"]] == [("step-0001", bags)]  # 2 not counted; 3 other tool
    unled = {"id": "insight-0002", "key": entry["key"]}
    annotate([unled], {"insight-0002": members})
    assert "cases" not in unled


PAST = KeyFact("update_reservation_flights failed at turn 14; a later update_reservation_flights call went through at "
               "turn 18.", [14, 18], "")
MADE = KeyFact("Make the change the task expected as this run did: update_reservation_flights at turn 18.", [18], "")
FIX = KeyFact("After `python -m pytest` failed at turn 1, Edit changed `stats.py` (in `median`) at turn 3; the same "
              "command then went through at turn 4 and its tests passed.", [1, 3, 4], "")


def test_a_successful_run_s_fact_is_what_it_did_about_the_lesson():
    key = "error|update_reservation_flights|Error: payment method not found"
    assert lesson_fact(_Comp("success", [MADE, PAST]), _lesson(key, "turn 14: got past it at turn 18")) == PAST.text
    assert lesson_fact(_Comp("success", [MADE]), _lesson(key, "turn 14: got past it")) == MADE.text  # once past it
    assert lesson_fact(_Comp("failure", [MADE]), _lesson(key, "turn 14: never got past it")) == ""
    # a shell call named by the program it ran; an ending call's procedure takes the page's lead fact
    assert lesson_fact(_Comp("success", [FIX]), _lesson("procedure|Bash python:file-task+tested", "")) == FIX.text
    assert lesson_fact(_Comp("success", [FIX]), _lesson("procedure|submit:file-task", "")) == FIX.text
    # a class of error any command meets: only a fact of a call failing on its turns, not the run's lead fact
    missing = _lesson("error|missing-program", "turn 1: mvn not found")
    assert lesson_fact(_Comp("success", [MADE, FIX]), missing) == FIX.text
    assert lesson_fact(_Comp("success", [FIX]), _lesson("error|missing-program", "turn 5: mvn not found")) == ""
    assert lesson_fact(_Comp("failure", [KeyFact("The harness stopped the run: cost limit.", [1], "")]), missing) == ""
    # a change's procedure takes only a fact naming the change
    assert lesson_fact(_Comp("success", [FIX]), _lesson("procedure|book_reservation", "")) == ""


def test_an_error_lesson_s_case_is_about_the_turn_the_error_was_first_met():
    """A success that got past two errors of one tool: the page of the second (a certificate refused
    at turn 20) is not shown the fact about the first (a payment method not found at turn 16), though
    the lesson's detail also names a look-up's turn the fact cites (tau-bench rater, insight-0025)."""
    other = KeyFact("update_reservation_flights failed at turn 16; a later update_reservation_flights call went "
                    "through at turn 23. The id it sent was shown by get_user_details's answer (turn 6).", [6, 16, 23], "")
    key = "error|update_reservation_flights|Error: certificate cannot be used to update reservation"
    detail = "turn 20: got past it at turn 23 (with payment_id changed, returned by get_user_details at turn 6)"
    assert lesson_fact(_Comp("success", [other]), _lesson(key, detail)) == ""
    assert lesson_fact(_Comp("failure", [other]), _lesson(key, detail)) == ""
    own = KeyFact("update_reservation_flights failed at turn 20; a later update_reservation_flights call went through "
                  "at turn 23.", [20, 23], "")
    assert lesson_fact(_Comp("success", [other, own]), _lesson(key, detail)) == own.text
    # a detail that says when the error was first met: that turn, not the one it opens with
    again = KeyFact("Search failed at turns 1 and 2, and no later Search call went through.", [1, 2], "")
    assert lesson_fact(_Comp("failure", [again]), _lesson("error|Search|Could not find …",
                                                          "turn 2 (first met at turn 1): sent it again")) == again.text


def test_a_stopped_run_that_held_the_expected_answer_is_shown_before_those_that_never_found_it():
    """The harness stopped four runs while they looked; two had the expected answer in a look-up's
    text already. Those two are the cases that show what to do (answer with what is in hand)."""
    from wikitrace.compilers.harness_facts import HARNESS_STOPPED, HELD_UNGIVEN
    from wikitrace.corpus.fact_cases import annotate

    def member(k: int, held: bool) -> tuple[dict, dict]:
        said = (f'No answer had been given; the expected "Lexington" {HELD_UNGIVEN} 5.' if held else
                'No answer had been given, and no look-up had returned the expected "Lexington".')
        return ({"step": f"step-{k:04d}", "task_id": f"t{k}", "outcome": "failure"},
                {"fact": f"{HARNESS_STOPPED}: halted. {said}"})

    members = [member(1, False), member(2, True), member(3, False), member(4, True)]
    entry = {"id": "insight-0000", "key": "idle|lookups", "counts": {"failure": 4, "success": 0}}
    annotate([entry], {"insight-0000": members})
    assert [c["step"] for c in entry["cases"]] == ["step-0002", "step-0004", "step-0001"]


def test_no_source_of_a_page_is_listed_among_its_successes_with_no_lesson_of_their_own(built, tau_bench_corpus):
    """A successful run that teaches this page's lesson and no other is under Sources; listed again
    as having "no lesson of their own" it read as contradicting its own compilation page."""
    shown = 0
    for out in [*built.values(), tau_bench_corpus[0]]:
        data = json.loads((out / "corpus.json").read_text())
        for entry in data["insights"]:
            sources = {s["step"] for s in entry["sources"]}
            for item in (entry.get("contrast") or {}).get("instead") or []:
                shown += 1
                assert item["insights"] or item["step"] not in sources, (entry["id"], item)
    assert shown
