"""Where a failed change's values came from, said where it informs: a record the user described
(by values only it holds, or by names the agent tied to it) is the user's pick, not a choice made
unasked; a value two changes sent is described once on the page; a value is credited to the first
place the agent could have learned it; and an answer copied from a page with a word changed is
close to that page, not held by no turn. Each case beside a near miss that keeps the old note."""

from __future__ import annotations

import json

from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns
from test_page_sentences import Check, _note

from wikitrace.compilers.offline import compile_offline

HEAD = "Where its values came from: "


def _trip(rid: str, origin: str, destination: str, day: str, cabin: str = "economy") -> dict:
    return {"reservation_id": rid, "user_id": "ilse_marrow_2208", "origin": origin, "destination": destination,
            "flight_type": "one_way", "cabin": cabin,
            "flights": [{"origin": origin, "destination": destination, "flight_number": "HAT" + rid[-3:],
                         "date": day, "price": 140}],
            "payment_history": [{"payment_id": "credit_card_4410927", "amount": 140}]}


TRIPS = [_trip("VQ4N7A", "SEA", "SLC", "2024-06-11"), _trip("PL2K8C", "PDX", "BOI", "2024-06-03"),
         _trip("ZT9M3E", "PDX", "DEN", "2024-06-20")]
PROFILE = {"user_id": "ilse_marrow_2208", "name": {"first_name": "Ilse", "last_name": "Marrow"},
           "payment_methods": {"credit_card_4410927": {"source": "credit_card", "id": "credit_card_4410927"},
                               "gift_card_5093318": {"source": "gift_card", "id": "gift_card_5093318"}},
           "reservations": [t["reservation_id"] for t in TRIPS]}


def _cancel(says: str, agent_says: str = "Shall I cancel PL2K8C?", chosen: str = "PL2K8C") -> dict:
    """A failed run: the profile lists three reservations, each is looked up, the user describes
    one in words, and the agent cancels ``chosen``."""
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Hi, I'm ilse_marrow_2208 and I need to cancel a trip."),
        _call("get_user_details", {"user_id": "ilse_marrow_2208"}, json.dumps(PROFILE)),
        *[_call("get_reservation_details", {"reservation_id": t["reservation_id"]}, json.dumps(t)) for t in TRIPS],
        _msg("assistant", "Which trip is it?"),
        _msg("user", says),
        _msg("assistant", agent_says),
        _msg("user", "yes"),
        _call("cancel_reservation", {"reservation_id": chosen}, json.dumps(dict(TRIPS[1], status="cancelled"))),
        _msg("assistant", "It is cancelled."))
    return _record("cancel-trip", "airline", "Cancel the trip.", turns, False)


def _source_notes(record: dict) -> list[str]:
    run = _run(record)
    comp = compile_offline(run)
    # the note of where values came from, in its present form or the one before it ("chose … unasked")
    notes = [n for e in comp.evidence for n in e.notes if n.startswith(HEAD) or " unasked " in n]
    for e in comp.evidence:  # every note passes the page sentence check: each place and listing verified
        for n in e.notes:
            _note(Check(run), n, e.turns[-1])
    return notes


def test_a_trip_the_user_described_by_its_route_and_date_is_not_chosen_unasked():
    # the route codes and the day hold only for PL2K8C among the three looked-up trips
    assert _source_notes(_cancel("The one from PDX to BOI on June 3rd.")) == []


def test_words_two_of_the_records_share_single_out_none_of_them():
    # near miss: PDX is the origin of two trips, so the user's words leave the choice to the agent
    (note,) = _source_notes(_cancel("The one from PDX."))
    assert note.startswith(HEAD + '`reservation_id` "PL2K8C" is one of the 3 values get_user_details\'s answer (turn 2) '
                           "gave `reservations`, and no user message names it or what only its record holds"), note


def test_names_the_agent_tied_to_the_record_in_one_message_are_the_users_pick():
    said = "The one from Portland to Boise."  # city names: no answer holds them, the agent matched them
    tied = "Your trip from Portland to Boise is PL2K8C. Shall I cancel it?"
    assert _source_notes(_cancel(said, tied)) == []
    record = _cancel(said, tied)  # a change the expected call does not make cites the message that tied them
    record["task"]["metadata"] = {"expected_calls": json.dumps([
        {"name": "cancel_reservation", "arguments": {"reservation_id": "ZT9M3E"}}])}
    assert _source_notes(record) == [HEAD + '`reservation_id` "PL2K8C" is one of the 3 values get_user_details\'s answer '
                                     "(turn 2) gave `reservations`, and the agent tied it at turn 8 to names the user wrote."]


def test_a_message_naming_two_of_the_records_ties_no_name_to_either():
    said = "The one from Portland."
    both = "From Portland you have PL2K8C and ZT9M3E. Shall I cancel PL2K8C?"
    (note,) = _source_notes(_cancel(said, both))
    assert '"PL2K8C" is one of the 3 values' in note


def test_a_name_an_answer_holds_is_no_tie():
    # the user's own name is in the profile: the agent repeating it beside the id matched nothing
    said = "Sorry, Ilse Marrow here again, not sure which one."
    tied = "Thanks Ilse, I'll cancel PL2K8C for you. Shall I?"
    (note,) = _source_notes(_cancel(said, tied))
    assert '"PL2K8C" is one of the 3 values' in note


def _two_changes(second_payment: str) -> dict:
    """A failed run with two changes of one reservation, each paid with a card the agent picked
    among the profile's two without the user naming either."""
    trip = TRIPS[1]
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I'm ilse_marrow_2208. Please move PL2K8C to business and add two bags."),
        _call("get_user_details", {"user_id": "ilse_marrow_2208"}, json.dumps(PROFILE)),
        _call("get_reservation_details", {"reservation_id": "PL2K8C"}, json.dumps(trip)),
        _msg("assistant", "I will upgrade PL2K8C to business. Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "PL2K8C", "cabin": "business",
                                             "flights": [{"flight_number": "HATK8C", "date": "2024-06-03"}],
                                             "payment_id": "gift_card_5093318"},
              json.dumps(dict(trip, cabin="business"))),
        _msg("assistant", "Now two bags on PL2K8C. Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_baggages", {"reservation_id": "PL2K8C", "total_baggages": 2,
                                              "nonfree_baggages": 0, "payment_id": second_payment},
              json.dumps(dict(trip, cabin="business", total_baggages=2))),
        _msg("assistant", "All done."))
    return _record("two-changes", "airline", "Upgrade and add bags.", turns, False)


def test_a_value_two_changes_sent_is_described_once_and_referred_to_after():
    notes = _source_notes(_two_changes("gift_card_5093318"))
    described = [n for n in notes if '`payment_id` "gift_card_5093318" is one of the 2 values' in n]
    referred = [n for n in notes if "`payment_id` as told for the call at turn " in n]
    assert len(described) == 1 and len(referred) == 1, notes
    # the reference names the call whose note described it, which the page shows
    turn = int(referred[0].rsplit("turn ", 1)[1].rstrip("."))
    assert turn in (6, 9) and f"turn {turn}" not in described[0].split("(turn")[0]


def test_two_different_values_are_each_described():
    notes = _source_notes(_two_changes("credit_card_4410927"))
    assert not any("as told for the call" in n for n in notes), notes
    assert any('"gift_card_5093318" is one of the 2' in n for n in notes)
    assert any('"credit_card_4410927" is one of the 2' in n for n in notes)


def _expected_move(user_first: bool) -> dict:
    """A failed change whose `cabin` differs from the expected call: the user wrote "business" in
    the task's second message, after a look-up whose answer held it too (or not at all)."""
    trip = _trip("PL2K8C", "PDX", "BOI", "2024-06-03", cabin="business")
    other = _trip("VQ4N7A", "SEA", "SLC", "2024-06-11", cabin="business")
    says = "Please put PL2K8C in business." if user_first else "Please upgrade PL2K8C."
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I'm ilse_marrow_2208."),
        _call("get_reservation_details", {"reservation_id": "VQ4N7A"}, json.dumps(other)),
        _call("get_reservation_details", {"reservation_id": "PL2K8C"}, json.dumps(trip)),
        _msg("user", says),
        _msg("assistant", "Upgrade PL2K8C to business? Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "PL2K8C", "cabin": "business",
                                             "flights": [{"flight_number": "HATK8C", "date": "2024-06-03"}],
                                             "payment_id": "credit_card_4410927"}, json.dumps(trip)))
    record = _record("move-cabin", "airline", "Upgrade the trip.", turns, False)
    record["task"]["metadata"] = {"expected_calls": json.dumps([{"name": "update_reservation_flights", "arguments": {
        "reservation_id": "PL2K8C", "cabin": "economy", "flights": [{"flight_number": "HATK8C", "date": "2024-06-03"}],
        "payment_id": "credit_card_4410927"}}])}
    return record


def test_a_value_the_user_wrote_is_credited_to_the_user_not_to_a_record_that_also_held_it():
    (note,) = _source_notes(_expected_move(user_first=True))
    assert note == HEAD + "`cabin` from the user (turn 4).", note


def test_a_scalar_several_records_hold_is_credited_to_none_of_them():
    # near miss: nobody wrote "business"; two reservations' answers held it: neither is its source
    assert _source_notes(_expected_move(user_first=False)) == []


QUESTION = "What did the painter Oda Venn work as besides painting?"
PAGE = ("Oda Venn (1871-1930) was a Danish painter, etcher and illustrator. "
        "She studied in Copenhagen and later taught drawing.")


def _answer(given: str) -> dict:
    turns = [_msg("user", QUESTION), _call("Search", "Oda Venn", PAGE),
             _call("Finish", given, "Episode finished"), {"type": "episode_over"}]
    record = _record("qa-venn", "hotpotqa", QUESTION, _turns(*turns), False)
    record["task"]["metadata"] = {"gold_answer": "etcher and illustrator"}
    return record


def _answer_notes(given: str) -> list[str]:
    run = _run(_answer(given))
    comp = compile_offline(run)
    for e in comp.evidence:
        for n in e.notes:
            _note(Check(run), n, e.turns[-1])
    return [n for e in comp.evidence for n in e.notes if n.startswith("`argument` is ")]


def test_an_answer_copied_from_a_page_with_a_plural_added_is_close_to_that_page():
    (note,) = _answer_notes("etchers and illustrators")
    assert note == '`argument` is "etchers and illustrators", close to what Search returned at turn 1 (2 of its 2 main words).'
    assert "no earlier observation" not in note


def test_an_answer_whose_words_no_turn_holds_is_still_held_by_none():
    # near miss: one of its two main words is on the page, which is not most of them
    (note,) = _answer_notes("sculptor and etcher")
    assert note == '`argument` is "sculptor and etcher": no earlier observation, user message or call holds this value.'


def test_words_scattered_over_sentences_are_not_close():
    # near miss: each word is on the page, but in different sentences
    (note,) = _answer_notes("drawing illustrators")
    assert note.endswith("no earlier observation, user message or call holds this value.")


def test_a_described_record_the_expected_call_does_not_change_is_said_to_be_the_users_pick():
    record = _cancel("The one from PDX to BOI on June 3rd.")
    record["task"]["metadata"] = {"expected_calls": json.dumps([
        {"name": "cancel_reservation", "arguments": {"reservation_id": "ZT9M3E"}}])}
    (note,) = _source_notes(record)
    assert note == (HEAD + '`reservation_id` "PL2K8C" is one of the 3 values get_user_details\'s answer (turn 2) '
                    "gave `reservations`, and the user wrote at turn 7 what only its record holds.")


def test_plural_endings_read_as_their_word():
    from wikitrace.compilers.near_words import main_words

    assert main_words("magazines, classes and boxes of songs") == ["magazine", "class", "box", "song"]
    assert main_words("women's glass") == ["women", "glass"]
