"""A user's word about their own record ("I'm a gold member") that the run never checked, though
the log records look-ups it could have made, is said on a failed run's page: the agent answered
from the claim. A run that looked the record up, or a log that records no expected look-up, or
one without a person in it, gets no such sentence."""

from __future__ import annotations

import json

from test_page_sentences import _call, _say
from test_same_thing_claims import POLICY

from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.native import run_from_dict

LOOKS = [{"name": "get_user_details", "arguments": {"user_id": "ona_reyes_4410"}},
         {"name": "get_reservation_details", "arguments": {"reservation_id": "QK7T2P"}}]
CLAIM = "Hi, I'm ona_reyes_4410. How many bags can I check on QK7T2P? I'm pretty sure I'm a gold member."


def _run(turns: list[dict], expected: list[dict] | None):
    task = {"id": "bags", "instruction": "Ask about bags.", "task_type": "airline"}
    if expected is not None:
        task["metadata"] = {"expected_calls": json.dumps(expected)}
    return run_from_dict({"run_id": "bags", "task": task, "outcome": {"success": False, "ended_by": "user"},
                          "turns": [dict(t, turn=i) for i, t in enumerate(turns)]}, "test.jsonl:1")


def _said(run) -> list[str]:
    return [f.text for f in compile_offline(run).in_short if "nothing in the run checked it" in f.text]


def test_a_tier_the_user_claims_and_no_look_up_checks_is_said_with_the_look_ups_the_log_expected():
    turns = [_say("system", POLICY), _say("user", CLAIM),
             _say("assistant", "As a gold member you can check 3 bags per passenger for free."),
             _say("user", "Great, thanks!")]
    (text,) = _said(_run(turns, LOOKS))
    assert text.startswith("The user wrote \"gold member\" at turn 1, and nothing in the run checked it: it made none "
                           "of the look-ups the log records as expected (get_user_details and get_reservation_details)."), text
    assert not _said(_run(turns, None))  # no expected look-up recorded: nothing says a check was there to make


def test_a_run_that_looked_the_record_up_gets_no_such_sentence():
    profile = {"user_id": "ona_reyes_4410", "membership": "gold", "reservations": ["QK7T2P"]}
    turns = [_say("system", POLICY), _say("user", CLAIM),
             _call("get_user_details", {"user_id": "ona_reyes_4410"}, json.dumps(profile)),
             _say("assistant", "You are a gold member: 3 free bags per passenger."), _say("user", "Thanks!")]
    assert not _said(_run(turns, LOOKS))
