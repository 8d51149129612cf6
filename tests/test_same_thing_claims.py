"""A page states a mismatch, a record's field or a rule only about the thing it concerns: a field
of the same name on another record (a payment in a reservation's history, the reservation that
holds a user id) is not the argument's field or the record an id points at."""

from __future__ import annotations

import json

from test_page_sentences import _call, _checked, _native, _say

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n"
          "- Before taking any actions that update the booking database (booking, modifying flights, editing "
          "baggage, upgrading cabin class, or updating passenger information), you must list the action details "
          "and obtain explicit user confirmation (yes) to proceed.\n\n"
          "## Cancel flight\n\n- The agent must first obtain the user id, the reservation id, and the reason for "
          "cancellation (change of plan, airline cancelled flight, or other reasons)\n\n"
          "- All reservations can be cancelled within 24 hours of booking, or if the airline cancelled the flight. "
          "Otherwise, basic economy or economy flights can be cancelled only if travel insurance is bought and the "
          "condition is met, and business flights can always be cancelled.\n\n"
          "## Compensation\n\n- If the user is silver/gold member or has travel insurance or flies business, and "
          "complains about cancelled flights in a reservation, the agent can offer a certificate as a gesture "
          "after confirming the facts, with the amount being $100 times the number of passengers.\n")

RESERVATION = {"reservation_id": "ZP4LQ8", "user_id": "mara_venn_3021", "origin": "ORD", "destination": "PHL",
               "flight_type": "round_trip", "cabin": "economy",
               "flights": [{"origin": "ORD", "destination": "PHL", "flight_number": "HAT408", "date": "2024-05-10",
                            "price": 160}],
               "passengers": [{"first_name": "Mara", "last_name": "Venn", "dob": "1961-03-17"}],
               "payment_history": [{"payment_id": "gift_card_4410287", "amount": 260}],
               "created_at": "2024-05-08T19:01:02", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}


def _notes(turns, success=False) -> list[str]:
    return [n for e in _checked(_native("same-thing", turns, success)) for n in e.notes]


def test_a_certificate_amount_is_not_checked_against_a_payment_in_a_reservations_history():
    turns = [_say("system", POLICY),
             _say("user", "I'm a gold member, user id mara_venn_3021; my flight earlier this month was cancelled."),
             _call("get_reservation_details", {"reservation_id": "ZP4LQ8"}, json.dumps(RESERVATION)),
             _say("assistant", "I can offer a $100 certificate. Shall I send it?"),
             _say("user", "yes"),
             _call("send_certificate", {"user_id": "mara_venn_3021", "amount": 100},
                   "Certificate certificate_5078114 added to user mara_venn_3021 with amount 100.")]
    notes = _notes(turns)
    assert not any("gave that field as" in n for n in notes), notes
    # the certificate's own record, found by the id the call sent, is the same thing: its amount is checked
    wallet = {"name": {"first_name": "Mara"}, "payment_methods": {
        "certificate_1": {"source": "certificate", "amount": 150, "id": "certificate_1"},
        "certificate_2": {"source": "certificate", "amount": 40, "id": "certificate_2"}}}
    turns = [_say("system", POLICY), _say("user", "Book the flight, user id mara_venn_3021, with my certificate."),
             _call("get_user_details", {"user_id": "mara_venn_3021"}, json.dumps(wallet)),
             _say("assistant", "I will book it paying 305 with certificate_1. Confirm?"), _say("user", "yes"),
             _call("book_reservation", {"user_id": "mara_venn_3021", "payment_methods": [
                 {"payment_id": "certificate_1", "amount": 305}]}, json.dumps({"reservation_id": "HATHAT"}))]
    notes = _notes(turns)
    # said as that record's own field: a balance is what the record holds, not "the field's value"
    assert "`payment_methods[0].amount` is 305, where `certificate_1`'s record in the observation at turn 2 holds `amount` 150." in notes
    # a card paying the rest beside the certificate: the certificate's 150 is another item's amount, no difference of the card's
    turns[-1] = _call("book_reservation", {"user_id": "mara_venn_3021", "payment_methods": [
        {"payment_id": "certificate_1", "amount": 150}, {"payment_id": "credit_card_9", "amount": 155}]},
        json.dumps({"reservation_id": "HATHAT"}))
    notes = _notes(turns)
    assert not any("amount` 150" in n or "gave that field as 150" in n for n in notes), notes
    # a second passenger's dob is not the first's; a new booking's flight_type is not an old reservation's
    turns = [_say("system", POLICY), _say("user", "Book ORD to PHL one way for me and Kevin Smith (2001-04-12)."),
             _call("get_reservation_details", {"reservation_id": "ZP4LQ8"}, json.dumps(RESERVATION)),
             _say("assistant", "Booking ORD-PHL one way for Mara Venn and Kevin Smith. Confirm?"), _say("user", "yes"),
             _call("book_reservation", {"user_id": "mara_venn_3021", "flight_type": "one_way", "passengers": [
                 {"first_name": "Mara", "last_name": "Venn", "dob": "1961-03-17"},
                 {"first_name": "Kevin", "last_name": "Smith", "dob": "2001-04-13"}]}, json.dumps({"reservation_id": "HATHAT"}))]
    notes = _notes(turns)
    assert not any("gave that field as" in n for n in notes), notes


def test_a_record_that_refers_to_a_user_is_not_the_user_record():
    """A cancelled reservation holds the user's id: its status is not the status of the record the
    next booking's ``user_id`` points at. The reservation looked up by its own id is that record."""
    cancelled = dict(RESERVATION, status="cancelled")
    turns = [_say("system", POLICY),
             _say("user", "Cancel ZP4LQ8, user id mara_venn_3021, change of plan; then book me ORD to PHL."),
             _call("get_reservation_details", {"reservation_id": "ZP4LQ8"}, json.dumps(RESERVATION)),
             _say("assistant", "Cancelling ZP4LQ8, economy, no insurance. Confirm?"), _say("user", "yes"),
             _call("cancel_reservation", {"reservation_id": "ZP4LQ8"}, json.dumps(cancelled)),
             _say("assistant", "Booking ORD to PHL for mara_venn_3021. Confirm?"), _say("user", "yes"),
             _call("book_reservation", {"user_id": "mara_venn_3021", "origin": "ORD", "destination": "PHL"},
                   json.dumps(dict(RESERVATION, reservation_id="HATHAT")))]
    notes = _notes(turns)
    assert not any("`user_id` points at" in n for n in notes), notes
    assert ('The record `reservation_id` points at has `cabin` "economy" (get_reservation_details\'s answer, turn 2); '
            'a rule of the system prompt (turn 0) on this action names it: "All reservations can be cancelled within '
            '24 hours of booking, or if the airline cancelled the flight. Otherwise, basic economy or economy '
            'flights can be cancelled only if travel insurance is bought and the condition is met, and business '
            'flights can always be cancelled."') in notes, notes


def test_a_rule_is_quoted_for_a_call_only_when_it_names_that_calls_action():
    """The cancellation rule names economy flights, as a flight change's arguments do: it is a rule
    on cancelling, not on changing flights. The same rule is quoted for a cancellation."""
    turns = [_say("system", POLICY),
             _say("user", "Move my reservation ZP4LQ8 to HAT045 on 2024-05-20, economy, same payment."),
             _call("get_reservation_details", {"reservation_id": "ZP4LQ8"}, json.dumps(RESERVATION)),
             _say("assistant", "I will change ZP4LQ8 to HAT045 on 2024-05-20 in economy. Confirm?"), _say("user", "yes"),
             _call("update_reservation_flights", {"reservation_id": "ZP4LQ8", "cabin": "economy", "flights": [
                 {"flight_number": "HAT045", "date": "2024-05-20"}], "payment_id": "gift_card_4410287"},
                   json.dumps(dict(RESERVATION, flights=[{"flight_number": "HAT045", "date": "2024-05-20"}])))]
    notes = _notes(turns)
    assert not any("can be cancelled" in n for n in notes), notes
    turns[5] = _call("cancel_reservation", {"reservation_id": "ZP4LQ8"}, json.dumps(dict(RESERVATION, status="cancelled")))
    assert any("economy flights can be cancelled only if travel insurance" in n for n in _notes(turns))


def _two_changes(listing: str) -> list[dict]:
    booked = dict(RESERVATION, reservation_id="KM7PZQ", user_id="tova_reyes_5512")
    return [_say("system", POLICY),
            _say("user", "Upgrade Noah to business on KM7PZQ and add 2 checked bags, card on file."),
            _call("get_reservation_details", {"reservation_id": "KM7PZQ"}, json.dumps(booked)),
            _say("assistant", listing),
            _say("user", "Yes, everything looks correct. Please go ahead with the update."),
            _call("update_reservation_flights", {"reservation_id": "KM7PZQ", "cabin": "business", "flights": [
                {"flight_number": "HAT235", "date": "2024-05-18"}], "payment_id": "credit_card_2219450"},
                  json.dumps(dict(booked, cabin="business"))),
            _call("update_reservation_baggages", {"reservation_id": "KM7PZQ", "total_baggages": 2,
                                                  "nonfree_baggages": 0, "payment_id": "credit_card_2219450"},
                  json.dumps(dict(booked, cabin="business", total_baggages=2)))]


def test_one_yes_to_a_listing_of_several_changes_confirms_every_change_made_before_the_next_message():
    listing = ("To proceed, here are the details of the changes:\n\n1. **Upgrade Cabin Class:**\n   - New Cabin: "
               "Business\n   - Additional Cost: $600\n\n2. **Add Checked Bags:**\n   - Total Checked Bags: 2\n"
               "   - Non-Free Checked Bags: 0\n\n3. **Payment Method:** Credit Card on File\n\n"
               "Please confirm if everything looks correct.")
    breach = "obtain explicit user confirmation (yes) to proceed.\" — here"
    notes = _notes(_two_changes(listing))
    assert not any(breach in n for n in notes), notes
    # a listing that named the cabin change only: the yes still covers the calls made before the user speaks again
    notes = _notes(_two_changes("I will upgrade KM7PZQ to business for $600. Please confirm."))
    assert not any(breach in n for n in notes), notes
    # agreeing, then agreeing again to a follow-up question
    turns = _two_changes(listing)
    turns[4:5] = [_say("user", "I'd like to proceed with these changes. Could the bag fee be waived?"),
                  _say("assistant", "Fees are not waived, but I can go ahead. Shall I proceed with this approach?"),
                  _say("user", "Yes, please go ahead with that approach.")]
    notes = _notes(turns)
    assert not any(breach in n for n in notes), notes
    # a question between the listing and the yes: the agent asked again, and the last answer agreed
    turns[4:7] = [_say("user", "Actually, what is my membership level?"), _say("assistant", "You are gold. Proceed?"),
                  _say("user", "Yes.")]
    assert not any(breach in n for n in _notes(turns))
    # the question left unanswered by a yes: both changes went ahead after a message that agreed to nothing
    turns[5:7] = [_say("assistant", "You are gold.")]
    notes = _notes(turns)
    assert sum("(turn 4) did not agree to a change" in n for n in notes) == 2, notes


def test_a_search_for_a_name_an_error_listed_counts_as_taken_from_an_earlier_answer():
    """"Words that neither the task text it was given nor any earlier answer held": an error's "Similar: [...]"
    is an answer the run read, so a query built from a name it listed is not the run's own words."""
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.run_patterns import decisions_of

    turns = [_say("system", "Solve a question answering task with interleaving Thought, Action, Observation steps."),
             _say("user", "Question: Which airport serves the city where the Marrowby race course is?"),
             _call("Search", "Marrowby race course", "Could not find [Marrowby race course]. Similar: "
                   "['Marrowby', 'Marrowby Jockey Club', 'Fenwold Airport'].", is_error=True),
             _call("Search", "Fenwold Airport", "Fenwold Airport is a public airport in Hollins Cross."),
             _call("Finish", "Fenwold Airport", "Answer is CORRECT")]
    patterns = decisions_of(read_run(_native("listed-name", turns, True)))
    assert "query|Search|shown" in patterns and "query|Search|own" not in patterns, patterns
    # a query with a word no answer and not the task held is still the run's own
    turns[3] = _call("Search", "Hollins horse airport", "Fenwold Airport is a public airport in Hollins Cross.")
    assert "query|Search|own" in decisions_of(read_run(_native("own-words", turns, True)))


def test_a_wrong_answer_and_the_expected_one_are_shown_whole_when_short():
    """"answered Finish[1982-1988], expected "1988"": masking the numbers hid the whole lesson."""
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.runs.native import run_from_dict

    turns = [_say("system", "Solve a question answering task with interleaving Thought, Action, Observation steps."),
             _say("user", "Question: In which year did the magazine Vortex Bytes stop being published?"),
             _call("Search", "Vortex Bytes (magazine)", "Vortex Bytes was a computer magazine published from 1982 to 1990."),
             _call("Finish", "1982-1990", "Answer is INCORRECT")]
    record = {"run_id": "qa-1", "task": {"id": "qa-1", "instruction": turns[1]["content"], "task_type": "hotpotqa",
                                        "metadata": {"gold_answer": "1990"}},
              "outcome": {"success": False, "ended_by": "agent"}, "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}
    details = [i.detail for i in compile_offline(run_from_dict(record, "test.jsonl:1")).insights]
    assert 'turn 3: answered Finish[1982-1990], expected "1990"' in details, details
    # a long answer is cut, but around where it departs from what was expected
    record["task"]["metadata"]["gold_answer"] = "12th Oresund Film Festival"
    turns[3] = _call("Finish", "the Oresund Film Festival held in the harbour town in May of the year in which "
                     "the film premiered to a long standing ovation", "Answer is INCORRECT")
    record["turns"] = [dict(t, turn=i) for i, t in enumerate(turns)]
    (detail,) = [i.detail for i in compile_offline(run_from_dict(record, "test.jsonl:1")).insights
                 if "answered Finish" in i.detail]
    assert detail.endswith(', expected "12th Oresund Film Festival"') and "[the Oresund Film Festival held" in detail


def _qa(run_id: str, calls: list[dict], success: bool, ended_by: str = "agent"):
    from wikitrace.runs.native import run_from_dict

    turns = [_say("system", "Solve a question answering task with interleaving Thought, Action, Observation steps."),
             _say("user", "Question: Which city is the Marrowby race course in?"), *calls]
    return run_from_dict({"run_id": run_id, "task": {"id": run_id, "instruction": turns[1]["content"],
                                                     "task_type": "hotpotqa", "metadata": {"gold_answer": "Hollins Cross"}},
                          "outcome": {"success": success, "ended_by": ended_by},
                          "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}, "test.jsonl:1")


def test_a_qa_run_is_never_told_in_words_for_changes():
    """A QA run's Finish[...] is its answer, not a change: no "state-changing call", no "before any
    change", no "make the change" on its pages or lessons."""
    from wikitrace.compilers.offline import compile_offline

    ok = _qa("qa-ok", [_call("Search", "Marrowby", "Marrowby is a race course in Hollins Cross."),
                       _call("Finish", "Hollins Cross", "Answer is CORRECT")], True)
    stuck = _qa("qa-stuck", [_call("Search", "Marrowby", "Marrowby is a race course and sales company."),
                             _call("Lookup", "city", "(Result 1 / 1) It hosts the Blue Grass Stakes.")],
                False, "harness: step limit")
    idle = _qa("qa-idle", [_call("Search", "Marrowby", "Marrowby is a race course and sales company.")], False)
    for run in (ok, stuck, idle):
        comp = compile_offline(run)
        text = " ".join([e.decision + " " + (e.support or "") + " " + " ".join(e.notes) for e in comp.evidence]
                        + [i.guideline + " " + i.applicability + " " + i.detail for i in comp.insights])
        for words in ("state-changing", "before any change", "make the change", "changes state"):
            assert words not in text, (run.run_id, words, text)
    assert any(i.key == "idle|lookups" and "give the answer then" in i.guideline for i in compile_offline(stuck).insights)
    assert any(e.support == "The run was judged a failure without giving an answer." for e in compile_offline(idle).evidence)
    final = next(e for e in compile_offline(ok).evidence if e.decision.startswith("Called Finish"))
    assert final.decision == "Called Finish at turn 3; the answer that ended the run."


def test_a_value_two_records_share_is_credited_to_the_record_that_showed_the_rest():
    """A date the changed flights share with another reservation looked up later is no sign the
    agent took the flights from that other reservation: the page names the reservation whose
    answer showed every value of the argument, and only it."""
    from wikitrace.compilers.value_sources import provenance
    from wikitrace.compilers.reading import read_run

    own = dict(RESERVATION, reservation_id="TR2WKM", flights=[
        {"origin": "EWR", "destination": "ORD", "flight_number": "HAT412", "date": "2024-05-25", "price": 120},
        {"origin": "EWR", "destination": "ORD", "flight_number": "HAT437", "date": "2024-05-25", "price": 95}])
    other = dict(RESERVATION, reservation_id="BD9XEN", flights=[
        {"origin": "JFK", "destination": "SEA", "flight_number": "HAT455", "date": "2024-05-25", "price": 300}])
    flights = [{"flight_number": "HAT412", "date": "2024-05-25"}, {"flight_number": "HAT437", "date": "2024-05-25"}]
    turns = [_say("system", POLICY), _say("user", "Move my Newark to Chicago trip to economy, user mara_venn_3021."),
             _call("get_reservation_details", {"reservation_id": "TR2WKM"}, json.dumps(own)),
             _call("get_reservation_details", {"reservation_id": "BD9XEN"}, json.dumps(other)),
             _say("assistant", "TR2WKM: HAT412 and HAT437 on May 25, to economy. Shall I proceed?"),
             _say("user", "Yes, go ahead."),
             _call("update_reservation_flights", {"reservation_id": "TR2WKM", "cabin": "economy", "flights": flights},
                   json.dumps(dict(own, cabin="economy")))]
    r = read_run(_native("shared-date", turns, False))
    change = next(c for c in r.calls if c.name == "update_reservation_flights")
    said = provenance(r, change).split("`flights` from ")[1]
    assert said.startswith("get_reservation_details's answer (turn 2)") and "(turn 3)" not in said, said
    # a value only the second record showed still names it beside the first
    flights[1]["flight_number"] = "HAT455"
    r = read_run(_native("shared-date", turns, False))
    said = provenance(r, next(c for c in r.calls if c.name == "update_reservation_flights")).split("`flights` from ")[1]
    assert said.startswith("get_reservation_details's answer (turn 2) and get_reservation_details's answer (turn 3)"), said
