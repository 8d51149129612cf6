"""OpenAI chat-message trajectories with an outcome label (tau-bench's historical runs).

Accepted shapes, as a JSON array or one object per line:

- tau-bench: ``{"task_id", "trial", "reward", "info": {"task": {"instruction", ...}}, "traj": [messages]}``
- generic:   ``{"run_id", "messages" | "traj": [messages], "success" | "reward", "task": {...}|"instruction"}``

Mapping to turns: system/user messages and assistant replies without tool calls
become ``message`` turns; each assistant tool call becomes a ``function_call``
turn whose ``reasoning`` is the assistant text sent with it and whose
``result`` is the ``tool`` message answering it. Results are paired by
``tool_call_id``, oldest unanswered call first, because real logs reuse ids.
A result starting with "error" marks the call ``is_error``. A reward counts as
success only at full marks (>= 1.0); the score is kept either way.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from .model import Outcome, Run, RunError, Task, Turn, count_steps

_POLICY_HEADING = re.compile(r"^#\s*([A-Za-z][A-Za-z ]{0,40}?)\s+Agent Policy", re.M)


def _text(content: Any) -> str | None:
    """Chat content may be a string, None, or a list of typed parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, dict):
                parts.append(str(part.get("text") or part.get("content") or ""))
            else:
                parts.append(str(part))
        return "\n".join(p for p in parts if p)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return raw


def messages_to_turns(messages: list[Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    pending: dict[str, list[Turn]] = {}  # tool_call_id -> calls still waiting for a result
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RunError(f"{where}: message {i} is not an object")
        role = msg.get("role")
        content = _text(msg.get("content"))
        if role == "assistant" and msg.get("tool_calls"):
            reasoning = content or None
            for call in msg["tool_calls"]:
                fn = (call or {}).get("function") or {}
                turn = Turn(
                    turn=len(turns), type="function_call", role="assistant",
                    name=str(fn.get("name") or "unknown"),
                    arguments=_arguments(fn.get("arguments")),
                    reasoning=reasoning,
                )
                reasoning = None  # the text goes with the first call only
                turns.append(turn)
                pending.setdefault(str(call.get("id")), []).append(turn)
        elif role == "tool":
            waiting = pending.get(str(msg.get("tool_call_id")))
            if waiting:
                call = waiting.pop(0)
                call.result = content or ""
                call.is_error = (content or "").strip().lower().startswith("error")
            else:  # a result nobody asked for: keep it, do not guess its call
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=content,
                                  extra={"tool_call_id": msg.get("tool_call_id")}))
        elif role in ("system", "user", "assistant", "developer"):
            turns.append(Turn(turn=len(turns), type="message", role=role, content=content or ""))
        else:
            raise RunError(f"{where}: message {i} has role {role!r}; expected system, user, assistant or tool")
    for waiting in pending.values():
        for call in waiting:
            call.result = call.result if call.result is not None else ""
            call.is_error = True
            call.extra["unanswered"] = True
    return turns


def _domain(messages: list[dict]) -> str | None:
    for msg in messages:
        if isinstance(msg, dict) and msg.get("role") == "system":
            m = _POLICY_HEADING.search(_text(msg.get("content")) or "")
            return m.group(1).strip().lower().replace(" ", "_") if m else None
    return None


def record_to_run(rec: Any, where: str) -> Run:
    if not isinstance(rec, dict):
        raise RunError(f"{where}: a run must be a JSON object")
    messages = rec.get("traj", rec.get("messages"))
    if not isinstance(messages, list):
        raise RunError(f"{where}: missing 'traj' or 'messages' (a list of chat messages)")
    turns = messages_to_turns(messages, where)

    if "success" in rec:
        if not isinstance(rec["success"], bool):
            raise RunError(f"{where}: field 'success' must be true or false")
        success, score = rec["success"], rec.get("reward")
    elif isinstance(rec.get("reward"), (int, float)) and not isinstance(rec.get("reward"), bool):
        score = float(rec["reward"])
        success = score >= 1.0
    else:
        raise RunError(f"{where}: no outcome: give 'success' (true/false) or a numeric 'reward'")

    info_task = (rec.get("info") or {}).get("task") or {}
    task_field = rec.get("task") if isinstance(rec.get("task"), dict) else {}
    instruction = (
        task_field.get("instruction") or info_task.get("instruction") or rec.get("instruction")
    )
    first_user = next((t.content for t in turns if t.type == "message" and t.role == "user"), None)
    if not instruction:
        instruction = first_user
    if not instruction:
        raise RunError(f"{where}: no task instruction: give 'instruction' or a first user message")

    task_id = rec.get("task_id", task_field.get("id", rec.get("run_id")))
    if task_id is None:
        raise RunError(f"{where}: missing 'task_id' or 'run_id'")
    trial = rec.get("trial")
    run_id = rec.get("run_id") or (f"task-{task_id}-trial-{trial}" if trial is not None else f"task-{task_id}")
    meta = {k: info_task[k] for k in ("user_id",) if k in info_task}
    if trial is not None:
        meta["trial"] = trial
    last_user = next((t.content for t in reversed(turns) if t.type == "message" and t.role == "user"), "")
    ended_by = "user" if last_user and "###STOP###" in last_user else None
    turns.append(Turn(turn=len(turns), type="episode_over", extra={"ended_by": ended_by} if ended_by else {}))
    task = Task(
        id=str(task_id),
        instruction=instruction,
        task_type=task_field.get("task_type") or _domain(messages),
        apps=task_field.get("apps"),
        initial_observation=first_user if first_user != instruction else None,
        metadata=meta,
    )
    outcome = Outcome(success=success, steps=count_steps(turns), score=score, ended_by=ended_by)
    return Run(run_id=str(run_id), task=task, turns=turns, outcome=outcome)


def looks_like(sample: Any) -> bool:
    return isinstance(sample, dict) and isinstance(sample.get("traj", sample.get("messages")), list)


def read(path: Path) -> Iterator[Run | RunError]:
    """Yield runs from a JSON array or a JSONL file; bad records come back as RunError."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as exc:
            yield RunError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})")
            return
        items = [(f"{path}: record {i}", i, r) for i, r in enumerate(records)]
    else:
        items = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                items.append((f"{path}:{lineno}", lineno, json.loads(line)))
            except json.JSONDecodeError as exc:
                yield RunError(f"{path}:{lineno}: not valid JSON ({exc.msg})")
    for where, index, rec in items:
        try:
            run = record_to_run(rec, where)
        except RunError as exc:
            yield exc
            continue
        run.source = {"format": "openai-chat", "file": path.name, "record": index}
        yield run
