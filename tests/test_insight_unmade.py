"""On tau-bench-shaped logs, an insight whose failed runs left an expected change unmade names
that change and says how the successful runs of the task type made it; one whose failed runs
made no call at all says so, with what the successful runs looked up. Counts are checked
against the records themselves."""

from __future__ import annotations

import json

from tau_messages import agent, tool, user
from wikitrace.build import BuildOptions, build

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-06-01 10:00:00 EST.\n\n- You should only make one "
          "tool call at a time.\n")


def _trip(rid: str) -> dict:
    return {"reservation_id": rid, "user_id": "omar_hale_4410", "origin": "SEA", "destination": "ATL",
            "flight_type": "one_way", "cabin": "economy", "total_baggages": 0, "nonfree_baggages": 0,
            "flights": [{"flight_number": "HAT118", "date": "2024-06-12", "price": 210}],
            "payment_history": [{"payment_id": "credit_card_5521904", "amount": 210}]}


def _bags(rid: str) -> dict:
    return {"reservation_id": rid, "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "credit_card_5521904"}


def _record(task: int, trial: int, reward: float, middle: list[dict]) -> dict:
    rid = f"BG{task:02d}XQ"
    traj = [{"role": "system", "content": POLICY}, user(f"Hi, please add two bags to reservation {rid}."), *middle,
            user("Thanks. ###STOP###")]
    return {"task_id": task, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": {"user_id": "omar_hale_4410", "outputs": [], "actions": [
                {"name": "update_reservation_baggages", "kwargs": _bags(rid)}],
                "instruction": f"You are omar_hale_4410 and want two checked bags on {rid}."},
                "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _made(task: int, trial: int) -> dict:
    rid = f"BG{task:02d}XQ"
    return _record(task, trial, 1.0, [*tool("get_reservation_details", {"reservation_id": rid}, _trip(rid)),
                                      agent("Adding 2 bags, both free for you. Shall I go ahead?"), user("Yes."),
                                      *tool("update_reservation_baggages", _bags(rid), _trip(rid)),
                                      agent("Done: two bags added.")])


def _looked_only(task: int, trial: int) -> dict:
    rid = f"BG{task:02d}XQ"
    return _record(task, trial, 0.0, [*tool("get_reservation_details", {"reservation_id": rid}, _trip(rid)),
                                      agent("Your reservation allows bags; you can add them at the airport.")])


def _no_call(task: int, trial: int) -> dict:
    return _record(task, trial, 0.0, [agent("I can't add bags from here; please ask at the check-in desk.")])


def test_unmade_change_and_no_call_leads_count_what_the_records_show(tmp_path):
    records = ([_made(t, 0) for t in range(1, 5)] + [_made(1, 1)]
               + [_looked_only(t, 1) for t in (2, 3, 4)] + [_no_call(t, 2) for t in (1, 2, 3, 4)])
    path = tmp_path / "airline-results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    made_by = "5 successful runs (of 4 tasks) of this task type made it, calling get_reservation_details (in 5 of them) before it"
    leads = [i["guideline"] for i in data["insights"] if "never went through (update_reservation_baggages in" in i["guideline"]]
    assert leads and all(made_by in g for g in leads), [i["guideline"] for i in data["insights"]]
    idle = [i for i in data["insights"] if "without a single tool call" in i["guideline"]]
    assert len(idle) == 1, [i["guideline"] for i in data["insights"]]
    (entry,) = idle
    # first the look-up the successful trials took the change's value from, then how many made no call
    assert entry["guideline"].startswith(
        "When the user cannot give the `payment_id` a change needs, look it up with get_reservation_details, as the "
        "successful trials of these tasks did: a successful trial of the same task (")
    assert ("took `payment_id` of update_reservation_baggages from get_reservation_details's answer for 4 of the 4 "
            "failed runs here: ") in entry["guideline"]
    assert (" In 4 of the 4 failed runs here the agent answered without a single tool call (0 successful runs of this "
            "task type did so too): look the request's records up with get_reservation_details before answering, as "
            "most successful runs did (get_reservation_details in 5).") in entry["guideline"]
    assert "a change the task expected never went through (update_reservation_baggages in 4)" in entry["guideline"]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "without a single tool call" in page
