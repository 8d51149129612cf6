"""The lesson of runs a harness stopped says after how many calls it stopped them, when that is one
number, beside the calls the successful runs made."""

from __future__ import annotations

from wikitrace.corpus.insights import gather


def _entry(k: int, outcome: str, steps: int, stopped: bool) -> dict:
    key = "idle|lookups" if stopped else "procedure|Finish"
    lesson = {"key": key, "title": "Answer before the harness stops the run" if stopped else "Settle with Finish",
              "guideline": "Give the answer before the harness's limit ends the run." if stopped else
                           "Look with Search, then end with Finish.",
              "applicability": "In QA tasks.", "detail": f"run {k}", "worked": outcome == "success"}
    return {"step": f"step-{k:04d}", "outcome": outcome, "task_type": "qa", "task_id": f"q{k}", "steps": steps,
            "decisive": {"stopped": stopped}, "patterns": [key, "did|Search"], "lessons": [lesson]}


def _stopped_page(runs: list[dict]) -> dict:
    return next(p for p in gather(runs) if p["key"] == "idle|lookups")


def test_a_limit_in_calls_is_counted_and_said_as_the_call_to_answer_before():
    runs = ([_entry(k, "failure", 6, True) for k in range(7)] + [_entry(7, "failure", 3, True)]
            + [_entry(k, "success", 2 + k % 3, False) for k in range(8, 14)])
    page = _stopped_page(runs)
    assert "Settle the task by the sixth call at the latest." in page["advice"]
    assert ("The harness stopped 7 of the 8 runs of this task type it stopped after exactly 6 tool calls, and the 6 "
            "successful runs made 2 to 4 (most often 2)") in " ".join(page["counted"])


def test_a_limit_that_stops_runs_at_differing_counts_is_not_said_to_be_one_in_calls():
    runs = [_entry(k, "failure", 3 + k, True) for k in range(6)] + [_entry(9, "success", 3, False)]
    page = _stopped_page(runs)
    assert "harness stopped" not in page["guideline"] and "call." not in page["advice"]


def test_a_lesson_that_says_to_keep_looking_is_bounded_by_the_limit_in_calls():
    """"Keep looking instead of answering" on a harness that stops runs at the sixth call: the page
    says to keep looking only while calls are left, and to answer by the sixth."""
    runs = [_entry(k, "failure", 6, True) for k in range(5)] + [_entry(9, "success", 3, False)]
    # the lesson is known by its key, not by its words (a model may word it otherwise)
    wrong = {"key": "answer|Finish|not-found", "title": "Answer with Finish only once a page answers the question",
             "guideline": "Search on until a page answers every part of the question before using Finish.",
             "applicability": "In QA tasks.", "detail": "run 10", "worked": False}
    runs.append({"step": "step-0010", "outcome": "failure", "task_type": "qa", "task_id": "q10", "steps": 3,
                 "decisive": {}, "patterns": ["did|Search"], "lessons": [wrong]})
    page = next(p for p in gather(runs) if p["key"] == "answer|Finish|not-found")
    said = " ".join([page["advice"], *page.get("counted", [])])
    assert "Keep looking only while calls are left" in said
    assert "after exactly 6 tool calls, so give the best-supported answer by the sixth call." in said
