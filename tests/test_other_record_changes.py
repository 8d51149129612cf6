"""A change of a record the task did not expect its tool on is not set against the expected call on
another record (compilers/expected_calls.py ``other_records``): when the task expected the tool on
two or more records and the run changed a fourth one with other flights, comparing its flights with
one of theirs picks one at random and reads as a wrong version of it. A call that differs from the
one expected call in its record alone is still a wrong pick, and says so.

Fixtures are tau-bench result files of the made-up travel desk of tests/test_rule_reasons.py."""

from __future__ import annotations

from tau_messages import tool, user
from test_rule_reasons import TRIP, _run

from wikitrace.compilers.offline import compile_offline


def _flights(number: str, date: str) -> list[dict]:
    return [{"flight_number": number, "date": date}]


def _upgrade(record: str, number: str, date: str) -> dict:
    return {"reservation_id": record, "cabin": "business", "payment_id": "credit_card_5512093",
            "flights": _flights(number, date)}


def _notes(run) -> list[str]:
    return [n for e in compile_offline(run).evidence for n in e.notes]


def _upgraded(tmp_path, number: str, date: str) -> list[str]:
    """The notes of a run that upgraded Z9Y8X7 (on ``number`` of ``date``), where the task expected
    upgrades of K2PL7Q (HAT318, 2024-06-12) and M4RT1N (HAT402, 2024-06-20)."""
    expected = [{"name": "update_reservation_flights", "kwargs": _upgrade("K2PL7Q", "HAT318", "2024-06-12")},
                {"name": "update_reservation_flights", "kwargs": _upgrade("M4RT1N", "HAT402", "2024-06-20")}]
    messages = [user("Upgrade my trips to business please. Yes, go ahead."),
                *tool("update_reservation_flights", _upgrade("Z9Y8X7", number, date),
                      dict(TRIP, reservation_id="Z9Y8X7", cabin="business"))]
    return _notes(_run(tmp_path, messages, expected))


def test_a_change_of_another_record_is_not_set_against_one_of_the_expected_records(tmp_path):
    notes = _upgraded(tmp_path, "HAT271", "2024-06-14")
    assert ("The log records the update_reservation_flights calls the task expected, on `reservation_id` "
            "\"K2PL7Q\" and \"M4RT1N\" only: this one changed another record.") in notes, notes
    assert not any("where this call sent" in n for n in notes), notes  # no flight of theirs set against its own


def test_a_call_that_differs_in_its_record_alone_is_a_wrong_pick(tmp_path):
    notes = _upgraded(tmp_path, "HAT318", "2024-06-12")
    assert any(n.startswith("The log records the update_reservation_flights call the task expected with "
                            "`reservation_id` \"K2PL7Q\" where this call sent \"Z9Y8X7\"") for n in notes), notes
