"""The sum a quoted rule makes of a count the change sent (compilers/rule_counts.py): said where
the rule's words, the call and the records settle every term and the sum explains the difference
from the expected call; absent otherwise.

Fixtures are tau-bench result files (OpenAI chat messages, the task's expected ``actions``) of a
made-up travel desk whose policy is our own wording."""

from __future__ import annotations

import re

import pytest
from fixture_runs import RUNS, relabeled

from tau_messages import tool as _tool, user as _user
from test_rule_reasons import _run as _desk_run
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.model import Run

POLICY = """# Travel Desk Policy

The current time is 2024-06-01 10:00:00 EST.

## Book trip

- Bag allowance: If the account holder is a bronze member, 0 free checked bags for each basic economy passenger, 1 free checked bag for each economy passenger. If the account holder is a platinum member, 2 free checked bags for each basic economy passenger, 4 free checked bags for each economy passenger. Each extra baggage costs 40 dollars.

- Payment: A booking may use at most one voucher and at most two cards.
"""

PASSENGER = {"first_name": "Tove", "last_name": "Brand", "dob": "1979-02-11"}
COMPANION = {"first_name": "Ilse", "last_name": "Brand", "dob": "1981-07-30"}


def _member(tier: str) -> dict:
    return {"name": {"first_name": "Tove", "last_name": "Brand"}, "dob": "1979-02-11", "membership": tier,
            "payment_methods": {"credit_card_5512093": {"source": "credit_card", "id": "credit_card_5512093"}},
            "reservations": []}


def _booking(passengers, total, nonfree) -> dict:
    return {"user_id": "tove_brand_5120", "origin": "ORD", "destination": "PHX", "flight_type": "one_way",
            "cabin": "economy", "flights": [{"flight_number": "HAT318", "date": "2024-06-12"}],
            "passengers": passengers, "payment_methods": [{"payment_id": "credit_card_5512093", "amount": 210}],
            "total_baggages": total, "nonfree_baggages": nonfree, "insurance": "no"}


def _run(tmp_path, tier, sent, expected, policy=POLICY, look_up=True) -> Run:
    messages = ([*_tool("get_user_details", {"user_id": "tove_brand_5120"}, _member(tier))] if look_up else []) + [
        _user("Book HAT318 on June 12 in economy, with my checked bags. Yes, go ahead."),
        *_tool("book_reservation", sent, dict(sent, reservation_id="K2PL7Q"))]
    return _desk_run(tmp_path, messages, [{"name": "book_reservation", "kwargs": expected}], policy=policy)


def _lead(run: Run) -> str:
    return " ".join(f.text for f in compile_offline(run).in_short)


def test_the_allowance_the_tier_gives_is_summed_against_the_count_sent(tmp_path):
    """Platinum, one economy passenger: 4 free bags, so none of 3 is extra; the call charged 1."""
    run = _run(tmp_path, "platinum", _booking([PASSENGER], 3, 1), _booking([PASSENGER], 3, 0))
    assert ("By that rule, 1 economy passenger (the call's `passengers`) gets 4 × 1 = 4 free checked bags; of the 3 "
            "the call sent as `total_baggages`, 0 are beyond that, and the call sent `nonfree_baggages` 1.") in _lead(run)


def test_the_allowance_counts_every_passenger_the_call_sends(tmp_path):
    """Bronze, two economy passengers: 1 free bag each, so 1 of 3 is extra; the call charged all 3."""
    run = _run(tmp_path, "bronze", _booking([PASSENGER, COMPANION], 3, 3), _booking([PASSENGER, COMPANION], 3, 1))
    assert ("By that rule, 2 economy passengers (the call's `passengers`) get 1 × 2 = 2 free checked bag; of the 3 "
            "the call sent as `total_baggages`, 1 is beyond that, and the call sent `nonfree_baggages` 3.") in _lead(run)


@pytest.mark.parametrize("case", ["expected-disagrees", "sent-agrees", "no-tier", "unit-names-no-list", "no-whole"])
def test_no_sum_is_said_where_a_term_is_open_or_it_explains_nothing(tmp_path, case):
    sent, expected, policy, look_up = _booking([PASSENGER], 3, 1), _booking([PASSENGER], 3, 0), POLICY, True
    if case == "expected-disagrees":  # the task read the rule otherwise: the sum is not the deciding fact
        expected = _booking([PASSENGER], 3, 2)
    elif case == "sent-agrees":  # the count is the rule's: the difference lies elsewhere
        sent, expected = _booking([PASSENGER], 5, 1), _booking([PASSENGER], 5, 0)
    elif case == "no-tier":  # which tier's sentence applies is not settled
        look_up = False
    elif case == "unit-names-no-list":  # "traveller" names none of the call's lists
        policy = POLICY.replace("passenger,", "traveller,").replace("passenger.", "traveller.")
    elif case == "no-whole":  # the whole is sent under a name of another thing: nothing to take the allowance from
        sent["count_of_items"] = sent.pop("total_baggages")
        expected["count_of_items"] = expected.pop("total_baggages")
    lead = _lead(_run(tmp_path, "platinum", sent, expected, policy, look_up))
    assert "nonfree_baggages" in lead  # the difference itself is still reported
    assert "By that rule" not in lead


def test_the_sum_is_absent_from_every_importer_fixture_without_such_a_rule():
    """No other format's run gets the sentence; where a fixture has it, its sum checks out against the call."""
    said = 0
    for run in [relabeled(r, success) for r in RUNS for success in (False, True)]:
        for fact in compile_offline(run).in_short:
            for m in re.finditer(r"By that rule, (\d+) .*?gets? (\d+) × (\d+) = (\d+) .*?; of the (\d+) the call sent "
                                 r"as `(\w+)`, (\d+) (?:is|are) (beyond|within) that, and the call sent `(\w+)` (\d+)\.",
                                 fact.text):
                items, per, times, allowance, total, _, owed, side, _, sent = m.groups()
                assert run.source.get("format") == "tau-bench", run.run_id
                assert items == times and int(per) * int(times) == int(allowance)
                want = max(0, int(total) - int(allowance)) if side == "beyond" else min(int(total), int(allowance))
                assert int(owed) == want and int(sent) != want
                said += 1
    assert said == 0  # no fixture's policy has such a rule: the sentence is absent, not merely consistent


CHANGE_POLICY = POLICY + """
## Change trip

- Change flights: A trip in basic economy cannot be moved to other flights.

- Change baggage: The user can add checked bags but cannot remove them.
"""


def _trip(total, nonfree) -> dict:
    trip = _booking([PASSENGER], total, nonfree)
    trip.pop("payment_methods")
    return dict(trip, reservation_id="K2PL7Q", user_id="tove_brand_5120")


def _bags_run(tmp_path, sent_nonfree, expected_nonfree, policy=CHANGE_POLICY):
    """A reservation looked up, moved to another flight (the change's answer is the record as it now
    stands), then given bags: the allowance is defined under booking, the tier in the owner's record."""
    moved = dict(_trip(1, 0), flights=[{"flight_number": "HAT320", "date": "2024-06-12"}])
    bags = {"reservation_id": "K2PL7Q", "total_baggages": 3, "nonfree_baggages": sent_nonfree,
            "payment_id": "credit_card_5512093"}
    messages = [*_tool("get_user_details", {"user_id": "tove_brand_5120"}, _member("platinum")),
                *_tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, _trip(1, 0)),
                _user("Move K2PL7Q to HAT320 and make it 3 checked bags. Yes, go ahead."),
                *_tool("update_reservation_flights", {"reservation_id": "K2PL7Q", "cabin": "economy",
                                                      "flights": moved["flights"],
                                                      "payment_id": "credit_card_5512093"}, moved),
                *_tool("update_reservation_baggages", bags, dict(moved, total_baggages=3,
                                                                 nonfree_baggages=sent_nonfree))]
    return _desk_run(tmp_path, messages, [{"name": "update_reservation_baggages",
                                           "kwargs": dict(bags, nonfree_baggages=expected_nonfree)}], policy=policy)


def test_an_allowance_defined_under_another_action_is_summed_for_a_change_of_bags(tmp_path):
    """The change's own section says nothing keyed on the records about bags; the booking section's
    allowance, the owner's tier and the record as the flight change returned it settle the sum."""
    lead = _lead(_bags_run(tmp_path, 2, 0))
    assert "\"If the account holder is a platinum member" in lead
    assert "get_user_details (turn" in lead and "`membership` \"platinum\"" in lead
    assert ("By that rule, 1 economy passenger (the record's `passengers`) gets 4 × 1 = 4 free checked bags; of the 3 "
            "the call sent as `total_baggages`, 0 are beyond that, and the call sent `nonfree_baggages` 2.") in lead


def test_a_rule_from_another_section_is_not_quoted_where_its_sum_does_not_give_the_expected_value(tmp_path):
    """The task expected 1 extra bag where the allowance gives 0: the rule was read otherwise than
    the task's, so the booking section's sentence is no fact about this change."""
    lead = _lead(_bags_run(tmp_path, 2, 1))
    assert "nonfree_baggages" in lead
    assert "platinum member" not in lead and "By that rule" not in lead
