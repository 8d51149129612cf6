"""What the LLM compiler sends for a run: its messages per response mode and the request body.

A run's messages are rendered per response mode only when that mode is asked for
(``LazyMessages``), and hashed into the response cache's key once. The request body is
the run's messages plus parts that are the same for every run of an outcome in a mode
(the model, the response format with its JSON schema, the limits): those are made, and
written as JSON, once per build (``RequestBodies``), not once per request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..llm.message_json import SharedParts
from ..llm.transport import AnswerTooLarge
from .prompt_views import Prompt
from .schema import json_schema

RESPONSE_MODES = ("json_schema", "json_object", "text")  # most to least structured


def next_mode(mode: str) -> str:
    i = RESPONSE_MODES.index(mode)
    return RESPONSE_MODES[min(i + 1, len(RESPONSE_MODES) - 1)]


class LazyMessages(dict):
    """A run's chat messages per response mode, rendered when first asked for."""

    def __init__(self, compiler: Any, prompt: Prompt):
        super().__init__()
        self.compiler, self.prompt = compiler, prompt

    def __missing__(self, mode: str) -> list[dict[str, str]]:
        self[mode] = messages = self.compiler.messages(self.prompt, mode)
        return messages

    def key(self, mode: str) -> str:
        """The cache key of this mode's messages, hashed once (looked up, then stored under)."""
        keys = self.__dict__.setdefault("keys", {})
        if mode not in keys:
            keys[mode] = self.compiler.cache_key_for(self[mode], mode)
        return keys[mode]


@dataclass
class FirstAnswer:
    """A run's first answer and the request it answers (the cache key is that request's)."""

    text: str | None  # None: the answer passed the size cap and was not kept
    usage: dict[str, int]
    mode: str
    messages: list[dict[str, str]]
    key: str
    cached: bool
    too_large: AnswerTooLarge | None = None
    runs: list[str] = field(default_factory=list)  # the cached answer's run tags


class RequestBodies:
    """The chat request bodies of one compiler, their shared parts made once per setting."""

    def __init__(self) -> None:
        self._shared: dict[tuple, SharedParts] = {}

    def body(self, messages: list[dict[str, str]], outcome: str, mode: str, *, model: str,
             temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
        setting = (outcome, mode, model, temperature, max_tokens)
        shared = self._shared.get(setting)
        if shared is None:
            shared = self._shared[setting] = SharedParts(_parts(outcome, mode, model, temperature, max_tokens))
        return shared.body(messages)


def _parts(outcome: str, mode: str, model: str, temperature: float | None, max_tokens: int | None) -> dict[str, Any]:
    """A request body with its messages left out (their key in its place)."""
    body: dict[str, Any] = {"model": model, "messages": None}
    if mode == "json_schema":
        body["response_format"] = {"type": "json_schema", "json_schema": {
            "name": f"trajectory_compilation_{outcome}", "schema": json_schema(outcome), "strict": False}}
    elif mode == "json_object":
        body["response_format"] = {"type": "json_object", "schema": json_schema(outcome)}
    if temperature is not None:
        body["temperature"] = temperature
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    return body
