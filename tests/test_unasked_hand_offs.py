"""A lesson's successful sources that also handed the request off where their task expected no
hand-off: the page says how many, so the hand-off is not read as part of the lesson."""

from __future__ import annotations

import json

from test_insight_layer import compile_runs, corpus_json
from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _turns

USER = {"user_id": "noor_haddad_4471", "membership": "gold", "reservations": ["RB41XK"]}
TRIP = {"reservation_id": "RB41XK", "cabin": "basic_economy", "insurance": "no", "status": "booked"}


def _answered(k: int, hand_off: bool) -> dict:
    """A success that looked the trip up, said it cannot be cancelled, and (some) handed off."""
    turns = [_msg("system", AIRLINE_SYSTEM), _msg("user", "please cancel RB41XK, user id noor_haddad_4471"),
             _call("get_user_details", {"user_id": "noor_haddad_4471"}, json.dumps(USER)),
             _call("get_reservation_details", {"reservation_id": "RB41XK"}, json.dumps(TRIP)),
             _msg("assistant", "RB41XK is basic economy without insurance, so it cannot be cancelled.")]
    if hand_off:
        turns += [_msg("user", "I want a human."),
                  _call("transfer_to_human_agents", {"summary": "User wants RB41XK cancelled."}, "Transfer successful")]
    record = _record(f"answer-{k}", "airline", "Cancel the trip RB41XK.", _turns(*turns), True)
    record["task"]["id"] = f"task-{k}"
    record["task"]["metadata"] = {"expected_calls": json.dumps([
        {"name": "get_reservation_details", "arguments": {"reservation_id": "RB41XK"}}])}
    return record


def _page(tmp_path, handed: int, runs: int = 6) -> str:
    out = compile_runs(tmp_path, [_answered(k, k < handed) for k in range(runs)])
    data = corpus_json(out)
    texts = [(out / "insight" / f"{i['id']}.md").read_text() for i in data["insights"]
             if i["counts"]["success"] == runs]
    assert len(texts) == 1, [i["key"] for i in data["insights"]]
    return texts[0]


def test_the_successes_that_also_handed_off_unasked_are_counted_on_the_lesson(tmp_path):
    text = _page(tmp_path, handed=4)
    assert ("4 of the 6 successful runs here also handed off with transfer_to_human_agents, which their tasks did "
            "not expect, and succeeded all the same") in text


def test_one_hand_off_is_no_pattern_and_none_is_said(tmp_path):
    assert "also handed off" not in _page(tmp_path, handed=1)
