"""A page says no earlier turn held an argument's value only when no earlier turn holds it in any
common rendering: a price inside another record's JSON, a total stated by an error, a date the
user spelled out. A default (0, false, an empty text) is never said to be unsourced."""

from __future__ import annotations

import json

from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns

from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.renderings import is_default, rendering_pattern

NOWHERE = "no earlier observation, user message or call holds this value"


def _notes(record: dict) -> str:
    comp = compile_offline(_run(record))
    return "\n".join(n for e in comp.evidence for n in e.notes) + "\n" + "\n".join(e.support for e in comp.evidence)


def _reservation(rid: str, price: int, dob: str = "1961-03-17") -> str:
    return json.dumps({"reservation_id": rid, "user_id": "ana_perez_1180", "origin": "ORD", "destination": "PHL",
                       "flight_type": "one_way", "cabin": "economy",
                       "flights": [{"origin": "ORD", "destination": "PHL", "flight_number": "HAT271",
                                    "date": "2024-05-10", "price": price}],
                       "passengers": [{"first_name": "Ana", "last_name": "Perez", "dob": dob}],
                       "payment_history": [{"payment_id": "gift_card_6627091", "amount": price + 60}],
                       "created_at": "2024-05-08T19:01:02", "total_baggages": 1, "nonfree_baggages": 0,
                       "insurance": "no"})


def _certificate_run() -> dict:
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Hi, I'm ana_perez_1180. My flight was cancelled and I missed a meeting, I want compensation."),
        _call("get_user_details", {"user_id": "ana_perez_1180"},
              json.dumps({"user_id": "ana_perez_1180", "membership": "gold", "reservations": ["ZP4LQ8"]})),
        _call("get_reservation_details", {"reservation_id": "ZP4LQ8"}, _reservation("ZP4LQ8", 100)),
        _msg("assistant", "I can offer a certificate as a gesture. Shall I go ahead?"),
        _msg("user", "yes please"),
        _call("send_certificate", {"user_id": "ana_perez_1180", "amount": 100},
              "Certificate certificate_5078114 added to user ana_perez_1180 with amount 100."),
        {"type": "episode_over"})
    return _record("cert", "airline", "compensation", turns, False)


def test_a_number_inside_another_fields_json_is_held():
    # 100 is the flight's price, not a field named `amount`: still no page may say no turn held it
    assert NOWHERE not in _notes(_certificate_run())


def test_a_number_nowhere_before_is_still_told():
    record = _certificate_run()
    record["turns"][6]["arguments"]["amount"] = 250
    assert f"`amount` is 250: {NOWHERE}." in _notes(record)


def _booking_run(said: str, pay: int) -> dict:
    booking = {"user_id": "ana_perez_1180", "origin": "ORD", "destination": "PHL", "flight_type": "one_way",
               "cabin": "economy", "flights": [{"flight_number": "HAT271", "date": "2024-05-26"}],
               "passengers": [{"first_name": "Ana", "last_name": "Perez", "dob": "1961-03-17"},
                              {"first_name": "Kevin", "last_name": "Smith", "dob": "2001-04-12"}],
               "payment_methods": [{"payment_id": "gift_card_6627091", "amount": pay}],
               "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
    # the first try left Kevin out: only the user's words can have shown his date of birth
    first = dict(booking, passengers=booking["passengers"][:1],
                 payment_methods=[{"payment_id": "gift_card_6627091", "amount": 300}])
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"Book ORD to PHL on May 26 for me and my friend Kevin Smith, {said}. Use my gift card."),
        _call("get_user_details", {"user_id": "ana_perez_1180"},
              json.dumps({"user_id": "ana_perez_1180", "dob": "1961-03-17",
                          "payment_methods": {"gift_card_6627091": {"source": "gift_card", "amount": 900}}})),
        _call("book_reservation", first, "Error: payment amount does not add up, total price is 305, but paid 300.",
              is_error=True),
        _msg("assistant", "Booking again with the right total."),
        _call("book_reservation", booking, _reservation("HATHAT", pay, "2001-04-12")),
        {"type": "episode_over"})
    return _record("book", "airline", "book", turns, False)


def test_a_total_an_error_stated_and_a_date_the_user_spelled_are_held():
    notes = _notes(_booking_run("born on April 12, 2001", 305))
    assert NOWHERE not in notes  # 305 from the error; the dob as the user wrote it; bags 0 a default
    notes = _notes(_booking_run("born on the 12th of April 2001", 305))
    assert f'`passengers[1].dob` is "2001-04-12": {NOWHERE}' not in notes


def test_a_date_no_turn_spelled_is_told_and_zero_never_is():
    notes = _notes(_booking_run("born in spring", 311))
    # no turn held these: the page still flags them (here beside the values turn 2 gave those fields)
    assert '`passengers[1].dob` is "2001-04-12", but' in notes
    # the amount beside the record that holds the number turn 2 gave: the card's balance, not an amount paid
    assert "`payment_methods[0].amount` is 311, where `gift_card_6627091`'s record in the observation at turn 2" \
           " holds `amount` 900." in notes
    assert "`total_baggages`" not in notes and "`nonfree_baggages`" not in notes


def test_renderings_are_derived_from_the_value():
    price = rendering_pattern("1000")
    assert all(price.search(t) for t in ("paid $1,000.", "1000.00 dollars", '{"price": 1000}', "refund of -1000"))
    assert not any(price.search(t) for t in ("10000", "1000.5", "1.1000", "2,1000"))
    day = rendering_pattern("2024-05-03")
    assert all(day.search(t) for t in ("on May 3rd", "3 may 2024", "2024/5/3", "05/03/2024", "May 3, 2024"))
    assert not any(day.search(t) for t in ("May 30", "13 May", "2024-05-31"))
    assert rendering_pattern("basic_economy").search("Basic Economy fares")
    assert rendering_pattern("Viking").search("the culture of the vikings") and rendering_pattern("India").search("Indian")
    assert not rendering_pattern("HAT27").search("HAT271") and not rendering_pattern("Li").search("a list of limits")
    assert is_default(0) and is_default("") and is_default(False) and is_default("0.0") and not is_default(5)
