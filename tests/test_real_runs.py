"""The importers over the real runs in ../shared/data/runs-dev (read in place, never copied).

Skipped with a reason when the folder is absent.
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.react_text import HALTED

DATA = Path(os.environ.get("WIKITRACE_RUNS_DEV", Path(__file__).resolve().parents[2] / "shared" / "data" / "runs-dev"))
if not DATA.is_dir():
    DATA = Path("/work/shared/data/runs-dev")
TAU = DATA / "tau-bench-airline" / "gpt-4o-airline.json"
REFLEXION = DATA / "reflexion-hotpotqa"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"real runs not found at {DATA} (shared data not mounted)")


def _load(*paths):
    report = LoadReport()
    runs = list(iter_runs(list(paths), None, report))
    return runs, report


def test_tau_bench_airline():
    if not TAU.is_file():
        pytest.skip(f"{TAU} absent")
    runs, report = _load(TAU)
    assert report.detected == {str(TAU): "openai-chat"}
    assert not report.errors and report.deduplicated == 0
    assert len(runs) == 200
    assert report.outcomes == {"success": 84, "failure": 116}
    assert len({r.task.id for r in runs}) == 50
    assert all(r.task.task_type == "airline" for r in runs)
    assert all(isinstance(r.source["original"], dict) and r.source["original"]["task_id"] == int(r.task.id) for r in runs)
    assert sum(len(r.actions) for r in runs) > 1000
    assert not report.redactions  # nothing in this data looks like a secret


def test_reflexion_without_reflection():
    path = REFLEXION / "react_base_100q_5trials.txt"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    runs, report = _load(path)
    assert report.detected == {str(path): "react-text"}
    # 512 blocks over 5 trials: 140 distinct runs (README), 369 exact reprints dropped, and
    # 3 agents listed both as INCORRECT and HALTED in a trial: reported once each, first kept.
    assert len(runs) == 140
    assert report.deduplicated == 369
    assert len(report.errors) == 3 and all("listed as INCORRECT" in e and "HALTED" in e for e in report.errors)
    assert report.outcomes == {"success": 34, "failure": 106}
    assert Counter(r.outcome.ended_by for r in runs) == {"agent": 126, HALTED: 14}
    assert len({r.task.id for r in runs}) == 100
    assert not any(r.task.metadata.get("reflections") for r in runs)


def test_reflexion_with_reflection():
    path = REFLEXION / "react_reflexion_100q_5trials.txt"
    if not path.is_file():
        pytest.skip(f"{path} absent")
    runs, report = _load(path)
    assert len(runs) == 319  # README: 319 distinct runs with reflection
    assert report.deduplicated == 179  # 498 blocks
    assert not report.errors
    assert report.outcomes == {"success": 51, "failure": 268}
    assert Counter(r.outcome.ended_by for r in runs) == {"agent": 253, HALTED: 66}
    reflected = [r for r in runs if r.task.metadata.get("reflections")]
    assert len(reflected) == 219 and len(runs) - len(reflected) == 100
    assert len({r.task.id for r in runs}) == 100
    # the instruction is the bare question, the reflection prompt stays in the first turn
    assert all("You have attempted" not in r.task.instruction for r in runs)
    assert all("Reflections:" in r.turns[0].content for r in reflected)


def test_whole_folder_at_once():
    runs, report = _load(DATA)
    assert set(report.detected.values()) <= {"openai-chat", "react-text"}
    assert all(not p.endswith(("LICENSE", "SOURCE.txt")) for p in report.detected)
    if TAU.is_file() and (REFLEXION / "react_base_100q_5trials.txt").is_file() and (
            REFLEXION / "react_reflexion_100q_5trials.txt").is_file():
        assert len(runs) == 200 + 140 + 319
        assert report.outcomes == {"success": 84 + 34 + 51, "failure": 116 + 106 + 268}
