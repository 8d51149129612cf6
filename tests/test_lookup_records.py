"""What a page says about a look-up's JSON answer, through the work kept once per run or per
answer: the fields the agent's later words name (record_words), the record an id points at
(record_notes._record_holding), and the plain fields shown within their width (page_items)."""

from __future__ import annotations

import json

from test_offline_content import _call, _msg, _record, _turns

from wikitrace.compilers.page_items import FIELDS_WIDTH, shown_answer
from wikitrace.compilers.record_notes import _record_holding
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.record_words import named_fields
from wikitrace.runs.native import run_from_dict

FIRST = json.dumps({"reservation_id": "ZQ81KD", "cabin": "basic_economy", "insurance": "no",
                    "status": "active", "origin": "JFK", "membership": "gold"})
SECOND = json.dumps({"reservation_id": "PL20XA", "cabin": "business", "insurance": "yes", "status": "active"})


def _reading():
    turns = _turns(
        _msg("system", "You are an airline agent. Cancel only bookings made in the last 24 hours."),
        _msg("user", "Hi, I want to cancel ZQ81KD and check PL20XA. My membership is gold."),
        _call("get_reservation_details", {"reservation_id": "ZQ81KD"}, FIRST),
        _msg("assistant", "ZQ81KD is booked in basic economy and has no insurance. Do you want to go on?"),
        _msg("user", "Yes, and look at the other one."),
        _call("get_reservation_details", {"reservation_id": "PL20XA"}, SECOND),
        _msg("assistant", "PL20XA is in the business cabin, unlike the basic economy one. Insurance: yes, so it can go."),
        _call("cancel_reservation", {"reservation_id": "PL20XA"}, '{"status": "cancelled"}'),
    )
    return read_run(run_from_dict(_record("t-1", "airline", "Cancel a booking.", turns, True), "t.jsonl:1"))


def test_fields_the_agents_later_words_name_each_look_up_its_own():
    r = _reading()
    first, second = (c for c in r.calls if c.name == "get_reservation_details")
    named = {key: (value, [n for n, _s in quoted]) for key, value, quoted, _listed in named_fields(r, first)}
    # cabin as words, a one-word value beside its field's name; a value the user said before (gold),
    # an id, and a value the agent never wrote are left out; the sentence at turn 6 came after the
    # other reservation was fetched and names only that one: it is about PL20XA, not this record
    assert named == {"cabin": ("basic_economy", [3]), "insurance": ("no", [3])}
    # the second look-up quotes only what came after it, though the run's sentences are split
    # once; "yes" is what the user had said before it
    named = {key: (value, [n for n, _s in quoted]) for key, value, quoted, _listed in named_fields(r, second)}
    assert named == {"cabin": ("business", [6])}
    assert named_fields(r, first)[0][0] == "cabin"  # asked again: the same answer


def test_words_after_another_record_was_fetched_are_about_this_one_only_when_they_name_it():
    """Three reservations looked up, then "downgrade all passengers from business to economy": that
    is about the last one fetched, not each whose cabin was business (tau step-0165); a sentence
    naming an earlier one by its id is about it alone, and the first sentence after each look-up
    counts as always."""
    records = [("AAVMM8", "business"), ("MQHHT6", "economy"), ("GV1N64", "business")]
    turns = _turns(
        _msg("system", "You are an airline agent."),
        _msg("user", "Hi, I want to downgrade a trip."),
        *[_call("get_reservation_details", {"reservation_id": rid},
                json.dumps({"reservation_id": rid, "cabin": cabin, "status": "active"})) for rid, cabin in records],
        _msg("assistant", "Cabin change: downgrade all passengers from business to economy class. Shall I?"),
        _msg("assistant", "Also, AAVMM8 is in the business cabin as well."),
    )
    r = read_run(run_from_dict(_record("t-3", "airline", "Downgrade.", turns, True), "t.jsonl:1"))
    looked = [c for c in r.calls if c.name == "get_reservation_details"]
    quoted = [{key: [n for n, _s in q] for key, _v, q, _l in named_fields(r, c)} for c in looked]
    assert quoted == [{"cabin": [6]}, {}, {"cabin": [5]}], quoted


def test_a_message_about_another_record_the_tool_fetched_is_not_about_this_one():
    """Two reservations looked up, then a message on upgrading the first "to economy": the second
    reservation's cabin is economy, but the message names only the first, so none of its sentences
    (those naming no record included) is quoted for the second (tau step-0184). A message naming
    the second is about it, however many records were fetched after it."""
    turns = _turns(
        _msg("system", "You are an airline agent."),
        _msg("user", "Cancel XEHM4B and 59XX6W."),
        _call("get_reservation_details", {"reservation_id": "XEHM4B"},
              json.dumps({"reservation_id": "XEHM4B", "cabin": "basic_economy", "status": "active"})),
        _call("get_reservation_details", {"reservation_id": "59XX6W"},
              json.dumps({"reservation_id": "59XX6W", "cabin": "economy", "status": "active"})),
        _msg("assistant", "Upgrading the cabin of XEHM4B to economy allows the cancellation. "
                          "Step one: change the cabin class from basic economy to economy."),
        _call("get_reservation_details", {"reservation_id": "7WPL39"},
              json.dumps({"reservation_id": "7WPL39", "cabin": "business", "status": "active"})),
        _msg("assistant", "About 59XX6W: it stays as it is. This one is in the economy cabin, so it can go."),
    )
    r = read_run(run_from_dict(_record("t-4", "airline", "Cancel.", turns, True), "t.jsonl:1"))
    first, second, _third = (c for c in r.calls if c.name == "get_reservation_details")
    assert {key: [n for n, _s in q] for key, _v, q, _l in named_fields(r, first)} == {"cabin": [4]}
    assert {key: [n for n, _s in q] for key, _v, q, _l in named_fields(r, second)} == {"cabin": [6]}


def test_a_value_that_is_one_item_of_a_list_is_said_as_held_not_as_the_field():
    """A user's record lists two reservations and the agent names one: the field "holds" it; saying
    the field "is" it was false (tau step-0107: `reservations` is ["M05KNL", "UHDAHF"])."""
    from wikitrace.compilers.record_words import named_field_notes

    user = json.dumps({"name": "Ana Li", "reservations": ["M05KNL", "UHDAHF"], "membership": "silver"})
    turns = _turns(
        _msg("system", "You are an airline agent."),
        _msg("user", "Hi, I am ana_li_1. I want to change a flight."),
        _call("get_user_details", {"user_id": "ana_li_1"}, user),
        _msg("assistant", "I see your reservation UHDAHF and your silver membership. Which flight?"),
    )
    r = read_run(run_from_dict(_record("t-2", "airline", "Change a flight.", turns, True), "t.jsonl:1"))
    notes = named_field_notes(r, next(c for c in r.calls if c.name == "get_user_details"))
    # one sentence names both: one note, each field said as it holds the value
    assert notes == ['`reservations` holds "UHDAHF" and `membership` is "silver" in this answer, and the agent\'s own '
                     'words name them: turn 3: "I see your reservation UHDAHF and your silver membership."'], notes


def test_a_field_of_one_item_is_named_only_by_words_about_that_item():
    """A gift card stored as a payment method is not what "no voucher or gift card" offers in
    compensation (tau step-0068): a field of one item of a collection is named by a sentence that
    also names the item (its key, another of its values: "$67"), never by its words alone."""
    from wikitrace.compilers.record_words import named_field_notes

    user = json.dumps({"membership": "regular", "payment_methods": {
        "gift_card_3871331": {"source": "gift_card", "amount": 67, "id": "gift_card_3871331"}}})
    for said, named in (("Since you are a regular member, I cannot offer a voucher or gift card.", False),
                        ("Your payment methods: Gift Card: $67.", True)):
        turns = _turns(
            _msg("system", "You are an airline agent."),
            _msg("user", "Hi, I am ana_li_1. My flight was cancelled."),
            _call("get_user_details", {"user_id": "ana_li_1"}, user),
            _msg("assistant", said),
        )
        r = read_run(run_from_dict(_record("t-4", "airline", "Ask for compensation.", turns, True), "t.jsonl:1"))
        notes = named_field_notes(r, next(c for c in r.calls if c.name == "get_user_details"))
        assert any(n.startswith('`source` is "gift_card"') for n in notes) is named, (said, notes)
        if not named:  # a field of the record itself needs no item: the member's tier is named
            assert any(n.startswith('`membership` is "regular"') for n in notes), notes


def test_the_record_an_id_points_at_is_the_first_in_order():
    answer = {"user_id": "U1", "reservations": [{"id": "R1", "cabin": "economy", "legs": [{"id": "R1", "n": 2}]},
                                                  {"id": "R2", "cabin": "business"}],
              "other": {"id": "R1", "cabin": "first"}}
    assert _record_holding(answer, "reservation_id", "R1")["cabin"] == "economy"  # an object before its parts
    assert _record_holding(answer, "reservation_id", "R2")["cabin"] == "business"
    assert _record_holding(answer, "reservation_id", "R9") is None
    # an object that merely refers to the value under the argument's name is no record of it...
    assert _record_holding(answer, "user_id", "U1") is None
    # ...unless it is the whole answer of a call that was sent that value (the look-up of it)
    assert _record_holding(answer, "user_id", "U1", looked_up=True) is answer
    # a key not named as an id matches only the whole answer it was looked up with
    assert _record_holding(answer, "cabin", "R1") is None
    # another answer with the same shape is looked at on its own
    again = {"reservations": [{"id": "R1", "cabin": "basic_economy"}]}
    assert _record_holding(again, "reservation_id", "R1")["cabin"] == "basic_economy"
    assert _record_holding([answer, again], "reservation_id", "R1")["cabin"] == "economy"


def test_plain_fields_shown_up_to_their_width():
    fields = {f"field_{k}": "v" * 40 for k in range(12)}
    text = shown_answer(json.dumps({"nested": [1, 2], **fields}))
    shown = json.loads(text.split(": ", 1)[1])
    assert text.startswith("an object; the first of its plain top-level fields: ")
    assert list(shown) == list(fields)[:len(shown)]
    assert len(json.dumps(shown, ensure_ascii=False)) <= FIELDS_WIDTH
    one_more = dict(shown, **{f"field_{len(shown)}": fields[f"field_{len(shown)}"]})
    assert len(json.dumps(one_more, ensure_ascii=False)) > FIELDS_WIDTH
    few = {"cabin": "économie", "bags": 2, "insured": False, "note": None}
    assert shown_answer(json.dumps(few)) == f"an object; its plain top-level fields: {json.dumps(few, ensure_ascii=False)}"
