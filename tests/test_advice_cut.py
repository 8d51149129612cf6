"""What to do holds the advice a new run acts on; the counts behind it stand under Evidence.

A reader starting a new task needs the instruction and the mistake to avoid, not a paragraph of
tallies; a reader checking the lesson needs every count beside the runs it counts. These tests hold
both: the cut of a guideline, the mistake said from the failed runs' checked facts, and an agent's
"I cannot" in a run with no call, quoted beside the look-ups its task's successful trials made."""

from __future__ import annotations

import json
import re

from test_insight_layer import compile_runs, corpus_json, insight_with, text_count_mismatches
from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _turns

from wikitrace.corpus.advice_cut import KEPT, action, counted, cut, sentences
from wikitrace.corpus.logged_mistake import argument_title, mistake


def test_a_counted_sentence_moves_to_evidence_and_leaves_its_instruction():
    entry = {"guideline": ('When T answers "Error 42: no seat", pick another flight. In 9 of the 12 failed runs here '
                           "(3 of their 6 tasks) the sent value differed: check `seat` against the record first. "
                           "It is the most specific fact these failed runs share, not a proven cause: of the 2 "
                           "successful runs, 0 showed the same (one-sided Fisher p = 0.38).")}
    cut(entry)
    assert entry["advice"] == ('When T answers "Error 42: no seat", pick another flight. '
                                  "Check `seat` against the record first.")
    assert entry["counted"][0].startswith("In 9 of the 12 failed runs here (3 of their 6 tasks)")
    assert entry["counted"][1].endswith("(one-sided Fisher p = 0.38).")


def test_a_retry_no_run_backs_gives_way_to_what_the_failed_runs_pages_show():
    """The runs that got past the error by swapping the value all failed: the retry it names is no fix,
    so the check their pages show leads What to do, the retry after it. A retry the evidence backs
    keeps the lead."""
    from wikitrace.corpus.retry_advice import UNPROVEN

    guideline = ('When T answers "Error: not enough seats on flight …", replace the flights value the message names '
                 "(in 5 of the 5 runs here) with one a look-up shows can work, before calling T again. Getting the call "
                 "through is not enough: the 4 runs here that got past it all failed (flights changed: 4 runs). In 3 "
                 "of the 5 failed runs here, T failed on an option a look-up had shown without enough of it: read what "
                 "the look-up showed for the option before T.")
    unbacked = {"guideline": guideline, UNPROVEN: True}
    cut(unbacked)
    assert unbacked["advice"].startswith("Read what the look-up showed for the option before T. When T answers ")
    assert UNPROVEN not in unbacked  # a mark for the cut, not a field of corpus.json
    backed = {"guideline": guideline}
    cut(backed)
    assert backed["advice"].startswith('When T answers "Error: not enough seats on flight …", replace')


def test_numbers_inside_quotes_do_not_make_a_sentence_a_count():
    assert not counted('When T answers "Error 404: 3 items", retry with the id it names.')
    assert counted("Successful runs did so in 4 of 5 runs.")
    assert sentences('Say "Done. Next." to the user. Then stop.') == ['Say "Done. Next." to the user.', "Then stop."]
    assert sentences('The rule says "Ask first." Then ask.') == ['The rule says "Ask first."', "Then ask."]


def test_a_rule_quoted_sentence_by_sentence_stays_whole_in_what_to_do():
    """The sentence opening "Otherwise" is half of the rule; What to do that quotes only the first
    half tells the agent a cancel is allowed within 24 hours and says nothing of the other cases."""
    rule = ('"All bookings can be cancelled within 24 hours of booking." '
            '"Otherwise, economy bookings can be cancelled only with insurance."')
    entry = {"guideline": (f"Before cancel, check the system prompt's rule on cancel against the record it acts on: "
                           f"{rule}; in 8 of the 17 failed runs here the cancel went through against it.")}
    cut(entry)
    assert entry["advice"] == ("Before cancel, check the system prompt's rule on cancel against the record it acts "
                               f"on: {rule}")
    assert entry["counted"] == ["In 8 of the 17 failed runs here the cancel went through against it."]
    assert sentences('He said "Stop." Then "Go." was said.') == ['He said "Stop."', 'Then "Go." was said.']


def test_an_instruction_is_taken_before_or_after_the_counts():
    assert action("In 3 of the 5 failed runs here the call failed: call X again with the id.") == \
        "Call X again with the id."
    assert action("When X answers E, the message names the value (in 5 of the 5 runs here): replace that value.") == \
        "When X answers E, the message names the value: replace that value."
    assert action("Getting the call through is not enough: 9 of the 12 failed runs here still failed.") == ""


def test_what_to_do_keeps_at_most_three_sentences_and_the_rest_is_kept_under_evidence():
    entry = {"guideline": " ".join(f"Call tool{k} first." for k in range(6))}
    cut(entry, mistake="Before tool9, check `a`: it differed in 2 of the 3 failed runs here.")
    assert len(sentences(entry["advice"])) == KEPT
    assert entry["advice"].startswith("Call tool0 first. Before tool9, check `a`")
    assert entry["more_advice"] == [f"Call tool{k} first." for k in range(2, 6)]


def test_the_prompt_rule_a_check_names_comes_before_how_the_successes_made_the_change():
    """A quoted rule of the system prompt decides the change; the successes' recipe is how they made
    it, and its counts stand under Evidence: with three sentences kept, the rule stays and the recipe
    is listed as other advice (tau-bench rater: concrete rules first)."""
    recipe = "Look with get_reservation_details, then call update, taking cabin from the user's words."
    rule = ('Check the update change against the system prompt\'s rule "Other reservations can be modified '
            'without changing the origin."')
    entry = {"guideline": f"Before update, check `flights` against the request. {recipe} {rule}", "recipe": recipe}
    cut(entry, mistake="Put the total update will charge to the user and get a yes to it first.")
    assert sentences(entry["advice"]) == ["Before update, check `flights` against the request.",
                                          "Put the total update will charge to the user and get a yes to it first.",
                                          rule]
    assert entry["more_advice"] == [recipe]


def test_advice_left_over_that_its_counted_sentence_opens_with_is_not_listed_twice():
    """Four plain sentences fill What to do; the last counted sentence's instruction overflows: it is
    said once, with its counts under Evidence, not again as other advice."""
    entry = {"guideline": "Call tool0 first. Call tool1 first. Call tool2 first. Keep looking only while calls are "
                          "left: the harness stopped 79 of the 80 runs after exactly 6 tool calls."}
    cut(entry)
    assert entry["counted"] == ["Keep looking only while calls are left: the harness stopped 79 of the 80 runs after "
                                "exactly 6 tool calls."]
    assert "more_advice" not in entry


def _fact_run(step: str, outcome: str, about: list[str]) -> dict:
    return {"step": step, "task_id": step, "outcome": outcome, "facts": [{"kind": "arguments", "about": about}]}


def test_the_mistake_names_the_argument_most_failed_runs_sent_otherwise_with_its_count():
    runs = [_fact_run("step-0001", "failure", ["book.payment@answer"]),
            _fact_run("step-0002", "failure", ["book.payment@answer", "book.bags"]),
            _fact_run("step-0003", "failure", ["book.bags"])]
    entry = {"key": "went-through|book", "checked": {"kind": "arguments", "steps": ["step-0001", "step-0002"]},
             "sources": [{"step": r["step"], "outcome": "failure"} for r in runs]}
    said, runs_of = mistake(entry, {r["step"]: r for r in runs})
    assert said == ("Before book, check the `payment` you send against the request and the records looked up: it "
                    "differed from the task's expected call, with the value taken from a tool's earlier answer, in "
                    "2 of the 3 failed runs here.")
    assert runs_of == {"steps": ["step-0001", "step-0002"],
                       "said": "the `payment` sent to book differed from the task's expected call",
                       "argument": ["book", "payment"]}
    # the page is titled by the argument to check, not by "the request and the rules on it"
    titled = {**entry, "title": "Before book, check the request and the rules on it"}
    argument_title(titled, {r["step"]: r for r in runs})
    assert titled["title"] == "Before book, check the `payment` you send against the request and the records looked up"
    assert mistake({**entry, "checked": {}}, {}) == ("", {})  # no checked fact: nothing said
    untitled = {**entry, "checked": {}, "title": "Before book, check the request", "guideline": "Check it."}
    argument_title(untitled, {})
    assert untitled["title"] == "Before book, check the request"  # no argument stands out: the title stays
    # or the page's advice leads with one short check before the change: that titles it, counts left out
    led = {**untitled, "guideline": "Before book, check `flights` against what the user asked for (in 5 of the 9 "
                                    "failed runs here). Put the total to the user."}
    argument_title(led, {})
    assert led["title"] == "Before book, check `flights` against what the user asked for", led["title"]
    long = {**untitled, "guideline": "Before book, check the rule: \"Basic economy flights cannot be modified.\""}
    argument_title(long, {})
    assert long["title"] == "Before book, check the request"  # a quote after a colon is no title
    # an instruction whose colon opens why, not what it names: the instruction titles the page
    why = {**untitled, "guideline": "Before book, check that the changes do what the request asks: the call going "
                                    "through does not make them the change asked for. Look twice."}
    argument_title(why, {})
    assert why["title"] == "Before book, check that the changes do what the request asks", why["title"]
    # one of the two runs sent a payment whose source is not known: the source is said of neither
    runs[1] = _fact_run("step-0002", "failure", ["book.payment", "book.bags"])
    said, _runs_of = mistake(entry, {r["step"]: r for r in runs})
    assert said.endswith("it differed from the task's expected call in 2 of the 3 failed runs here."), said


def test_an_unasked_change_names_the_change_its_task_expected_instead_when_every_run_left_one_unmade():
    """A booking made where the trip was to be changed: the page names the change the task wanted,
    so the reader sees what the unasked call stood in for; a run that left nothing unmade says nothing."""
    def run(step: str, missed: list[str]) -> dict:
        facts = [{"kind": "unexpected-change", "about": ["book"]}]
        return {"step": step, "task_id": step, "outcome": "failure",
                "facts": facts + ([{"kind": "missed-change", "about": missed}] if missed else [])}

    runs = [run("step-0001", ["update_flights", "update_passengers"])]
    entry = {"key": "went-through|book", "checked": {"kind": "unexpected-change", "steps": ["step-0001"]},
             "sources": [{"step": "step-0001", "outcome": "failure"}]}
    said, _runs = mistake(entry, {r["step"]: r for r in runs})
    assert said == ("Check that the request calls for a change with book and the rules allow it as sent: a call of "
                    "book that the task did not expect went through in the one failed run here, where the task "
                    "expected update_flights and update_passengers instead, which never went through."), said
    runs = [run("step-0001", ["update_flights"]), run("step-0002", ["update_flights"])]
    entry = {**entry, "checked": {"kind": "unexpected-change", "steps": ["step-0001", "step-0002"]},
             "sources": [{"step": r["step"], "outcome": "failure"} for r in runs]}
    assert mistake(entry, {r["step"]: r for r in runs})[0].endswith(
        "where the task expected update_flights in 2 instead, which never went through.")
    runs[1] = run("step-0002", [])  # one run left nothing unmade: what the call stood in for is not shown
    assert mistake(entry, {r["step"]: r for r in runs})[0].endswith("went through in 2 of the 2 failed runs here.")


def _balance_run(k: int, success: bool) -> dict:
    """A chat run asked for gift card balances: the failed trials claim they cannot see them and make
    no call; the successful ones look the user up."""
    turns = [_msg("system", AIRLINE_SYSTEM), _msg("user", "What is the balance of my gift cards? I am ann_7.")]
    if success:
        turns += [_call("get_user_details", {"user_id": "ann_7"},
                        json.dumps({"user_id": "ann_7", "payment_methods": {"gift_card_1": {"balance": 40}}}),
                        is_error=False),
                  _msg("assistant", "Your gift card gift_card_1 holds 40 dollars.")]
    else:
        turns += [_msg("assistant", "I'm unable to see the balance of your gift cards. Please check your account.")]
    record = _record(f"bal-{k}", "airline", "Ask for the gift card balance.", _turns(*turns + [{"type": "episode_over"}]),
                     success)
    record["task"]["id"] = "balance"
    return record


def test_an_agent_that_said_it_cannot_see_a_record_is_quoted_beside_the_look_up_its_task_succeeded_with(tmp_path):
    out = compile_runs(tmp_path, [_balance_run(k, k % 2 == 0) for k in range(4)])
    data = corpus_json(out)
    claimed = {r["run_id"]: r.get("said_cannot") for r in data["runs"]}
    assert claimed["bal-1"] == {"turn": 2, "said": "I'm unable to see the balance of your gift cards."}
    assert claimed["bal-0"] is None  # a run that called a tool is not read for it
    entry = insight_with(data, "idle|none")
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    what_to_do, evidence = page.split("## What to do", 1)[1].split("## Evidence", 1)
    assert len(sentences(what_to_do.strip())) <= KEPT
    assert ('said "I\'m unable to see the balance of your gift cards." (turn 2) with no call made, while the '
            "successful trials of its task called get_user_details") in what_to_do
    assert "Fisher" not in what_to_do
    steps = {r["run_id"]: r["step"] for r in data["runs"]}
    listed = re.search(r"where the agent told the user it could not see or do something and made no call, while a "
                       r"look-up it never made was made by successful runs: (.*)\.\n", evidence)
    assert listed and set(re.findall(r"\[(step-\d+)\]", listed.group(1))) == {steps["bal-1"], steps["bal-3"]}
    assert text_count_mismatches(out) == []


def test_what_to_do_keeps_the_procedure_when_the_only_plain_sentence_points_to_another_lesson():
    # a one-run procedure names only its first look-ups ("and 1 more"): that list is no count, and a
    # pointer to another page's title is no instruction of this lesson's own
    entry = {"guideline": ("Only one run teaches this lesson (step-0011, successful): it is that run's experience, "
                           "not a count. To settle the task: look with calculate, get_user_details, search_flight and "
                           "1 more, then call book, taking cabin, flights, origin and 2 more from get_details; "
                           "user_id from the user's words. Failed runs ended this way too; the lesson they teach "
                           "most often is the check to make first: \"Before book, check the request\" "
                           "(counts under Evidence).")}
    cut(entry)
    first = sentences(entry["advice"])[0]
    assert first == ("To settle the task: look with calculate, get_user_details, search_flight and another, then "
                     "call book, taking cabin, flights, origin and others from get_details; user_id from the "
                     "user's words.")
    assert not counted(entry["advice"])
    assert any("and 1 more" in s for s in entry["counted"])  # the list as the run showed it, under Evidence


def test_evidence_keeps_the_counts_of_an_instruction_what_to_do_already_shows():
    """A counted sentence whose instruction What to do shows is cut to its finding under Evidence,
    whichever end the instruction stands at; an instruction between two counted clauses, or one
    whose parentheses hold the counts, stays whole."""
    entry = {"guideline": (
        "In 44 of the 44 failed runs here (all 14 of their tasks) a look-up had already returned the expected "
        "answer: reread what the look-ups returned before calling Finish. "
        "Send Search a name as the error lists it; in 19 of the 212 failed runs here, every Search error came from "
        "text in quote marks. "
        "Build every Search query from words the task gives (21 of the 21 runs here that sent one did).")}
    cut(entry)
    assert entry["advice"] == ("Reread what the look-ups returned before calling Finish. Send Search a name as the "
                               "error lists it. Build every Search query from words the task gives.")
    assert entry["counted"] == [
        "In 44 of the 44 failed runs here (all 14 of their tasks) a look-up had already returned the expected answer.",
        "In 19 of the 212 failed runs here, every Search error came from text in quote marks.",
        "Build every Search query from words the task gives (21 of the 21 runs here that sent one did)."]


def _success_page(verdict: str, runs: int, compared: int, tasks: int) -> dict:
    """A page taught by successful runs whose pattern has the contrast ``verdict``, and the difference
    from the failed trials of their tasks shown by ``runs`` of ``compared`` runs, over ``tasks`` tasks."""
    return {"guideline": "When the user names the record, look it up with get_reservation_details.",
            "contrast": {"verdict": verdict},
            "same_task": {"side": "success", "compared": compared, "members": compared, "differences": [
                {"text": "made no change that went through, where each failed trial of its task made one",
                 "runs": runs, "tasks": tasks}]}}


def test_what_set_successes_apart_from_their_tasks_failed_trials_leads_when_their_pattern_decides_nothing():
    instead = ("In a run like these, make a change only where the request calls for one and the rules allow it: "
               "unlike the failed trials of their tasks, successful runs here made no change that went through.")
    entry = _success_page("none", 4, 4, 3)
    cut(entry, instead=instead)
    assert entry["advice"].startswith(instead)
    # the near misses: a pattern that does separate the outcomes, a difference of only some runs, one task only
    for verdict, runs, tasks in (("success", 4, 3), ("none", 3, 3), ("none", 4, 1)):
        entry = _success_page(verdict, runs, 4, tasks)
        cut(entry, instead=instead)
        assert entry["advice"].startswith("When the user names the record"), (verdict, runs, tasks)
