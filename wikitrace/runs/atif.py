"""ATIF, the Agent Trajectory Interchange Format (Harbor's ``agent/trajectory.json``).

Fields used (see docs/input-formats.md)::

    {"schema_version": "ATIF-v1.x", "session_id": "...", "agent": {"name", "version", "model_name"},
     "steps": [{"step_id": 1, "source": "system" | "user" | "agent", "message": "...",
                "reasoning_content": "..."?,
                "tool_calls": [{"tool_call_id", "function_name", "arguments"}]?,
                "observation": {"results": [{"source_call_id"?, "content"?,
                                              "subagent_trajectory_ref"?: [..]}]}?}, ...]}

Mapping: system and user steps become ``message`` turns; an agent step with
tool calls becomes one ``function_call`` per call, whose ``result`` is the
observation result with the same ``source_call_id`` (the first call also gets
the step's ``reasoning_content`` and ``message`` as ``reasoning``); an agent
step without calls is an assistant ``message`` with its reasoning. Results
without a matching call (non-tool actions, system events) stay ``tool``
messages. ``is_error``: a result's ``is_error`` flag or ``status`` word when a
writer adds one, else the text rule of ``errors.observation_is_error``.

ATIF itself holds no verdict. In a Harbor trial folder
(``<trial>/agent/trajectory.json``) the outcome is read from
``<trial>/result.json`` (``verifier_result.rewards.reward`` or
``verifier_result.reward``) or ``<trial>/verifier/reward.txt``; a reward is a
success only at full marks (>= 1.0); an ``exception_info`` there (an agent timeout)
means the harness ended the trial. Otherwise pass ``--outcomes`` keyed by
``session_id`` or the trial folder name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from . import errors, harness
from ._common import Sniff, as_str, load_json, read_text, unanswered, parse_arguments, read_single
from .model import Outcome, Run, RunError, Task, Turn, count_steps


def looks_like(s: Sniff) -> bool:
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, dict) and isinstance(obj.get("schema_version"), str) and obj["schema_version"].startswith("ATIF"):
        return True
    if re.search(r'"schema_version"\s*:\s*"ATIF', s.head):
        return True
    return s.path.name == "trajectory.json" and bool(re.search(r'"steps"\s*:\s*\[', s.head))




def steps_to_turns(steps: list, where: str) -> list[Turn]:
    turns: list[Turn] = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise RunError(f"{where}: steps[{i}] is not an object")
        source = step.get("source")
        message = as_str(step.get("message")) or ""
        reasoning = as_str(step.get("reasoning_content"))
        extra = {"step_id": step["step_id"]} if isinstance(step.get("step_id"), int) else {}
        calls: dict[str, Turn] = {}
        tool_calls = step.get("tool_calls") if isinstance(step.get("tool_calls"), list) else []
        if source == "agent" and tool_calls:
            lead = "\n\n".join(x for x in (reasoning, message) if x and x.strip()) or None
            for call in tool_calls:
                call = call if isinstance(call, dict) else {}
                t = Turn(turn=len(turns), type="function_call", role="assistant",
                         name=as_str(call.get("function_name")) or "unknown",
                         arguments=parse_arguments(call.get("arguments")), reasoning=lead, extra=dict(extra))
                lead = None
                turns.append(t)
                cid = call.get("tool_call_id")
                if isinstance(cid, str):
                    calls.setdefault(cid, t)
                    t.extra["tool_call_id"] = cid
        elif source in ("system", "user", "agent"):
            role = "assistant" if source == "agent" else source
            turns.append(Turn(turn=len(turns), type="message", role=role, content=message,
                              reasoning=reasoning or None, extra=dict(extra)))
        else:
            raise RunError(f"{where}: steps[{i}] has source {source!r}; expected system, user or agent")
        obs = step.get("observation")
        results = obs.get("results") if isinstance(obs, dict) and isinstance(obs.get("results"), list) else []
        for res in results:
            if not isinstance(res, dict):
                continue
            content = as_str(res.get("content"))
            refs = res.get("subagent_trajectory_ref")
            if content is None and isinstance(refs, list):
                ids = [r.get("session_id") for r in refs if isinstance(r, dict)]
                content = "subagent: " + ", ".join(str(x) for x in ids)
            is_error = errors.judge(errors.from_status(res.get("is_error")), errors.from_status(res.get("status")),
                                    text=content)
            target = calls.get(res.get("source_call_id")) if isinstance(res.get("source_call_id"), str) else None
            if target is not None and target.result is None:
                target.result = content or ""
                target.is_error = is_error
                if isinstance(refs, list):
                    target.extra["subagent_trajectory_ref"] = refs
            else:
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=content or "",
                                  is_error=is_error, extra=dict(extra)))
    unanswered(turns)
    return turns


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def harbor_reward(path: Path) -> tuple[float | None, str | None]:
    """The verifier reward of the Harbor trial holding ``path``, and where it came from."""
    trial = path.parent.parent if path.parent.name == "agent" else path.parent
    result = trial / "result.json"
    if result.is_file():
        obj = load_json(result)
        vr = obj.get("verifier_result") if isinstance(obj, dict) else None
        if isinstance(vr, dict):
            rewards = vr.get("rewards")
            value = _number(rewards.get("reward")) if isinstance(rewards, dict) else None
            if value is None:
                value = _number(vr.get("reward"))
            if value is not None:
                return value, f"{result}: verifier_result"
    reward_txt = trial / "verifier" / "reward.txt"
    if reward_txt.is_file():
        text = read_text(reward_txt).strip()
        try:
            return float(text), str(reward_txt)
        except ValueError:
            raise RunError(f"{reward_txt}:1: reward {text[:40]!r} is not a number") from None
    return None, None


def to_run(obj: Any, path: Path, where: str) -> Run:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: an ATIF trajectory must be a JSON object")
    steps = obj.get("steps")
    if not isinstance(steps, list):
        raise RunError(f"{where}: missing 'steps' (a list of step objects)")
    turns = steps_to_turns(steps, where)
    instruction = next((t.content for t in turns if t.type == "message" and t.role == "user" and (t.content or "").strip()), None)
    if not instruction:
        raise RunError(f"{where}: no task: no user step with a message")
    turns.append(Turn(turn=len(turns), type="episode_over"))
    trial = path.parent.parent.name if path.parent.name == "agent" else None
    sid = obj.get("session_id") or obj.get("trajectory_id")
    run_id = str(sid) if isinstance(sid, (str, int)) and not isinstance(sid, bool) and str(sid) else (trial or path.stem)
    agent = obj.get("agent") if isinstance(obj.get("agent"), dict) else {}
    meta = {k: agent[k] for k in ("name", "version", "model_name") if isinstance(agent.get(k), str)}
    if trial:
        meta["trial"] = trial
    task = Task(id=trial.split("__", 1)[0] if trial and "__" in trial else run_id, instruction=instruction,
                metadata={"agent": meta} if meta else {})
    run = Run(run_id=run_id, task=task, turns=turns, outcome=None)
    run.source = {"format": "atif", "file": path.name, "original": obj, "original_format": "json",
                  "outcome_keys": [k for k in (trial,) if k]}
    return run


def harbor_exception(path: Path) -> str | None:
    """``harness: ...`` when the Harbor trial's ``result.json`` records an exception
    (an agent timeout, a crashed environment): the harness, not the agent, ended it."""
    trial = path.parent.parent if path.parent.name == "agent" else path.parent
    result = trial / "result.json"
    if not result.is_file():
        return None
    try:
        obj = load_json(result)
    except RunError:
        return None  # harbor_reward reports the file
    info = obj.get("exception_info") if isinstance(obj, dict) else None
    if not isinstance(info, dict) or not info.get("exception_type"):
        return None
    kind = as_str(info.get("exception_type")) or "an exception"
    message = (as_str(info.get("exception_message")) or "").strip().split("\n", 1)[0][:160]
    return f"harness: the trial stopped with {kind}" + (f" ({message})" if message else "")


def _attach_harbor_reward(run: Run, path: Path) -> RunError | None:
    ended = harbor_exception(path)
    if ended:
        run.source["ended_by"] = ended
        closing = run.turns.pop()  # the plain episode_over written by to_run
        harness.end_turn(run.turns, ended, **closing.extra)
    try:
        reward, where = harbor_reward(path)
    except RunError as exc:
        return exc
    if reward is not None:
        run.outcome = Outcome(success=reward >= 1.0, steps=count_steps(run.turns), score=reward, ended_by=ended)
        run.source["outcome_from"] = where
    return None


def read(path: Path) -> Iterator[Run | RunError]:
    return read_single(path, to_run, _attach_harbor_reward)
