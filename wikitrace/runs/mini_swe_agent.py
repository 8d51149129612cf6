"""mini-swe-agent trajectories: ``<instance_id>.traj.json`` (one JSON object per file).

Fields used (see docs/input-formats.md)::

    {"instance_id": "..."?,                       (batch runs; else the file name)
     "info": {"exit_status": "Submitted", "submission": "<patch>", "model_stats": {..}},
     "messages": [{"role": "system"|"user"|"assistant"|"tool"|"exit", "content": ..,
                   "extra": {"actions": [{"command": ..}], "returncode": ..}?,
                   "tool_calls": [..]?, "tool_call_id": ..?}, ...],
     "trajectory_format": "mini-swe-agent-1" | "mini-swe-agent-1.1"}

Mapping: an assistant message becomes one ``function_call`` turn per action
(``name`` ``bash``, ``arguments`` ``{"command": ...}``): the actions are
``extra.actions`` (format 1.1), else OpenAI ``tool_calls``, else the fenced
``bash``/``mswea_bash_command`` blocks of the text (format 1). The text
around the code is the call's ``reasoning``. The next observation (a user
message with ``<returncode>`` or ``extra.returncode``, or a ``tool`` message)
is its ``result``; its return code gives ``is_error`` (non-zero: error), else the
text rule of ``errors.observation_is_error``. Other messages
stay ``message`` turns. ``info.submission`` becomes an ``answer`` turn and
``info.exit_status`` gives ``ended_by``; when the run was ``Submitted``, the
last call (the submit command, which gets no observation) takes the
submission as its result.

No verdict inside: the outcome comes from a nearby SWE-bench ``results.json``
(as for SWE-agent) or from ``--outcomes``, keyed by the instance id.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from . import errors, harness
from ._common import Sniff, as_str, text_of, unanswered, parse_arguments, read_single
from .model import Run, RunError, Task, Turn
from .swe_agent import attach_report_outcome

# Every call is a bash command (runs/tool_kinds.py reads what it ran); the submit is marked per call.
TOOL_KINDS = {"bash": "shell"}
_BLOCK = re.compile(r"```(?:bash|sh|mswea_bash_command)[ \t]*\r?\n(.*?)```", re.S)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_PR = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S)


def looks_like(s: Sniff) -> bool:
    if s.path.name.endswith(".traj.json"):
        return True
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, dict) and isinstance(obj.get("messages"), list):
        fmt = obj.get("trajectory_format")
        if isinstance(fmt, str) and fmt.startswith("mini-swe-agent"):
            return True
        info = obj.get("info")
        if isinstance(info, dict) and ("exit_status" in info or "mini_version" in info):
            return True
    return bool(re.search(r'"(mini_version|trajectory_format)"\s*:\s*"(mini-swe-agent|\d)', s.head))


def instance_id(path: Path, obj: dict) -> str:
    iid = obj.get("instance_id")
    if isinstance(iid, (str, int)) and not isinstance(iid, bool) and str(iid).strip():
        return str(iid)
    name = path.name
    for suffix in (".traj.json", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name




def _is_observation(msg: dict, content: str) -> bool:
    extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
    return "returncode" in extra or bool(_RETURNCODE.search(content))


def _returncode(msg: dict, content: str) -> int | None:
    extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
    rc = extra.get("returncode")
    if isinstance(rc, int) and not isinstance(rc, bool):
        return rc
    m = _RETURNCODE.search(content)
    return int(m.group(1)) if m else None


def messages_to_turns(messages: list, where: str) -> list[Turn]:
    turns: list[Turn] = []
    waiting: list[Turn] = []  # calls still without an observation, oldest first
    by_id: dict[str, list[Turn]] = {}
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RunError(f"{where}: messages[{i}] is not an object")
        role = msg.get("role")
        content = text_of(msg.get("content")) or ""
        extra = msg.get("extra") if isinstance(msg.get("extra"), dict) else {}
        if role == "assistant":
            calls: list[tuple[str, Any, str | None]] = []  # (name, arguments, call id)
            actions = extra.get("actions")
            if isinstance(actions, list) and actions:
                for a in actions:
                    cmd = a.get("command") if isinstance(a, dict) else a
                    calls.append(("bash", {"command": as_str(cmd) or ""}, None))
            elif isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
                for call in msg["tool_calls"]:
                    call = call if isinstance(call, dict) else {}
                    fn = call.get("function") if isinstance(call.get("function"), dict) else {}
                    calls.append((as_str(fn.get("name")) or "unknown", parse_arguments(fn.get("arguments")),
                                  as_str(call.get("id"))))
            else:
                for block in _BLOCK.findall(content):
                    calls.append(("bash", {"command": block.strip("\n")}, None))
            if not calls:
                turns.append(Turn(turn=len(turns), type="message", role="assistant", content=content))
                continue
            reasoning = _BLOCK.sub("", content).strip() or None
            for name, args, call_id in calls:
                t = Turn(turn=len(turns), type="function_call", role="assistant", name=name,
                         arguments=args, reasoning=reasoning)
                reasoning = None
                turns.append(t)
                waiting.append(t)
                if call_id is not None:
                    by_id.setdefault(call_id, []).append(t)
        elif role == "tool":
            call_id = as_str(msg.get("tool_call_id"))
            target = None
            if call_id is not None:
                queue = by_id.get(call_id) or []
                while queue and target is None:
                    candidate = queue.pop(0)
                    target = candidate if candidate.result is None else None
            elif waiting:
                target = waiting[0]
            if target is not None:
                if target in waiting:
                    waiting.remove(target)
                target.result = content
                target.is_error = errors.judge(errors.from_exit_status(_returncode(msg, content)), text=content)
            else:
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=content,
                                  extra={"tool_call_id": call_id} if call_id else {}))
        elif role == "user" and waiting and _is_observation(msg, content):
            target = waiting.pop(0)
            target.result = content
            target.is_error = errors.judge(errors.from_exit_status(_returncode(msg, content)), text=content)
        elif role in ("system", "user", "developer"):
            # mini-swe-agent has no person in the loop: a user message after the agent began is the
            # harness's (a format or timeout reminder), never a reply that could agree to anything
            started = role == "user" and any(t.role == "assistant" for t in turns)
            turns.append(Turn(turn=len(turns), type="message", role=role, content=content,
                              extra={"written_by": "harness"} if started else {}))
        elif role == "exit" or (not content and ("exit_status" in extra)):
            continue  # the v2 closing marker: info.exit_status says the same
        else:
            turns.append(Turn(turn=len(turns), type="message", role=as_str(role) or "unknown", content=content))
    return turns


def _limit_reason(ended: str | None, info: dict) -> str | None:
    """``LimitsExceeded`` covers both limits; the config and model stats say which one."""
    if not ended or "LimitsExceeded" not in ended:
        return ended
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    stats = info.get("model_stats") if isinstance(info.get("model_stats"), dict) else {}
    calls, steps = stats.get("api_calls"), agent.get("step_limit")
    cost, budget = stats.get("instance_cost"), agent.get("cost_limit")
    numeric = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0  # noqa: E731
    if numeric(steps) and numeric(calls) and calls >= steps:
        return f"harness: step limit reached ({calls} of {steps} model calls; LimitsExceeded)"
    if numeric(budget) and numeric(cost) and cost >= budget:
        return f"harness: cost limit reached (${cost:.2f} of ${budget:.2f}; LimitsExceeded)"
    return ended


def to_run(obj: Any, path: Path, where: str) -> Run:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: a mini-swe-agent trajectory must be a JSON object")
    messages = obj.get("messages")
    if not isinstance(messages, list):
        raise RunError(f"{where}: missing 'messages' (the chat history of the run)")
    turns = messages_to_turns(messages, where)
    first_user = next((t.content for t in turns if t.type == "message" and t.role == "user" and t.content), None)
    if not first_user:
        raise RunError(f"{where}: no task: no user message in 'messages'")
    m = _PR.search(first_user)
    instruction = m.group(1) if m and m.group(1).strip() else first_user
    info = obj.get("info") if isinstance(obj.get("info"), dict) else {}
    submission = info.get("submission")
    calls = [t for t in turns if t.type == "function_call"]
    if (calls and calls[-1].result is None and isinstance(submission, str)
            and str(info.get("exit_status", "")).lower() == "submitted"):
        # The submit command gets no observation: its output is the submission.
        calls[-1].result, calls[-1].is_error = submission, False
        calls[-1].extra["result_from"] = "info.submission"
    if calls and str(info.get("exit_status", "")).lower() == "submitted":
        calls[-1].extra["submits"] = True  # the harness took this command as the run's submission
    unanswered(turns)
    if isinstance(submission, str) and submission.strip():
        turns.append(Turn(turn=len(turns), type="answer", role="assistant", content=submission))
    ended_by = _limit_reason(harness.ended_by(info.get("exit_status")), info)
    harness.end_turn(turns, ended_by,
                     exit_status=info.get("exit_status") if isinstance(info.get("exit_status"), str) else None)
    iid = instance_id(path, obj)
    meta: dict[str, Any] = {}
    if isinstance(info.get("exit_status"), str):
        meta["exit_status"] = info["exit_status"]
    if isinstance(info.get("model_stats"), dict):
        meta["model_stats"] = info["model_stats"]
    task = Task(id=iid, instruction=instruction, task_type="swe-bench" if "__" in iid else None,
                initial_observation=first_user if first_user != instruction else None, metadata=meta)
    run = Run(run_id=iid, task=task, turns=turns, outcome=None)
    run.source = {"format": "mini-swe-agent", "file": path.name, "original": obj, "original_format": "json",
                  "outcome_keys": [iid]}
    if ended_by:
        run.source["ended_by"] = ended_by
    return run


def read(path: Path) -> Iterator[Run | RunError]:
    return read_single(path, to_run, attach_report_outcome)
