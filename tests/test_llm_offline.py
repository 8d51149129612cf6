"""The LLM path makes only a run's offline lessons, patterns and facts ahead of the model
call (compilers/llm_offline.py), not the whole offline page. A model's page is grouped
under those lessons' keys and shows those facts, so they must be exactly the ones the
offline compiler gives the same run: otherwise an LLM build and an offline build of the
same runs would file them under different insights."""

from __future__ import annotations

import pytest

from helpers import EXAMPLES, TAU_BENCH
from wikitrace.compilers.llm_offline import offline_facts, offline_lessons, precompile
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.load import LoadReport, iter_runs


def _runs(path):
    return [r for r in iter_runs([path], None, LoadReport()) if hasattr(r, "outcome")]


def _same_as_offline(run) -> None:
    page = compile_offline(run)
    lessons = offline_lessons(run)
    assert lessons.insights == page.insights
    assert [i.key for i in lessons.insights] == [i.key for i in page.insights]
    assert lessons.patterns == page.patterns
    assert lessons.in_short == page.in_short


def test_the_lessons_made_ahead_are_the_offline_compilers_for_the_examples():
    runs = _runs(EXAMPLES)
    assert {r.outcome.success for r in runs} == {True, False}  # both outcomes' item rules
    for run in runs:
        precompile(run)  # as the reader process does, before the run reaches the build
        _same_as_offline(run)


@pytest.mark.skipif(not TAU_BENCH.exists(), reason=f"{TAU_BENCH} absent (the shared data is not beside the checkout)")
def test_the_lessons_made_ahead_are_the_offline_compilers_for_tau_bench():
    runs = _runs(TAU_BENCH)[:60]
    assert {r.outcome.success for r in runs} == {True, False}
    for run in runs:
        _same_as_offline(run)  # made on demand here, as a build reading in-process makes them


def test_a_model_page_shows_the_settled_facts_only():
    """The facts a model's page shows leave out the "nothing settled" placeholders."""
    from wikitrace.compilers.in_short import NOTHING_SETTLED

    for run in _runs(EXAMPLES):
        shown = offline_facts(run)
        assert shown == [f for f in compile_offline(run).in_short if f.text not in NOTHING_SETTLED.values()]


def _without_notes(items):
    return [(i.rank, i.kind, i.call and i.call.n, i.evidence.decision, i.evidence.turns) for i in items]


@pytest.mark.parametrize("path", [EXAMPLES, TAU_BENCH], ids=["examples", "tau-bench"])
def test_leaving_out_the_notes_chooses_the_same_items(path):
    """The LLM path makes a run's items without the notes under them (page text no lesson reads):
    the items chosen, their order and their ranks must be the page's, or the lessons differ."""
    from wikitrace.compilers.offline import chosen_items

    if not path.exists():
        pytest.skip(f"{path} absent")
    noted = 0
    for run in _runs(path)[:60]:
        _r, page = chosen_items(run)
        _r, bare = chosen_items(run, with_notes=False)
        assert _without_notes(bare) == _without_notes(page)
        assert not any(i.evidence.notes for i in bare)
        noted += any(i.evidence.notes for i in page)
    assert noted  # the page's items do carry notes: the flag left something out
