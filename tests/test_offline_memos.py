"""The offline compiler's per-run and per-text shortcuts answer exactly what the plain test they
replace answers: which turns hold a value, which call first sent it, which answers list options,
which test runs passed. A page must not change because a look-up was made once."""

from __future__ import annotations

import json
from types import SimpleNamespace

from test_offline_content import _call, _msg, _record, _run, _turns

from wikitrace.compilers.option_choices import option_groups
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.value_sources import _first_sent, _holding
from wikitrace.runs import errors


def _reading():
    turns = _turns(
        _msg("system", "You help travellers with their bookings."),
        _msg("user", "I am mia_tan_11, please move flight HAT101 to\nthe 12th, economy"),
        _call("get_user_details", {"user_id": "mia_tan_11"}, json.dumps({"user_id": "mia_tan_11", "cabin": "economy",
                                                                      "reservations": ["K2P9QX"]})),
        _call("get_reservation_details", {"reservation_id": "K2P9QX"},
              json.dumps({"reservation_id": "K2P9QX", "flights": [{"flight_number": "HAT101", "date": "2024-05-12"}]})),
        _msg("user", "the one ending in x"),
        _call("update_reservation_flights", {"reservation_id": "K2P9QX", "cabin": "economy"}, "Error: no seats"),
        _call("update_reservation_flights", {"reservation_id": "K2P9QX", "cabin": "basic_economy"}, "{}"),
    )
    return read_run(_run(_record("move-1", "airline", "Move a flight.", turns, False)))


def test_the_facts_holding_a_value_are_those_whose_own_text_holds_it():
    r = _reading()
    for needle in ["hat101", "economy", "k2p9qx", "mia_tan_11", "x", "12th, economy", "to\nthe", "", "nowhere",
                   "x\nerror"]:  # ``x\nerror`` spans the end of one fact and the start of the next: held by none
        naive = [f for f in r.facts if needle in r.lower(f)]
        assert _holding(r, [needle]) == naive, needle  # in the facts' order
        places = r.facts_holding(needle)
        assert places is None or [r.facts[k] for k in places] == naive, needle
    both = _holding(r, ["hat101", "the one"])
    assert both == [f for f in r.facts if "hat101" in r.lower(f) or "the one" in r.lower(f)]
    assert _holding(r, ["x\nerror"]) == []


def test_the_first_call_that_sent_a_value_under_its_key_is_found_before_the_asking_call():
    r = _reading()
    first_change, second_change = [c for c in r.calls if c.name == "update_reservation_flights"]
    rid = SimpleNamespace(path="reservation_id", value="K2P9QX")
    # the look-up sent it first, under the same key; the change after it is not asked about
    assert _first_sent(r, second_change, rid).name == "get_reservation_details"
    assert _first_sent(r, r.calls[1], rid) is None  # nothing before the look-up itself sent it
    cabin = SimpleNamespace(path="cabin", value="Economy")  # compared in lower case
    assert _first_sent(r, second_change, cabin) is first_change.turn
    assert _first_sent(r, first_change, cabin) is None  # a call is never its own first sending
    other_key = SimpleNamespace(path="user_id", value="K2P9QX")
    assert _first_sent(r, second_change, other_key) is None


def test_option_groups_are_read_only_from_bracketed_options_side_by_side():
    page = "Search results\nColor [red] [blue]\nSize [S][M][L]\nsubmit [Buy Now]"
    groups = option_groups(page)
    assert [(g.label, g.options) for g in groups] == [("Size", ("S", "M", "L"))]
    assert option_groups("Color [red] [blue]") == []  # a space between them: no group
    assert option_groups(json.dumps({"flights": [["a", "b"], ["c"]]})) == []
    assert option_groups(None) == [] and option_groups("") == []


def test_a_passing_test_run_is_told_the_same_every_time_it_is_asked():
    passed = "collected 3 items\n\ntests/test_x.py ...\n\n==== 3 passed in 0.12s ===="
    failed = "tests/test_x.py F..\nFAILED tests/test_x.py::test_y - AssertionError\n== 1 failed, 2 passed in 0.1s =="
    for _ in range(2):
        assert errors.tests_passed(passed) == "3 passed in 0.12s"
        assert errors.tests_passed(failed) is None
    assert errors.tests_passed(None) is None and errors.tests_passed(["3 passed in 1s"]) is None
