"""Why a change differed from the expected one: the run's own rule on it, quoted, with the record
fields it names (compilers/rule_reasons.py).

Fixtures are tau-bench result files (OpenAI chat messages, the task's expected ``actions``) of a
made-up travel desk whose policy is our own wording, sectioned as such policies are: headings per
action, list items opening with a short label."""

from __future__ import annotations

import json
import re

import pytest

from tau_messages import agent as _agent, tool as _tool, user as _user
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load
from wikitrace.runs.model import Run

POLICY = """# Travel Desk Policy

The current time is 2024-06-01 10:00:00 EST.

You help members book, change or cancel trips. You must ask for a clear yes before any change.

## Book trip

- Passengers: A booking holds at most four passengers. All passengers must share one cabin.

- Bag allowance: If the account holder is a bronze member, 0 free checked bags for each basic economy traveller and 1 free checked bag for each economy traveller. If the account holder is a platinum member, 2 free checked bags for each basic economy traveller and 4 free checked bags for each economy traveller. Each extra baggage costs 40 dollars.

- Payment: A booking may use at most one voucher and at most two cards.

## Change trip

- Change flights: Basic economy trips cannot be moved to other flights. Economy and business trips can be moved if origin and destination stay the same.

- Change passengers: A booking's passengers may be renamed, but their number stays fixed.

## Cancel trip

- Any booking can be cancelled within 48 hours of being made, or when the carrier cancelled a flight of it. Otherwise, economy and basic economy bookings can be cancelled only with cover bought, and business bookings always.

- Refunds go back to the payment used, within a week.
"""

MEMBER = {"name": {"first_name": "Tove", "last_name": "Brand"}, "dob": "1979-02-11", "email": "tove.b@example.org",
          "membership": "platinum", "payment_methods": {"credit_card_5512093": {"source": "credit_card", "id": "credit_card_5512093"}},
          "reservations": ["K2PL7Q"]}
TRIP = {"reservation_id": "K2PL7Q", "user_id": "tove_brand_5120", "origin": "ORD", "destination": "PHX",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"origin": "ORD", "destination": "PHX", "flight_number": "HAT318", "date": "2024-06-12", "price": 210}],
        "passengers": [{"first_name": "Tove", "last_name": "Brand", "dob": "1979-02-11"}],
        "payment_history": [{"payment_id": "credit_card_5512093", "amount": 210}],
        "created_at": "2024-05-28T16:40:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
BOOKING = {"user_id": "tove_brand_5120", "origin": "ORD", "destination": "PHX", "flight_type": "one_way",
           "cabin": "economy", "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}],
           "passengers": [{"first_name": "Tove", "last_name": "Brand", "dob": "1979-02-11"}],
           "payment_methods": [{"payment_id": "credit_card_5512093", "amount": 210}],
           "total_baggages": 3, "nonfree_baggages": 0, "insurance": "no"}
RULE = "The system prompt's rule on"


def _run(tmp_path, messages, actions, policy=POLICY) -> Run:
    traj = [{"role": "system", "content": policy}, _user("Hello, this is Tove, user id tove_brand_5120."),
            *messages, _user("Thanks. ###STOP###")]
    task = {"user_id": "tove_brand_5120", "outputs": [], "instruction": "You are tove_brand_5120.", "actions": actions}
    record = {"task_id": 7, "reward": 0.0, "trial": 1, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}
    path = tmp_path / "desk-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return run


def _turn(run: Run, name: str) -> int:
    return next(t.turn for t in run.turns if t.type == "function_call" and t.name == name)


def _facts(run: Run):
    return compile_offline(run).in_short


def _booked(tmp_path, member=MEMBER, look_up=True, sent=None):
    sent = dict(BOOKING, nonfree_baggages=1) if sent is None else sent
    messages = ([*_tool("get_user_details", {"user_id": "tove_brand_5120"}, member)] if look_up else []) + [
        _user("Book me on HAT318 on June 12 in economy, with 3 checked bags. Yes, go ahead."),
        *_tool("book_reservation", sent, dict(TRIP, nonfree_baggages=sent["nonfree_baggages"]))]
    return _run(tmp_path, messages, [{"name": "book_reservation", "kwargs": BOOKING}])


def test_a_differing_count_is_given_the_rule_on_it_and_the_record_fields_it_names(tmp_path):
    run = _booked(tmp_path)
    looked, booked = _turn(run, "get_user_details"), _turn(run, "book_reservation")
    [fact] = _facts(run)
    assert fact.text == (
        f"book_reservation at turn {booked} sent `nonfree_baggages` 1 where the task expected 0. "
        f"{RULE} `nonfree_baggages` (turn 0): \"If the account holder is a platinum member, 2 free checked bags for each "
        "basic economy traveller and 4 free checked bags for each economy traveller.\" \"Each extra baggage costs 40 "
        f"dollars.\"; get_user_details (turn {looked}) gave `membership` \"platinum\"; the call sent `cabin` \"economy\".")
    assert fact.turns == sorted({0, looked, booked})
    assert fact.kind == "arguments"  # the lessons that count facts by kind still see an argument fact


def test_the_tier_rule_is_not_guessed_when_no_record_gave_the_tier(tmp_path):
    """Without the member record, the bronze and platinum sentences name the cabin alike: which one
    applies is not settled, so neither is quoted."""
    run = _booked(tmp_path, look_up=False)
    [fact] = _facts(run)
    assert f"{RULE} `nonfree_baggages` (turn 0):" not in fact.text  # no tier's sentence quoted as the one that applies
    assert "platinum member, 2 free" not in fact.text and "4 free checked" not in fact.text
    # what is said instead: the rule has a case per tier, and the run never learned which (rule_cases.py)
    assert (f"{RULE} `nonfree_baggages` (turn 0) has a case for each of \"bronze\" and \"platinum\" (the first: "
            "\"If the account holder is a bronze member") in fact.text


def test_no_rule_is_quoted_when_none_names_what_the_records_hold(tmp_path):
    """A differing card: the payment rule names no value of any record, so nothing is quoted."""
    sent = dict(BOOKING, payment_methods=[{"payment_id": "credit_card_9900417", "amount": 210}])
    run = _booked(tmp_path, sent=sent)
    [fact] = _facts(run)
    assert fact.text.startswith("book_reservation at turn") and RULE not in fact.text


def test_a_rule_of_another_actions_section_is_not_quoted(tmp_path):
    """The flights of a booking differ, and the record is basic economy: the change section's
    "Basic economy trips cannot be moved" names both, but it is a rule on changing a trip, and the
    prompt has a section of the booking's own."""
    sent = dict(BOOKING, cabin="basic_economy", flights=[{"flight_number": "HAT977", "date": "2024-06-12"}])
    expected = dict(BOOKING, cabin="basic_economy")
    messages = [*_tool("get_user_details", {"user_id": "tove_brand_5120"}, MEMBER),
                _user("Book the cheapest flight on June 12 please, basic economy. Yes."),
                *_tool("book_reservation", sent, dict(TRIP, cabin="basic_economy"))]
    run = _run(tmp_path, messages, [{"name": "book_reservation", "kwargs": expected}])
    facts = [f.text for f in _facts(run)]
    assert facts and not any("cannot be moved" in f for f in facts), facts


def test_a_cancellation_the_task_did_not_expect_gets_the_cancel_rule_and_the_record_it_turns_on(tmp_path):
    messages = [_user("Please cancel K2PL7Q, my plans changed."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("It was booked recently, so it can be cancelled. Shall I?"), _user("Yes."),
                *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(TRIP, status="cancelled"))]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}])
    looked = _turn(run, "get_reservation_details")
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    assert fact.text.endswith(
        f"{RULE} cancel_reservation (turn 0): \"Any booking can be cancelled within 48 hours of being made, or when the "
        "carrier cancelled a flight of it.\" \"Otherwise, economy and basic economy bookings can be cancelled only with "
        f"cover bought, and business bookings always.\"; get_reservation_details (turn {looked}) gave `created_at` "
        "\"2024-05-28T16:40:00\" (over 3 days before the current time the system prompt gives) and `cabin` \"economy\". "
        "On these fields, `created_at` is more than 48 hours before the current time, so \"within 48 hours of being made\" "
        "does not hold.")
    # the refund sentence names the action's section too, but no value of the record
    assert "Refunds go back" not in fact.text


def test_a_log_without_rules_quotes_none(tmp_path):
    bare = _run(tmp_path, [*_tool("get_user_details", {"user_id": "tove_brand_5120"}, MEMBER),
                           *_tool("book_reservation", dict(BOOKING, nonfree_baggages=1), TRIP)],
                [{"name": "book_reservation", "kwargs": BOOKING}], policy="You are a helpful travel assistant.")
    assert not any(RULE in f.text for f in _facts(bare))


def test_every_quote_is_the_prompts_own_words(tmp_path):
    for run in (_booked(tmp_path),):
        prompt = " ".join(run.turns[0].content.split())
        for f in _facts(run):
            for quoted in re.findall(r"\"([^\"]+)\"", f.text.split(RULE, 1)[-1].split(";")[0]):
                assert quoted.rstrip(" …") in prompt, quoted


def test_an_expected_change_never_made_gets_the_rule_the_record_meets(tmp_path):
    """The agent refused to move a basic economy trip and the task expected the move: the change
    section's rule on flights names the record's cabin, and is quoted with it."""
    basic = dict(TRIP, cabin="basic_economy")
    move = {"reservation_id": "K2PL7Q", "cabin": "basic_economy", "payment_id": "credit_card_5512093",
            "flights": [{"flight_number": "HAT402", "date": "2024-06-13"}]}
    messages = [_user("Can you move K2PL7Q to the 13th?"),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, basic),
                _agent("Your trip is basic economy, so I cannot move it.")]
    run = _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": move}])
    looked = _turn(run, "get_reservation_details")
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert fact.text.endswith(
        f"{RULE} update_reservation_flights (turn 0): \"Change flights: Basic economy trips cannot be moved to other "
        f"flights.\"; get_reservation_details (turn {looked}) gave `cabin` \"basic_economy\".")
    assert looked in fact.turns and 0 in fact.turns


def test_a_record_a_later_change_acted_on_is_not_read_as_it_was_before(tmp_path):
    """The trip was looked up, then upgraded, then cancelled: what the look-up showed (basic
    economy, booked long ago) is no longer the record the cancellation acted on."""
    old = dict(TRIP, cabin="basic_economy", created_at="2024-05-02T09:00:00")
    upgrade = {"reservation_id": "K2PL7Q", "cabin": "economy", "payment_id": "credit_card_5512093",
               "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}]}
    messages = [_user("Please upgrade K2PL7Q to economy, then cancel it."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, old), _user("Yes, upgrade it."),
                *_tool("update_reservation_flights", upgrade, dict(old, cabin="economy")), _user("Yes, now cancel."),
                *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(old, cabin="economy"))]
    run = _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": upgrade}])
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    assert "basic_economy" not in fact.text and "created_at" not in fact.text, fact.text


def test_a_models_page_carries_the_rule_with_the_checked_facts(tmp_path):
    """A model's page opens with the offline compiler's checked facts (compilers/llm_offline.py):
    the rule and its record fields come with them, not from the model."""
    from wikitrace.compilers.llm_offline import offline_facts

    run = _booked(tmp_path)
    assert [f.text for f in offline_facts(run)] == [f.text for f in _facts(run)]
    assert any(f"{RULE} `nonfree_baggages`" in f.text and "`membership` \"platinum\"" in f.text
               for f in offline_facts(run))


def _refused(tmp_path, with_sibling: bool) -> Run:
    """The agent refused to rename a passenger; the task expected the rename (and, with a sibling,
    a flight change of the same action that the run made)."""
    rename = {"reservation_id": "K2PL7Q", "passengers": [{"first_name": "Ola", "last_name": "Brand", "dob": "1981-07-30"}]}
    move = {"reservation_id": "K2PL7Q", "cabin": "economy", "payment_id": "credit_card_5512093",
            "flights": [{"flight_number": "HAT402", "date": "2024-06-13"}]}
    messages = [_user("Please put my brother Ola on K2PL7Q instead of me" + (", and move it to the 13th." if with_sibling else ".")),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("I am sorry, the passenger on a booking cannot be changed.")]
    if with_sibling:
        messages += [_user("Then just move it, yes."), *_tool("update_reservation_flights", move, TRIP)]
    actions = [{"name": "update_reservation_passengers", "kwargs": rename}]
    return _run(tmp_path, messages, actions + ([{"name": "update_reservation_flights", "kwargs": move}] if with_sibling else []))


def test_a_refused_change_the_actions_own_section_allows_is_given_that_rule(tmp_path):
    """No rule names a value of the record, but the section where the run's other update calls
    have their rules holds one block on passengers: it is quoted beside the change never made."""
    [fact] = [f for f in _facts(_refused(tmp_path, True)) if f.kind == "missed-change"]
    assert f"{RULE} update_reservation_passengers (turn 0): \"Change passengers: A booking's passengers may be " \
           "renamed, but their number stays fixed.\"" in fact.text


def test_a_labelled_rule_is_not_picked_between_two_sections(tmp_path):
    """Without a sibling call the booking section's "Passengers:" and the change section's "Change
    passengers:" both name the thing: which one governs is not settled, so neither is quoted."""
    [fact] = [f for f in _facts(_refused(tmp_path, False)) if f.kind == "missed-change"]
    assert RULE not in fact.text


# --- what was said about the rule: the user's stated reason, the agent's refusal (rule_talk.py) ---------

COVERED = POLICY.replace(
    "- Payment: A booking may use at most one voucher and at most two cards.",
    "- Payment: A booking may use at most one voucher and at most two cards.\n\n"
    "- Trip cover: the agent should offer trip cover if the user plans a long journey, at 20 dollars per traveller; it refunds the "
    "booking in full if the user must cancel the trip because of illness or a storm.").replace(
    "can be cancelled only with cover bought", "can be cancelled only with trip cover bought and its terms met")
CANCEL_RULE = ("\"Any booking can be cancelled within 48 hours of being made, or when the carrier cancelled a flight of "
               "it.\" \"Otherwise, economy and basic economy bookings can be cancelled only with trip cover bought and its "
               "terms met, and business bookings always.\"")
COVER_RULE = ("\"Trip cover: the agent should offer trip cover if the user plans a long journey, at 20 dollars per traveller; it "
              "refunds the booking in full if the user must cancel the trip because of illness or a storm.\"")


def _cancelled(tmp_path, talk, cover="yes"):
    """The user asks to cancel an old economy booking; the task expected no change."""
    trip = dict(TRIP, cover=cover)
    messages = [*talk, *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                _agent("Shall I cancel K2PL7Q?"), _user("Yes."),
                *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(trip, status="cancelled"))]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=COVERED)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    return run, fact


def test_the_users_own_answer_on_a_condition_no_record_holds_is_quoted(tmp_path):
    """The cover rule turns on why the user cancels; the record holds the cover, not the reason. The
    user's answer to the agent's question on it is quoted, and no verdict on it is given."""
    run, fact = _cancelled(tmp_path, [_user("Please cancel K2PL7Q."),
                                      _agent("May I ask the reason? Is it illness, or a storm?"),
                                      _user("Neither, really. A birthday party moved, so I will not travel.")])
    answer = next(t.turn for t in run.turns if t.role == "user" and "Neither" in (t.content or ""))
    assert f"{CANCEL_RULE} {COVER_RULE}" in fact.text
    assert fact.text.endswith(f"`cover` \"yes\". On these fields, `created_at` is more than 48 hours before the current "
                              "time, so \"within 48 hours of being made\" does not hold. The user's words on its "
                              f"condition (turn {answer}): "
                              "\"Neither, really. A birthday party moved, so I will not travel.\"")
    assert answer in fact.turns and "not met" not in fact.text


def test_the_users_sentence_naming_the_condition_is_quoted_without_a_question(tmp_path):
    """No question was asked: the nearest user message before the call that names the condition's
    words gives it, and only its sentence on that is quoted (not the "Yes." that came later)."""
    run, fact = _cancelled(tmp_path, [_user("Hi, I am Tove. I caught an illness last week and must stay home. Cancel K2PL7Q.")])
    said = next(t.turn for t in run.turns if t.role == "user" and "illness" in (t.content or ""))
    assert fact.text.endswith(f"The user's words on its condition (turn {said}): \"I caught an illness last week and "
                              "must stay home.\"")


def test_no_user_words_are_quoted_when_none_bear_on_the_condition(tmp_path):
    """The user only asked and agreed: no message names the condition or answers a question on it.
    The cover rule's other condition (on planning a journey) is not one on cancelling, and "must"
    carries the condition, it is not what it turns on."""
    _, fact = _cancelled(tmp_path, [_user("I must cancel K2PL7Q, my plans changed.")])
    assert COVER_RULE in fact.text and "The user's words" not in fact.text


def test_a_rule_the_record_says_does_not_apply_is_not_quoted(tmp_path):
    """The booking has no trip cover: the cover rule's terms bear on nothing, so only the cancel
    rule is quoted, and no user words on the cover's condition."""
    _, fact = _cancelled(tmp_path, [_user("Please cancel K2PL7Q."), _agent("Why do you cancel? Illness, or a storm?"),
                                    _user("A storm is coming.")], cover="no")
    assert CANCEL_RULE in fact.text and "Trip cover:" not in fact.text and "The user's words" not in fact.text
    assert "`cover` \"no\"" in fact.text  # the field the cancel rule names by name is still given


def test_the_agents_refusal_is_set_beside_the_expected_change_the_rule_allows(tmp_path):
    run = _refused(tmp_path, True)
    refused = next(t.turn for t in run.turns if t.role == "assistant" and "cannot be changed" in (t.content or ""))
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert fact.text.endswith(
        f"{RULE} update_reservation_passengers (turn 0): \"Change passengers: A booking's passengers may be renamed, but "
        f"their number stays fixed.\" The agent told the user at turn {refused} that it could not: \"I am sorry, the "
        "passenger on a booking cannot be changed.\"; the task expected update_reservation_passengers, which the rule "
        "quoted allows.")
    assert refused in fact.turns


def test_a_refusal_without_a_rule_quoted_does_not_say_the_rule_allows_it(tmp_path):
    """Two sections name passengers: no rule is quoted, the refusal still is, and nothing is said of
    what a rule allows."""
    [fact] = [f for f in _facts(_refused(tmp_path, False)) if f.kind == "missed-change"]
    assert RULE not in fact.text
    assert fact.text.endswith("that it could not: \"I am sorry, the passenger on a booking cannot be changed.\"; the "
                              "task expected update_reservation_passengers.")


def test_what_the_user_cannot_do_or_a_refusal_of_another_action_is_no_refusal(tmp_path):
    """The task expected a cancellation. "If you cannot find the booking id" is the user's
    inability; "I cannot remove a traveller from a reservation" refuses another change of the
    reservation than cancelling it (a thing other tools act on needs the tool's own verb too)."""
    messages = [_user("Please cancel my trip."),
                _agent("If you cannot find the reservation id, your email has it."),
                _user("It is K2PL7Q. Or just take my friend off it."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("I cannot remove a traveller from a reservation. Anything else?")]
    run = _run(tmp_path, messages, [{"name": "cancel_reservation", "kwargs": {"reservation_id": "K2PL7Q"}}])
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert "could not" not in fact.text, fact.text


def test_the_users_inability_is_no_refusal_even_on_the_tools_own_thing(tmp_path):
    rename = {"reservation_id": "K2PL7Q", "passengers": [{"first_name": "Ola", "last_name": "Brand", "dob": "1981-07-30"}]}
    messages = [_user("Please put Ola on K2PL7Q instead of me."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("If you can't find the new passenger's birth date, ask them and come back."), _user("Okay, bye.")]
    run = _run(tmp_path, messages, [{"name": "update_reservation_passengers", "kwargs": rename}])
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert "could not" not in fact.text, fact.text


def test_a_permission_under_a_condition_is_not_called_allowed(tmp_path):
    """The agent refused an expected cancellation of an old economy booking: the cancel rule says
    bookings "can be cancelled within 48 hours", a permission under a condition the page does not
    check, so the page does not say the rule allows it."""
    messages = [_user("Please cancel K2PL7Q."), *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("K2PL7Q was booked days ago, so it cannot be cancelled.")]
    run = _run(tmp_path, messages, [{"name": "cancel_reservation", "kwargs": {"reservation_id": "K2PL7Q"}}])
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert f"{RULE} cancel_reservation" in fact.text and "can be cancelled within 48 hours" in fact.text
    assert fact.text.endswith("that it could not: \"K2PL7Q was booked days ago, so it cannot be cancelled.\"; the task "
                              "expected cancel_reservation."), fact.text


# --- what a permission rule settles on the record's fields (rule_verdicts.py) ---

INSURED = POLICY.replace("can be cancelled only with cover bought", "can be cancelled only if travel insurance is bought")


def _cancel(tmp_path, trip, policy=INSURED):
    messages = [_user("Please cancel K2PL7Q."), *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                _agent("Shall I cancel K2PL7Q?"), _user("Yes."),
                *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(trip, status="cancelled"))]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=policy)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    return run, fact


def test_a_rule_whose_conditions_the_fields_fail_says_so_and_what_it_still_allowed(tmp_path):
    """Booked 3 days before the prompt's now and no insurance: the span and the only-if both fail,
    and the one alternative no field checks (the carrier's cancellation) is carried, not assumed."""
    run, fact = _cancel(tmp_path, TRIP)
    assert fact.text.endswith(
        "On these fields, `created_at` is more than 48 hours before the current time, so \"within 48 hours of being made\" "
        "does not hold; `insurance` is \"no\", so \"only if travel insurance is bought\" does not hold. So of this rule "
        "only \"when the carrier cancelled a flight of it\" could still have allowed this cancel_reservation."), fact.text
    from test_in_short import _check
    _check(run, fact.text, fact.turns)
    with pytest.raises(AssertionError):  # the check reads the record: a field it does not hold fails it
        _check(run, fact.text.replace('`insurance` is "no"', '`insurance` is "none"'), fact.turns)


@pytest.mark.parametrize("trip, policy, said, concluded", [
    (dict(TRIP, cabin="business"), INSURED, False, False),  # the business part allows it outright (test_rule_shapes.py)
    (dict(TRIP, created_at="2024-05-31T20:00:00"), INSURED, False, False),  # booked 14 hours before: the span allows it
    (dict(TRIP, insurance="yes"), INSURED, True, False),  # insured: the only-if may hold
    (TRIP, INSURED.replace("only if travel insurance is bought", "only if travel insurance is bought or the user is a "
                           "platinum member"), True, False),  # one of two alternatives failing settles nothing
])
def test_a_rule_the_fields_do_not_settle_gets_no_conclusion(tmp_path, trip, policy, said, concluded):
    _run_, fact = _cancel(tmp_path, trip, policy)
    assert ("On these fields" in fact.text) == said, fact.text
    assert ("could still have allowed" in fact.text or "did not allow" in fact.text) == concluded, fact.text


def test_a_cancel_of_another_record_than_expected_says_what_the_rule_settles_on_the_one_it_cancelled(tmp_path):
    """The task expected K9INSR (insured) cancelled; the run cancelled K2PL7Q, which the rule's
    conditions close: the argument's fact says so, where before it said only that the ids differed.
    Where the record it cancelled leaves the rule open (insured), nothing more is said."""
    def lead(trip):
        messages = [_user("Please cancel my Phoenix trip."),
                    *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                    _agent("Shall I cancel K2PL7Q?"), _user("Yes."),
                    *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(trip, status="cancelled"))]
        run = _run(tmp_path, messages, [{"name": "cancel_reservation", "kwargs": {"reservation_id": "K9INSR"}}],
                   policy=INSURED)
        [fact] = [f for f in _facts(run) if f.kind == "arguments"]
        return fact

    fact = lead(TRIP)
    # the expected id stood nowhere the run could read: said first (a look-up it never made might have shown it)
    assert fact.text.startswith("cancel_reservation at turn 6 sent `reservation_id` \"K2PL7Q\" where the task expected "
                                "\"K9INSR\". The expected \"K9INSR\" stands in no answer or user message of this run, "
                                "nor in its task's instruction. The system prompt's rule on cancel_reservation"), fact.text
    assert fact.text.endswith("So of this rule only \"when the carrier cancelled a flight of it\" could still have allowed "
                              "this cancel_reservation."), fact.text
    assert "On these fields" not in lead(dict(TRIP, insurance="yes")).text


@pytest.mark.parametrize("policy, tail", [
    # the carrier's cancellation is the one condition no field checks: the refusal is flagged against it
    (INSURED, "the task expected cancel_reservation, which the rule as the record's fields read allows only \"when the "
              "carrier cancelled a flight of it\": unless that held, the task's expected call and the rule as written "
              "disagree."),
    # with no such alternative every permission is closed on the record
    (INSURED.replace(", or when the carrier cancelled a flight of it", ""),
     "the refusal keeps to the rule as the record's fields read, yet the task expected cancel_reservation: here the "
     "task's expected call and the rule as written disagree."),
])
def test_a_refused_change_the_rule_closes_on_the_record_is_flagged_against_the_task(tmp_path, policy, tail):
    """The task expected K2PL7Q cancelled; the agent refused, and the record (booked 3 days before,
    uninsured) fails the rule's conditions: the page does not teach the refusal as the mistake."""
    messages = [_user("Please cancel K2PL7Q."), *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("K2PL7Q has no travel insurance, so it cannot be cancelled.")]
    run = _run(tmp_path, messages, [{"name": "cancel_reservation", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=policy)
    [fact] = [f for f in _facts(run) if f.kind == "missed-change"]
    assert "`insurance` is \"no\", so \"only if travel insurance is bought\" does not hold" in fact.text, fact.text
    assert fact.text.endswith(tail), fact.text


def test_a_refusal_is_read_clause_by_clause_and_beside_any_of_several_changes_never_made(tmp_path):
    """Two expected changes never made (a rename and a bag): the agent's refusal of the rename is
    said beside them. A clause that denies one act does not refuse another the sentence names ("the
    seats cannot be moved, so consider a rename"), and a sentence that grants the act in one clause
    and limits it in another draws a line ("you can rename passengers, but their number cannot be
    changed"): neither is a refusal."""
    rename = {"reservation_id": "K2PL7Q", "passengers": [{"first_name": "Ola", "last_name": "Brand", "dob": "1981-07-30"}]}
    bags = {"reservation_id": "K2PL7Q", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "credit_card_5512093"}
    actions = [{"name": "update_reservation_passengers", "kwargs": rename},
               {"name": "update_reservation_baggages", "kwargs": bags}]

    def said(agent_says: str) -> str:
        messages = [_user("Please put my brother Ola on K2PL7Q instead of me, and add two bags."),
                    *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP), _agent(agent_says)]
        [fact] = [f for f in _facts(_run(tmp_path, messages, actions)) if f.kind == "missed-change"]
        return fact.text

    refused = said("Sadly, changing the passenger on a booking is not allowed.")
    assert refused.endswith("that it could not: \"Sadly, changing the passenger on a booking is not allowed.\"; the "
                            "task expected update_reservation_passengers."), refused
    assert "could not" not in said("The seats cannot be moved, so consider another passenger instead.")
    assert "could not" not in said("You can rename passengers, but the number of passengers cannot be changed.")
