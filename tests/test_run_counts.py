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
        "Runs of this task type that met this error: 6 failed of 1 task, 0 successful. ")
    # a count whose runs are trials of one task says its tasks, and so does the count beside it, which
    # would otherwise read as the same task's (a rater found "3 failed, 2 successful (all trials of 1 task)")
    contrast.update(success_met=2, tasks_met={"failure": 6, "success": 1})
    assert contrast_sentence({"contrast": contrast}).startswith(
        "Runs of this task type that met this error: 6 failed of 6 tasks, 2 successful of 1 task. ")
    contrast.update(success_met=2, tasks_met={"failure": 6, "success": 2})
    assert contrast_sentence({"contrast": contrast}).startswith(
        "Runs of this task type that met this error: 6 failed, 2 successful. ")
    members = [(_run(k, "same"), {"detail": "turn 4: got past it at turn 6 (with amount changed)"}) for k in range(3)]
    members.append((_run(3, "other", "success"), {"detail": "turn 2: got past it at turn 3 (with amount changed)"}))
    entry = {"key": "error|pay|no funds", "counts": {"success": 1},
             "guideline": "When pay answers \"no funds\", call pay again with amount changed."}
    untested_fix(entry, members)
    assert entry["guideline"].endswith("Getting the call through is not enough: 3 of the 3 failed runs here (all trials "
                                       "of 1 task) got past it and still failed (amount changed: 3 runs).")


def _error_run(k: int, outcome: str, teaches_error: bool) -> dict:
    """A run that met a tool's error; only some teach it (the others teach what they did last)."""
    key = "error|get_order|Error: order not found" if teaches_error else "idle|none"
    return {"step": f"step-{k:04d}", "run_id": f"r{k}", "task_id": f"t{k}", "instruction": f"request {k}",
            "task_type": "shop", "apps": None, "outcome": outcome, "title": "",
            "patterns": ["error|get_order|Error: order not found", "idle|none"],
            "lessons": [{"key": key, "title": key, "guideline": "Look the order up first.",
                         "applicability": "In shop tasks.", "detail": "turn 3", "worked": outcome == "success"}]}


def test_the_runs_a_contrast_counts_are_named_so_the_page_can_be_checked():
    """"Runs of this task type that met this error: 15 failed" beside 3 sources: the page names
    the other 12 (ten linked, the last 2 named) and the successful one, and every count its text
    states adds up with what it links (benchmarks/text_counts.py)."""
    import sys
    from pathlib import Path

    from wikitrace.corpus.documents import render_insight
    from wikitrace.corpus.insights import gather

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import text_counts

    runs = ([_error_run(k, "failure", True) for k in range(3)] + [_error_run(10 + k, "failure", False) for k in range(12)]
            + [_error_run(40, "success", False)] + [_error_run(50 + k, "success", False) for k in range(3)])
    runs[-3:] = [{**r, "patterns": ["idle|none"]} for r in runs[-3:]]  # successes that did not meet it
    (entry,) = [i for i in gather(runs) if i["key"].startswith("error|")]
    assert (entry["contrast"]["failed_met"], entry["contrast"]["success_met"], entry["counts"]["runs"]) == (15, 1, 3)
    page = render_insight(entry, "/work/corpus", None)
    others = ", ".join(f"[step-{10 + k:04d}](../compilation/step-{10 + k:04d}.md)" for k in range(10))
    lists = page.split("## Runs behind the counts\n", 1)[1].split("## Sources", 1)[0]
    opening = "Runs of this task type that met this error, the"
    assert f"{opening} 15 failed: the 3 under Sources, {others}, step-0020, step-0021." in lists
    assert f"{opening} 1 successful: [step-0040](../compilation/step-0040.md)." in lists
    tally = text_counts.check(page, entry["sources"])
    assert tally.mismatches == 0 and tally.hidden == 0 and tally.counts >= 4
    # the same page with the names left out: its counts no longer reproduce
    bare = page.replace("[step-0019](../compilation/step-0019.md), step-0020, step-0021", "…")
    assert text_counts.check(bare, entry["sources"]).mismatches == 1
    # when the counted runs are the page's own sources, one sentence says so
    alone = gather([_error_run(k, "failure", True) for k in range(3)] + [_error_run(9, "success", True)])
    assert "The runs counted there are the ones under Sources." in render_insight(alone[0], "/work/corpus", None)


def test_a_change_the_task_asked_for_is_not_named_a_cause_for_going_through():
    """Round 16 (tau): "book_reservation went through: 20 failed, 1 successful ... a likely cause of
    failure", where 18 of the 20 failed runs' tasks expected that very booking (their arguments
    differed): booking tasks are hard, booking is no fault. A run counts when a change of the tool
    went through as expected, or a checked fact says its arguments differed from the expected call."""
    from wikitrace.corpus.contrast_words import index_note
    from wikitrace.corpus.run_counts import expected_tool

    differed = {"facts": [{"kind": "arguments", "about": ["book_trip.payment_methods@answer"]}]}
    made = {"decisive": {"changes": [{"tool": "book_trip", "expected": True}]}}
    other = {"facts": [{"kind": "arguments", "about": ["cancel_trip.trip_id"]}]}
    assert expected_tool(differed, "book_trip") and expected_tool(made, "book_trip")
    assert not expected_tool(other, "book_trip") and not expected_tool({}, "book_trip")
    contrast = {"pattern": "went-through|book_trip", "failed_met": 20, "failed": 40, "success_met": 1, "success": 30,
                "verdict": "failure", "p": 0.001, "instead": [], "asked_for": 18}
    said = contrast_sentence({"contrast": contrast})
    assert said.endswith("Runs that met it failed more often than the runs that did not, but in 18 of the 20 failed "
                         "runs the task expected a book_trip call too: making the change was the task's own ask, so its "
                         "going through is not named a cause of failure; how it was made may be."), said
    assert "likely cause" not in index_note({"contrast": contrast})
    contrast["asked_for"] = 9  # not most of them: the counts' own verdict stands
    assert "named a likely cause of failure" in contrast_sentence({"contrast": contrast})
