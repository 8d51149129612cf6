"""What the harness did, kept apart from what the agent did.

A harness step (a cost, step or context limit, a format-error stop, an environment
reset, an autosubmission) is never a ``function_call``: the importer writes it as an
``episode_over`` turn with ``role: "harness"`` whose ``content`` is the reason in
words, and the run's ``Outcome.ended_by`` is ``"harness: <reason>"``. A run the
agent (or the user) ended gets an ``episode_over`` turn without a role, with
``extra.ended_by`` saying who.

A framework step in the middle of a run (a retried model call, a guardrail check,
a handoff between agents, a history condensation: what tracing formats record
beside the agent's own calls) is a ``message`` turn with ``role: "harness"`` and
``extra.harness`` naming its kind (``step_turn``), never a ``function_call``.
"""

from __future__ import annotations

import re
from typing import Any

from .model import Turn

# SWE-agent's exit statuses (``info.exit_status``; after an autosubmission
# ``submitted (<status>)``), as the reason a reader understands.
_SWE_AGENT = {
    "exit_cost": "cost limit reached",
    "exit_context": "context window exceeded",
    "exit_format": "too many badly formatted model responses",
    "exit_error": "runtime error in the harness",
    "exit_api": "model API kept failing",
    "exit_environment_error": "the environment failed",
    "exit_command_timeout": "commands kept timing out",
    "exit_total_execution_time": "total execution time limit reached",
    "exit_token_budget": "token budget exhausted",
    "skipped": "instance skipped by the harness",
    "early_exit": "stopped early by the harness",
}
# Statuses that mean the agent ended the run itself.
_AGENT = {"submitted": "submitted", "exit_command": "exit command", "exit_forfeit": "forfeited"}
# mini-swe-agent names the exception that ended the run.
_MINI = {
    "limitsexceeded": "step or cost limit reached",
    "formaterror": "too many badly formatted model responses",
    "executiontimeouterror": "command timed out",
    "timeouterror": "command timed out",
}
_AUTOSUBMITTED = re.compile(r"^submitted \((.+)\)$", re.I)
AUTOSUBMITTED = "patch autosubmitted"  # said in ``ended_by`` when the harness collected the patch


def ended_by(status: Any) -> str | None:
    """``ended_by`` for a harness exit status (SWE-agent, mini-swe-agent), or None.

    ``agent: submitted`` when the agent ended the run; ``harness: <reason>`` for any
    other status, with the autosubmission noted (the harness collected the patch).
    """
    if not isinstance(status, str) or not status.strip():
        return None
    raw = status.strip()
    word = raw.lower()
    m = _AUTOSUBMITTED.match(raw)
    if m:
        inner = m.group(1).strip()
        reason = _SWE_AGENT.get(inner.lower()) or _MINI.get(inner.lower()) or inner
        return f"harness: {reason} ({inner}; {AUTOSUBMITTED})"
    if word in _AGENT:
        return f"agent: {_AGENT[word]}"
    if word in _SWE_AGENT:
        return f"harness: {_SWE_AGENT[word]} ({raw})"
    if word in _MINI:
        return f"harness: {_MINI[word]} ({raw})"
    return f"harness: {raw}"


def is_harness(ended: str | None) -> bool:
    return isinstance(ended, str) and ended.startswith("harness:")


def reason_of(ended: str) -> str:
    return ended.split(":", 1)[1].strip() if ":" in ended else ended


def end_turn(turns: list[Turn], ended: str | None, **extra: Any) -> Turn:
    """Append the closing ``episode_over`` turn (a harness turn when the harness ended it)."""
    data = {k: v for k, v in extra.items() if v is not None}
    if ended:
        data["ended_by"] = ended
    if is_harness(ended):
        turn = Turn(turn=len(turns), type="episode_over", role="harness", content=reason_of(ended), extra=data)
    else:
        turn = Turn(turn=len(turns), type="episode_over", extra=data)
    turns.append(turn)
    return turn


def step_turn(turns: list[Turn], kind: str, text: str, **extra: Any) -> Turn:
    """Append a framework step taken mid-run (see the module docstring)."""
    turn = Turn(turn=len(turns), type="message", role="harness", content=text,
                extra={"harness": kind, **{k: v for k, v in extra.items() if v is not None}})
    turns.append(turn)
    return turn
