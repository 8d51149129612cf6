"""Every importer fixture and bundled example as parsed runs, shared by the sentence checks.

The sentence checks read each run as a success and as a failure. ``relabeled`` gives a copy
with only the verdict changed, so no test sees the label another test gave a shared run.
"""

from __future__ import annotations

import copy
from pathlib import Path

from wikitrace.runs import load
from wikitrace.runs.model import Outcome, Run, RunError, count_steps

ROOT = Path(__file__).parent.parent
IMPORTERS = ROOT / "tests" / "fixtures" / "importers"
EXAMPLES = ROOT / "examples"


def _runs() -> tuple[Run, ...]:
    report = load.LoadReport()
    out = []
    for path, _ in load._expand([IMPORTERS, EXAMPLES], report):
        try:
            fmt = load.detect(path)
        except RunError:
            continue  # outcome tables and other companions
        out += [r for r in load._read(path, fmt) if isinstance(r, Run)]
    return tuple(out)


RUNS = _runs()


def relabeled(run: Run | str, success: bool) -> Run:
    """A copy of ``run`` (or of the fixture run with that id) labelled ``success``; its score and
    how it ended are kept, as a verdict table relabelling a log would keep them."""
    if isinstance(run, str):
        run = next(r for r in RUNS if r.run_id == run)
    run = copy.deepcopy(run)
    was = run.outcome
    run.outcome = Outcome(success=success, steps=count_steps(run.turns), score=was.score if was else None,
                          ended_by=was.ended_by if was else run.source.get("ended_by"))
    return run
