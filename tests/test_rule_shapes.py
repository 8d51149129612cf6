"""What a quoted rule settles on a change, for rule shapes read by structure (compilers/record_rules.py,
rule_verdicts.allowing / reason_outside, rule_clauses.py): a part the rule says stays the same, a
value that must be the same across all of a list, a listed set of reasons against the one the user
gave, a case of the rule that lets the call through, and the one clause the record's values key.

Fixtures are tau-bench result files of a made-up harbour airline whose policy is our own wording."""

from __future__ import annotations

import pytest

from tau_messages import agent as _agent, tool as _tool, user as _user
from test_in_short import _check
from test_rule_reasons import _facts, _run, _turn

POLICY = """# Harbour Air Desk Policy

The current time is 2024-06-01 10:00:00 EST.

You help members book, change or cancel trips. You must ask for a clear yes before any change.

## Change trip

- Change flights: Basic economy trips cannot be moved to other flights. Other trips can be moved to new flights without changing the origin, destination, and trip type.

- Change cabin: every trip can move to another cabin while keeping its flights. Cabin class must be the same across all the flights of a trip; a cabin change for a single leg is not possible.

## Cancel trip

- Any booking can be cancelled within 48 hours of being made, or when the carrier cancelled a flight of it. Otherwise, economy bookings can be cancelled only if trip cover was bought and its condition is met, and business bookings can always be cancelled.

- Trip cover: it refunds a cancelled booking in full if the user has to cancel the trip given illness or weather reasons.

## Book trip

- Checked bag allowance: If the account holder is a gold member, 1 free checked bag for each basic economy traveller, 2 free checked bags for each economy traveller, and 3 free checked bags for each business traveller. Each extra baggage costs 40 dollars.
"""

LEGS = [{"origin": "ORD", "destination": "PHX", "flight_number": "HAT318", "date": "2024-06-12", "price": 210},
        {"origin": "PHX", "destination": "ORD", "flight_number": "HAT319", "date": "2024-06-15", "price": 190}]
TRIP = {"reservation_id": "K2PL7Q", "user_id": "tove_brand_5120", "origin": "ORD", "destination": "PHX",
        "flight_type": "round_trip", "cabin": "economy", "flights": LEGS,
        "passengers": [{"first_name": "Tove", "last_name": "Brand", "dob": "1979-02-11"}],
        "payment_history": [{"payment_id": "credit_card_5512093", "amount": 400}],
        "created_at": "2024-05-20T16:40:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}


def _leg(number, origin, destination, date):
    return {"flight_number": number, "origin": origin, "destination": destination, "date": date,
            "status": "available", "prices": {"economy": 150, "business": 600}}


SEARCHED = [[_leg("HAT500", "ORD", "LAS", "2024-06-13"), _leg("HAT501", "LAS", "ORD", "2024-06-16")],
            [_leg("HAT320", "ORD", "PHX", "2024-06-13"), _leg("HAT321", "PHX", "ORD", "2024-06-16")]]
FORBIDS = "The system prompt's rule (turn 0) forbids this change: "


def _moved(tmp_path, sent, expected):
    """A flight change of the round trip K2PL7Q, its answer the record as changed."""
    flights = [{"flight_number": f["flight_number"], "date": f["date"]} for f in sent]
    call = {"reservation_id": "K2PL7Q", "cabin": "economy", "flights": flights, "payment_id": "credit_card_5512093"}
    messages = [_user("Please move K2PL7Q a day later."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                *_tool("search_onestop_flight", {"origin": "ORD", "date": "2024-06-13"}, SEARCHED),
                _agent("I can move you to HAT500 and HAT501. Shall I?"), _user("Yes."),
                *_tool("update_reservation_flights", call, dict(TRIP, flights=sent))]
    want = dict(call, flights=[{"flight_number": n, "date": d} for n, d in expected])
    run = _run(tmp_path, messages, [{"name": "update_reservation_flights", "kwargs": want}], policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "arguments"]
    return run, fact


def test_a_change_that_moves_a_part_the_rule_keeps_is_said_to_be_forbidden_by_it(tmp_path):
    """The trip ended at PHX; after the call no flight of it goes to PHX, while the expected flights
    (shown by the search) do: the rule on keeping the destination is where the change went wrong."""
    run, fact = _moved(tmp_path, [dict(SEARCHED[0][0], price=150), dict(SEARCHED[0][1], price=150)],
                       [("HAT320", "2024-06-13"), ("HAT321", "2024-06-16")])
    looked, moved = _turn(run, "get_reservation_details"), _turn(run, "update_reservation_flights")
    assert (f"{FORBIDS}\"Other trips can be moved to new flights without changing the origin, destination, and trip "
            f"type.\"; here get_reservation_details (turn {looked}) gave `destination` \"PHX\", and after the call no "
            f"item of `flights` has `destination` \"PHX\" (its answer at turn {moved} lists \"LAS\" and \"ORD\"): the "
            "call changed `destination`.") in fact.text, fact.text
    assert {0, looked, moved} <= set(fact.turns)
    _check(run, fact.text, fact.turns)


@pytest.mark.parametrize("expected", [
    [("HAT500", "2024-06-13"), ("HAT321", "2024-06-16")],  # the task's own call leaves PHX too: not where it went wrong
    [("HAT320", "2024-06-13"), ("HAT777", "2024-06-16")],  # an expected flight no answer shows: not known to keep PHX
])
def test_no_breach_is_said_when_the_expected_call_is_not_seen_to_keep_the_rule(tmp_path, expected):
    _run_, fact = _moved(tmp_path, [dict(SEARCHED[0][0], price=150), dict(SEARCHED[0][1], price=150)], expected)
    assert "forbids" not in fact.text, fact.text


def test_a_change_that_keeps_the_parts_is_no_breach(tmp_path):
    run, fact = _moved(tmp_path, [dict(SEARCHED[1][0], price=150), dict(SEARCHED[0][1], price=150)],
                       [("HAT320", "2024-06-13"), ("HAT321", "2024-06-16")])
    assert "forbids" not in fact.text, fact.text  # PHX is still among the flights' destinations


def _recabined(tmp_path, flights, cabin="business"):
    call = {"reservation_id": "K2PL7Q", "cabin": cabin, "flights": flights, "payment_id": "credit_card_5512093"}
    messages = [_user("Please put K2PL7Q in business, the outbound leg only."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP),
                _agent("Shall I change the cabin?"), _user("Yes."),
                *_tool("update_reservation_flights", call, dict(TRIP, cabin=cabin, flights=LEGS[:len(flights)]))]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    return run, fact


def test_a_cabin_set_for_part_of_the_flights_breaks_the_same_across_all_rule(tmp_path):
    run, fact = _recabined(tmp_path, [{"flight_number": "HAT318", "date": "2024-06-12"}])
    looked = _turn(run, "get_reservation_details")
    assert (f"{FORBIDS}\"Cabin class must be the same across all the flights of a trip; a cabin change for a single leg "
            f"is not possible.\"; here the call sent `cabin` \"business\" (get_reservation_details (turn {looked}) gave "
            "\"economy\") with 1 of the record's 2 `flights` (HAT318 2024-06-12), leaving out HAT319 2024-06-15; its answer "
            f"at turn {_turn(run, 'update_reservation_flights')} has no HAT319 2024-06-15 in `flights`: the call dropped it.") \
        in fact.text, fact.text
    _check(run, fact.text, fact.turns)


@pytest.mark.parametrize("flights", [
    [{"flight_number": "HAT318", "date": "2024-06-12"}, {"flight_number": "HAT319", "date": "2024-06-15"}],  # all legs
    [{"flight_number": "HAT318", "date": "2024-06-12"}, {"flight_number": "HAT777", "date": "2024-06-16"}],  # a new list
])
def test_a_cabin_set_for_the_whole_list_is_no_breach(tmp_path, flights):
    _run_, fact = _recabined(tmp_path, flights)
    assert "forbids" not in fact.text, fact.text


def _cancelled(tmp_path, trip, talk):
    messages = [*talk, *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                _agent("Shall I cancel K2PL7Q?"), _user("Yes."),
                *_tool("cancel_reservation", {"reservation_id": "K2PL7Q"}, dict(trip, status="cancelled"))]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    return run, fact


def test_a_rule_whose_case_for_the_record_allows_the_call_is_said_to_allow_it(tmp_path):
    """A business booking: "business bookings can always be cancelled". The failed 48-hour span of the
    other case is not offered as the reason, and no rule is counted for the fact."""
    run, fact = _cancelled(tmp_path, dict(TRIP, cabin="business"), [_user("Please cancel K2PL7Q, my plans changed.")])
    looked = _turn(run, "get_reservation_details")
    assert fact.text.endswith(
        f"The system prompt's rule on cancel_reservation (turn 0) has a case that allows this change (`cabin` \"business\", "
        f"get_reservation_details (turn {looked})): \"…business bookings can always be cancelled.\""), fact.text
    assert "does not hold" not in fact.text and not fact.rule
    _check(run, fact.text, fact.turns)


def test_a_stated_reason_outside_the_rules_list_is_said_as_a_check(tmp_path):
    """An insured economy booking: the cover's condition lists illness or weather reasons; the user
    said the reason is a change of plans."""
    run, fact = _cancelled(tmp_path, dict(TRIP, insurance="yes"),
                           [_user("I need to cancel K2PL7Q. The reason is a change of plans.")])
    said = next(t.turn for t in run.turns if t.role == "user" and "change of plans" in (t.content or ""))
    assert (f" The user's reason, \"a change of plans\" (turn {said}), is not one of the ones the rule lists "
            "(\"illness or weather reasons\"): no user message before the call says \"illness\" or \"weather\".") \
        in fact.text, fact.text
    assert "\"Otherwise, economy bookings can be cancelled only if trip cover was bought and its condition is met …\"" \
        in fact.text  # the business case is cut from the quote: the record is economy
    _check(run, fact.text, fact.turns)


@pytest.mark.parametrize("said", [
    "Cancel K2PL7Q please, the reason is the weather warning for my route.",  # a listed one: no check said
    "Cancel K2PL7Q please, my plans changed.",  # no reason stated in so many words: the words only
    "As for the reason, I would rather give my seat to someone else.",  # "the reason" is no reason stated
])
def test_no_reason_check_where_the_user_may_have_given_a_listed_one_or_gave_none_plainly(tmp_path, said):
    _run_, fact = _cancelled(tmp_path, dict(TRIP, insurance="yes"), [_user(said)])
    assert "is not one of the ones the rule lists" not in fact.text, fact.text


def test_a_rule_with_a_case_per_value_is_quoted_at_the_records_case(tmp_path):
    """The bag rule lists a case per cabin; the booking is economy, so the economy case is quoted
    with the condition in front, the other cabins cut."""
    member = {"name": {"first_name": "Tove", "last_name": "Brand"}, "membership": "gold", "reservations": []}
    sent = {"user_id": "tove_brand_5120", "origin": "ORD", "destination": "PHX", "flight_type": "one_way",
            "cabin": "economy", "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}],
            "passengers": [{"first_name": "Tove", "last_name": "Brand", "dob": "1979-02-11"}],
            "payment_methods": [{"payment_id": "credit_card_5512093", "amount": 250}],
            "total_baggages": 3, "nonfree_baggages": 2, "insurance": "no"}
    messages = [*_tool("get_user_details", {"user_id": "tove_brand_5120"}, member),
                _user("Book HAT318 in economy with 3 bags. Yes."), *_tool("book_reservation", sent, dict(TRIP))]
    run = _run(tmp_path, messages, [{"name": "book_reservation", "kwargs": dict(sent, nonfree_baggages=1)}],
               policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "arguments"]
    assert "\"Checked bag allowance: If the account holder is a gold member … 2 free checked bags for each economy traveller …\"" in fact.text, \
        fact.text
    assert "business traveller" not in fact.text and "basic economy traveller" not in fact.text
    _check(run, fact.text, fact.turns)


def test_a_change_to_a_thing_the_rule_says_the_records_kind_cannot_change_is_forbidden(tmp_path):
    """A basic economy trip moved to new flights: "Basic economy trips cannot be moved to other
    flights" names the record's cabin, and the call's flights are not the record's."""
    trip = dict(TRIP, cabin="basic_economy")
    call = {"reservation_id": "K2PL7Q", "cabin": "basic_economy", "payment_id": "credit_card_5512093",
            "flights": [{"flight_number": "HAT320", "date": "2024-06-13"}, {"flight_number": "HAT319", "date": "2024-06-15"}]}
    messages = [_user("Please move K2PL7Q a day later."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                _agent("Shall I move it?"), _user("Yes."), *_tool("update_reservation_flights", call, trip)]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    looked = _turn(run, "get_reservation_details")
    assert fact.text.endswith(
        f"{FORBIDS}\"Basic economy trips cannot be moved to other flights.\"; here get_reservation_details (turn {looked}) "
        "gave `cabin` \"basic_economy\", and the call changed `flights` (it sent HAT320 2024-06-13 and HAT319 2024-06-15, "
        "where the record had HAT318 2024-06-12 and HAT319 2024-06-15)."), fact.text
    assert fact.text.count("Basic economy trips cannot") == 1  # the rule once, with its verdict
    _check(run, fact.text, fact.turns)


def test_a_cabin_change_that_keeps_the_flights_is_not_a_forbidden_flight_change(tmp_path):
    """The same basic economy trip, its cabin changed and its flights kept: the flight rule's
    "cannot be moved" is not broken (the cabin rule allows the change)."""
    trip = dict(TRIP, cabin="basic_economy")
    call = {"reservation_id": "K2PL7Q", "cabin": "economy", "payment_id": "credit_card_5512093",
            "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}, {"flight_number": "HAT319", "date": "2024-06-15"}]}
    messages = [_user("Please upgrade K2PL7Q to economy."),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, trip),
                _agent("Shall I upgrade it?"), _user("Yes."), *_tool("update_reservation_flights", call, TRIP)]
    run = _run(tmp_path, messages, [{"name": "get_reservation_details", "kwargs": {"reservation_id": "K2PL7Q"}}],
               policy=POLICY)
    [fact] = [f for f in _facts(run) if f.kind == "unexpected-change"]
    assert "forbids" not in fact.text, fact.text


@pytest.mark.parametrize("holds, quoted", [
    ({"silver", "economy"}, "If the renter is a silver member … 2 free bags per economy seat …"),
    ({"business"}, "If the renter is a silver member … 3 free bags per business seat."),
    (set(), "If the renter is a silver member, 1 free bag per basic seat, 2 free bags per economy seat, and 3 free "
            "bags per business seat."),  # no case keyed: the sentence whole
])
def test_the_clause_a_records_values_key_is_kept_with_its_condition(holds, quoted):
    """rule_clauses.clause_for, as the insight layer may call it: the cases no value keys are cut
    when they are parallel to a kept one; the condition in front stays."""
    from wikitrace.compilers.rule_clauses import clause_for

    sentence = ("If the renter is a silver member, 1 free bag per basic seat, 2 free bags per economy seat, and 3 free "
                "bags per business seat.")
    assert clause_for(sentence, lambda part: any(v in part.split() for v in holds)) == quoted


def test_a_span_the_record_is_inside_is_said_to_allow_the_call(tmp_path):
    """Booked 10 hours before the prompt's now: "can be cancelled within 48 hours of being made"
    let the cancellation through, whatever the cover."""
    run, fact = _cancelled(tmp_path, dict(TRIP, created_at="2024-06-01T00:00:00"), [_user("Please cancel K2PL7Q.")])
    looked = _turn(run, "get_reservation_details")
    assert fact.text.endswith(
        "The system prompt's rule on cancel_reservation (turn 0) has a case that allows this change (`created_at` \"2024-06-01T00:00:00\" "
        f"(10 hours before the current time the system prompt gives), get_reservation_details (turn {looked})): \"Any "
        "booking can be cancelled within 48 hours of being made …\""), fact.text
    assert "does not hold" not in fact.text and not fact.rule
    _check(run, fact.text, fact.turns)


def test_a_rule_that_opens_by_pointing_back_is_quoted_with_the_sentence_it_qualifies():
    # "Otherwise, economy bookings can be cancelled only if ..." alone reads as if no booking could be
    # cancelled without cover; the quote keeps the 48-hour sentence before it. What the rule is about
    # is still read off its own words: "booking" in the sentence before it does not tie it to a booking
    from wikitrace.compilers.rules import _rules_of, sentences

    rules = {r.sentence: r for r in _rules_of(POLICY)}
    quoted = next(s for s in rules if "Otherwise" in s)
    assert quoted.startswith("Any booking can be cancelled within 48 hours of being made, or when the carrier "
                             "cancelled a flight of it. Otherwise, economy bookings can be cancelled only if")
    assert "made" not in rules[quoted].words and "carrier" not in rules[quoted].words
    # the plain sentence list is unchanged: each sentence once, as written
    assert any(s.startswith("Otherwise, economy bookings") for s in sentences(POLICY))
