"""Every count of runs on an insight page says the distinct tasks behind them when runs repeat a
task (corpus/run_counts.py): six trials of one question are one mistake seen six times."""

from __future__ import annotations

from wikitrace.corpus.insights import contrast_sentence
from wikitrace.corpus.retry_advice import untested_fix
from wikitrace.corpus.run_counts import count, part_of


def _run(k: int, task: str, outcome: str = "failure") -> dict:
    return {"step": f"step-{k:04d}", "task_id": task, "outcome": outcome}


def test_a_share_of_runs_names_the_tasks_only_when_runs_repeat_one():
    six = [_run(k, "tennis") for k in range(6)]
    eleven = six + [_run(6 + k, f"q{k % 2}") for k in range(5)]
    assert part_of(six, eleven) == "6 of the 11 failed runs here (all trials of 1 of their 3 tasks)"
    assert part_of(eleven[5:], eleven) == "6 of the 11 failed runs here (all 3 of their tasks)"
    assert part_of(eleven[6:8], eleven) == "2 of the 11 failed runs here (2 of their 3 tasks)"
    distinct = [_run(k, f"t{k}") for k in range(4)]
    assert part_of(distinct[:3], distinct) == "3 of the 4 failed runs here"
    assert part_of(distinct[:1], distinct[:1]) == "the one failed run here"
    assert count(6, 1, "failed runs") == "6 failed runs, all trials of 1 task"
    assert count(13, 11, "failed") == "13 failed of 11 tasks"
    assert count(4, 4, "runs") == "4 runs"
    among = "successful runs of this task type that met this error"
    assert part_of(six[:1], six[:1], among, "") == "the one successful run of this task type that met this error"
    assert part_of(six[:1], six[:2], among, "") == (
        "1 of the 2 successful runs of this task type that met this error (all trials of 1 task)")


def test_the_contrast_sentence_and_a_retry_count_say_the_tasks():
    contrast = {"pattern": "error|pay|no funds", "failed_met": 6, "failed": 20, "success_met": 0, "success": 9,
                "verdict": "none", "p": 0.06, "instead": [], "tasks_met": {"failure": 1, "success": 0}}
    assert contrast_sentence({"contrast": contrast}).startswith(
        "Runs of this task type that met this error: 6 failed, all trials of 1 task, 0 successful. ")
    members = [(_run(k, "same"), {"detail": "turn 4: got past it at turn 6 (with amount changed)"}) for k in range(3)]
    members.append((_run(3, "other", "success"), {"detail": "turn 2: got past it at turn 3 (with amount changed)"}))
    entry = {"key": "error|pay|no funds", "counts": {"success": 1},
             "guideline": "When pay answers \"no funds\", call pay again with amount changed."}
    untested_fix(entry, members)
    assert entry["guideline"].endswith("Getting the call through is not enough: 3 of the 3 failed runs here (all trials "
                                       "of 1 task) got past it and still failed (amount changed: 3 runs).")
