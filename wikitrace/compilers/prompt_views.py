"""What the model is shown of a run: clipped texts and one view per turn."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..runs.model import Run, Turn, reused_encoder
from ..templates import render
from . import user_prompt
from .schema import MAX_INSIGHTS

def clip(text: str, limit: int) -> str:
    """Shorten ``text`` in the middle, deterministically, marking the cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters clipped ...]\n{text[-tail:]}"


# json.dumps(v, ensure_ascii=False, sort_keys=True) with its C encoder built once: every call of every run
_ARGS_JSON = reused_encoder(json.JSONEncoder(ensure_ascii=False, sort_keys=True))


def args_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return _ARGS_JSON(arguments)


def ended_by(run: Run) -> str:
    ended = run.outcome.ended_by
    if not ended:
        for t in reversed(run.turns):
            if t.type == "episode_over" and t.extra.get("ended_by"):
                ended = str(t.extra["ended_by"])
                break
    if not ended:
        return "not recorded"
    if ended.startswith("harness"):
        return f"{ended} (the harness stopped the episode; this was not the agent's decision)"
    return ended


def task_kind(run: Run) -> str:
    if run.task.task_type:
        return run.task.task_type.replace("_", " ")
    if run.task.apps:
        return "multi-app (" + ", ".join(run.task.apps) + ")"
    return "tool-using agent"


@dataclass
class Prompt:
    """Everything in a run's prompt that does not depend on the response mode."""

    system_ctx: dict[str, Any]
    user: str
    user_json: str | None = None  # ``user`` as a JSON string, when made beside the build


def evidence_key(outcome: str) -> str:
    return "key_decisions" if outcome == "success" else "failure_causes"


def turn_views(turns: list[Turn], limit: int, has_solver_prompt: bool) -> list[dict[str, Any]]:
    """One dict per turn for ``compile.user.j2``; long texts clipped to ``limit``."""
    views = []
    for i, t in enumerate(turns):
        flags = []

        def c(text: str | None) -> str:
            text = (text or "").strip()
            out = clip(text, limit)
            if out is not text:
                flags.append(True)
            return out

        view: dict[str, Any] = {"number": t.turn, "role": t.role or "message"}
        if i == 0 and has_solver_prompt:
            view["kind"] = "solver_prompt"
        elif t.type == "function_call":
            view.update(kind="action", name=t.name or "unknown", arguments=c(args_text(t.arguments)),
                        reasoning=c(t.reasoning), observation=c(t.result), is_error=bool(t.is_error))
        elif t.type == "episode_over":
            view.update(kind="episode_over", ended_by=t.extra.get("ended_by"), text=c(t.content))
        elif t.type == "answer":
            view.update(kind="answer", text=c(t.content or t.result))
        else:
            role = t.role or "message"
            view.update(kind="message", role="tool result" if role == "tool" else role, text=c(t.content))
        view["clipped"] = bool(flags)
        views.append(view)
    return views


def views_size(views: list[dict[str, Any]]) -> int:
    return sum(len(str(v.get(k) or "")) for v in views
               for k in ("text", "arguments", "reasoning", "observation"))


def build_prompt(run: Run, templates: str | None, *, clip_limit: int, trajectory_budget: int,
                 solver_prompt_limit: int) -> Prompt:
    """The task, the turn log (clipped until it fits ``trajectory_budget``) and the outcome."""
    turns = [t for t in run.turns]
    solver_prompt = None
    first = turns[0] if turns else None
    if first is not None and first.type == "message" and first.role in ("system", "developer") and first.content:
        solver_prompt = clip(first.content.strip(), solver_prompt_limit)

    limit = clip_limit
    rendered = turn_views(turns, limit, solver_prompt is not None)
    while limit > 200 and views_size(rendered) > trajectory_budget:
        limit //= 2
        rendered = turn_views(turns, limit, solver_prompt is not None)
    clipped = any(v.get("clipped") for v in rendered)

    task = run.task
    task_view = {
        "instruction": clip(task.instruction.strip(), 4000),
        "task_type": task.task_type,
        "apps": task.apps,
        "initial_observation": clip(task.initial_observation.strip(), limit * 2)
        if task.initial_observation else None,
    }
    values = dict(task=task_view, turns=rendered, clip_limit=limit if clipped else None, outcome=run.outcome,
                  ended_by=ended_by(run))
    user = (render(user_prompt.TEMPLATE, templates, **values) if user_prompt.overridden(templates)
            else user_prompt.render(**values))
    system_ctx = {
        "task_kind": task_kind(run),
        "solver_prompt": solver_prompt,
        "max_insights": MAX_INSIGHTS,
        "outcome": run.outcome.label,
        "evidence_key": evidence_key(run.outcome.label),
    }
    return Prompt(system_ctx=system_ctx, user=user)
