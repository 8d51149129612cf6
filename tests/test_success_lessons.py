"""What a successful run teaches (compilers/success_lessons.py), said as what to do and checked
against the log: a refusal quoted as the agent wrote it, with the record value it names and the
one rule of the system prompt naming that value; the hand-off after the user's reply; a question's
look-up hop. Every importer's fixture, labelled a success, gets these sentences only where its log
shows them (a person who answered, a prompt, look-ups whose text named the next query)."""

from __future__ import annotations

import json
import re

from fixture_runs import RUNS, relabeled
from tau_messages import agent, tool, user

from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load
from wikitrace.runs.model import Run

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-06-01 10:00:00 EST.\n\n"
          "## Cancel flight\n\n"
          "- All reservations can be cancelled within 24 hours of booking. Otherwise, basic economy or economy flights "
          "can be cancelled only if travel insurance is bought, and business flights can always be cancelled.\n\n"
          "## Change flight\n\n- Basic economy flights cannot be modified.\n")
TRIP = {"reservation_id": "Q4WZ8N", "user_id": "lena_vogt_3017", "cabin": "basic_economy", "insurance": "no",
        "created_at": "2024-05-20T09:12:00", "flights": [{"flight_number": "HAT907", "date": "2024-06-09"}]}


def _run(tmp_path, said: str, policy: str = POLICY, then=(), actions=()) -> Run:
    traj = [{"role": "system", "content": policy}, user("Hi, please cancel my Boston trip, Q4WZ8N."),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP), agent(said),
            user("Oh well. Thanks anyway."), *then, user("Bye. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": "You are lena_vogt_3017. Cancel Q4WZ8N.",
            "actions": [{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}}, *actions]}
    record = {"task_id": 5, "reward": 1.0, "trial": 0, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": 1.0, "info": {}, "actions": []}}}
    path = tmp_path / "airline-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return run


def _turn_of(run: Run, needle: str) -> int:
    return next(t.turn for t in run.turns if needle in json.dumps([t.content, t.arguments, t.result]))


def test_a_refusal_that_kept_a_run_from_an_unwanted_change_is_the_lesson_with_the_rule_naming_its_value(tmp_path):
    said = "Your booking is basic economy without insurance, so it cannot be cancelled now."
    run = _run(tmp_path, said)
    [fact] = [f.text for f in compile_offline(run).in_short]
    looked = _turn_of(run, "HAT907")
    assert fact == (
        "Refuse a change the records rule out and make no change, as this run did (the task expected no change): "
        f"get_reservation_details (turn {looked}) gave `cabin` \"basic_economy\"; the agent told the user at turn "
        f"{_turn_of(run, 'cannot be cancelled now')}: \"{said}\" The system prompt's rule naming the same value (turn 0): "
        "\"All reservations can be cancelled within 24 hours of booking. Otherwise, basic economy or economy flights "
        "can be cancelled only if travel insurance is bought, and "
        "business flights can always be cancelled.\"")


def test_a_refusal_the_run_then_went_against_is_not_said_to_be_what_it_did(tmp_path):
    """The agent refused, then sent the cancel anyway and only the tool's error stopped it: the page
    says no change is the way, not that this run held to its refusal."""
    said = "Your booking is basic economy without insurance, so it cannot be cancelled now."
    then = [user("Please try anyway."),
            *tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, "Error: reservation cannot be cancelled")]
    run = _run(tmp_path, said, then=then)
    [fact] = [f.text for f in compile_offline(run).in_short]
    sent = _turn_of(run, "reservation cannot be cancelled")
    assert fact.startswith("Make no change (the task expected no change): ") and "as this run did" not in fact
    assert (f"; yet this run sent cancel_reservation at turn {sent}, which answered with an error (\"Error: reservation "
            "cannot be cancelled\"), so no change went through: the tool's refusal, not the agent's, kept the run from "
            "the change") in fact


def test_a_refusal_gone_back_on_before_an_expected_hand_off_is_not_said_to_be_what_it_did(tmp_path):
    """Refused at first, then the cancel was sent anyway (the tool refused it) before the hand-off the
    task expected: the page may not say the run refused and then handed off."""
    said = "Your booking is basic economy without insurance, so it cannot be cancelled now."
    summary = {"summary": "The user wants to cancel basic economy trip Q4WZ8N; the policy does not allow it."}
    then = [user("Please try anyway."),
            *tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, "Error: reservation cannot be cancelled"),
            agent("That did not work. Shall I transfer you to a human agent?"), user("Yes, transfer me."),
            *tool("transfer_to_human_agents", summary, "Transfer successful")]
    run = _run(tmp_path, said, then=then, actions=[{"name": "transfer_to_human_agents", "kwargs": summary}])
    facts = [f.text for f in compile_offline(run).in_short]
    [fact] = [f for f in facts if "the agent told the user at turn" in f]
    sent = _turn_of(run, "reservation cannot be cancelled")
    assert fact.startswith("Make no change, then hand off (the task expected a transfer_to_human_agents call too): ")
    assert "as this run did" not in fact
    assert f"; yet this run sent cancel_reservation at turn {sent}, which answered with an error" in fact
    # held to its refusal: the hand-off after the user's reply is what it did
    held = _run(tmp_path, said, then=[agent("Shall I transfer you to a human agent?"), user("Yes, transfer me."),
                                      *tool("transfer_to_human_agents", summary, "Transfer successful")],
                actions=[{"name": "transfer_to_human_agents", "kwargs": summary}])
    [fact] = [f.text for f in compile_offline(held).in_short if "the agent told the user at turn" in f.text]
    assert fact.startswith("Refuse a change the records rule out, then hand off only after the user's reply to the "
                           "refusal, as this run did")


def test_two_rules_naming_the_value_alike_quote_neither(tmp_path):
    """Two sentences naming "basic economy" that share as many of the refusal's words: which one
    made refusing right is not settled, so no rule is quoted (the refusal still is)."""
    policy = ("# Airline Agent Policy\n\n## Cancel flight\n\n- Basic economy flights cannot be cancelled.\n\n"
              "## Change flight\n\n- Basic economy flights cannot be modified.\n")
    run = _run(tmp_path, "Sorry, basic economy flights cannot be changed.", policy)
    [fact] = [f.text for f in compile_offline(run).in_short]
    assert fact.startswith("Refuse a change the records rule out") and "The system prompt's rule" not in fact
    # one more shared word settles it: the cancel rule is quoted
    run = _run(tmp_path, "Sorry, basic economy flights cannot be cancelled.", policy)
    [fact] = [f.text for f in compile_offline(run).in_short]
    assert fact.endswith("The system prompt's rule naming the same value (turn 0): \"Basic economy flights cannot be "
                         "cancelled.\""), fact


def test_a_success_that_refused_nothing_gets_no_refusal_lesson(tmp_path):
    run = _run(tmp_path, "Your booking Q4WZ8N is basic economy, leaving on 2024-06-09.")
    assert not any(f.text.startswith("Refuse") for f in compile_offline(run).in_short)
    assert any(f.text.startswith("The task expected no change, and the run made none") for f in compile_offline(run).in_short)


def test_a_run_that_could_not_go_on_only_without_an_id_it_then_got_refused_nothing(tmp_path):
    """"I'm unable to proceed without the user ID", then the user gives the id and the run looks it
    up: the agent asked for input, it did not refuse the request (tau rater, step-0174). Never
    given, the same sentence stays the refusal the run ended on."""
    said = "I'm unable to proceed without the user ID due to policy requirements."
    then = [user("Here is my user ID: lena_vogt_3017."),
            *tool("get_user_details", {"user_id": "lena_vogt_3017"}, {"user_id": "lena_vogt_3017"})]
    texts = [f.text for f in compile_offline(_run(tmp_path, said, then=then)).in_short]
    assert not any("Refuse" in t or "could not" in t for t in texts), texts
    texts = [f.text for f in compile_offline(_run(tmp_path, said)).in_short]
    assert any(t.startswith("Refuse the request and make no change, as this run did") and said in t
               for t in texts), texts


# --- every importer's runs, labelled a success: each such sentence is true of its log, or absent ---


def _check(run: Run, text: str) -> int:
    by_turn = {t.turn: t for t in run.turns}
    checked = 0
    if text.startswith("Refuse "):
        assert any(t.role == "user" and t.type == "message" for t in run.turns), (run.run_id, text)
        m = re.search(r"the agent told the user at turn (\d+): \"(.+?)\"(?: The|$| \S+ came)", text)
        t = by_turn[int(m.group(1))]
        assert t.role == "assistant" and " ".join(m.group(2).rstrip("…").split()) in " ".join(t.content.split())
        for name, turn, key, value in re.findall(r"(\S+) \(turn (\d+)\) gave `(\w+)` (\"[^\"]*\")", text):
            assert json.loads(by_turn[int(turn)].result)[key] == json.loads(value), (run.run_id, text)
        rule = re.search(r"The system prompt's rule naming the same values? \(turn (\d+)\): \"(.+)\"", text)
        if rule:
            prompt = " ".join((by_turn[int(rule.group(1))].content or "").split())
            assert rule.group(2).split("\" ")[0].rstrip(" …") in prompt, (run.run_id, text)
        checked += 1
    return checked


def test_every_importers_success_lessons_are_true_of_the_log_or_absent(tmp_path):
    for run in RUNS:
        won = relabeled(run, True)
        for fact in compile_offline(won).in_short:
            if fact.text.startswith("Refuse "):  # needs a person and the task's expected calls
                assert "expected_calls" in (won.task.metadata or {}), (won.run_id, fact.text)
            _check(won, fact.text)
    # the check itself reads these sentences: on the real-shaped run below, it finds and checks one
    runs = [_run(tmp_path, "Your booking is basic economy without insurance, so it cannot be cancelled now.",
                     then=[*tool("transfer_to_human_agents", {"summary": "The user wants a basic economy booking "
                                                                         "cancelled; the policy does not allow it."},
                                 "Transfer successful")])]
    assert sum(_check(r, f.text) for r in runs for f in compile_offline(r).in_short) == 1


def test_a_success_that_changed_nothing_shows_its_first_and_last_look_ups_not_each_one(tmp_path):
    """Five searches, then the agent's answer: the page is not a list of five equal "Looked up"
    decisions; the first and the last stay, the others are counted as left out."""
    searches = [tool("search_direct_flight", {"origin": "DEN", "destination": "BOS", "date": f"2024-06-0{d}"}, [])
                for d in range(3, 7)]
    run = _run(tmp_path, "Your booking is basic economy without insurance, so it cannot be cancelled now.",
               then=[m for s in searches for m in s])
    comp = compile_offline(run)
    looked = [e.decision for e in comp.evidence if e.decision.startswith("Looked up with")]
    assert len(looked) == 2, looked
    assert "get_reservation_details" in looked[0] and "2024-06-06" in looked[-1], looked
    assert comp.left_out == 3


def test_a_refusal_that_looked_nothing_up_before_its_hand_off_says_the_look_up_it_skipped(tmp_path):
    """A success that refused without the look-up its task expected, then handed off: no recipe to copy
    (the user's reply, not a check, kept the change out); its page says the look-up it never made."""
    said = "Refunds to the original payment method are not possible for delays."
    traj = [{"role": "system", "content": POLICY}, user("My flight was delayed, I want a refund."), agent(said),
            user("Then let me talk to a person."),
            *tool("transfer_to_human_agents", {"summary": "The user asks for a refund after a delayed flight."},
                 "Transfer successful"),
            user("Bye. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": "You are lena_vogt_3017. Ask for a refund.",
            "actions": [{"name": "get_user_details", "kwargs": {"user_id": "lena_vogt_3017"}}]}
    record = {"task_id": 7, "reward": 1.0, "trial": 0, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": 1.0, "info": {}, "actions": []}}}
    path = tmp_path / "airline-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    facts = [f.text for f in compile_offline(run).in_short]
    assert any(f.startswith("Look up get_user_details before answering: the task expected that look-up and no "
                            "change, and this run never made it, so it refused without checking") for f in facts), facts
    assert not any("as this run did" in f for f in facts), facts
