"""Messages in the shape of tau-bench's result file (OpenAI chat messages, a tool call's arguments
written as a JSON string, its answer as a message of role "tool"), for fixtures of made-up shops."""

from __future__ import annotations

import itertools
import json

_ids = itertools.count()


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def agent(text: str) -> dict:
    return {"content": text, "role": "assistant"}


def tool(name: str, arguments: dict, answer) -> list[dict]:
    """The assistant's call and the tool's answer, as two messages."""
    call_id = f"call_{next(_ids):05d}Tb"
    return [{"content": None, "role": "assistant", "tool_calls": [
                {"function": {"arguments": json.dumps(arguments), "name": name}, "id": call_id, "type": "function"}]},
            {"role": "tool", "tool_call_id": call_id, "name": name,
             "content": answer if isinstance(answer, str) else json.dumps(answer)}]
