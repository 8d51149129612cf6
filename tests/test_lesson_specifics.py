"""Offline lessons say what this run shows, in its own domain: a hand-off's stated reason and
the rule it rests on, whether a wrong answer's expected answer was in what the look-ups
returned, what followed an error the run got past; never an episode's names or ids, and
never another domain's wording."""

from __future__ import annotations

import json
from pathlib import Path

from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns

from wikitrace.compilers.offline import compile_offline

FIXTURES = Path(__file__).parent / "fixtures" / "importers"


def _lessons(record) -> str:
    return "\n".join(f"{i.title} {i.guideline} {i.applicability}" for i in compile_offline(_run(record)).insights)


def _qa(answer: str, gold: str, observations: list[tuple[str, str]], question: str, success: bool = False) -> dict:
    """A ReAct QA run as the importers write it: Search calls, a Finish, the gold answer in the task."""
    turns = [_msg("user", question)]
    turns += [_call("Search", query, seen) for query, seen in observations]
    turns.append(_call("Finish", answer, "Episode finished"))
    turns.append({"type": "episode_over"})
    record = _record("qa-1", "hotpotqa", question, _turns(*turns), success)
    record["task"]["metadata"] = {"gold_answer": gold}
    return record


def test_a_hand_off_lesson_gives_its_own_reason_and_the_rule_it_rests_on_without_names_or_ids():
    user = "mia_li_3668"
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"I am Mia Li, user id {user}. Cancel reservation ZFAXQY, my plans changed."),
        _call("get_user_details", {"user_id": user},
              json.dumps({"user_id": user, "name": {"first_name": "Mia", "last_name": "Li"}}), is_error=False),
        _call("get_reservation_details", {"reservation_id": "ZFAXQY"},
              json.dumps({"reservation_id": "ZFAXQY", "user_id": user, "cabin": "basic_economy"}), is_error=False),
        _call("transfer_to_human_agents",
              {"summary": "User Mia Li wants reservation ZFAXQY in basic economy modified, which the flights rules forbid. "
                          "Please help."}, "Transfer successful", is_error=False),
        {"type": "episode_over"})
    text = _lessons(_record("handoff-2", "airline", "You are Mia Li and want to change reservation ZFAXQY.", turns, True))
    assert 'stating "User … wants reservation … in basic economy modified' in text  # its reason, in its words
    assert '"Basic economy flights cannot be modified."' in text  # the rule closest to that reason
    assert "Mia" not in text and "ZFAXQY" not in text and "3668" not in text  # episode values stay out


def test_a_wrong_answer_says_whether_the_expected_answer_was_in_what_the_look_ups_returned():
    q = "Which city hosts the annual Kestrel Film Days festival?"
    misread = _lessons(_qa("Leeds", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is held every May in Harrogate, "
                                                                         "near Leeds.")], q))
    assert 'the expected answer, "Harrogate", was in what Search[Kestrel Film Days] returned' in misread
    missing = _lessons(_qa("Leeds", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is a festival near Leeds.")], q))
    assert 'the expected answer, "Harrogate", appears in none of what its look-ups returned' in missing
    part = _lessons(_qa("Harrogate", "Harrogate, North Yorkshire",
                        [("Kestrel Film Days", "Held in Harrogate, North Yorkshire.")], q))
    assert 'it gave only part of the expected answer, "Harrogate, North Yorkshire"' in part
    named = _lessons(_qa("Leeds", "Harrogate", [("Leeds", "Leeds is a city."), ("Harrogate", "Harrogate is a town.")],
                         "Which is further north, Leeds or Harrogate?"))
    assert "was one the request itself named" in named and "compare what the look-ups returned for each option" in named
    verdict = _lessons(_qa("SUPPORTS", "NOT ENOUGH INFO", [("Kestrel Film Days", "A festival.")],
                           "Kestrel Film Days began in the nineteenth century."))
    assert 'the expected verdict was "NOT ENOUGH INFO"' in verdict
    assert "appears in none" not in verdict and "a value no look-up had shown" not in verdict  # no page holds a label


def test_an_error_the_failed_run_got_past_says_what_followed():
    record = _qa("Leeds", "Harrogate", [("Kestrel Days", "Could not find [Kestrel Days]. Similar: ['Kestrel Film Days']"),
                                        ("Kestrel Film Days", "Kestrel Film Days is held in Harrogate.")],
                 "Which city hosts the annual Kestrel Film Days festival?")
    record["turns"][1]["is_error"] = True
    text = _lessons(record)
    assert "then ended with Finish[Leeds] and was judged a failure" in text
    assert 'the expected answer, "Harrogate", was in what Search[Kestrel Film Days] returned, so the look-up was right' in text
    assert "a call that goes through is not yet the one the task asked for" not in text


def test_lessons_on_real_shaped_logs_carry_no_other_domains_wording():
    from wikitrace.runs.load import iter_runs
    from wikitrace.runs.model import Run

    qa_or_airline = ("reservation", "airline", "expected answer", "Finish[", "policy", "the user's own words")
    airline_or_code = ("reservation", "airline", "policy", "system prompt", "javac", "mvn", "edit ")
    for folder, foreign in ((FIXTURES / "swe_experiment", qa_or_airline), (FIXTURES / "swe_agent", qa_or_airline),
                            (FIXTURES / "react_notebook", airline_or_code), (FIXTURES / "react", airline_or_code)):
        runs = [r for r in iter_runs([folder]) if isinstance(r, Run)]
        assert runs, folder
        for run in runs:
            comp = compile_offline(run)
            assert comp.insights, run.run_id
            text = "\n".join(f"{i.title} {i.guideline} {i.applicability}" for i in comp.insights)
            tools = {t.name for t in run.turns if t.type == "function_call"}
            assert any(name in text for name in tools), (run.run_id, text)  # it names what the run used
            for word in foreign:
                assert word not in text, (run.run_id, word, text)


def test_a_change_that_went_through_in_a_failed_run_shows_the_fact_and_the_rule_it_meets():
    """All its values were seen, so nothing is flagged; the lesson still names what the look-up
    said about the thing changed and the system prompt's rule on that action."""
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Move reservation QWERTY to the flight one day later, please."),
        _call("get_reservation_details", {"reservation_id": "QWERTY"},
              json.dumps({"reservation_id": "QWERTY", "cabin": "basic_economy", "status": "active",
                          "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}]}), is_error=False),
        _msg("user", "Yes, go ahead."),
        _call("update_reservation_flights", {"reservation_id": "QWERTY", "cabin": "basic_economy",
                                             "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}]},
              json.dumps({"reservation_id": "QWERTY", "status": "updated"}), is_error=False),
        {"type": "episode_over"})
    text = _lessons(_record("move-1", "airline", "You want your basic economy flight modified to one day later.", turns, False))
    assert "get_reservation_details had shown cabin 'basic_economy'" in text
    assert "rule on update_reservation_flights closest to this: \"Basic economy flights cannot be modified.\"" in text
    assert "'active'" not in text  # a fact the rule does not speak of is left out


def test_an_error_got_past_in_a_run_the_harness_halted_says_no_answer_followed():
    turns = _turns(_msg("user", "Which city hosts the annual Kestrel Film Days festival?"),
                   _call("Search", "Kestrel Days", "Could not find [Kestrel Days]. Similar: ['Kestrel Film Days']", is_error=True),
                   _call("Search", "Kestrel Film Days", "Kestrel Film Days is a festival."),
                   _call("Lookup", "city", "No more results."),
                   {"type": "episode_over", "role": "harness", "content": "step limit"})
    text = _lessons(_record("qa-2", "hotpotqa", "Which city hosts the annual Kestrel Film Days festival?", turns, False,
                            ended_by="harness: step limit"))
    assert "then made no call that settles the task before the harness stopped it — step limit —" in text
    assert "after Search went through" not in text  # a look-up that went through is not a change


def test_a_name_the_user_gives_is_masked_where_no_record_holds_it():
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM + "- Gold members may ask for compensation when a flight is delayed.\n"),
        _msg("user", "Hi, my name is Mei Brown. My flight was delayed and I want compensation."),
        _call("transfer_to_human_agents", {"summary": "Mei Brown, a gold member, wants compensation for a delayed flight."},
              "Transfer successful", is_error=False),
        {"type": "episode_over"})
    text = _lessons(_record("handoff-3", "airline", "You are Mei Brown, a gold member whose flight was delayed.", turns, True))
    assert "Mei" not in text and "Brown" not in text
    assert 'stating "…, a gold member, wants compensation for a delayed flight."' in text


def test_a_run_that_answered_without_a_call_quotes_its_answer_not_its_goodbye():
    turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", "What is the total of my gift card balances?"),
                   _msg("assistant", "Your gift card balances come to 300 dollars in total."),
                   _msg("user", "Thanks, bye."), _msg("assistant", "You're welcome! Safe travels!"), {"type": "episode_over"})
    text = _lessons(_record("none-2", "airline", "You want to know the total of your gift card balances.", turns, False))
    assert '(it told the user: "Your gift card balances come to … dollars in total.")' in text
    assert "Safe travels" not in text


def test_a_plan_from_an_earlier_attempt_is_named_with_how_it_went():
    q = "Which city hosts the annual Kestrel Film Days festival?"
    plan = ["I searched the wrong page. Next time I should search the festival's own page before answering."]
    failed = _qa("Leeds", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is a festival near Leeds.")], q)
    failed["task"]["metadata"]["reflections"] = plan
    assert ("It had been given a plan from an earlier failed attempt, \"Next time I should search the festival's own "
            "page before answering\", and it did not get it there.") in _lessons(failed)
    won = _qa("Harrogate", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is held in Harrogate.")], q, success=True)
    won["task"]["metadata"]["reflections"] = plan
    assert "following a plan from an earlier failed attempt: \"Next time I should search" in _lessons(won)
    assert "earlier failed attempt" not in _lessons(_qa("Leeds", "Harrogate", [("Kestrel Film Days", "A festival.")], q))
