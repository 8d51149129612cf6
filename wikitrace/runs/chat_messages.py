"""OpenAI chat-completions messages as a turn log.

A transcript in the chat-completions shape (``role``, ``content`` as text or parts,
assistant ``tool_calls`` answered by ``tool`` messages) is what the ``openai-chat``
run records carry and what an agent's own descent transcript often is, so both
read it here. System/user messages and assistant replies without tool calls become
``message`` turns; each assistant tool call becomes a ``function_call`` turn whose
``reasoning`` is the assistant text sent with it and whose ``result`` is the
``tool`` message answering it. Results are paired by ``tool_call_id``, oldest
unanswered call first, because real logs reuse ids. ``is_error`` follows
``errors.observation_is_error`` (tau-bench tools answer ``Error: ...``).
"""

from __future__ import annotations

from typing import Any

from . import errors
from ._common import parse_arguments, text_of
from .model import RunError, Turn


def messages_to_turns(messages: list[Any], where: str) -> list[Turn]:
    turns: list[Turn] = []
    pending: dict[str, list[Turn]] = {}  # tool_call_id -> calls still waiting for a result
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict):
            raise RunError(f"{where}: message {i} is not an object")
        role = msg.get("role")
        content = text_of(msg.get("content"))
        if role == "assistant" and msg.get("tool_calls"):
            if not isinstance(msg["tool_calls"], list):
                raise RunError(f"{where}: message {i}: 'tool_calls' must be a list")
            reasoning = content or None
            for call in msg["tool_calls"]:
                call = call if isinstance(call, dict) else {}
                fn = call.get("function") if isinstance(call.get("function"), dict) else {}
                turn = Turn(
                    turn=len(turns), type="function_call", role="assistant",
                    name=str(fn.get("name") or "unknown"),
                    arguments=parse_arguments(fn.get("arguments")),
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
                call.is_error = errors.observation_is_error(content or "")
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
