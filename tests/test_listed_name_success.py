"""A success's page says how it came to the look-up its answer stands in, in terms any task has:
"Look up Search[Harlow Rowing Club] (the name its Search error at turn 1 listed)" rather than only
this task's page name (a rater found "Search[Alien (film)]" advice that no new task can use).
Fixture: a Reflexion printout of our own, two trials of one question, in the real shape."""

from __future__ import annotations

import json

from wikitrace.build import BuildOptions, build

TRIAL = """########################################
BEGIN TRIAL {n}
Trial summary: Correct: {right}, Incorrect: {wrong}, Halted: 0
#######################################
------------- BEGIN CORRECT AGENTS -------------
{correct}
------------- BEGIN INCORRECT AGENTS -----------
{incorrect}
------------- BEGIN HALTED AGENTS --------------

"""
WON = """
Question: In what year did the Harlow Rowing Club win its first regatta?
Thought 1: I need to search Harlow Rowing.
Action 1: Search[Harlow Rowing]
Observation 1: Could not find [Harlow Rowing]. Similar: ['Harlow Rowing Club', 'Harlow Town'].
Thought 2: I will search the club.
Action 2: Search[Harlow Rowing Club]
Observation 2: Harlow Rowing Club is a rowing club on the River Stort. It won its first regatta in 1962.
Thought 3: It won in 1962.
Action 3: Finish[1962]
Observation 3: Answer is CORRECT
"""
LOST = """
Question: In what year did the Harlow Rowing Club win its first regatta?
Thought 1: I need to search Harlow Rowing.
Action 1: Search[Harlow Rowing]
Observation 1: Could not find [Harlow Rowing]. Similar: ['Harlow Rowing Club', 'Harlow Town'].
Thought 2: I will search the town.
Action 2: Search[Harlow Town]
Observation 2: Harlow Town is a railway station in Harlow, opened in 1960.
Thought 3: It won in 1960.
Action 3: Finish[1960]
Observation 3: Answer is INCORRECT
Correct answer: 1962
"""


def test_a_success_says_its_look_up_was_the_name_an_error_listed(tmp_path):
    path = tmp_path / "react_reflexion_listed.txt"
    path.write_text(TRIAL.format(n=1, right=0, wrong=1, correct="", incorrect=LOST)
                    + TRIAL.format(n=2, right=1, wrong=0, correct=WON, incorrect=""), encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    won = next(r["step"] for r in data["runs"] if r["outcome"] == "success")
    page = (out / "compilation" / f"{won}.md").read_text()
    assert ("Search\\[Harlow Rowing Club\\] (the name its Search error at turn 1 listed) and answer from what it "
            "returns (\"1962\"), as this run did") in page, page
