"""Which model to call, where, and with which key.

Resolution, most specific first (as the ``llm`` tool does it):

- model:    ``--model``, else ``WIKITRACE_MODEL``, else ``DEFAULT_MODEL``;
- endpoint: ``--base-url``, else ``OPENAI_BASE_URL``, else OpenAI's own API;
- key:      ``OPENAI_API_KEY``. A self-hosted endpoint (vLLM, Ollama, llama.cpp)
            may need none; a placeholder key is sent so the client is satisfied.

``resolve`` returns ``None`` when neither a key nor an endpoint is configured:
the build then uses the offline compiler. The key is kept out of ``repr`` and
``describe`` so it cannot end up in logs, corpus files or the response cache.

This module does not import ``openai``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping
from urllib.parse import urlparse

DEFAULT_MODEL = "gpt-4o-mini"
PLACEHOLDER_KEY = "wikitrace-no-key"  # sent to endpoints that need no key

ENV_KEY = "OPENAI_API_KEY"
ENV_BASE_URL = "OPENAI_BASE_URL"
ENV_MODEL = "WIKITRACE_MODEL"


class LLMConfigError(ValueError):
    """A configuration that cannot work; the message names what to set."""


@dataclass(frozen=True)
class LLMConfig:
    model: str
    base_url: str | None  # None: OpenAI's default endpoint
    api_key: str = field(repr=False)
    key_source: str = ENV_KEY  # "OPENAI_API_KEY" | "argument" | "placeholder"

    def __repr__(self) -> str:
        return (f"LLMConfig(model={self.model!r}, base_url={self.base_url!r}, "
                f"api_key=<hidden>, key_source={self.key_source!r})")

    __str__ = __repr__

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"

    def describe(self) -> str:
        """One line for logs; never includes the key."""
        key = {"placeholder": "no key"}.get(self.key_source, f"key from {self.key_source}")
        return f"{self.model} at {self.endpoint} ({key})"


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    return value or None


def resolve(model: str | None = None, base_url: str | None = None, *,
            api_key: str | None = None, env: Mapping[str, str] | None = None) -> LLMConfig | None:
    """Work out the LLM settings from arguments and the environment.

    ``model`` and ``base_url`` are the ``--model`` and ``--base-url`` options;
    ``api_key`` is for library callers (the CLI has no key option on purpose).
    Returns ``None`` for "no LLM configured: compile offline". Raises
    ``LLMConfigError`` when the settings contradict each other.
    """
    env = os.environ if env is None else env
    model_arg = _clean(model)
    url_arg = _clean(base_url)
    key_arg = _clean(api_key)

    url = url_arg or _clean(env.get(ENV_BASE_URL))
    url_from = "--base-url" if url_arg else ENV_BASE_URL
    key = key_arg or _clean(env.get(ENV_KEY))
    key_source = "argument" if key_arg else ENV_KEY

    if url is not None:
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise LLMConfigError(
                f"{url_from} is {url!r}, which is not an http(s) URL; set {url_from} to an "
                f"OpenAI-compatible endpoint such as http://127.0.0.1:8080/v1"
            )
        url = url.rstrip("/")

    if key is None and url is None:
        if model_arg:
            raise LLMConfigError(
                f"--model {model_arg} needs an endpoint: set {ENV_KEY} (for OpenAI's API), "
                f"or pass --base-url / set {ENV_BASE_URL} (for a local server), or drop --model "
                f"to compile offline"
            )
        return None

    if key is None:
        host = (urlparse(url).hostname or "").lower()
        if host == "api.openai.com" or host.endswith(".openai.com"):
            raise LLMConfigError(f"{url_from} points at OpenAI ({url}) but no key is set: set {ENV_KEY}")
        key, key_source = PLACEHOLDER_KEY, "placeholder"

    chosen_model = model_arg or _clean(env.get(ENV_MODEL)) or DEFAULT_MODEL
    return LLMConfig(model=chosen_model, base_url=url, api_key=key, key_source=key_source)
