"""Claude Code session transcripts (``~/.claude/projects/<project>/<session-id>.jsonl``).

One JSON object per line. Fields used (see docs/input-formats.md)::

    {"type": "user" | "assistant" | "summary" | "system" | ...,
     "sessionId": "...", "uuid": "...", "isSidechain": false, "isMeta": false?,
     "message": {"role": .., "content": "text" | [parts]}}

Content parts: ``text``; ``thinking`` (kept as reasoning); ``tool_use``
``{id, name, input}`` in assistant lines; ``tool_result`` ``{tool_use_id,
content, is_error}`` in user lines (``is_error`` as logged; without the flag, the
text rule of ``errors.observation_is_error``). Claude Code writes each part of one
assistant message on its own line, so the importer buffers assistant text
and thinking: they become the ``reasoning`` of the next ``tool_use`` (as the
OpenAI-chat importer does with text sent alongside calls), or an assistant
``message`` turn (thinking in ``reasoning``) when no call follows. A
``tool_result`` fills the ``result`` and ``is_error`` of the call with the
same id; a result for an unknown id stays a ``tool`` message.

One file is one run; its id is the ``sessionId`` (else the file name). Lines
of other types (``summary``, ``file-history-snapshot``, ``system``, ...) and
``isMeta`` user lines are not turns; they stay in the original.

Sidechains: ``isSidechain: true`` lines are a sub-agent's own conversation
(the Task tool). They are left out of the run's turns and counted in
``run.source['sidechain_entries']``; the Task call's ``tool_result`` in the
main chain already carries the sub-agent's answer. A file holding only
sidechain lines (a separate ``agent-*.jsonl``) is reported and skipped.

The transcript has no verdict: pass ``--outcomes`` keyed by session id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import errors
from ._common import Sniff, session_lines, text_of, unanswered
from .model import Run, RunError, Task, Turn

# What each Claude Code tool does (runs/tool_kinds.py).
TOOL_KINDS = {"Edit": "edit", "MultiEdit": "edit", "Write": "edit", "NotebookEdit": "edit", "Read": "view",
              "NotebookRead": "view", "Grep": "search", "Glob": "search", "LS": "search", "Bash": "shell"}
_TYPES = {"user", "assistant"}
_OTHER_TYPES = {"summary", "system", "file-history-snapshot", "queue-operation", "result", "progress", "attachment"}
# Keys that only Claude Code's transcript lines carry, one set per line kind.
_MARKERS = ("sessionId", "uuid", "leafUuid", "parentUuid", "messageId")
_SCAN_LINES = 2000  # lines read past the head when it holds only bookkeeping lines
# A slash command the user typed, or its output, as Claude Code logs them: not the task.
_LOCAL_COMMAND = re.compile(r"\s*<(command-name|command-message|local-command-stdout|local-command-stderr)>")


def _is_entry(obj: Any) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("type"), str) and obj["type"] in _TYPES | _OTHER_TYPES
            and any(key in obj for key in _MARKERS))


_UNKNOWN = "unknown"  # a line naming a session, of a type this list does not know


def _verdict(line: str) -> bool | str | None:
    """True: a user/assistant transcript line; False: a line Claude Code never writes;
    None: a bookkeeping line (summary, file-history-snapshot, system...) that says nothing yet;
    ``_UNKNOWN``: a typed line naming its session, of a type newer than this list
    (``{"type": "mode", "sessionId": ..}`` opens current transcripts): passed over, and not
    counted as bookkeeping, so only a real transcript line can make the file Claude Code's."""
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return False
    if not _is_entry(obj):
        return _UNKNOWN if isinstance(obj, dict) and isinstance(obj.get("type"), str) and "sessionId" in obj else False
    if obj["type"] in _TYPES and isinstance(obj.get("message"), dict):
        return True
    return None


def looks_like(s: Sniff) -> bool:
    """Judged by content: the first line that is not bookkeeping must be a user or
    assistant transcript line. Current transcripts open with ``file-history-snapshot``
    lines (a snapshot can be longer than the head), older ones with ``summary``; so when
    the head holds only such lines the file is read on, line by line, to the first that
    decides."""
    lines = s.head.split("\n")
    if not s.complete:
        lines = lines[:-1]  # the last line of the head may be cut short
    seen = 0
    for line in lines:
        if line.strip():
            verdict = _verdict(line)
            if verdict is _UNKNOWN:
                continue
            if verdict is not None:
                return verdict
            seen += 1
    if s.complete:
        return seen > 0
    try:
        with s.path.open("rb") as fh:
            for count, raw in enumerate(fh):
                if count >= _SCAN_LINES:
                    break
                if raw.strip():
                    verdict = _verdict(raw.decode("utf-8", errors="replace"))
                    if verdict is _UNKNOWN:
                        continue
                    if verdict is not None:
                        return verdict
                    seen += 1
    except OSError:
        return False
    return seen > 0


def _flush(turns: list[Turn], text: list[str], thinking: list[str]) -> None:
    if text or thinking:
        turns.append(Turn(turn=len(turns), type="message", role="assistant", content="\n\n".join(text),
                          reasoning="\n\n".join(thinking) or None))
    text.clear()
    thinking.clear()


def entries_to_turns(entries: list[tuple[int, dict]], where: str) -> list[Turn]:
    turns: list[Turn] = []
    calls: dict[str, list[Turn]] = {}
    text: list[str] = []
    thinking: list[str] = []
    for lineno, entry in entries:
        msg = entry.get("message")
        if not isinstance(msg, dict):
            continue
        content = msg.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}] if isinstance(content, str) else []
        if entry.get("type") == "assistant":
            for part in parts:
                if not isinstance(part, dict):
                    continue
                kind = part.get("type")
                if kind == "text" and isinstance(part.get("text"), str):
                    if part["text"].strip():
                        text.append(part["text"])
                elif kind in ("thinking", "redacted_thinking"):
                    thought = part.get("thinking")
                    thinking.append(thought if isinstance(thought, str) else "[redacted thinking]")
                elif kind in ("tool_use", "server_tool_use"):
                    reasoning = "\n\n".join(thinking + text) or None
                    text.clear()
                    thinking.clear()
                    name = part.get("name")
                    t = Turn(turn=len(turns), type="function_call", role="assistant",
                             name=name if isinstance(name, str) and name else "unknown",
                             arguments=part.get("input"), reasoning=reasoning,
                             extra={"tool_use_id": part["id"]} if isinstance(part.get("id"), str) else {})
                    turns.append(t)
                    if isinstance(part.get("id"), str):
                        calls.setdefault(part["id"], []).append(t)
            continue
        # a user line: typed text, or results of earlier calls
        _flush(turns, text, thinking)
        for part in parts:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "tool_result":
                tid = part.get("tool_use_id")
                waiting = calls.get(tid) if isinstance(tid, str) else None
                result = text_of(part.get("content")) or ""
                target = next((c for c in waiting or [] if c.result is None), None)
                is_error = errors.judge(errors.from_status(part.get("is_error")), text=result)
                if target is not None:
                    target.result = result
                    target.is_error = is_error
                else:
                    turns.append(Turn(turn=len(turns), type="message", role="tool", content=result,
                                      is_error=is_error, extra={"tool_use_id": tid} if isinstance(tid, str) else {}))
            elif kind == "text" and isinstance(part.get("text"), str):
                turns.append(Turn(turn=len(turns), type="message", role="user", content=part["text"]))
            elif kind == "image":
                turns.append(Turn(turn=len(turns), type="message", role="user", content="[image]"))
    _flush(turns, text, thinking)
    unanswered(turns)
    return turns


def read(path: Path) -> Iterator[Run | RunError]:
    original: list[Any] = []
    main: list[tuple[int, dict]] = []
    sidechain = meta = 0
    session_ids: list[str] = []
    try:
        lines = session_lines(path, "transcript", original)
    except RunError as exc:
        yield exc
        return
    for line in lines:
        if isinstance(line, RunError):
            yield line
            continue
        lineno, obj = line
        if not isinstance(obj.get("type"), str) or obj["type"] not in _TYPES:
            continue
        if obj.get("isSidechain") is True:
            sidechain += 1
            continue
        if obj.get("isMeta") is True:
            meta += 1
            continue
        sid = obj.get("sessionId")
        if isinstance(sid, str) and sid and sid not in session_ids:
            session_ids.append(sid)
        main.append((lineno, obj))
    if not main:
        if sidechain:
            yield RunError(f"{path}: only sidechain (sub-agent) entries ({sidechain}); a sub-agent "
                           f"conversation is not a run of its own, skipped")
        elif original:
            yield RunError(f"{path}: no user or assistant messages; nothing to import")
        else:
            yield RunError(f"{path}: empty file")
        return
    try:
        turns = entries_to_turns(main, str(path))
    except RunError as exc:
        yield exc
        return
    first_user = next((t.content for t in turns if t.type == "message" and t.role == "user"
                       and (t.content or "").strip() and not _LOCAL_COMMAND.match(t.content)), None)
    if not first_user:
        yield RunError(f"{path}: no user prompt in the session; nothing says what the task was")
        return
    turns.append(Turn(turn=len(turns), type="episode_over"))
    run_id = session_ids[0] if session_ids else (path.name[: -len(".jsonl")] if path.name.endswith(".jsonl") else path.name)
    meta_info: dict[str, Any] = {}
    first = main[0][1]
    for key in ("cwd", "gitBranch", "version"):
        if isinstance(first.get(key), str) and first[key]:
            meta_info[key] = first[key]
    model = next((e.get("message", {}).get("model") for _, e in main
                  if e.get("type") == "assistant" and isinstance(e.get("message"), dict)
                  and isinstance(e["message"].get("model"), str)), None)
    if model:
        meta_info["model"] = model
    if len(session_ids) > 1:
        meta_info["session_ids"] = session_ids
    task = Task(id=run_id, instruction=first_user, task_type="claude-code", metadata=meta_info)
    run = Run(run_id=run_id, task=task, turns=turns, outcome=None)
    run.source = {"format": "claude-code", "file": path.name, "original": original, "original_format": "jsonl",
                  "sidechain_entries": sidechain, "meta_entries": meta,
                  "outcome_keys": [path.name.rsplit(".", 1)[0]]}
    yield run
