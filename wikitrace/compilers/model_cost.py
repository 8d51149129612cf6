"""What a run's log records its model calls cost (SWE-agent's and mini-SWE-agent's ``model_stats``).

A run the harness stopped for cost may have made no more calls than a successful trial of its
task, only dearer ones: the pages set the two side by side rather than blaming the number of calls.
"""

from __future__ import annotations

from .reading import Reading


def model_cost(r: Reading) -> tuple[float, int] | None:
    """(cost, model calls; 0 when not recorded), or None when the log records no cost."""
    stats = (r.run.task.metadata or {}).get("model_stats")
    cost = stats.get("instance_cost") if isinstance(stats, dict) else None
    calls = stats.get("api_calls") if isinstance(stats, dict) else None
    if not isinstance(cost, (int, float)) or isinstance(cost, bool):
        return None
    return float(cost), calls if isinstance(calls, int) and not isinstance(calls, bool) and calls > 0 else 0


def dearer_each(mine, theirs) -> bool:
    """Whether a run of (cost, calls) ``mine`` made no more model calls than ``theirs`` and paid
    more: a limit on cost met by dearer calls, not by more of them (calls unrecorded: not said)."""
    (c1, n1), (c2, n2) = mine, theirs
    return bool(n1 and n2) and n1 <= n2 and c1 > c2
