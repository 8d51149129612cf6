"""benchmarks/lesson_quality.py: it measures the lesson text of the gathered insights (not the
applicability line, not a task quote), its checks catch what they claim to, and the targets
hold on the real runs in ../shared/data (skipped with a reason when they are absent)."""

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
    again = swe_cost_limit()
    again["run_id"] = again["run_id"] + "-again"  # a second failed java run that meets the same error
    path = write_jsonl(tmp_path / "runs.jsonl",
                       [swe_success(), swe_cost_limit(), booking_failure(), hand_off_failure(), no_tool_failure(), again])
    a, b, total = lesson_quality.measure(path)
    assert (a.half, b.half, total.half) == ("A", "B", "all") and a.runs + b.runs == total.runs == 6
    assert total.harness_leaks == 0 and total.quote_failures == 0 and total.count_mismatches == 0
    assert total.exact_distinct == total.insights  # each lesson once
    # the two failed java runs share the `javac: command not found` lesson: fewer pages than links
    assert total.insights < round(total.links_per_run * total.runs)
    assert total.citing_success >= 1  # the successful java run teaches what worked
    assert "| runs.jsonl | all | 6 |" in lesson_quality.table([total])


def test_the_lesson_is_measured_without_task_text_and_with_values_masked():
    same = ["When get_order answers \"Error: order 4417 not found\", look up order 4417 in /srv/a/b.json first.",
            "When get_order answers \"Error: order 9921 not found\", look up order 9921 in /srv/x/y.json first."]
    assert lesson_quality.masked(same[0]) == lesson_quality.masked(same[1])
    assert lesson_quality.masked("Run `mvn -q test` first.") == lesson_quality.masked("Run `gradle build` first.")
    assert lesson_quality.near_distinct([lesson_quality.masked(t) for t in same]) == 1
    other = "When get_order answers \"Error: the store is closed\", wait and call it again later."
    assert lesson_quality.near_distinct([lesson_quality.masked(t) for t in same + [other]]) == 2
    # a pointer to another insight quotes that page's title: not this lesson's words
    base = "Before cancel_order, look up the order."
    assert lesson_quality.masked(base + " Failed runs ended this way too; the lesson they teach most often is the "
                                 "check to make first: \"Ask before refunding\" (counts under Evidence).") == \
        lesson_quality.masked(base)
    own = base + " Successful runs of this task type did so more often (counts under Evidence)."
    assert lesson_quality.masked(own) != lesson_quality.masked(base)  # this lesson's own advice stays


def test_a_leak_a_bad_quote_and_a_wrong_count_are_counted(tmp_path, monkeypatch):
    """The checks are not vacuous: a page that cites the harness step, a lesson that misquotes,
    and an insight whose counts differ from its sources are counted."""
    from wikitrace.compilers import offline
    from wikitrace.corpus import insights

    real, real_gather = offline.compile_offline, insights.gather

    def leaky(run):
        comp = real(run)
        comp.evidence[0].turns.append(run.turns[-1].turn)  # the harness's episode_over turn
        comp.insights[0].guideline += ' It said "nothing like this occurs in the run".'
        return comp

    def miscounted(runs, previous=None):
        out = real_gather(runs, previous)
        if out:  # a half may hold no run
            out[0]["counts"]["runs"] += 1
        return out

    monkeypatch.setattr(lesson_quality, "compile_offline", leaky)
    monkeypatch.setattr(insights, "gather", miscounted)
    row = lesson_quality.measure(write_jsonl(tmp_path / "runs.jsonl", [swe_cost_limit()]))[-1]
    assert row.harness_leaks == 1 and row.quote_failures == 1 and row.count_mismatches == 1


@pytest.mark.slow
@pytest.mark.skipif(not (TAU.exists() and REFLEXION.exists()), reason="real runs not present in ../shared/data/runs-dev")
def test_targets_on_the_real_runs():
    # the target: a near-duplicate-distinct ratio of 0.8 on each half and on the whole
    for path in (TAU, REFLEXION):
        for row in lesson_quality.measure(path):
            assert row.near_ratio >= 0.8, (path.name, row.half, row.near_ratio)
            assert row.count_mismatches == 0 and row.harness_leaks == 0 and row.quote_failures == 0, (path.name, row.half)
            assert row.citing_success >= 1 and row.links_per_run <= 3, (path.name, row.half)
