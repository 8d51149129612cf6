"""benchmarks/lesson_quality.py: its checks catch what they claim to, and the targets hold on
the real runs in ../shared/data (skipped with a reason when they are absent)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from helpers import SHARED_DATA, write_jsonl
from test_offline_content import booking_failure, hand_off_failure, no_tool_failure, swe_cost_limit, swe_success

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import lesson_quality  # noqa: E402

REFLEXION = SHARED_DATA / "runs-dev" / "reflexion-hotpotqa"
TAU = SHARED_DATA / "runs-dev" / "tau-bench-airline"


def test_rows_for_real_shaped_runs(tmp_path):
    path = write_jsonl(tmp_path / "runs.jsonl",
                       [swe_success(), swe_cost_limit(), booking_failure(), hand_off_failure(), no_tool_failure()])
    a, b, total = lesson_quality.measure(path)
    assert (a.half, b.half, total.half) == ("A", "B", "all") and a.runs + b.runs == total.runs == 5
    assert total.harness_leaks == 0 and total.quote_failures == 0
    assert total.distinct == total.insights  # five different runs, no lesson twice
    # three `command not found` (read from the text), the rejected edit and the refused change (flags)
    assert total.error_calls == 5
    assert "| runs.jsonl | all | 5 |" in lesson_quality.table([total])


def test_a_leak_and_a_bad_quote_are_counted(tmp_path, monkeypatch):
    """The checks are not vacuous: a page that cites the harness step or misquotes is counted."""
    from wikitrace.compilers import offline

    real = offline.compile_offline

    def leaky(run):
        comp = real(run)
        comp.evidence[0].turns.append(run.turns[-1].turn)  # the harness's episode_over turn
        comp.insights[0].guideline += ' It said "nothing like this occurs in the run".'
        return comp

    monkeypatch.setattr(lesson_quality, "compile_offline", leaky)
    row = lesson_quality.measure(write_jsonl(tmp_path / "runs.jsonl", [swe_cost_limit()]))[-1]
    assert row.harness_leaks == 1 and row.quote_failures == 1


@pytest.mark.slow
@pytest.mark.skipif(not (TAU.exists() and REFLEXION.exists()), reason="real runs not present in ../shared/data/runs-dev")
def test_targets_on_the_real_runs():
    # the target: a distinct ratio of 0.8 on each half, ids, numbers and tool names masked
    # (Reflexion reprints the same agents across trials: 339 of its 459 runs differ in their calls)
    for path, floor in ((TAU, 0.8), (REFLEXION, 0.8)):
        for row in lesson_quality.measure(path):
            assert row.ratio >= floor, (path.name, row.half, row.ratio)
            assert row.harness_leaks == 0 and row.quote_failures == 0, (path.name, row.half)


def test_lessons_that_differ_only_by_an_id_a_number_or_a_tool_name_are_not_distinct(tmp_path, monkeypatch):
    """The distinct count masks what an episode fills in: padding a lesson with its run's id,
    an amount or the tool's own name does not make it another lesson."""
    from wikitrace.compilers import offline
    from wikitrace.compilers.schema import CandidateInsight

    real = offline.compile_offline
    filled = iter(["order 4417 for 30 dollars via refund_order", "order 9921 for 75 dollars via refund_payment",
                   "a different thing entirely", "order 1 for 2 dollars via issue_refund"])

    def padded(run):
        comp = real(run)
        comp.insights = [CandidateInsight(title="Refund", guideline=f"Check {next(filled)} first.", applicability="Refunds.")]
        return comp

    monkeypatch.setattr(lesson_quality, "compile_offline", padded)
    runs = []
    for k, tool in enumerate(["refund_order", "refund_payment", "refund_order", "issue_refund"]):
        run = booking_failure()
        run["run_id"] = run["task"]["id"] = f"pad-{k}"
        run["turns"][3]["name"] = tool
        runs.append(run)
    total = lesson_quality.measure(write_jsonl(tmp_path / "runs.jsonl", runs))[-1]
    assert (total.insights, total.distinct) == (4, 2)
