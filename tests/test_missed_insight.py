"""A failed run whose every change was one the task expected still teaches a lesson: the change it
never made (and, when a looked-up list shows why, the listed item it never opened), or else the
value it never told the user (compilers/missed_insight.py). Before, such runs linked no insight
at all, and a check-before-change lesson was no fit: their changes were right."""

from __future__ import annotations

import json

from tau_messages import agent, tool, user
from test_add import ok
from test_expected_outputs import SAID, _trial as told_trial
from test_trial_contrast import GIFT, POLICY, PROFILE, TRIP, _change, _write

BAGS = {"reservation_id": "Q4WZ8N", "total_baggages": 2, "nonfree_baggages": 1, "payment_id": GIFT}
SECOND = dict(TRIP, reservation_id="M2PL7T", origin="BOS", destination="DEN",
              flights=[{"origin": "BOS", "destination": "DEN", "flight_number": "HAT120", "date": "2024-06-20"}])
LISTING = dict(PROFILE, reservations=["Q4WZ8N", "M2PL7T"])


def _record(task_id: int, trial: int, reward: float, calls: list, actions: list, request: str) -> dict:
    traj = [{"role": "system", "content": POLICY}, user(request),
            agent("Sure. Your user id, please?"), user("lena_vogt_3017."), *calls,
            agent("All done."), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": f"You are lena_vogt_3017. {request}",
            "actions": actions}
    return {"task_id": task_id, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _moved(bags: bool) -> list:
    out = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
           *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
           user("Move me to HAT311 on 2024-06-10, add one checked bag, gift card for both. Yes, go ahead."),
           *tool("update_reservation_flights", _change(GIFT), dict(TRIP, flights=_change(GIFT)["flights"]))]
    if bags:
        out += tool("update_reservation_baggages", BAGS, dict(TRIP, total_baggages=2))
    return out


MOVE_AND_BAG = [{"name": "update_reservation_flights", "kwargs": _change(GIFT)},
                {"name": "update_reservation_baggages", "kwargs": BAGS}]
ASKED = "Move your Boston flight to HAT311 on 2024-06-10 and add one checked bag."


def _compile(tmp_path, records: list[dict]) -> tuple[dict, dict]:
    out = tmp_path / "c"
    ok("compile", str(_write(tmp_path / "results.json", records)), "--out", str(out), "--offline", "-q")
    corpus = json.loads((out / "corpus.json").read_text())
    pages = {p.stem: p.read_text(encoding="utf-8") for p in (out / "insight").glob("insight-*.md")}
    return {r["run_id"]: r for r in corpus["runs"]}, pages


def test_a_run_that_left_an_expected_change_unmade_learns_to_make_every_change(tmp_path):
    runs, pages = _compile(tmp_path, [_record(30, 0, 1.0, _moved(True), MOVE_AND_BAG, ASKED),
                                      _record(30, 1, 0.0, _moved(False), MOVE_AND_BAG, ASKED),
                                      _record(30, 2, 0.0, _moved(False), MOVE_AND_BAG, ASKED)])
    for trial in (1, 2):
        failed = runs[f"task-30-trial-{trial}"]
        assert [lesson["key"] for lesson in failed["lessons"]] == ["missed"]
        assert len(failed["insights"]) == 1
    assert runs["task-30-trial-1"]["insights"] == runs["task-30-trial-2"]["insights"]  # one page, two sources
    page = pages[runs["task-30-trial-1"]["insights"][0]]
    assert "# Before ending, make every change the request calls for" in page
    assert "Seen in 2 runs of 1 task: 0 successful, 2 failed." in page
    # the contrast counts the successful trial too: it made the change, so it did not meet the pattern
    assert "left a change the task expected unmade: 2 failed of 1 task, 0 successful" in page
    detail = failed["lessons"][0]["detail"]
    assert detail.startswith("made 1 change as the task expected (update_reservation_flights, turn ")
    assert "update_reservation_baggages(" in detail and detail.endswith("never made")
    # the successful trial made both changes: it met no such pattern
    assert "missed" not in runs["task-30-trial-0"]["patterns"]


def test_changes_missed_on_a_listed_record_never_opened_teach_to_open_every_listed_one(tmp_path):
    calls = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, LISTING),
             *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
             user("Yes, move it to HAT311 on 2024-06-10 with the gift card."),
             *tool("update_reservation_flights", _change(GIFT), dict(TRIP, flights=_change(GIFT)["flights"]))]
    second = {"reservation_id": "M2PL7T", "cabin": "economy", "payment_id": GIFT,
              "flights": [{"flight_number": "HAT122", "date": "2024-06-21"}]}
    actions = [{"name": "update_reservation_flights", "kwargs": _change(GIFT)},
               {"name": "update_reservation_flights", "kwargs": second}]
    runs, pages = _compile(tmp_path, [_record(31, 0, 0.0, calls, actions, "Move both of your trips a day later.")])
    run = runs["task-31-trial-0"]
    assert [lesson["key"] for lesson in run["lessons"]] == ["unlooked|reservations"]
    assert "the run looked up 1 of them, never M2PL7T" in run["lessons"][0]["detail"]
    page = pages[run["insights"][0]]
    assert "# Look up every listed `reservations` before choosing which to change" in page.replace("\\`", "`")
    # it left a change unmade all the same: counted among those runs, whichever lesson it teaches
    assert "missed" in run["patterns"] and "unlooked|reservations" in run["patterns"]


def test_a_run_that_made_its_changes_and_never_said_the_figure_learns_to_say_it(tmp_path):
    runs, pages = _compile(tmp_path, [told_trial(0, 1.0, SAID), told_trial(1, 0.0, "Done: you are on HAT311.")])
    run = runs["task-21-trial-1"]
    assert [lesson["key"] for lesson in run["lessons"]] == ["untold"]
    assert "the task expected the agent to say 1410, and no agent message did (calculate's answer at turn " \
        in run["lessons"][0]["detail"]
    page = pages[run["insights"][0]]
    assert "# Tell the user each value the request asks for as soon as you have it" in page
    assert "never told the user a value the task expected: 1 failed, 0 successful" in page
    assert "untold" not in runs["task-21-trial-0"]["patterns"]  # the success said it


def test_a_run_the_step_limit_cut_off_after_its_change_says_so_beside_the_value_it_never_told(tmp_path):
    """The figure was held (calculate) and the change made, then the log ends on the tool's answer:
    the harness cut it off. The source line says so, so the reader does not take it for a run that
    forgot to report."""
    cut = told_trial(1, 0.0, "unused")
    cut["traj"] = cut["traj"][:-2]  # no closing message, no user stop: the step limit ended it
    runs, _pages = _compile(tmp_path, [told_trial(0, 1.0, SAID), cut])
    (detail,) = [lesson["detail"] for lesson in runs["task-21-trial-1"]["lessons"] if lesson["key"] == "untold"]
    assert detail.endswith("then the harness stopped the run (step limit reached) at turn 9, with no message after its "
                           "last call"), detail


def test_an_error_lesson_names_every_turn_the_run_met_its_error_up_to_the_one_it_never_got_past(tmp_path):
    """The same refusal three times, each with another amount: the source line names where the run
    first met it too, not only the call the lesson is about."""
    refused = "Error: payment amount does not add up, total price is 1002, but paid {}"
    pay = lambda amount: {**BAGS, "payment_id": GIFT, "total_baggages": amount}  # noqa: E731
    calls = [*tool("get_user_details", {"user_id": "lena_vogt_3017"}, PROFILE),
             *tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
             user("Add the bags, yes, go ahead."),
             *tool("update_reservation_baggages", pay(3), refused.format(957)),
             *tool("update_reservation_baggages", pay(4), refused.format(1047)),
             *tool("update_reservation_baggages", pay(5), refused.format(1100))]
    runs, _pages = _compile(tmp_path, [_record(32, 0, 0.0, calls, [{"name": "update_reservation_baggages",
                                                                      "kwargs": BAGS}], ASKED)])
    run = runs["task-32-trial-0"]
    (detail,) = [lesson["detail"] for lesson in run["lessons"] if lesson["key"].startswith("error|")]
    log = [json.loads(ln) for ln in (tmp_path / "c" / "raw" / run["step"] / "solver.full.jsonl").read_text().splitlines()]
    errors = [t["turn"] for t in log if t.get("name") == "update_reservation_baggages" and str(t.get("result")).startswith("Error")]
    assert len(errors) == 3
    assert detail.startswith(f"turn {errors[2]} (first met at turn {errors[0]}): did not call it again"), detail
