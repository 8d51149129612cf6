"""Where a failed change's values came from, said where it informs: a record the user described
(by values only it holds, or by names the agent tied to it) is the user's pick, not a choice made
unasked; a value two changes sent is described once on the page; a value is credited to the first
place the agent could have learned it; and an answer copied from a page with a word changed is
close to that page, not held by no turn. Each case beside a near miss that keeps the old note."""

from __future__ import annotations

import json
import re

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
                           "gave `reservations`, and no user message names it ("), note


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


def _two_changes(second_payment: str, second_yes: str = "yes") -> dict:
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
        _msg("user", second_yes),
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


def _rebooked(user_says_bags: bool, later: bool = False) -> dict:
    """A failed run that books the same trip twice with `nonfree_baggages` 1, a value the agent chose
    at its first (refused) booking: the answer of the booking that went through only repeats it,
    and so does the cancellation after it. Or the user wrote the paid bag: first, or (``later``)
    only after the first booking went through."""
    profile = {"user_id": "tomas_reyle_4410", "membership": "gold",
               "payment_methods": {"certificate_3308815": {"source": "certificate", "id": "certificate_3308815", "amount": 150},
                                   "credit_card_7720114": {"source": "credit_card", "id": "credit_card_7720114"}}}
    flights = [{"flight_number": "HAT512", "date": "2024-07-02", "origin": "SFO", "destination": "ORD", "price": 180}]
    booking = {"user_id": "tomas_reyle_4410", "origin": "SFO", "destination": "ORD", "flight_type": "one_way",
               "cabin": "economy", "flights": [{"flight_number": "HAT512", "date": "2024-07-02"}],
               "passengers": [{"first_name": "Tomas", "last_name": "Reyle", "dob": "1981-09-14"}],
               "insurance": "no", "total_baggages": 2, "nonfree_baggages": 1}

    def paid(*methods):
        return dict(booking, payment_methods=[{"payment_id": p, "amount": a} for p, a in methods])

    first = paid(("credit_card_7720114", 230))
    asked = ("I'm tomas_reyle_4410. Book me SFO to ORD one way on 2024-07-02, economy, two bags"
             + (", and I'll pay for 1 extra bag." if user_says_bags else "."))
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", asked),
        _call("get_user_details", {"user_id": "tomas_reyle_4410"}, json.dumps(profile)),
        _call("search_direct_flight", {"origin": "SFO", "destination": "ORD", "date": "2024-07-02"}, json.dumps(flights)),
        _msg("assistant", "HAT512 economy, two bags, $230. Shall I proceed?"),
        _msg("user", "yes"),
        _call("book_reservation", paid(("certificate_3308815", 150), ("certificate_9999999", 80)),
              "Error: payment method not found", is_error=True),
        _call("book_reservation", first, json.dumps(dict(first, reservation_id="QF7D2M"))),
        _msg("assistant", "Booked as QF7D2M, paid by card. Anything else?"),
        _msg("user", "Please pay with my certificate instead. Cancel it and book again"
             + (", still with 1 paid bag." if later else ".")),
        _call("cancel_reservation", {"reservation_id": "QF7D2M"},
              json.dumps(dict(first, reservation_id="QF7D2M", status="cancelled"))),
        _msg("assistant", "Cancelled. Rebook with certificate_3308815 and the card for the rest?"),
        _msg("user", "yes"),
        _call("book_reservation", paid(("certificate_3308815", 150), ("credit_card_7720114", 80)),
              json.dumps(dict(paid(("certificate_3308815", 150), ("credit_card_7720114", 80)), reservation_id="QF7D3N"))),
        _msg("assistant", "Done."))
    record = _record("rebook-bags", "airline", "Book a trip with two bags.", turns, False)
    expected = dict(paid(("certificate_3308815", 150), ("credit_card_7720114", 30)), nonfree_baggages=0)
    record["task"]["metadata"] = {"expected_calls": json.dumps([{"name": "book_reservation", "arguments": expected}])}
    return record


def _notes_in_order(record: dict, order: list[int]) -> dict[int, str]:
    """The notes ``source_notes`` gives the changes in ``order`` (a page may rank a later call
    first), each passing the page sentence check, and every back-reference pointing at a note
    that names only turns before the call referring to it."""
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.value_sources import source_notes

    run = _run(record)
    reading = read_run(run)
    calls = {c.n: c for c in reading.calls}
    notes = source_notes(reading, [calls[n] for n in order])
    for n, note in notes.items():
        _note(Check(run), note, n)
        for at in re.findall(r"as told for the call at turn (\d+)", note):
            named = [int(k) for k in re.findall(r"turn (\d+)", notes[int(at)])]
            assert all(k < n for k in named), (n, note, notes[int(at)])
    return notes


def test_a_value_the_agent_chose_is_not_credited_to_the_answer_that_repeated_it():
    notes = _notes_in_order(_rebooked(user_says_bags=False), [13, 7])
    # the later booking's note comes first on this page: its source is the agent's first booking
    # call (turn 6), not the answer of the turn-7 booking (which repeats what that call sent)
    assert "`nonfree_baggages` from the agent's own book_reservation call (turn 6) before any user message " \
           "or answer gave it" in notes[13], notes
    assert "book_reservation's answer (turn 7)" not in notes[13] and "cancel_reservation's answer" not in notes[13]
    # the earlier booking may refer back to it: every turn that note names came before turn 7
    assert "`nonfree_baggages` as told for the call at turn 13" in notes[7], notes


def test_a_note_naming_a_turn_after_a_call_is_not_referred_to_by_it():
    # near miss: the user wrote the paid bag, so both bookings credit the user (turn 1); a note
    # naming only that turn may be referred to from either call
    notes = _notes_in_order(_rebooked(user_says_bags=True), [13, 7])
    assert "`nonfree_baggages` from the user (turn 1)" in notes[13], notes
    assert "`nonfree_baggages` as told for the call at turn 13" in notes[7], notes


def test_a_note_naming_a_turn_after_the_call_is_not_referred_to_from_it():
    # the user wrote the paid bag at turn 9: true of the turn-13 booking, not of the turn-7 one,
    # which no turn before it showed (its refused first try is no source): it is left to the call's checks
    notes = _notes_in_order(_rebooked(user_says_bags=False, later=True), [13, 7])
    assert "`nonfree_baggages` from the user (turn 9)" in notes[13], notes
    assert "as told for the call at turn 13" not in notes[7] and "nonfree_baggages" not in notes[7], notes


def test_a_note_saying_no_user_named_a_value_is_not_referred_to_after_the_user_named_it():
    # both changes pay with the gift card the agent picked; before the second, the user names it,
    # so "no user message names it" no longer holds there and the second call says where it came from
    record = _two_changes("gift_card_5093318", "yes, and use gift_card_5093318 for the bags too")
    other = {"payment_id": "credit_card_4410927"}
    record["task"]["metadata"] = {"expected_calls": json.dumps([
        {"name": "update_reservation_flights", "arguments": {"reservation_id": "PL2K8C", "cabin": "business",
         "flights": [{"flight_number": "HATK8C", "date": "2024-06-03"}], **other}},
        {"name": "update_reservation_baggages", "arguments": {"reservation_id": "PL2K8C", "total_baggages": 2,
         "nonfree_baggages": 0, **other}}])}
    notes = _notes_in_order(record, [6, 9])
    assert '"gift_card_5093318" is one of the 2 values' in notes[6], notes
    assert "as told for the call at turn 6" not in notes[9] and "`payment_id` from the user (turn 8)" in notes[9], notes


def _bags(says: str) -> dict:
    """A failed run: the user asks for bags in words, the agent sends the count as the paid bags too,
    and the log's expected call has no paid bag (the user's tier covers them)."""
    trip = TRIPS[0]
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Hi, I'm ilse_marrow_2208, reservation VQ4N7A."),
        _call("get_reservation_details", {"reservation_id": "VQ4N7A"}, json.dumps(trip)),
        _msg("assistant", "What would you like to change?"),
        _msg("user", says),
        _msg("assistant", "I will add them, charged to credit_card_4410927. Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_baggages", {"reservation_id": "VQ4N7A", "total_baggages": 2, "nonfree_baggages": 2,
                                              "payment_id": "credit_card_4410927"}, json.dumps(trip)),
        _msg("assistant", "Done."))
    record = _record("bags", "airline", "Add two bags.", turns, False)
    record["task"]["metadata"] = {"expected_calls": json.dumps([
        {"name": "update_reservation_baggages", "arguments": {"reservation_id": "VQ4N7A", "total_baggages": 2,
                                                              "nonfree_baggages": 0, "payment_id": "credit_card_4410927"}}])}
    return record


def test_a_count_the_user_gave_for_all_bags_is_quoted_with_the_word_it_lacks():
    """"two checked bags" is a count of bags, not of paid bags: the note quotes the user's words
    and says they have no word for "nonfree", so no reader takes the 2 as the user's paid count."""
    (note,) = _source_notes(_bags("Please add two checked bags."))
    assert ('`nonfree_baggages` from the user (turn 4), whose words were "two checked bags", '
            'with no word for "nonfree"') in note, note
    # near miss: the user did say which kind; the words are quoted and nothing is said lacking
    (note,) = _source_notes(_bags("Please add two nonfree checked bags."))
    assert 'whose words were "two nonfree checked bags"' in note and "no word for" not in note, note


def test_an_id_a_look_up_showed_is_credited_to_it_not_to_a_changes_answer_repeating_it():
    """The passengers update answers with the whole reservation, its payment history among it: the
    gift card the bags are paid with was read from the profile, not from that echo."""
    from wikitrace.compilers.argument_places import sources
    from wikitrace.compilers.reading import read_run

    trip = TRIPS[1]
    paid = dict(trip, payment_history=[{"payment_id": "gift_card_5093318", "amount": 180}])
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I'm ilse_marrow_2208. Rename the passenger on PL2K8C to Ilse Marrow and add a bag."),
        _call("get_user_details", {"user_id": "ilse_marrow_2208"}, json.dumps(PROFILE)),
        _msg("assistant", "Rename to Ilse Marrow and add one bag paid with the gift card. Proceed?"), _msg("user", "yes"),
        _call("update_reservation_passengers", {"reservation_id": "PL2K8C", "passengers": [
            {"first_name": "Ilse", "last_name": "Marrow", "dob": "1990-01-01"}]}, json.dumps(paid)),
        _call("update_reservation_baggages", {"reservation_id": "PL2K8C", "total_baggages": 1, "nonfree_baggages": 0,
                                              "payment_id": "gift_card_5093318"}, json.dumps(dict(paid, total_baggages=1))),
        _msg("assistant", "All done."))
    r = read_run(_run(_record("echo", "airline", "Rename and add a bag.", turns, True)))
    bags = next(c for c in r.calls if c.name == "update_reservation_baggages")
    placed = sources(r, bags).tools
    assert "payment_id" in placed.get("get_user_details", []), placed
    assert "payment_id" not in placed.get("update_reservation_passengers", []), placed


def _paid_with(says: str) -> dict:
    """A failed run: the profile lists two gift cards with their balances, the user names one by
    its balance, and the agent pays with it."""
    profile = dict(PROFILE, payment_methods={
        "gift_card_5093318": {"source": "gift_card", "amount": 262, "id": "gift_card_5093318"},
        "gift_card_7710246": {"source": "gift_card", "amount": 45, "id": "gift_card_7710246"}})
    trip = TRIPS[1]
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I'm ilse_marrow_2208. Please move PL2K8C to business."),
        _call("get_user_details", {"user_id": "ilse_marrow_2208"}, json.dumps(profile)),
        _call("get_reservation_details", {"reservation_id": "PL2K8C"}, json.dumps(trip)),
        _msg("assistant", "How would you like to pay?"),
        _msg("user", says),
        _msg("assistant", "I will upgrade PL2K8C to business. Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "PL2K8C", "cabin": "business",
                                             "flights": [{"flight_number": "HATK8C", "date": "2024-06-03"}],
                                             "payment_id": "gift_card_5093318"},
              json.dumps(dict(trip, cabin="business"))),
        _msg("assistant", "All done."))
    return _record("paid-with", "airline", "Upgrade.", turns, False)


def test_a_card_the_user_named_by_its_balance_is_the_users_pick():
    """"The gift card with a $262 balance" names the one of two gift cards whose amount is 262 (a
    rater found "no user message names it" said of such a card); "the gift card" names neither,
    and a bare 262 with no currency sign is no amount the page takes as naming it."""
    assert not [n for n in _source_notes(_paid_with("Use the gift card with a $262 balance.")) if "gift_card_5093318" in n]
    for says in ("Use the gift card.", "Use the gift card, I have 262 points left."):
        assert any('`payment_id` "gift_card_5093318" is one of the 2 values' in n
                   for n in _source_notes(_paid_with(says))), says


def test_a_short_value_is_close_to_a_sentence_only_where_its_words_stand_near_each_other():
    """Round 16 (HotpotQA): "Palace of Westminster" was said to be close to a page whose one sentence
    named "St James's Palace" and, further on, "the City of Westminster": the agent's own name, not
    a rewording. A value of three main words or fewer is close only where they stand within its own
    length and two more words; a longer value is read by the sentence as before."""
    from wikitrace.compilers.near_words import near_words
    from wikitrace.compilers.reading import read_run

    def near(page: str, value: str):
        turns = _turns(_msg("user", "Where does the council meet?"),
                       _call("Search", "council", page), _call("Finish", value, ""))
        r = read_run(_run(_record("near-1", "hotpotqa", "Where does the council meet?", turns, False)))
        return near_words(r, value, 99)

    far = "It meets at St James's Palace, a royal residence in the heart of the City of Westminster."
    assert near(far, "Palace of Westminster") is None
    close = "It meets in the old Palace of Westminster Hall."
    assert near(close, "Palace Westminster")[1:] == (2, 2)
