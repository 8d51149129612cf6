"""Which model to call, where, and with which key.

Resolution, most specific first (as the ``llm`` tool does it):

- model:    ``--model``, else ``WIKITRACE_MODEL``, else ``DEFAULT_MODEL``;
- endpoint: ``--base-url``, else ``OPENAI_BASE_URL``, else OpenAI's own API;
- key:      ``OPENAI_API_KEY``. A self-hosted endpoint (vLLM, Ollama, llama.cpp)
            may need none; a placeholder key is sent so the client is satisfied;
- limits:   ``--max-tokens`` / ``WIKITRACE_MAX_TOKENS`` (every request carries
            one, so a small model cannot generate forever), ``--timeout`` /
            ``WIKITRACE_TIMEOUT`` (seconds per request), and
            ``WIKITRACE_MAX_ANSWER_BYTES`` (a larger answer is a schema fault).

``resolve`` returns ``None`` when neither a key nor an endpoint is configured:
the build then uses the offline compiler. ``resolve_embeddings`` does the same for
the embeddings endpoint of dialogue memory, which has its own variables (a chat
endpoint often serves no embeddings) but the same key rule: its own key, else
``OPENAI_API_KEY``, else the placeholder. The key is kept out of ``repr`` and
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
ENV_MAX_TOKENS = "WIKITRACE_MAX_TOKENS"
ENV_TIMEOUT = "WIKITRACE_TIMEOUT"
ENV_MAX_ANSWER_BYTES = "WIKITRACE_MAX_ANSWER_BYTES"
ENV_EMBEDDINGS_URL = "WIKITRACE_EMBEDDINGS_URL"
ENV_EMBEDDINGS_MODEL = "WIKITRACE_EMBEDDINGS_MODEL"
ENV_EMBEDDINGS_QUERY_MODEL = "WIKITRACE_EMBEDDINGS_QUERY_MODEL"
ENV_EMBEDDINGS_KEY = "WIKITRACE_EMBEDDINGS_API_KEY"
DEFAULT_EMBEDDINGS_MODEL = "e5-small-passage"

# A full answer (8 decisions, 3 lessons) takes about 1,000 tokens; the cap leaves
# room for that and stops a model that repeats itself.
DEFAULT_MAX_TOKENS = 2048
DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_ANSWER_BYTES = 1_000_000


class LLMConfigError(ValueError):
    """A configuration that cannot work; the message names what to set."""


@dataclass(frozen=True)
class LLMConfig:
    model: str
    base_url: str | None  # None: OpenAI's default endpoint
    api_key: str = field(repr=False)
    key_source: str = ENV_KEY  # "OPENAI_API_KEY" | "argument" | "placeholder"
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout: float = DEFAULT_TIMEOUT
    max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES

    def __repr__(self) -> str:
        return (f"LLMConfig(model={self.model!r}, base_url={self.base_url!r}, "
                f"api_key=<hidden>, key_source={self.key_source!r}, max_tokens={self.max_tokens}, "
                f"timeout={self.timeout:g})")

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


def _limit(arg: float | None, env: Mapping[str, str], var: str, flag: str | None, default: float,
           kind: type) -> float:
    """A positive number from the option, else the environment, else the default."""
    if arg is not None:
        value, source = arg, flag or var
    else:
        raw = _clean(env.get(var))
        if raw is None:
            return default
        source = var
        try:
            value = kind(raw)
        except ValueError:
            raise LLMConfigError(f"{var} is {raw!r}, which is not a{'n integer' if kind is int else ' number'}; "
                                 f"set it to a positive number or unset it") from None
    if not value > 0:
        raise LLMConfigError(f"{source} is {value!r}; it must be a positive number")
    return value


def resolve(model: str | None = None, base_url: str | None = None, *,
            api_key: str | None = None, env: Mapping[str, str] | None = None,
            max_tokens: int | None = None, timeout: float | None = None) -> LLMConfig | None:
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
    key, key_source = (key_arg, "argument") if key_arg else api_key_from(env, ENV_KEY)

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
        key, key_source = api_key_or_placeholder(None, None)

    chosen_model = model_arg or _clean(env.get(ENV_MODEL)) or DEFAULT_MODEL
    return LLMConfig(
        model=chosen_model, base_url=url, api_key=key, key_source=key_source,
        max_tokens=int(_limit(max_tokens, env, ENV_MAX_TOKENS, "--max-tokens", DEFAULT_MAX_TOKENS, int)),
        timeout=float(_limit(timeout, env, ENV_TIMEOUT, "--timeout", DEFAULT_TIMEOUT, float)),
        max_answer_bytes=int(_limit(None, env, ENV_MAX_ANSWER_BYTES, None, DEFAULT_MAX_ANSWER_BYTES, int)),
    )


def api_key_from(env: Mapping[str, str], *names: str) -> tuple[str | None, str | None]:
    """The key in the first of ``names`` that is set, and that variable's name."""
    for name in names:
        key = _clean(env.get(name))
        if key is not None:
            return key, name
    return None, None


def api_key_or_placeholder(key: str | None, source: str | None) -> tuple[str, str]:
    """A key to send: the one found, else the placeholder self-hosted servers accept."""
    return (key, source or "argument") if key else (PLACEHOLDER_KEY, "placeholder")


class EmbeddingError(RuntimeError):
    """An embeddings endpoint that is misconfigured or did not give the vectors asked for."""


@dataclass(frozen=True)
class EmbeddingsConfig:
    url: str
    model: str
    query_model: str
    api_key: str = field(repr=False, default=PLACEHOLDER_KEY)

    @property
    def base_url(self) -> str:
        return self.url

    @property
    def endpoint(self) -> str:
        return self.url

    def describe(self) -> str:
        return f"endpoint {self.model} (queries: {self.query_model}) at {self.url}"


def query_model_for(model: str) -> str:
    return model.replace("passage", "query") if "passage" in model else model


def resolve_embeddings(url: str | None = None, model: str | None = None, query_model: str | None = None,
                       env: Mapping[str, str] | None = None) -> EmbeddingsConfig | None:
    """The configured embedding endpoint, or ``None`` (hashed-lexical offline substitute)."""
    env = os.environ if env is None else env
    url = _clean(url) or _clean(env.get(ENV_EMBEDDINGS_URL))
    if url is None or url.lower() in ("off", "none", "0", "false"):
        return None
    p = urlparse(url)
    if p.scheme not in ("http", "https") or not p.netloc:
        raise EmbeddingError(f"{ENV_EMBEDDINGS_URL} is {url!r}, which is not an http(s) URL "
                             f"(e.g. http://127.0.0.1:8001/v1)")
    model = _clean(model) or _clean(env.get(ENV_EMBEDDINGS_MODEL)) or DEFAULT_EMBEDDINGS_MODEL
    qmodel = _clean(query_model) or _clean(env.get(ENV_EMBEDDINGS_QUERY_MODEL)) or query_model_for(model)
    key, _ = api_key_or_placeholder(*api_key_from(env, ENV_EMBEDDINGS_KEY, ENV_KEY))
    return EmbeddingsConfig(url=url.rstrip("/"), model=model, query_model=qmodel, api_key=key)
