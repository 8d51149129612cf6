"""Stable ids across rebuilds.

The published corpus.json remembers which ``step-`` and ``insight-`` ids each
run got. A rebuild gives a known run its old ids and a new run the next free
ones, in input order, so adding one run changes only that run's files, the
indexes and corpus.json. Ids of runs that left the input are retired, never
handed out again.
"""

from __future__ import annotations

from ..runs.model import Run
from . import layout


def content_hash(run: Run) -> str:
    """The loader's fingerprint of the run (task, turns, outcome), computed once per run."""
    from ..runs.load import fingerprint

    digest = run.source.get("fingerprint") or fingerprint(run)
    return "sha256:" + digest


class IdAllocator:
    def __init__(self, previous: dict | None):
        previous = previous or {}
        self.prev_runs: dict[str, dict] = {r["run_id"]: r for r in previous.get("runs", [])}
        retired = previous.get("retired", {"steps": [], "insights": []})
        self.retired_steps: set[str] = set(retired.get("steps", []))
        self.retired_insights: set[str] = set(retired.get("insights", []))
        known_steps = [r["step"] for r in self.prev_runs.values()] + list(self.retired_steps)
        known_ins = [i for r in self.prev_runs.values() for i in r.get("insights", [])] + list(self.retired_insights)
        self.next_step = max((layout.id_number(s) for s in known_steps), default=-1) + 1
        self.next_insight = max((layout.id_number(i) for i in known_ins), default=-1) + 1
        self.used_run_ids: set[str] = set()

    def step_for(self, run_id: str) -> str:
        self.used_run_ids.add(run_id)
        prev = self.prev_runs.get(run_id)
        if prev:
            return prev["step"]
        step = layout.step_id(self.next_step)
        self.next_step += 1
        return step

    def insights_for(self, run_id: str, count: int) -> list[str]:
        prev = list(self.prev_runs.get(run_id, {}).get("insights", []))
        ids = prev[:count]
        for extra in prev[count:]:
            self.retired_insights.add(extra)
        while len(ids) < count:
            ids.append(layout.insight_id(self.next_insight))
            self.next_insight += 1
        return ids

    def retired(self) -> dict[str, list[str]]:
        """Ids of runs no longer in the input join the retired list for good."""
        steps = set(self.retired_steps)
        insights = set(self.retired_insights)
        for run_id, entry in self.prev_runs.items():
            if run_id not in self.used_run_ids:
                steps.add(entry["step"])
                insights.update(entry.get("insights", []))
        return {"steps": sorted(steps, key=layout.id_number), "insights": sorted(insights, key=layout.id_number)}

    def dropped_runs(self) -> list[str]:
        return sorted(r for r in self.prev_runs if r not in self.used_run_ids)
