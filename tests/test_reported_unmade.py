"""A chat run that made one change and then reported another it never called, in words other than
"has been added": the fact quotes the report's sentence and its turn, the turn a reader checks
first. The sentence must name what the missed tool acts on (bags for update_reservation_baggages),
which the made tool's name does not; a report that names only what was made, or a thing both tools
act on (the reservation, beside a missed cancel_reservation), is no such report."""

from __future__ import annotations

import pytest

from tau_messages import agent, tool, user
from test_expected_outputs import _load
from test_in_short import _check
from test_trial_contrast import GIFT, POLICY, PROFILE, TRIP, _change

from wikitrace.compilers.claimed_changes import unmade_claims
from wikitrace.compilers.in_short import in_short
from wikitrace.compilers.reading import read_run

BAGS = {"reservation_id": "Q4WZ8N", "total_baggages": 1, "nonfree_baggages": 0, "payment_id": GIFT}


def _record(closing: str, second: str = "update_reservation_baggages", second_args: dict | None = None) -> dict:
    """The user asks for a flight move and a bag; the agent moves the flight only, then says ``closing``."""
    traj = [{"role": "system", "content": POLICY}, user("Hi, I'm lena_vogt_3017. Move my Boston flight and add a bag."),
            *tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
            user("HAT311 on 2024-06-10, gift card, and one checked bag. Yes, go ahead."),
            *tool("update_reservation_flights", _change(GIFT), dict(TRIP, flights=_change(GIFT)["flights"])),
            agent(closing), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [],
            "instruction": "You are lena_vogt_3017. Move flight Q4WZ8N to HAT311 and add one checked bag.",
            "actions": [{"name": "update_reservation_flights", "kwargs": _change(GIFT)},
                        {"name": second, "kwargs": second_args or BAGS}]}
    return {"task_id": 31, "reward": 0.0, "trial": 0, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}


def _told(tmp_path, record):
    r = read_run(_load(tmp_path, record))
    return r, next(iter(unmade_claims(r)), None)


def test_a_report_naming_a_change_never_made_is_quoted_with_its_turn(tmp_path):
    r, told = _told(tmp_path, _record("Your flight has been updated with the new flight HAT311 and one checked bag.\n\n"
                                      "Anything else?"))
    assert told is not None and told.about == ["update_reservation_baggages"]
    assert told.text.startswith("The agent's report after its last change (update_reservation_flights, turn 5) "
                                "named the bag at turn 6 (\"Your flight has been updated with the new flight HAT311 "
                                "and one checked bag.\"), but no update_reservation_baggages call went through")
    assert told.turns == [6]
    assert told.text in [f.text for f in in_short(r)]  # and it leads the page's In short
    _check(r.run, told.text, told.turns)  # every clause holds of the log
    for wrong in (told.text.replace("turn 5)", "turn 4)"), told.text.replace("the bag", "the seat")):
        with pytest.raises(AssertionError):
            _check(r.run, wrong, told.turns)


def test_a_list_under_a_report_counts_line_by_line(tmp_path):
    _r, told = _told(tmp_path, _record("Done, here are the changes:\n- **Flight:** HAT311 on June 10\n"
                                       "- **Checked Bags:** one added"))
    assert told is not None and "(\"Checked Bags:** one added\")" not in told.text
    assert "(\"Checked Bags: one added\")" in told.text


def test_a_report_of_only_the_change_made_names_nothing_missed(tmp_path):
    _r, told = _told(tmp_path, _record("Your flight is now HAT311 on June 10, paid with the gift card."))
    assert told is None


def test_a_thing_the_made_change_acts_on_too_is_no_report_of_a_missed_one(tmp_path):
    cancel = {"reservation_id": "Q4WZ8N"}
    _r, told = _told(tmp_path, _record("Your reservation now flies on HAT311. I can help with anything else.",
                                       "cancel_reservation", cancel))
    assert told is None
