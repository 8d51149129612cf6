"""A retry that got past a look-up error to a page nothing later drew on is a dead end, and its
source line says so (compilers/insight_words.py ``led_nowhere``): a rater found "got past it (as
Search[Palace of Westminster], a name the error listed)" read as progress where the run then left
that page for good. A page a later query or the answer took words from, or that holds the answer
whole ("1978"), is no dead end. Fixture: a Reflexion printout of our own, in the real shape."""

from __future__ import annotations

from test_listed_name_success import WON

from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load
from wikitrace.runs.model import Run

PRINTOUT = """########################################
BEGIN TRIAL 1
Trial summary: Correct: 1, Incorrect: 1, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------

""" + WON + """
------------- BEGIN INCORRECT AGENTS -----------

Question: Which architect designed the town hall of Pellow Bay?
Thought 1: I need to search the town hall of Pellow Bay.
Action 1: Search[Pellow Bay town hall]
Observation 1: Could not find [Pellow Bay town hall]. Similar: ['Palace of Westminster', 'Pellow Bay'].
Thought 2: I will search the first one.
Action 2: Search[Palace of Westminster]
Observation 2: The Palace of Westminster is the meeting place of the Parliament of the United Kingdom, on the Thames.
Thought 3: I need to search a Pellow Bay architect I know of.
Action 3: Search[Edwin Marsh]
Observation 3: Edwin Marsh was an English architect of civic buildings on the south coast.
Thought 4: He designed it.
Action 4: Finish[Edwin Marsh]
Observation 4: Answer is INCORRECT
Correct answer: Ada Lorne

------------- BEGIN HALTED AGENTS --------------

"""


def _details(tmp_path) -> dict[bool, list[str]]:
    path = tmp_path / "react_reflexion_dead_end.txt"
    path.write_text(PRINTOUT, encoding="utf-8")
    runs = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return {r.outcome.success: [i.detail for i in compile_offline(r).insights if (i.key or "").startswith("error|")]
            for r in runs}


def test_a_retry_that_reached_a_page_nothing_drew_on_is_marked_a_dead_end(tmp_path):
    details = _details(tmp_path)
    [lost] = [d for d in details[False] if "got past it at turn 2" in d]
    assert lost.startswith("turn 1: got past it at turn 2 (as Search[Palace of Westminster], a name the error listed)")
    assert "; no later query or answer drew on the page it found" in lost, lost


def test_a_page_the_answer_came_from_is_no_dead_end(tmp_path):
    [won] = [d for d in _details(tmp_path)[True] if "got past it" in d]
    assert won.startswith("turn 1: got past it at turn 2 (as Search[Harlow Rowing Club]") and "drew on" not in won, won


def test_a_retry_sharing_only_a_short_word_with_the_refused_query_aimed_elsewhere():
    """Round 18: "Livesey Hal War Memorial" refused, then "World War II" went through; the page said
    the run "got past it", though the retry searched its own guess, which the error had not listed.
    A word of three letters ("war", "of") is no shared name: the retry aimed elsewhere."""
    from wikitrace.compilers.error_insights import _other_target

    listed = "could not find [livesey hal war memorial]. similar: ['livesey hall', 'hal (film)']"
    assert _other_target("Livesey Hal War Memorial", "World War II", listed)
    assert not _other_target("Livesey Hal War Memorial", "Livesey Hall War Memorial", listed)  # a name shared
    assert not _other_target("Livesey Hal War Memorial", "Livesey Hall", listed)  # one the error listed
