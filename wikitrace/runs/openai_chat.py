"""The ``openai-chat`` format: runs saved as an OpenAI chat transcript plus a verdict.

One record per run, in a JSON array or one object per line. tau-bench's result
files are the format's origin; the same record with plainer field names is the
same thing, so both spellings are read here:

- tau-bench: ``{"task_id", "trial", "reward", "info": {"task": {"instruction", ...}}, "traj": [messages]}``
- generic:   ``{"run_id", "messages" | "traj": [messages], "success" | "reward", "task": {...}|"instruction"}``

The transcript itself (a bare list of chat messages, which carries no verdict) is
turned into turns by ``chat_messages``. A reward counts as success only at full
marks (>= 1.0); the score is kept either way. How a run ended follows tau-bench's
conventions (``###STOP###`` from the simulated user, its hand-over tool).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any, Iterator

from . import harness
from ._common import SNIFF_BYTES, Carried, jsonl_records, parse_json, read_text, text_of
from .chat_messages import messages_to_turns
from .repair import CLEAN_ORIGINAL, clean_json
from .model import Outcome, Run, RunError, Task, Turn, count_steps

_POLICY_HEADING = re.compile(r"^#\s*([A-Za-z][A-Za-z ]{0,40}?)\s+Agent Policy", re.M)


def _domain(messages: list[dict]) -> str | None:
    for msg in messages:
        if isinstance(msg, dict) and msg.get("role") == "system":
            m = _POLICY_HEADING.search(text_of(msg.get("content")) or "")
            return m.group(1).strip().lower().replace(" ", "_") if m else None
    return None


# tau-bench's environments end an episode when the agent calls this tool.
_TERMINATE_TOOLS = ("transfer_to_human_agents",)


def _ending(turns: list[Turn], messages: list) -> str | None:
    """Who ended the conversation.

    The user, when a user message carries tau-bench's ``###STOP###``; the agent, when
    its last act was a terminating tool or a reply; otherwise nobody in the log ended
    it (its last message is a tool result or a user turn the agent never answered):
    the harness cut it off at its step limit.
    """
    last_user = next((t.content for t in reversed(turns) if t.type == "message" and t.role == "user"), "")
    if last_user and "###STOP###" in last_user:
        return "user"
    last = next((m for m in reversed(messages) if isinstance(m, dict) and m.get("role") != "system"), None)
    calls = [t for t in turns if t.type == "function_call"]
    if calls and calls[-1].name in _TERMINATE_TOOLS and last is not None and last.get("role") == "tool":
        return f"agent: {calls[-1].name}"
    if last is None or last.get("role") == "assistant":
        return "agent" if last is not None else None
    steps = sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")
    return f"harness: step limit reached (cut off after {steps} agent steps, with no stop from the user or agent)"


def _expected_calls(actions: Any) -> str | None:
    """tau-bench's ``info.task.actions`` (the calls the task counts as right) as JSON text
    ``[{"name": .., "arguments": {..}}]``, or None when absent or not of that shape. An empty list
    is kept: the task expects no call at all, which is what a hand-off or a refusal is judged by."""
    if not isinstance(actions, list):
        return None
    calls = [{"name": a["name"], "arguments": a.get("kwargs") or {}} for a in actions
             if isinstance(a, dict) and isinstance(a.get("name"), str) and isinstance(a.get("kwargs", {}), dict)]
    return json.dumps(calls, ensure_ascii=False, sort_keys=True) if len(calls) == len(actions) else None


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
        if not math.isfinite(score):
            raise RunError(f"{where}: field 'reward' must be a finite number")
        success = score >= 1.0
    else:
        raise RunError(f"{where}: no outcome: give 'success' (true/false) or a numeric 'reward'")

    info = rec.get("info") if isinstance(rec.get("info"), dict) else {}
    info_task = info.get("task") if isinstance(info.get("task"), dict) else {}
    task_field = rec.get("task") if isinstance(rec.get("task"), dict) else {}
    instruction = next(
        (v for v in (task_field.get("instruction"), info_task.get("instruction"), rec.get("instruction"))
         if isinstance(v, str) and v), None,
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
    expected = _expected_calls(info_task.get("actions"))
    if expected:  # the calls the benchmark counts as the right ones: the pages compare the run's with them
        meta["expected_calls"] = expected
    outputs = info_task.get("outputs")
    if isinstance(outputs, list) and outputs and all(isinstance(o, str) and o.strip() for o in outputs):
        meta["expected_outputs"] = json.dumps(outputs, ensure_ascii=False)  # values the agent had to tell the user
    if trial is not None:
        meta["trial"] = trial
    ended_by = _ending(turns, messages)
    harness.end_turn(turns, ended_by)
    apps = task_field.get("apps")
    if apps is not None and not (isinstance(apps, list) and all(isinstance(a, str) for a in apps)):
        raise RunError(f"{where}: field 'task.apps' must be a list of strings")
    task = Task(
        id=str(task_id),
        instruction=instruction,
        task_type=task_field.get("task_type") if isinstance(task_field.get("task_type"), str) else _domain(messages),
        apps=apps,
        initial_observation=first_user if first_user != instruction else None,
        metadata=meta,
    )
    outcome = Outcome(success=success, steps=count_steps(turns), score=score, ended_by=ended_by)
    return Run(run_id=str(run_id), task=task, turns=turns, outcome=outcome)


def looks_like(sample: Any) -> bool:
    return isinstance(sample, dict) and isinstance(sample.get("traj", sample.get("messages")), list)


def _records(path: Path, text: str) -> Iterator[tuple[str, int, Any, None, bool] | RunError]:
    """(where, index, record, no digest, clean) of a JSON array file: ``clean`` is
    ``repair.clean_json`` of the whole file, once for all its records."""
    try:
        records = parse_json(text, str(path))
    except RunError as exc:
        yield exc
        return
    if not isinstance(records, list):
        yield RunError(f"{path}: expected a JSON array of runs")
        return
    clean = clean_json(text)
    for i, rec in enumerate(records):
        yield f"{path}: record {i}", i, rec, None, clean


def read(path: Path, known: dict | None = None) -> Iterator[Run | RunError | Carried]:
    """Yield runs from a JSON array or a JSONL file; bad records come back as RunError.

    JSONL is streamed a line at a time (a 10,000-run file never sits in memory
    whole); a line whose digest is in ``known`` comes back as ``Carried``.
    """
    with path.open("rb") as fh:
        head = fh.read(SNIFF_BYTES).lstrip()
    if head.startswith(b"["):
        try:
            text = read_text(path)
        except RunError as exc:
            yield exc
            return
        items: Iterator = _records(path, text)
    else:
        items = jsonl_records(path, known, kept=True)
    for item in items:
        if isinstance(item, (RunError, Carried)):
            yield item
            continue
        where, index, rec, digest, clean = item
        try:
            run = record_to_run(rec, where)
        except RunError as exc:
            yield exc
            continue
        except (TypeError, AttributeError, ValueError, KeyError) as exc:  # a shape no check above foresaw
            yield RunError(f"{where}: unexpected record shape ({exc.__class__.__name__}: {exc})")
            continue
        run.source = {"format": "openai-chat", "file": path.name, "record": index,
                      "original": rec, "original_format": "json"}
        if digest:
            run.source["record_digest"] = digest
        if clean:  # its text holds nothing to repair: repair.run need not look again
            run.source[CLEAN_ORIGINAL] = True
        yield run
