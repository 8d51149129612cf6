"""Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``).

One JSON object per line, each ``{"timestamp", "type", "payload"}``::

    session_meta   payload: {id, cwd, cli_version, originator, instructions?, git?}
    turn_context   payload: {cwd, model, approval_policy, sandbox_policy, ...}
    response_item  payload: what the model saw and said, by payload.type:
        message               {role: user|assistant|developer, content: [{type: input_text|output_text, text}]}
        reasoning             {summary: [{type: summary_text, text}], encrypted_content}
        function_call         {name, arguments (a JSON string), call_id}
        function_call_output  {call_id, output}
        custom_tool_call      {name, input (free text, e.g. an apply_patch body), call_id}
        custom_tool_call_output, local_shell_call {action: {command}}, web_search_call {action}
    event_msg      the UI's copy of the same conversation (user_message, agent_message,
                   token_count, ...): not read, the response items already hold it
    compacted      the summary that replaced older items when the context filled up

Rollouts from early Codex versions have no wrapper: a first line ``{id, timestamp,
instructions}``, then the response items themselves; both shapes are read.

Turns come from the response items only. Assistant text and reasoning summaries become
the ``reasoning`` of the next call (or an assistant message when no call follows), as the
Claude Code importer does. A call's output fills its ``result``; its ``is_error`` comes
from the exit code when the output carries one (``{"output", "metadata": {"exit_code"}}``
or an ``Exit code: N`` first line), else from the text. User messages Codex writes itself
(``<environment_context>``, ``<user_instructions>``, AGENTS.md contents, developer
messages) are context, not turns; they stay in the original.

One file is one run; its id is the session id (else the file name). A rollout carries no
verdict: pass ``--outcome`` to ``wikitrace add`` (or ``--outcomes`` keyed by session id).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import errors
from ._common import Sniff, parse_arguments, session_lines, text_of, unanswered
from .model import Run, RunError, Task, Turn

# What each Codex CLI tool does (runs/tool_kinds.py).
TOOL_KINDS = {"shell": "shell", "local_shell": "shell", "exec_command": "shell",
              "apply_patch": "edit"}
_WRAPPED = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_ITEMS = {"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
          "custom_tool_call_output", "local_shell_call", "web_search_call"}
# Messages Codex itself puts in the user's role: the environment and instruction files.
_CONTEXT = re.compile(r"\s*(<environment_context>|<user_instructions>|<user_shell_command>|# AGENTS\.md instructions)")
_EXIT_LINE = re.compile(r"\A\s*Exit code:\s*(-?\d+)")


def _kind(obj: dict) -> str | None:
    kind = obj.get("type")
    return kind if isinstance(kind, str) else None


def looks_like(s: Sniff) -> bool:
    first = s.first
    if not isinstance(first, dict):
        return False
    if _kind(first) in _WRAPPED and isinstance(first.get("payload"), dict) and "timestamp" in first:
        return True
    # An early rollout: the session header, no wrapper.
    return (isinstance(first.get("id"), str) and "timestamp" in first and "instructions" in first
            and "type" not in first and s.path.name.startswith("rollout-"))


def _output(raw: Any) -> tuple[str, bool | None]:
    """A call's output text and what its exit code says (None: no exit code)."""
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            meta = parsed.get("metadata") if isinstance(parsed.get("metadata"), dict) else {}
            return text_of(parsed["output"]) or "", errors.from_exit_status(meta.get("exit_code"))
        match = _EXIT_LINE.match(raw)
        return raw, errors.from_exit_status(int(match.group(1))) if match else None
    if isinstance(raw, dict):
        return text_of(raw.get("output", raw)) or "", True if raw.get("success") is False else None
    return text_of(raw) or "", None


def _call(item: dict) -> tuple[str, Any]:
    kind = item["type"]
    name = item.get("name") if isinstance(item.get("name"), str) and item.get("name") else "unknown"
    if kind == "function_call":
        return name, parse_arguments(item.get("arguments"))
    if kind == "custom_tool_call":
        return name, item.get("input")
    if kind == "local_shell_call":
        return "local_shell", (item.get("action") or {})
    return "web_search", item.get("action") or {}


def items_to_turns(items: list[dict]) -> list[Turn]:
    turns: list[Turn] = []
    calls: dict[str, Turn] = {}
    said: list[str] = []
    thought: list[str] = []

    def flush() -> None:
        if said or thought:
            turns.append(Turn(turn=len(turns), type="message", role="assistant", content="\n\n".join(said),
                              reasoning="\n\n".join(thought) or None))
        said.clear()
        thought.clear()

    for item in items:
        kind = item.get("type")
        if kind == "message":
            text = text_of(item.get("content")) or ""
            if item.get("role") == "assistant":
                if text.strip():
                    said.append(text)
            elif item.get("role") == "user" and text.strip() and not _CONTEXT.match(text):
                flush()
                turns.append(Turn(turn=len(turns), type="message", role="user", content=text))
        elif kind == "reasoning":
            summary = text_of(item.get("summary")) or text_of(item.get("content"))
            if summary and summary.strip():
                thought.append(summary)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            name, arguments = _call(item)
            turn = Turn(turn=len(turns), type="function_call", role="assistant", name=name, arguments=arguments,
                        reasoning="\n\n".join(thought + said) or None)
            said.clear()
            thought.clear()
            call_id = item.get("call_id") or item.get("id")
            if isinstance(call_id, str) and call_id:
                turn.extra["call_id"] = call_id
                calls[call_id] = turn
            if kind == "web_search_call":  # answered inside the model's turn: no output item follows
                turn.result, turn.is_error = "", errors.from_status(item.get("status"))
            turns.append(turn)
        elif kind in ("function_call_output", "custom_tool_call_output"):
            text, failed = _output(item.get("output"))
            call_id = item.get("call_id")
            target = calls.get(call_id) if isinstance(call_id, str) else None
            if target is not None and target.result is None:
                target.result, target.is_error = text, errors.judge(failed, text=text)
            else:
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=text,
                                  is_error=errors.judge(failed, text=text)))
    flush()
    unanswered(turns)
    return turns


def read(path: Path) -> Iterator[Run | RunError]:
    original: list[Any] = []
    items: list[dict] = []
    meta: dict[str, Any] = {}
    model = None
    context = 0
    try:
        lines = session_lines(path, "rollout", original)
    except RunError as exc:  # binary, or not text at all
        yield exc
        return
    for line in lines:
        if isinstance(line, RunError):
            yield line
            continue
        lineno, obj = line
        kind, payload = _kind(obj), obj.get("payload")
        if kind in _WRAPPED:
            if not isinstance(payload, dict):
                yield RunError(f"{path}:{lineno}: a {kind} line without a payload object; line skipped")
                continue
            if kind == "session_meta" and not meta:
                meta = payload
            elif kind == "turn_context" and isinstance(payload.get("model"), str):
                model = payload["model"]
            elif kind == "response_item" and _kind(payload) in _ITEMS:
                items.append(payload)
        elif kind in _ITEMS:  # an early rollout's bare item
            items.append(obj)
        elif lineno == 1 and "instructions" in obj:  # an early rollout's header
            meta = obj
    for item in items:
        if item.get("type") == "message" and item.get("role") == "user" and _CONTEXT.match(text_of(item.get("content")) or ""):
            context += 1
    turns = items_to_turns(items)
    first_user = next((t.content for t in turns if t.type == "message" and t.role == "user"), None)
    if not first_user:
        yield RunError(f"{path}: no user prompt in the rollout (only Codex's own context); nothing says what the "
                       f"task was" if original else f"{path}: empty file")
        return
    turns.append(Turn(turn=len(turns), type="episode_over"))
    session_id = meta.get("id") if isinstance(meta.get("id"), str) and meta.get("id") else None
    run_id = session_id or (path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name)
    info: dict[str, Any] = {}
    for key in ("cwd", "cli_version", "originator"):
        if isinstance(meta.get(key), str) and meta[key]:
            info[key] = meta[key]
    git = meta.get("git")
    if isinstance(git, dict) and isinstance(git.get("branch"), str):
        info["git_branch"] = git["branch"]
    if model:
        info["model"] = model
    task = Task(id=run_id, instruction=first_user, task_type="codex-cli", metadata=info)
    run = Run(run_id=run_id, task=task, turns=turns, outcome=None)
    run.source = {"format": "codex-cli", "file": path.name, "original": original, "original_format": "jsonl",
                  "context_messages": context, "outcome_keys": [path.name.rsplit(".", 1)[0]],
                  "no_outcome_reason": "a Codex CLI rollout has no verdict"}
    yield run
