"""SWE-agent trajectories: ``<instance_id>.traj`` (one JSON object per file).

Fields used (see docs/input-formats.md)::

    {"trajectory": [{"action": "...", "observation": "...", "thought": "...",
                     "response": "...", "execution_time": .., "state": ..}, ...],
     "history": [{"role": "system"|"user"|"assistant"|"tool", "content": ..,
                  "message_type": .., "is_demo": ..}, ...],
     "info": {"exit_status": "submitted", "submission": "<patch>", "model_stats": {..}},
     "replay_config": "<JSON string with problem_statement.text>"}

Each trajectory step becomes a ``function_call`` turn: ``name`` is the first
word of the action (the command: ``open``, ``edit``, ``python``, ``submit``),
``arguments`` the whole action text, ``reasoning`` the thought, ``result`` the
observation. A step with an empty action becomes an assistant message. The
task is ``problem_statement.text`` from ``replay_config``, else the first
non-demonstration user message of ``history`` (the text after ``ISSUE:`` up
to ``INSTRUCTIONS:`` when the old template is used). ``info.submission``
becomes an ``answer`` turn.

SWE-agent does not judge its own runs. The verdict comes from a SWE-bench
``results.json`` (``resolved``/``resolved_ids`` and the other id lists, see
``outcomes.py``) in the trajectory's folder or up to two folders above, or from
``--outcomes``; the instance id is the file name without ``.traj`` (the
``problem_statement.id`` of ``replay_config`` is also accepted as a key).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import outcomes as _outcomes
from . import errors, harness
from ._common import Sniff, as_str, text_of, unanswered, read_single
from .model import Outcome, Run, RunError, Task, Turn, count_steps

# What each SWE-agent command does (runs/tool_kinds.py); any other action is a shell command line.
TOOL_KINDS = {"open": "view", "goto": "view", "scroll_up": "view", "scroll_down": "view", "filemap": "view",
              "edit": "edit", "create": "edit", "insert": "edit", "append": "edit",
              "search_dir": "search", "search_file": "search", "find_file": "search",
              "submit": "submit", "str_replace_editor": "editor", "*": "shell"}
_PR = re.compile(r"<pr_description>\s*(.*?)\s*</pr_description>", re.S)
_ISSUE = re.compile(r"ISSUE:\s*\n(.*?)(?:\n\s*INSTRUCTIONS:|\Z)", re.S)


def looks_like(s: Sniff) -> bool:
    if s.path.name.endswith(".traj"):
        return True
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, dict) and isinstance(obj.get("trajectory"), list) and ("history" in obj or "info" in obj):
        return True
    return bool(re.match(r'\s*\{\s*"(environment|trajectory|history)"\s*:', s.head)
                and re.search(r'"trajectory"\s*:\s*\[', s.head) and '"observation"' in s.head)


def instance_id(path: Path) -> str:
    name = path.name
    return name[: -len(".traj")] if name.endswith(".traj") else name.rsplit(".", 1)[0]


def _problem_statement(obj: dict) -> tuple[str | None, str | None]:
    """(text, id) of ``replay_config.problem_statement`` when present."""
    cfg = obj.get("replay_config")
    if isinstance(cfg, str):
        try:
            cfg = json.loads(cfg)
        except (ValueError, RecursionError):
            cfg = None
    ps = cfg.get("problem_statement") if isinstance(cfg, dict) else None
    if not isinstance(ps, dict):
        return None, None
    text = ps["text"] if isinstance(ps.get("text"), str) and ps["text"].strip() else None
    pid = ps["id"] if isinstance(ps.get("id"), str) and ps["id"].strip() else None
    return text, pid


def _first_user(history: Any) -> str | None:
    if not isinstance(history, list):
        return None
    for msg in history:
        if isinstance(msg, dict) and msg.get("role") == "user" and not msg.get("is_demo"):
            text = text_of(msg.get("content"))
            if text and text.strip():
                return text
    return None


# Actions the harness writes into the trajectory when it stops a run (SWE-agent 0.x).
_HARNESS_ACTION = re.compile(r"^(?:exit_[a-z_]+|skip)$")


def _harness_step(steps: list, ended: str | None) -> dict | None:
    """Remove and return the closing harness step, if the trajectory ends with one.

    SWE-agent 0.x logs it as an action such as ``exit_cost``; 1.x as a step with no
    action whose thought is the harness's message, when ``exit_status`` names a harness stop.
    """
    if not steps or not isinstance(steps[-1], dict):
        return None
    action = (as_str(steps[-1].get("action")) or "").strip()
    if _HARNESS_ACTION.match(action) or (not action and harness.is_harness(ended)):
        return steps.pop()
    return None


def to_run(obj: Any, path: Path, where: str) -> Run:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: a SWE-agent trajectory must be a JSON object")
    steps = obj.get("trajectory")
    if not isinstance(steps, list):
        raise RunError(f"{where}: missing 'trajectory' (a list of steps with action/observation/thought)")
    iid = instance_id(path)
    first_user = _first_user(obj.get("history"))
    instruction, ps_id = _problem_statement(obj)
    if instruction is None and first_user:
        # SWE-agent 0.x puts the issue after "ISSUE:", 1.x's default template in <pr_description>
        m = _ISSUE.search(first_user) or _PR.search(first_user)
        instruction = m.group(1).strip() if m and m.group(1).strip() else first_user
    if not instruction:
        raise RunError(f"{where}: no task: neither replay_config.problem_statement.text nor a user message in 'history'")

    info = obj.get("info") if isinstance(obj.get("info"), dict) else {}
    ended = harness.ended_by(info.get("exit_status"))
    steps = list(steps)
    closing = _harness_step(steps, ended)
    if closing is not None and ended is None:
        ended = harness.ended_by(as_str(closing.get("action")))

    turns: list[Turn] = [Turn(turn=0, type="message", role="user", content=first_user or instruction)]
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            raise RunError(f"{where}: trajectory[{i}] is not an object")
        action = as_str(step.get("action")) or ""
        thought = as_str(step.get("thought"))
        observation = as_str(step.get("observation"))
        extra = {k: step[k] for k in ("execution_time",) if isinstance(step.get(k), (int, float))}
        if action.strip():
            name = action.strip().split(None, 1)[0][:100]
            turns.append(Turn(turn=len(turns), type="function_call", role="assistant", name=name,
                              arguments=action.rstrip("\n"), reasoning=thought or None, result=observation,
                              is_error=errors.judge(text=observation), extra=extra))
        else:
            content = thought or as_str(step.get("response")) or ""
            turns.append(Turn(turn=len(turns), type="message", role="assistant", content=content, extra=extra))
            if observation:
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=observation))
    unanswered(turns)

    submission = info.get("submission")
    if isinstance(submission, str) and submission.strip():
        turns.append(Turn(turn=len(turns), type="answer", role="assistant", content=submission))
    said = {}
    if closing is not None:
        said = {"harness_message": as_str(closing.get("thought")) or as_str(closing.get("response")),
                "observation": as_str(closing.get("observation")) or None,
                "action": as_str(closing.get("action")) or None}
    harness.end_turn(turns, ended, exit_status=info.get("exit_status") if isinstance(info.get("exit_status"), str) else None,
                     **said)

    meta: dict[str, Any] = {}
    if isinstance(info.get("exit_status"), str):
        meta["exit_status"] = info["exit_status"]
    stats = info.get("model_stats")
    if isinstance(stats, dict):
        meta["model_stats"] = stats
    task = Task(id=iid, instruction=instruction, task_type="swe-bench" if "__" in iid else None,
                initial_observation=first_user if first_user and first_user != instruction else None,
                metadata=meta)
    run = Run(run_id=iid, task=task, turns=turns, outcome=None)
    keys = [iid] + ([ps_id] if ps_id and ps_id != iid else [])
    run.source = {"format": "swe-agent", "file": path.name, "original": obj, "original_format": "json",
                  "outcome_keys": keys}
    if ended:
        run.source["ended_by"] = ended
    return run


def attach_report_outcome(run: Run, path: Path) -> RunError | None:
    """Fill ``run.outcome`` from a nearby results.json; returns a RunError if that file is bad."""
    try:
        table, report = _outcomes.nearby_report(path)
    except RunError as exc:
        return exc
    if table is None:
        return None
    verdict = _outcomes.lookup(run, table)
    if verdict is not None:
        run.outcome = Outcome(success=verdict.success, steps=count_steps(run.turns), score=verdict.score,
                              ended_by=run.source.get("ended_by"))
        run.source["outcome_from"] = verdict.where
    else:
        run.source["no_outcome_reason"] = (_outcomes.why_missing(run, table)
                                           or f"{report} does not list it")
    return None


def read(path: Path) -> Iterator[Run | RunError]:
    return read_single(path, to_run, attach_report_outcome)
