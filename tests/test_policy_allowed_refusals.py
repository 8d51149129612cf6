"""A refusal the run's own system prompt answers: the agent told the user a change could not be made
for a record value ("basic economy flights cannot be modified"), the task expected that change, and a
sentence of the prompt allows, on a record with that value, a change of the very field the expected
call changes ("every booking, basic economy included, can change cabin ..."). The run's page says the
refusal, not the policy, kept the change from being made; the lesson on changes left unmade says what
not to refuse, quoting the sentence (compilers/rule_refusals.py ``allowed``,
corpus/answered_refusals.py ``say_allowed``).

Fixtures are tau-bench result files of the made-up travel desk of tests/test_rule_reasons.py, its
policy given a cabin rule in our own words."""

from __future__ import annotations

import json

from tau_messages import agent, tool, user
from test_rule_reasons import MEMBER, POLICY, TRIP, _facts, _run

from wikitrace.build import BuildOptions, build

CABIN_RULE = "- Change cabin: every booking, basic economy included, can change cabin while keeping its flights.\n\n"
WITH_CABIN = POLICY.replace("- Change passengers:", CABIN_RULE + "- Change passengers:")
BASIC = dict(TRIP, cabin="basic_economy")
UPGRADE = {"reservation_id": "K2PL7Q", "cabin": "business", "payment_id": "credit_card_5512093",
           "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}]}
REFUSAL = "I am sorry, basic economy flights cannot be modified, and that includes upgrades."
ALLOWS = "allows a `cabin` change on a record with `cabin` \"basic_economy\""


def _refused_upgrade(tmp_path, policy=WITH_CABIN, record=BASIC, expected=UPGRADE, refusal=REFUSAL):
    messages = [user("Please upgrade K2PL7Q to business."),
                *tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, record), agent(refusal),
                user("Oh well, then nothing.")]
    return _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": expected}], policy=policy)


def test_a_refusal_the_prompt_allows_is_named_the_reason_the_change_was_never_made(tmp_path):
    run = _refused_upgrade(tmp_path)
    refused_at = next(t.turn for t in run.turns if t.role == "assistant" and t.content == REFUSAL)
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert (f"The agent told the user at turn {refused_at} that it could not: \"{REFUSAL}\"; yet the system prompt "
            f"(turn 0) {ALLOWS} (\"Change cabin: every booking, basic economy included, can change cabin while keeping "
            "its flights.\"), and the task expected update_reservation_flights with `cabin` \"business\" there: the "
            "refusal, not the policy, kept that change from being made.") in fact.text, fact.text
    assert 0 in fact.turns and refused_at in fact.turns


def test_no_sentence_allowing_it_means_no_claim_that_the_policy_did(tmp_path):
    """Without the cabin sentence the desk's policy says basic economy flights cannot be moved, and
    allows nothing on basic economy: the refusal is quoted, and nothing says the policy allowed it."""
    [fact] = [f for f in _facts(_refused_upgrade(tmp_path, policy=POLICY)) if f.kind == "missed-change"]
    assert "could not" in fact.text and "allows" not in fact.text, fact.text


def test_a_permission_under_a_condition_or_on_another_field_is_no_answer(tmp_path):
    """A cabin change allowed only with cover bought is not stated as allowed; and an expected call
    that sends the record's own cabin changes no cabin, so a cabin rule does not answer its refusal."""
    conditional = WITH_CABIN.replace("can change cabin while keeping its flights", "can change cabin only if cover was bought")
    [fact] = [f for f in _facts(_refused_upgrade(tmp_path, policy=conditional)) if f.kind == "missed-change"]
    assert "allows" not in fact.text, fact.text
    same_cabin = dict(UPGRADE, cabin="basic_economy", flights=[{"flight_number": "HAT320", "date": "2024-06-13"}])
    [fact] = [f for f in _facts(_refused_upgrade(tmp_path, expected=same_cabin)) if f.kind == "missed-change"]
    assert "could not" in fact.text and "allows" not in fact.text, fact.text


def test_a_refusal_in_other_words_than_the_tools_verb_is_still_found(tmp_path):
    """The tool's verb is "update"; the agent said "changed". A refusal of another act on the same
    record ("cannot remove a traveller") still refuses no update."""
    said = "Basic economy flights cannot be changed at all."
    [fact] = [f for f in _facts(_refused_upgrade(tmp_path, refusal=said)) if f.kind == "missed-change"]
    assert f"could not: \"{said}\"" in fact.text and ALLOWS in fact.text, fact.text
    other = "I cannot remove a traveller from a basic economy booking."
    [fact] = [f for f in _facts(_refused_upgrade(tmp_path, refusal=other)) if f.kind == "missed-change"]
    assert "could not" not in fact.text, fact.text


def _trial(trial: int, refusal: str) -> dict:
    traj = [{"role": "system", "content": WITH_CABIN}, user("Hi, I am tove_brand_5120; upgrade K2PL7Q to business."),
            *tool("get_user_details", {"user_id": "tove_brand_5120"}, MEMBER),
            *tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, BASIC), agent(refusal),
            user("Fine. ###STOP###")]
    task = {"user_id": "tove_brand_5120", "outputs": [], "instruction": "You are tove_brand_5120.",
            "actions": [{"name": "update_reservation_flights", "kwargs": UPGRADE}]}
    return {"task_id": 4, "reward": 0.0, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}


def test_the_lesson_of_runs_that_settled_nothing_says_what_not_to_refuse_and_which_runs_did(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    second = "Sadly, basic economy flights cannot be modified."
    (folder / "desk.json").write_text(json.dumps([_trial(0, REFUSAL), _trial(1, second)]), encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    [lesson] = data["insights"]  # both trials only looked things up, then refused
    steps = sorted(r["step"] for r in data["runs"])
    page = (out / "insight" / f"{lesson['id']}.md").read_text()
    advice = page.split("## What to do", 1)[1].split("##", 1)[0]
    assert ("Do not refuse a \\`cabin\\` change on a record with \\`cabin\\` \"basic_economy\": the system prompt allows "
            "it (\"Change cabin: every booking, basic economy included, can change cabin while keeping its flights.\")"
            ) in advice, advice
    assert (f"It was refused in 2 failed runs, where the task expected update_reservation_flights: {steps[0]} told the "
            f"user at its turn ") in page and f"\"{REFUSAL}\"; likewise {steps[1]}." in page, page


def test_a_lesson_on_another_tool_is_not_told_what_not_to_refuse():
    """A run that refused the cabin change also taught a lesson on its baggage call: that lesson is
    about the bags, and the refusal is not said there."""
    from wikitrace.corpus.answered_refusals import say_allowed
    refused = {"tool": "update_reservation_flights", "turn": 5, "text": REFUSAL, "cites": [],
               "allowed": {"field": "cabin", "key": "cabin", "value": "basic_economy", "rule": "Change cabin: …",
                           "rule_turn": 0}}
    member = ({"step": "step-0003", "outcome": "failure", "decisive": {"refused": refused}}, {})
    for key, told in (("went-through|update_reservation_baggages", False), ("went-through|update_reservation_flights", True),
                      ("missed", True)):
        entry = {"key": key, "guideline": "Check the bags."}
        say_allowed(entry, [member])
        assert ("Do not refuse a `cabin` change" in entry["guideline"]) is told, (key, entry["guideline"])


def test_a_refusal_the_agent_went_back_on_is_not_named_what_kept_the_change_from_being_made(tmp_path):
    """Round 17: step-0122 refused the upgrade at turn 6, the user pushed back, and the agent made
    the update at turn 18 (only its payment differed from the expected call): "the refusal, not the
    policy, kept that change from being made" was false there."""
    later = dict(UPGRADE, flights=[{"flight_number": "HAT402", "date": "2024-06-12"}])  # the task expected two updates
    made = dict(later, payment_id="gift_card_0000001")
    messages = [user("Please upgrade K2PL7Q to business."),
                *tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, BASIC), agent(REFUSAL),
                user("But the rules say cabin changes are fine. Please do it, with my gift card."),
                *tool("update_reservation_flights", made, dict(BASIC, cabin="business"))]
    run = _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": UPGRADE},
                                    {"name": "update_reservation_flights", "kwargs": later}], policy=WITH_CABIN)
    facts = [f.text for f in _facts(run)]
    assert any("could not" in f for f in facts), facts  # the refusal is still quoted, as what it said
    assert not any("the refusal, not the policy" in f for f in facts), facts


def test_a_later_change_of_another_record_on_the_same_card_is_no_going_back(tmp_path):
    """The refusal of K2PL7Q's upgrade stands when the run later changed another reservation with
    the same payment id: only a change on the refused record is the agent going back on its "no"."""
    other = dict(UPGRADE, reservation_id="M4RT1N", flights=[{"flight_number": "HAT402", "date": "2024-06-20"}])
    messages = [user("Please upgrade K2PL7Q to business."),
                *tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, BASIC), agent(REFUSAL),
                user("Then upgrade M4RT1N instead, same card. Yes."),
                *tool("update_reservation_flights", other, dict(BASIC, reservation_id="M4RT1N", cabin="business"))]
    run = _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": UPGRADE},
                                    {"name": "update_reservation_flights", "kwargs": other}], policy=WITH_CABIN)
    facts = [f.text for f in _facts(run)]
    assert any("the refusal, not the policy, kept that change from being made" in f for f in facts), facts
