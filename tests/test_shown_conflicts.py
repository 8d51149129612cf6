"""Why a tool-calling change went wrong, read off what the run itself had shown: a yes given to
smaller amounts than the change then charged, a limit the user set below that charge, a failed
change on an option a look-up had shown as full, a payment above the balance its method's
record held, a change on a record whose trip was already over. Fixtures in the shape of
tau-bench's result files (made-up people, ids and prices)."""

from __future__ import annotations

from tau_messages import agent as _agent, tool as _tool, user as _user
from test_in_short import TRIP, _call_turn, _check, _facts, _tau, _turn_of

from wikitrace.compilers.offline import compile_offline

MOVE = {"reservation_id": "Q4WZ8N", "cabin": "economy", "payment_id": "gift_card_7730215",
        "flights": [{"flight_number": "HAT311", "date": "2024-06-10"}]}


def _moved(extra_payment: dict | None) -> dict:
    """The record update_reservation_flights returns: the new flight, and the charge as a new
    entry of its payment history."""
    out = dict(TRIP, flights=[{"origin": "DEN", "destination": "BOS", "flight_number": "HAT311",
                               "date": "2024-06-10", "price": 280}])
    out["payment_history"] = TRIP["payment_history"] + ([extra_payment] if extra_payment else [])
    return out


def _move_run(tmp_path, quoted: str, charged: float, reward=0.0, instruction="You are lena_vogt_3017. Move your flight."):
    return _tau(tmp_path, [
        _user("Please move me to HAT311 on 2024-06-10."),
        _agent(f"Moving Q4WZ8N to HAT311 on 2024-06-10 costs {quoted}, paid with gift_card_7730215. Shall I proceed?"),
        _user("Yes, please go ahead."),
        *_tool("update_reservation_flights", MOVE, _moved({"payment_id": "gift_card_7730215", "amount": charged})),
    ], reward=reward, instruction=instruction)


def _decisions(run) -> list[str]:
    return [e.decision for e in compile_offline(run).evidence]


def _all_hold(run) -> None:
    for fact in compile_offline(run).in_short:
        _check(run, fact.text, fact.turns)


def test_a_yes_to_a_smaller_amount_is_said_with_what_the_change_charged(tmp_path):
    run = _move_run(tmp_path, "$120", 480)
    moved = _call_turn(run, "update_reservation_flights")
    put, yes = _turn_of(run, "costs $120"), _turn_of(run, "please go ahead")
    facts = _facts(run)
    assert facts[0] == (f"update_reservation_flights at turn {moved} charged $480 (the new `payment_history` entry of its "
                        f"answer); the user's yes (turn {yes}) answered the agent's message at turn {put}, which named "
                        "$120 (\"Moving Q4WZ8N to HAT311 on 2024-06-10 costs $120, paid with gift_card_7730215.\"), and no "
                        "message of the agent had put $480 to the user. Put the total the call will charge to the user, "
                        "and get a yes to that total, before making the change.")
    assert any(d.startswith(f"Called update_reservation_flights at turn {moved}, after the user said yes (turn {yes}) to "
                            f"the agent's message at turn {put}, which named $120, not the $480 the call charged")
               for d in _decisions(run))
    assert not any("after the user agreed" in d for d in _decisions(run))
    _all_hold(run)


def test_an_amount_named_as_a_balance_left_is_quoted_in_its_sentence(tmp_path):
    """"$35 left on the card" is no price: the fact quotes the sentence that named it, so a reader
    does not take it for what the change was to cost."""
    run = _tau(tmp_path, [
        _user("Please move me to HAT311 on 2024-06-10."),
        _agent("Moving Q4WZ8N to HAT311 on 2024-06-10 is paid with gift_card_7730215. After the move, the card "
               "will have $35 left.\n\n- **Flight:** HAT311\n\nShall I proceed?"),
        _user("Yes, please go ahead."),
        *_tool("update_reservation_flights", MOVE, _moved({"payment_id": "gift_card_7730215", "amount": 480})),
    ], reward=0.0)
    [fact] = [f for f in _facts(run) if "answered the agent's message" in f]
    assert "which named $35 (\"After the move, the card will have $35 left.\"), and no message" in fact, fact
    _all_hold(run)


def test_a_yes_to_the_amount_charged_stays_a_plain_agreement(tmp_path):
    for quoted, charged in (("$480", 480), ("$240 per passenger", 480), ("$480", -100)):
        run = _move_run(tmp_path, quoted, charged)  # the same, a fare times the 2 passengers, a refund
        assert not any("answered the agent's message" in f for f in _facts(run)), quoted
        assert any("after the user agreed" in d for d in _decisions(run)), quoted
        _all_hold(run)


def test_a_limit_written_as_less_than_counts_against_the_charge_the_answer_shows(tmp_path):
    run = _move_run(tmp_path, "$480", 480,
                    instruction="You are lena_vogt_3017. Move your flight only if the extra cost is less than $300.")
    moved = _call_turn(run, "update_reservation_flights")
    yes = _turn_of(run, "please go ahead")
    assert (f"update_reservation_flights at turn {moved} charged $480 (the new `payment_history` entry of its answer), "
            f"above the $300 limit the task's instruction gives the user (\"Move your flight only if the extra cost is "
            f"less than $300.\") (the user agreed at turn {yes}).") in _facts(run)
    _all_hold(run)


def _search(seats: int) -> list[dict]:
    return [{"flight_number": "HAT311", "origin": "DEN", "destination": "BOS", "status": "available",
             "available_seats": {"basic_economy": 4, "economy": seats, "business": 6},
             "prices": {"basic_economy": 90, "economy": 280, "business": 610}},
            {"flight_number": "HAT402", "origin": "DEN", "destination": "BOS", "status": "available",
             "available_seats": {"basic_economy": 9, "economy": 12, "business": 3},
             "prices": {"basic_economy": 95, "economy": 265, "business": 590}}]


def _full_flight_run(tmp_path, seats: int, error: str):
    return _tau(tmp_path, [
        _user("Please move me to a flight on 2024-06-10."),
        *_tool("search_direct_flight", {"origin": "DEN", "destination": "BOS", "date": "2024-06-10"}, _search(seats)),
        _agent("HAT311 leaves at 9:00. Move Q4WZ8N to it in economy?"), _user("Yes."),
        *_tool("update_reservation_flights", MOVE, error),
    ], reward=0.0)


def test_a_failed_change_on_an_option_the_search_showed_full_says_so(tmp_path):
    run = _full_flight_run(tmp_path, 0, "Error: not enough seats on flight HAT311")
    search, moved = _turn_of(run, "available_seats"), _turn_of(run, "not enough seats")
    assert _facts(run)[0] == (
        f"update_reservation_flights at turn {moved} sent HAT311 with `cabin` \"economy\", which search_direct_flight's "
        f"answer (turn {search}) showed with 0 under `available_seats`.`economy`; the call failed (\"Error: not enough "
        "seats on flight HAT311\"). Read what the look-up showed for the option before sending a change that needs it.")
    _all_hold(run)


def test_a_full_option_the_run_got_past_comes_after_what_still_stood(tmp_path):
    """The run changed to another flight after the refusal: the change that went through is what the
    page leads with; the refused option is said after it."""
    run = _tau(tmp_path, [
        _user("Please move me to a flight on 2024-06-10."),
        *_tool("search_direct_flight", {"origin": "DEN", "destination": "BOS", "date": "2024-06-10"}, _search(0)),
        _agent("HAT311 leaves at 9:00. Move Q4WZ8N to it in economy?"), _user("Yes."),
        *_tool("update_reservation_flights", MOVE, "Error: not enough seats on flight HAT311"),
        *_tool("update_reservation_flights", {**MOVE, "flights": [{"flight_number": "HAT402", "date": "2024-06-10"}]},
               {"reservation_id": "Q4WZ8N", "flights": [{"flight_number": "HAT402"}]}),
    ], reward=0.0, actions=[{"name": "update_reservation_flights",
                             "kwargs": {**MOVE, "flights": [{"flight_number": "HAT402", "date": "2024-06-11"}]}}])
    facts = _facts(run)
    full = next(i for i, f in enumerate(facts) if "showed with 0 under `available_seats`" in f)
    assert full > 0, facts
    _all_hold(run)


def test_a_failure_for_another_reason_or_a_seat_to_spare_is_not_put_on_the_search(tmp_path):
    for seats, error in ((0, "Error: gift card balance is not enough"), (3, "Error: not enough seats on flight HAT311")):
        run = _full_flight_run(tmp_path, seats, error)
        assert not any("under `available_seats`" in f for f in _facts(run)), (seats, error)
        _all_hold(run)


PROFILE = {"name": {"first_name": "Lena", "last_name": "Vogt"}, "dob": "1988-03-04",
           "payment_methods": {"gift_card_7730215": {"source": "gift_card", "amount": 80, "id": "gift_card_7730215"},
                               "credit_card_4410963": {"source": "credit_card", "last_four": "0963",
                                                       "id": "credit_card_4410963"}},
           "saved_passengers": [{"first_name": "Ravi", "last_name": "Vogt", "dob": "1986-12-19"}],
           "reservations": ["Q4WZ8N"]}

BOOK = {"user_id": "lena_vogt_3017", "origin": "DEN", "destination": "BOS", "flight_type": "one_way",
        "cabin": "economy", "flights": [{"flight_number": "HAT402", "date": "2024-06-10"}],
        "passengers": [{"first_name": "Ravi", "last_name": "Vogt", "dob": "1986-12-19"}],
        "payment_methods": [{"payment_id": "gift_card_7730215", "amount": 265}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}


def test_a_payment_above_the_balance_its_method_showed_says_both(tmp_path):
    run = _tau(tmp_path, [
        _user("Book Ravi on HAT402 too, with my gift card."),
        *_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
        _agent("HAT402 in economy for Ravi is $265 on gift_card_7730215. Proceed?"), _user("Yes."),
        *_tool("book_reservation", BOOK, "Error: not enough balance in payment method gift_card_7730215"),
    ], reward=0.0)
    profile, booked = _turn_of(run, "saved_passengers"), _turn_of(run, "not enough balance")
    assert _facts(run)[0] == (
        f"book_reservation at turn {booked} paid $265 from gift_card_7730215, whose record in get_user_details's answer "
        f"(turn {profile}) holds `amount` $80, less than that; the call failed (\"Error: not enough balance in payment "
        "method gift_card_7730215\"). Check a payment against the balance a look-up showed before sending it.")
    _all_hold(run)


FLOWN = dict(TRIP, reservation_id="Z3K8PW", created_at="2024-05-02T09:40:00",
             flights=[{"origin": "BOS", "destination": "DEN", "flight_number": "HAT118", "date": "2024-05-21",
                       "price": 150},
                      {"origin": "DEN", "destination": "BOS", "flight_number": "HAT907", "date": "2024-05-24",
                       "price": 160}])


def test_a_change_on_a_trip_already_flown_gives_its_dates_and_the_stated_now(tmp_path):
    run = _tau(tmp_path, [
        _user("Also cancel my other trip, Z3K8PW."),
        *_tool("get_reservation_details", {"reservation_id": "Z3K8PW"}, FLOWN),
        _agent("Cancel Z3K8PW, both flights?"), _user("Yes."),
        *_tool("cancel_reservation", {"reservation_id": "Z3K8PW"}, dict(FLOWN, status="cancelled")),
    ], reward=0.0)
    looked, cancelled = _turn_of(run, "HAT118"), _turn_of(run, "cancelled")
    assert _facts(run)[0] == (
        f"cancel_reservation at turn {cancelled} went through on Z3K8PW, whose `flights` in get_reservation_details's "
        f"answer (turn {looked}) are all dated 2024-05-21 to 2024-05-24, before the current time the system prompt states "
        "(2024-06-01 10:00). Compare a record's dates with the stated current time before acting on it.")
    _all_hold(run)


def test_birth_dates_and_trips_still_ahead_are_no_past_record(tmp_path):
    """A user's saved passengers (birth dates, before the profile was made) and a trip still to
    come give no such sentence."""
    run = _tau(tmp_path, [
        _user("Book Ravi on HAT402 too, with my card."),
        *_tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
        _agent("HAT402 for Ravi is $265. Proceed?"), _user("Yes."),
        *_tool("book_reservation", dict(BOOK, payment_methods=[{"payment_id": "credit_card_4410963", "amount": 265}]),
               dict(BOOK, reservation_id="NEW001")),
        _user("And cancel Q4WZ8N."),
        _agent("Cancel Q4WZ8N?"), _user("Yes."),
        *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, dict(TRIP, status="cancelled")),
    ], reward=0.0)
    assert not any("are all dated" in f for f in _facts(run))
    _all_hold(run)


def test_a_change_the_agent_said_was_made_that_no_call_made_is_named(tmp_path):
    actions = [{"name": "update_reservation_baggages",
                "kwargs": {"reservation_id": "Q4WZ8N", "total_baggages": 1, "nonfree_baggages": 0,
                           "payment_id": "gift_card_7730215"}}]
    said = "All set. One checked bag has been added to your reservation."
    run = _tau(tmp_path, [_user("Please add a checked bag."), _agent("One bag is free for you. Add it?"), _user("Yes."),
                          _agent(said)], reward=0.0, actions=actions)
    at = _turn_of(run, "has been added")
    assert _facts(run)[0] == (f"The agent told the user at turn {at} that the bag had been added (\"One checked bag has "
                              "been added to your reservation.\"), but no update_reservation_baggages call went through "
                              "in this run, and the task expected one. Tell the user only what a call's answer shows "
                              "was done.")
    _all_hold(run)


def test_a_claim_hedged_asked_or_about_a_change_that_went_through_is_not_flagged(tmp_path):
    actions = [{"name": "update_reservation_baggages",
                "kwargs": {"reservation_id": "Q4WZ8N", "total_baggages": 1, "nonfree_baggages": 0,
                           "payment_id": "gift_card_7730215"}}]
    for said in ("Once the bag has been added, you will get an email.", "Has the bag been added already?",
                 "The bag has not been added yet."):
        run = _tau(tmp_path, [_user("Please add a checked bag."), _agent(said)], reward=0.0, actions=actions)
        assert not any("had been" in f for f in _facts(run)), said
    bag = {"reservation_id": "Q4WZ8N", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": "gift_card_7730215"}
    run = _tau(tmp_path, [_user("Please add a checked bag."), _agent("Add one bag?"), _user("Yes."),
                          *_tool("update_reservation_baggages", bag, dict(TRIP, total_baggages=1)),
                          _agent("One checked bag has been added to your reservation.")], reward=0.0, actions=actions)
    assert not any("had been" in f for f in _facts(run))


def test_an_expected_calculation_never_made_is_not_put_in_the_in_short(tmp_path):
    """A calculator's expression reads no record: a run that never sent it left nothing unread,
    while an expected look-up of a record is still named."""
    actions = [{"name": "calculate", "kwargs": {"expression": "(280 - 160) * 2"}},
               {"name": "get_user_details", "kwargs": {"user_id": "lena_vogt_3017"}}]
    run = _tau(tmp_path, [_user("How much would HAT311 cost?"), _agent("It would be $240 more.")], reward=0.0,
               actions=actions)
    facts = _facts(run)
    assert not any("calculate(" in f for f in facts)
    assert any(f.startswith("The task expected the look-up get_user_details(") for f in facts), facts


def test_a_second_change_on_a_trip_already_flown_says_so_beside_what_the_task_expected(tmp_path):
    """The first such change leads the page; the second's own fact (a change the task did not
    expect) gives its record's dates too, so no rule case allowing it reads as the whole story."""
    flown_too = dict(FLOWN, reservation_id="Y7M2QD", cabin="business",
                     flights=[dict(FLOWN["flights"][0], flight_number="HAT240", date="2024-05-26")])
    run = _tau(tmp_path, [
        _user("Cancel Q4WZ8N, Z3K8PW and Y7M2QD, please. Yes to all three."),
        *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, dict(TRIP, status="cancelled")),
        *_tool("get_reservation_details", {"reservation_id": "Z3K8PW"}, FLOWN),
        *_tool("cancel_reservation", {"reservation_id": "Z3K8PW"}, dict(FLOWN, status="cancelled")),
        *_tool("get_reservation_details", {"reservation_id": "Y7M2QD"}, flown_too),
        *_tool("cancel_reservation", {"reservation_id": "Y7M2QD"}, dict(flown_too, status="cancelled")),
    ], reward=0.0, actions=[{"name": "cancel_reservation", "kwargs": {"reservation_id": "Q4WZ8N"}}])
    facts = _facts(run)
    looked = _turn_of(run, "HAT240")
    second = [t.turn for t in run.turns if t.type == "function_call" and t.name == "cancel_reservation"][2]
    assert facts[0].startswith("cancel_reservation at turn ") and "went through on Z3K8PW" in facts[0], facts
    [fact] = [f for f in facts if f.startswith(f"cancel_reservation at turn {second} went through, but the task expected")]
    assert fact.endswith(f"Its `flights` in get_reservation_details's answer (turn {looked}) are all dated 2024-05-26, "
                         "before the current time the system prompt states (2024-06-01 10:00)."), fact
    [first] = [f for f in facts if "went through, but the task expected" in f and "Y7M2QD" not in f and f != fact]
    assert "are all dated" not in first  # the lead already says it of Z3K8PW


def test_a_yes_to_a_message_that_put_another_change_is_not_said_to_agree_to_this_one(tmp_path):
    """The user said yes to trying a certificate again; the agent then cancelled a booking the
    message never named. "after the user agreed" would credit the cancel with that yes."""
    offer = "I can try to use the larger certificate again. Would you like me to do that?"
    run = _tau(tmp_path, [
        _user("Please use my larger certificate for the trip."),
        _agent(offer),
        _user("Yes, please try it."),
        *_tool("cancel_reservation", {"reservation_id": "HATHAU"}, {"reservation_id": "HATHAU", "status": "cancelled"}),
    ], reward=0.0)
    cancel, put, yes = _call_turn(run, "cancel_reservation"), _turn_of(run, "larger certificate again"), _turn_of(run, "please try")
    decided = [d for d in _decisions(run) if d.startswith(f"Called cancel_reservation at turn {cancel}")]
    assert decided == [f"Called cancel_reservation at turn {cancel}, after the user said yes (turn {yes}) to the agent's "
                       f"message at turn {put}, which named neither a value this call sent nor a word of "
                       "cancel_reservation or of its values."], decided
    # the same yes to a message naming the booking (its code, or the word of the change) is agreement to it
    for named in ("I can cancel HATHAU for you. Shall I?", "Shall I cancel the booking?"):
        run = _tau(tmp_path, [_user("Please cancel my trip."), _agent(named), _user("Yes, please do."),
                              *_tool("cancel_reservation", {"reservation_id": "HATHAU"},
                                     {"reservation_id": "HATHAU", "status": "cancelled"})], reward=0.0)
        assert any("after the user agreed" in d for d in _decisions(run)), named
    # a count the call sent, written as a word ("Add One Checked Bag" for nonfree_baggages 1), names it: a rater
    # found "named neither a value this call sent nor a word of update_reservation_baggages" false beside it
    run = _tau(tmp_path, [_user("I need one more bag."), _agent("Here is the plan:\n- **Add One Checked Bag**\nShall I?"),
                          _user("Yes, please proceed."),
                          *_tool("update_reservation_baggages", {"reservation_id": "HATHAU", "total_baggages": 2,
                                                                 "nonfree_baggages": 1, "payment_id": "gift_card_1"},
                                 {"reservation_id": "HATHAU"})], reward=0.0)
    assert any("after the user agreed" in d for d in _decisions(run)), _decisions(run)
    assert not any("named neither" in d for d in _decisions(run))
    # one agreement asked twice: the user agreed to the cancel and asked about the fee, then said yes
    # to a message naming nothing of it; the yes answers both messages
    run = _tau(tmp_path, [_user("Please cancel my trip."), _agent("I can cancel HATHAU for you. Shall I?"),
                          _user("I'd like to proceed with that. Could the fee be waived?"),
                          _agent("Fees are not waived, but I can go ahead. Shall I proceed?"), _user("Yes, please."),
                          *_tool("cancel_reservation", {"reservation_id": "HATHAU"},
                                 {"reservation_id": "HATHAU", "status": "cancelled"})], reward=0.0)
    assert any("after the user agreed" in d for d in _decisions(run)), _decisions(run)


def test_a_hand_off_after_a_yes_to_another_change_is_not_said_to_be_agreed(tmp_path):
    """tau step-0058: the user said yes to cancelling and rebooking; after failed bookings the agent
    handed off with a summary of the talk. The summary's words are the talk's: only a message naming
    the hand-off put it to the user, so the page says what the yes answered."""
    from test_page_sentences import Check, _decision

    asked = "I can cancel HATHAU and book the new trip. Shall I go ahead?"
    run = _tau(tmp_path, [_user("Please cancel my trip and book a new one."), _agent(asked), _user("Yes, go ahead."),
                          *_tool("transfer_to_human_agents",
                                 {"summary": "The user wants to cancel HATHAU and book a new trip; the booking failed."},
                                 "Transfer successful")], reward=0.0)
    hand_off, put, yes = _call_turn(run, "transfer_to_human_agents"), _turn_of(run, "Shall I go ahead"), _turn_of(
        run, "Yes, go ahead")
    [decided] = [d for d in _decisions(run) if d.startswith(f"Called transfer_to_human_agents at turn {hand_off}")]
    assert decided.startswith(f"Called transfer_to_human_agents at turn {hand_off}, after the user said yes (turn {yes}) "
                              f"to the agent's message at turn {put}, which named no word of transfer_to_human_agents")
    _decision(Check(run), decided, False)
    # a message that put the hand-off to the user is agreement to it
    run = _tau(tmp_path, [_user("Please cancel my trip."), _agent("Shall I transfer you to a human agent?"),
                          _user("Yes."), *_tool("transfer_to_human_agents", {"summary": "Cancel HATHAU."},
                                                "Transfer successful")], reward=0.0)
    assert any(d.startswith("Called transfer_to_human_agents") and "after the user agreed" in d for d in _decisions(run))


def test_a_retry_after_two_failed_calls_names_both_failures(tmp_path):
    """A rater found "after update_reservation_flights failed at turn 16, called it again at turn 23"
    false where the call had failed again at turn 20: every failed call between is named, with its error."""
    args = {"reservation_id": "HATHAU", "cabin": "economy", "flights": [{"flight_number": "HAT1", "date": "2024-06-09"}]}
    run = _tau(tmp_path, [
        _user("Please change my flight."),
        *_tool("update_reservation_flights", {**args, "payment_id": "credit_card_1"}, "Error: payment method not found"),
        *_tool("update_reservation_flights", {**args, "payment_id": "certificate_2"},
               "Error: certificate cannot be used to update reservation"),
        *_tool("update_reservation_flights", {**args, "payment_id": "gift_card_3"}, {"reservation_id": "HATHAU"}),
    ], reward=1.0)
    calls = [t.turn for t in run.turns if t.type == "function_call" and t.name == "update_reservation_flights"]
    evidence = [e for e in compile_offline(run).evidence if e.decision.startswith("After update_reservation_flights")]
    assert [e.decision for e in evidence] == [
        f"After update_reservation_flights failed at turn {calls[0]} and again at turn {calls[1]}, called it again at "
        f"turn {calls[2]} with payment_id changed."], evidence
    assert f"the call at turn {calls[1]} another error (Error: certificate cannot be used" in evidence[0].support
    assert evidence[0].turns == calls
