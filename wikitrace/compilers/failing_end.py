"""A coding run that ended on tests it had just seen fail: the last test run after its last file
edit still reported failing tests, and the run submitted (or stopped) without another edit.

The run's own check said the change was not done, and it settled anyway. That is a lesson a
reader can act on before it is a cause: the pattern is counted over every run of the task type,
so the insight page says how many successful runs ended that way too (corpus/insights.py).
"""

from __future__ import annotations

from ..runs.errors import failing_part, is_test_report, reports_failing_tests
from .insight_parts import edits_of, kind_of_tasks, make_insight, verb
from .page_items import label
from .reading import Call, Reading
from .schema import CandidateInsight
from .text import clip

FAILING_END = "ended|failing-tests"  # the lesson's key and the run pattern it is contrasted on


def said_back(c: Call, limit: int = 90) -> str:
    """What a failed call answered, quoted, or that it answered nothing."""
    text = " ".join(failing_part(c.turn.result).split())
    return f"\"{clip(text, limit)}\"" if text else "no output recorded"


def failing_end(r: Reading) -> tuple[Call, Call | None] | None:
    """(the test run after the last file edit that still reported failing tests, the change that
    settled the run after it or None when nothing did) when no edit came after that test run;
    None for a run that changed no file, ran no test after its last edit, or saw them pass. Once per
    run (its memo): the patterns, the lessons and the In short each ask."""
    if FAILING_END not in r.memo:
        r.memo[FAILING_END] = _failing_end(r)
    return r.memo[FAILING_END]


def _failing_end(r: Reading) -> tuple[Call, Call | None] | None:
    edits = edits_of(r)
    if not edits:
        return None
    last_edit = edits[-1][0].n
    tests = [c for c in r.calls if c.n > last_edit and is_test_report(c.turn.result)]
    if not tests or not reports_failing_tests(tests[-1].turn.result):
        return None
    check = tests[-1]
    settled = next((c for c in r.calls if c.n > check.n and c.writes and not c.error
                    and not is_test_report(c.turn.result)), None)
    return check, settled


def failing_end_insight(r: Reading, check: Call, settled: Call | None) -> CandidateInsight:
    ended = (f"{settled.name} at turn {settled.n} settled the run with no edit after it" if settled is not None
             else "the run ended with no edit after it")
    return make_insight(
        FAILING_END, f"After the last edit, settle only once {verb(check)} shows the tests pass",
        "When the tests run after your last edit still report failures, the change is not done: read the failing "
        "test's assertion, change the code it exercises and rerun the same command; "
        + (f"call {settled.name} only once it passes." if settled is not None else "end the run only once it passes."),
        f"In {kind_of_tasks(r)}, after editing the code and running its tests, "
        + (f"before calling {settled.name}." if settled is not None else "before ending the run."),
        f"turn {check.n}: {label(check, 80)} still reported failing tests ({said_back(check, 90)}); {ended}", False)
