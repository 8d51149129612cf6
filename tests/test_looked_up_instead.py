"""Failed runs that made no call at all are told which look-up the successful trials of their
tasks took a change's missing value from."""

from __future__ import annotations

from wikitrace.corpus.insights import gather

LEAD = "When the user cannot give the `reservation_id` a change needs, look it up with get_user_details"


def _failed(k: int, task: int) -> dict:
    lesson = {"key": "idle|none", "title": "Check with the environment before answering",
              "guideline": "Call the look-ups that could show it before answering.", "applicability": "In desk tasks.",
              "detail": "asked the user, no tool call", "worked": False}
    return {"step": f"step-{k:04d}", "outcome": "failure", "task_type": "desk", "task_id": str(task),
            "patterns": ["idle|none"], "lessons": [lesson]}


def _won(k: int, task: int, source: str) -> dict:
    lesson = {"key": "procedure|cancel_reservation", "title": "Settle with cancel_reservation",
              "guideline": "Look up, then cancel.", "applicability": "In desk tasks.", "detail": "turn 6: cancel",
              "worked": True}
    return {"step": f"step-{k:04d}", "outcome": "success", "task_type": "desk", "task_id": str(task),
            "patterns": ["did|get_user_details", "went-through|cancel_reservation", "procedure|cancel_reservation"],
            "decisive": {"changes": [{"tool": "cancel_reservation", "turn": 6, "values": {"reservation_id": f"R{task}"},
                                      "from": {"reservation_id": source}}]},
            "lessons": [lesson]}


def _no_call_page(runs: list[dict]) -> dict:
    return next(p for p in gather(runs) if p["key"] == "idle|none")


def test_the_look_up_that_gave_the_value_leads_the_no_call_lesson():
    looked = "get_user_details's answer (turn 4)"
    page = _no_call_page([_failed(0, 1), _failed(1, 2), _failed(2, 3), _won(3, 1, looked), _won(4, 2, looked),
                          _won(5, 3, "the user (turn 2)")])
    assert page["advice"].startswith(LEAD + ", as the successful trials of these tasks did.")
    assert any(line.startswith("A successful trial of the same task (step-0003's cancel_reservation, from its turn 4) "
                               "took `reservation_id`")
               and line.endswith("for 2 of the 3 failed runs here: step-0000, step-0001.") for line in page["counted"]), \
        page["counted"]


def test_a_value_the_user_gave_or_one_task_alone_leads_nothing():
    page = _no_call_page([_failed(0, 1), _failed(1, 2), _won(3, 1, "get_user_details's answer (turn 4)"),
                          _won(4, 2, "the user (turn 2)")])
    assert LEAD not in page["advice"]
