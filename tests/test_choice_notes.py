"""A failed run whose change went through: the compilation page names each argument value the
agent picked among several that one earlier answer listed for the same field, when no user
message before the change holds it (in any form a user writes it) nor singles out its record —
and only then."""

from __future__ import annotations

import json

from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns

from wikitrace.compilers.offline import compile_offline

USER = {"user_id": "noor_haddad_4471", "name": {"first_name": "Noor", "last_name": "Haddad"},
        "payment_methods": {"credit_card_5520193": {"source": "credit_card", "brand": "visa", "last_four": "8812",
                                                    "id": "credit_card_5520193"},
                            "gift_card_7301146": {"source": "gift_card", "amount": 62, "id": "gift_card_7301146"}},
        "reservations": ["Q7LMZ2", "RB41XK", "T0PWE9"]}


def _cancel(user_says: str, cancelled: str = "RB41XK", success: bool = False) -> dict:
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "hi, i need to cancel one of my trips. user id noor_haddad_4471"),
        _call("get_user_details", {"user_id": "noor_haddad_4471"}, json.dumps(USER)),
        _msg("assistant", "Which reservation would you like to cancel?"),
        _msg("user", user_says),
        _msg("assistant", f"I will cancel {cancelled}. Shall I proceed?"),
        _msg("user", "yes"),
        _call("cancel_reservation", {"reservation_id": cancelled},
              json.dumps({"reservation_id": cancelled, "status": "cancelled"})),
        _msg("assistant", "Done."))
    return _record("cancel-1", "airline", "Cancel the trip to Denver.", turns, success)


def _notes(record: dict) -> list[str]:
    comp = compile_offline(_run(record))
    return [n for e in comp.evidence for n in e.notes if n.startswith("Where its values came from: ")]


def test_a_value_picked_among_listed_ones_unasked_is_named_with_the_others():
    (note,) = _notes(_cancel("the one to denver, not sure of the code"))
    assert note == ('Where its values came from: `reservation_id` "RB41XK" is one of the 3 values get_user_details\'s '
                    'answer (turn 2) gave `reservations`, and no user message names it (the '
                    'others: '
                    '"Q7LMZ2", "T0PWE9").')
    assert '"Q7LMZ2", "T0PWE9"' in note


def test_a_value_the_user_named_is_no_choice():
    assert _notes(_cancel("please cancel RB41XK")) == []


def test_a_success_page_says_nothing_of_choices():
    assert _notes(_cancel("the one to denver", success=True)) == []


def test_a_date_the_user_wrote_in_words_is_no_choice():
    listing = json.dumps([{"flight_number": "HAT310", "date": "2024-05-24"},
                          {"flight_number": "HAT310", "date": "2024-05-25"}])
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I want the HAT310 flight on May 25 instead."),
        _call("get_reservation_details", {"reservation_id": "RB41XK"}, listing),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "RB41XK", "cabin": "economy",
                                             "flights": [{"flight_number": "HAT310", "date": "2024-05-25"}]},
              json.dumps({"reservation_id": "RB41XK", "status": "updated"})))
    notes = _notes(_record("move-1", "airline", "Move the flight to May 25.", turns, False))
    assert not any("2024-05-25" in n for n in notes)


def test_a_call_that_sends_every_listed_value_keeps_a_set_and_chose_nothing():
    listing = json.dumps({"reservation_id": "RB41XK", "flights": [{"flight_number": "HAT028"},
                                                                 {"flight_number": "HAT277"}]})
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Upgrade reservation RB41XK to business please."),
        _call("get_reservation_details", {"reservation_id": "RB41XK"}, listing),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "RB41XK", "cabin": "business",
                                             "flights": [{"flight_number": "HAT028"}, {"flight_number": "HAT277"}]},
              json.dumps({"reservation_id": "RB41XK", "status": "updated"})))
    assert _notes(_record("up-1", "airline", "Upgrade to business.", turns, False)) == []


def test_the_note_passes_the_page_sentence_check():
    from test_page_sentences import Check, _note

    record = _cancel("the one to denver, not sure of the code")
    run = _run(record)
    comp = compile_offline(run)
    checked = 0
    for e in comp.evidence:
        for note in e.notes:
            _note(Check(run), note, e.turns[-1])
            checked += note.startswith("Where its values came from: ")
    assert checked == 1


def test_a_value_in_a_record_the_user_named_is_no_choice():
    saved = json.dumps({"user_id": "noor_haddad_4471", "saved_passengers": [
        {"first_name": "Ivan", "last_name": "Smith", "dob": "1986-03-14"},
        {"first_name": "Lena", "last_name": "Okafor", "dob": "1988-10-12"}]})
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Book the same trip for my friend Ivan Smith, his birthday is in my profile."),
        _call("get_user_details", {"user_id": "noor_haddad_4471"}, saved),
        _msg("user", "yes"),
        _call("book_reservation", {"user_id": "noor_haddad_4471", "passengers": [
            {"first_name": "Ivan", "last_name": "Smith", "dob": "1986-03-14"}]},
              json.dumps({"reservation_id": "ZZ12AB", "status": "booked"})))
    assert _notes(_record("book-1", "airline", "Book for Ivan Smith.", turns, False)) == []


def test_a_value_an_answer_also_states_alone_is_no_choice_from_that_answer():
    details = json.dumps({"reservation_id": "G72NSF", "origin": "DTW", "destination": "SEA",
                          "flights": [{"origin": "DTW", "destination": "PHX"}, {"origin": "PHX", "destination": "SEA"}]})
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Book the same trip as reservation G72NSF."),
        _call("get_reservation_details", {"reservation_id": "G72NSF"}, details),
        _msg("user", "yes"),
        _call("book_reservation", {"origin": "DTW", "destination": "SEA"},
              json.dumps({"reservation_id": "ZZ12AB", "status": "booked"})))
    assert _notes(_record("book-2", "airline", "Copy a trip.", turns, False)) == []


def _reservation(rid: str, flights: list[tuple[str, str]]) -> str:
    return json.dumps({"reservation_id": rid, "user_id": "noor_haddad_4471", "origin": "EWR", "destination": "ORD",
                       "flight_type": "one_way", "cabin": "economy",
                       "flights": [{"origin": "EWR", "destination": "ORD", "flight_number": f, "date": d, "price": 120}
                                   for f, d in flights],
                       "passengers": [{"first_name": "Noor", "last_name": "Haddad", "dob": "1979-02-11"}],
                       "payment_history": [{"payment_id": "gift_card_3318604", "amount": 240}]})


def test_a_value_is_never_put_down_to_another_records_look_up():
    """The agent read its own reservation, then another one that lists the date it sent among
    others: the note may not say the other reservation's answer offered it."""
    user = {"user_id": "noor_haddad_4471", "reservations": ["TR2WKM", "BD9XEN"],
            "payment_methods": {"gift_card_3318604": {"source": "gift_card", "id": "gift_card_3318604"},
                                "credit_card_8830162": {"source": "credit_card", "id": "credit_card_8830162"}}}
    flights = [{"flight_number": "HAT150", "date": "2024-05-25"}, {"flight_number": "HAT203", "date": "2024-05-25"}]
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "I'm noor_haddad_4471. I want to change the passengers on TR2WKM and move it to the flights"
                     " HAT150 and HAT203."),
        _call("get_user_details", {"user_id": "noor_haddad_4471"}, json.dumps(user)),
        _call("get_reservation_details", {"reservation_id": "TR2WKM"},
              _reservation("TR2WKM", [("HAT150", "2024-05-25"), ("HAT203", "2024-05-25")])),
        _call("get_reservation_details", {"reservation_id": "BD9XEN"},
              _reservation("BD9XEN", [("HAT300", "2024-05-24"), ("HAT301", "2024-05-25")])),
        _msg("assistant", "I will update TR2WKM with flights HAT150 and HAT203. Shall I proceed?"),
        _msg("user", "yes"),
        _call("update_reservation_flights", {"reservation_id": "TR2WKM", "cabin": "economy", "flights": flights,
                                             "payment_id": "credit_card_8830162"},
              _reservation("TR2WKM", [("HAT150", "2024-05-25"), ("HAT203", "2024-05-25")])))
    record = _record("move-2", "airline", "Change passengers on TR2WKM.", turns, False)
    notes = _notes(record)
    assert not any("turn 4" in n for n in notes), notes  # BD9XEN's answer is about another reservation
    # said once for the call, with the value that was a choice (a card among the two the profile lists)
    assert len(notes) == 1 and '`payment_id` "credit_card_8830162" is one of the 2 values get_user_details\'s answer (turn 2)' in notes[0]
    from test_page_sentences import Check, _note

    run = _run(record)
    for e in compile_offline(run).evidence:
        for note in e.notes:
            _note(Check(run), note, e.turns[-1])


def test_a_run_whose_queries_only_a_retry_was_given_still_counts_among_the_runs_that_sent_one():
    """"41 of the 62 successful runs here that sent a Search query" beside 64 that all sent one: a
    query whose words came from a retry's reflections is no choice across runs, but the run sent it."""
    from wikitrace.corpus.success_ways import _choices

    retry = _choices({"step": "step-0001", "patterns": ["did|Search", "query|Search|given"]})
    assert "faced|query|Search" in retry and "query|Search|given" not in retry
    shown = _choices({"step": "step-0002", "patterns": ["query|Search|shown"]})
    assert {"faced|query|Search", "query|Search|shown"} <= shown


def _paid(user_says: str) -> list[str]:
    """A tau-bench record: the task expected the gift card; the user asks for a card in ``user_says``
    and the agent pays with the credit card."""
    from tau_messages import agent, tool, user
    from test_expected_outputs import _load
    from test_trial_contrast import CARD, GIFT, POLICY, PROFILE, TRIP, _change

    traj = [{"role": "system", "content": POLICY}, user("Hi, I'm lena_vogt_3017 and I need to move flight Q4WZ8N."),
            *tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
            agent("HAT311 on 2024-06-10 is open. How would you like to pay?"), user(user_says),
            agent("Shall I go ahead?"), user("Yes."),
            *tool("update_reservation_flights", _change(CARD), dict(TRIP, flights=_change(CARD)["flights"])),
            agent("Done."), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": "You are lena_vogt_3017.",
            "actions": [{"name": "update_reservation_flights", "kwargs": _change(GIFT)}]}
    record = {"task_id": 41, "reward": 0.0, "trial": 0, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}
    import tempfile
    from pathlib import Path

    comp = compile_offline(_load(Path(tempfile.mkdtemp()), record))
    return [n for e in comp.evidence for n in e.notes if n.startswith("Where its values came from: ")]


def test_a_card_the_user_named_by_its_digits_is_said_with_their_words():
    """The change sent another card than the task expected: the user chose it by its last digits,
    so the page quotes the user's sentence, and its advice is not read as the agent's own pick."""
    (note,) = _paid("Please charge the card ending in 4418.")
    assert ('`payment_id` "credit_card_6604418" is one of the 2 values get_user_details\'s answer (turn 2) gave '
            '`id`, and the user wrote at turn 5 what only its record holds: "Please charge the card ending in 4418."'
            ) in note
    (plain,) = _paid("Any card on file is fine.")  # no words of its record: named as the answer it came from
    assert "the user wrote" not in plain and "get_user_details's answer (turn 2)" in plain
