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


PAGE = """---
type: insight
---
# Before cancel_order, look up the order

## When it applies
Before calling cancel_order.

## What to do
In 2 of the 3 failed runs here the order was shipped: look the order up first.
Failed runs made cancel_order on 2 records a successful trial did not (8 runs: step-0001, step-0002).

## Evidence
Seen in 3 runs: 1 successful, 2 failed.
Runs of this task type that met this error: 5 failed, 1 successful.

What successful runs that met it did, by the lessons they teach:
- [Settle with cancel_order after 2 more](insight-0002.md): 4 runs ([step-0004](../compilation/step-0004.md), [step-0005](../compilation/step-0005.md) and 2 more)
- no lesson of their own: 3 runs ([step-0006](../compilation/step-0006.md), [step-0007](../compilation/step-0007.md), …)

## Sources
- [step-0001](../compilation/step-0001.md) (failure)
"""
SOURCES = [{"step": "step-0001", "outcome": "failure"}, {"step": "step-0002", "outcome": "failure"},
           {"step": "step-0003", "outcome": "success"}]


def test_text_counts_are_checked_against_the_runs_each_clause_links():
    """A count beside fewer runs than it says (named or linked, without the rest counted) is a
    mismatch, "and 2 more" makes the names and the count add up, a count of the page's own runs
    is held to its Sources, and a count nothing links is counted as unlinked."""
    import text_counts

    tally = text_counts.check(PAGE, SOURCES)
    mismatched = [e for e in tally.examples if e.startswith("mismatch")]
    assert tally.mismatches == len(mismatched) == 3
    assert mismatched[0].startswith("mismatch (sources 2, says 3): In 2 of the 3 failed runs here")
    assert "(8 runs: ⟨step-0001⟩" in mismatched[1] and mismatched[2].startswith("mismatch (linked 2+0, says 3)")
    assert tally.unlinked >= 2 and tally.kinds["N failed"] == 1  # "5 failed", "1 successful": which runs?
    fixed = (PAGE.replace("(8 runs: step-0001, step-0002)", "(2 runs: step-0001, step-0002)")
             .replace(", …)", " and 1 more)").replace("of the 3 failed", "of the 2 failed"))
    assert text_counts.check(fixed, SOURCES).mismatches == 0
    wrong_seen = fixed.replace("Seen in 3 runs: 1 successful, 2 failed.", "Seen in 4 runs: 1 successful, 3 failed.")
    assert text_counts.check(wrong_seen, SOURCES).mismatches == 1


def test_text_counts_of_real_shaped_runs_match_their_links(tmp_path):
    again = swe_cost_limit()
    again["run_id"] = again["run_id"] + "-again"
    path = write_jsonl(tmp_path / "runs.jsonl", [swe_success(), swe_cost_limit(), booking_failure(), again])
    total = lesson_quality.measure(path)[-1]
    assert total.text_counts > 0 and total.text_mismatches == 0
