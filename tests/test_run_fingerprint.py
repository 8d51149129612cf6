"""A run's fingerprint is the key of every user's corpus entries and cached model answers:
a release that changed it for the same run would silently throw all of them away."""

from __future__ import annotations

import datetime
from pathlib import Path

from wikitrace.runs.load import iter_runs
from wikitrace.runs.model import Outcome, Run, Task, Turn, content_hash, fingerprint

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "runs.jsonl"


def _awkward_run() -> Run:
    """Every kind of value a turn log holds: text beyond ASCII, a lone surrogate, nested
    arguments with unsorted keys, floats, a value JSON has no type for, extra keys."""
    return Run(
        run_id="r-1",
        task=Task(id="t-1", instruction="Book a flight \u00e9\u4e2d \U0001F600", task_type="airline",
                  apps=["flights"], initial_observation=None,
                  metadata={"trial": 2, "when": datetime.date(2024, 5, 15), "z": [1.5, None, True]}),
        turns=[
            Turn(turn=0, type="message", role="user", content="hi \"there\"\n\ttab \ud83d"),
            Turn(turn=1, type="function_call", role="assistant", name="search",
                 arguments={"b": [1, 2], "a": {"y": 1e-7, "x": "\u2028"}}, reasoning="look",
                 result="Error: none", is_error=True, extra={"zeta": 1, "alpha": {"k": "v"}}),
            Turn(turn=2, type="answer", content="done", extra={"unanswered": True}),
        ],
        outcome=Outcome(success=False, steps=1, score=0.25, ended_by="agent"),
    )


def test_fingerprint_of_a_run_is_the_one_earlier_releases_gave():
    assert fingerprint(_awkward_run()) == "95c0f8a043607208618bd5cef07e593687f6304925d0bff1acd80a534dd11133"


def test_content_hashes_of_the_example_runs_are_unchanged():
    runs = list(iter_runs([EXAMPLES]))
    assert [content_hash(r) for r in runs[:3]] == [
        "sha256:27d9cede68ccec5f76850c568a0225f8d3a168ea5740fefddb666bc1f64d4b4a",
        "sha256:8bd1d28b9133a7c7401e32748bfd5325ce98562b8fb5f3ab645bfb56a41892d7",
        "sha256:003995fe432bdd7d5b63ecefd6738f1e63a35b56e91b5cecab3f907991535a16",
    ]


def test_a_failed_fingerprint_leaves_the_next_one_right():
    """A value that cannot be encoded (a cycle) fails that run alone: the same list, its cycle
    broken, is fingerprinted as any other list afterwards."""
    bad = _awkward_run()
    loop: list = []
    loop.append(loop)
    bad.task.metadata = {"loop": loop}
    try:
        fingerprint(bad)
    except (ValueError, RecursionError):
        pass
    loop[:] = [1]
    fresh = _awkward_run()
    fresh.task.metadata = {"loop": [1]}
    assert fingerprint(bad) == fingerprint(fresh)
