"""A way of settling the task that only successful runs taught (a procedure page) leads with what
those runs did that the failed trials of their own tasks did not, counted by kind of step over
tasks (corpus/fact_cases.apart_lead): the procedure alone, which failed runs followed too, is the
"restates the workflow" raters rated 2. Real-shaped lines come from corpus/trial_success.py."""

from __future__ import annotations

from types import SimpleNamespace

from wikitrace.corpus.fact_cases import apart_lead
from wikitrace.corpus.trial_contrast import lines

PROCEDURE = "To settle the task: look with Search, then end with Finish giving the value a look-up returned."


def _run(n: int, task: str, outcome: str = "success") -> dict:
    return {"step": f"step-{n:04d}", "outcome": outcome, "task_id": task, "instruction": f"question {task}"}


def _entry(advice: str = PROCEDURE) -> dict:
    return {"key": "procedure|Finish", "advice": advice, "counts": {"runs": 3, "success": 3, "failure": 0}}


def test_the_step_two_tasks_successes_took_and_their_failed_trials_did_not_leads_what_to_do():
    shapes = {"step-0001": "bare", "step-0002": "bare", "step-0003": "full", "step-0004": "bare"}
    lines_of = SimpleNamespace(shape=lambda e: shapes.get(e["step"]))
    members = [(_run(1, "a"), {}), (_run(2, "b"), {}), (_run(3, "c"), {}), (_run(4, "a"), {})]
    entry = _entry()
    apart_lead(entry, members, lines_of)
    assert entry["advice"].startswith("Send a name without quote marks: successful runs here did so where the failed "
                                      "trials of their own tasks did not. To settle the task:"), entry["advice"]
    # one run per task, each named
    assert entry["counted"] == ["Where a successful run here has failed trials of its task, what it did that they did "
                                "not, one run per task: send a name without quote marks in 2 of their tasks "
                                "(step-0001, step-0002); give the answer in full, as the look-up wrote it in 1 of "
                                "their tasks (step-0003)."]


def test_a_step_one_task_shows_leads_nothing():
    shapes = {"step-0001": "bare", "step-0004": "bare"}  # two trials of one task
    entry = _entry()
    apart_lead(entry, [(_run(1, "a"), {}), (_run(4, "a"), {})], SimpleNamespace(shape=lambda e: shapes.get(e["step"])))
    assert entry["advice"] == PROCEDURE and "counted" not in entry


def test_a_success_line_records_the_shape_of_the_step_it_says_to_copy():
    """The full answer a look-up gave, against a failed trial that answered part of it after the same look-up."""
    found = {"tool": "Search", "query": "Savannah College of Art and Design", "turn": 1}
    won = {**_run(25, "t"), "decisive": {"answer": {"text": "Lacoste, France", "turn": 2, "found": found},
                                          "lookups": ["Search[Savannah College of Art and Design]"]}}
    lost = {**_run(211, "t", "failure"), "decisive": {"answer": {"text": "Lacoste", "turn": 2, "found": found},
                                                       "lookups": ["Search[Savannah College of Art and Design]"]}}
    shapes: dict[str, str] = {}
    made = lines([won, lost], shapes)
    assert made["step-0025"][0].startswith("Give the answer in full"), made
    assert shapes == {"step-0025": "full"}
