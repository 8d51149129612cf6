"""benchmarks/synth.py as a command: asking for help or mistyping an option never writes runs to
a file named after the option (it once wrote 33 MB of runs to ./--help)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SYNTH = Path(__file__).resolve().parent.parent / "benchmarks" / "synth.py"


def _synth(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # No data folder: the script makes its small generated base run, and the test reads nothing shared.
    env = dict(os.environ, WIKITRACE_DATA=str(tmp_path / "no-data"))
    return subprocess.run([sys.executable, str(SYNTH), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def test_help_prints_usage_and_writes_nothing(tmp_path):
    done = _synth(tmp_path, "--help")
    assert done.returncode == 0 and "usage:" in done.stdout and "--runs" in done.stdout
    assert list(tmp_path.iterdir()) == []


def test_an_output_path_like_an_option_is_refused(tmp_path):
    for args in (["--", "-runs.jsonl"], ["--bogus"]):
        done = _synth(tmp_path, *args)
        assert done.returncode == 2 and "usage:" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_writes_the_asked_number_of_runs(tmp_path):
    done = _synth(tmp_path, "runs.jsonl", "--runs", "3")
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert [r["run_id"] for r in runs] == ["synthetic-000000", "synthetic-000001", "synthetic-000002"]
