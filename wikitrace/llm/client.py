"""The synchronous side of the gateway: one request at a time, for callers that are not
an event loop (dialogue claims, matches and answers, embeddings, benchmarks).

``Client.execute`` sends one chat request and returns an ``Answer`` whose text (and
parsed JSON object, for the JSON modes) has already been redacted, so nothing the
model wrote back reaches a file, a cache, a printed line or a later prompt unscrubbed.
Every request carries ``max_tokens``; a reply past ``max_answer_bytes`` is not read to
the end. Timeouts, dropped connections, 408/409/429 and 5xx are retried with backoff
(``Retry-After`` honoured); 401/403/404, or a connection refused before the endpoint
ever answered, opens the breaker: every later request fails at once with the same
reason. Whatever is left is raised as ``ModelFault`` (the caller falls back) and
counted in ``stats.fallbacks`` by reason; a programming error is never caught here.

Capability flags say what the endpoint is believed to take: ``json_schema`` and
``json_object`` start true and turn false when the server refuses that response
format (the request is then sent again in the next, plainer mode); ``embeddings``
is true when the client was made for an embeddings endpoint.

``openai`` is imported at the first request, never at import time.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .replies import (FATAL_STATUS, FORMAT_COMPLAINT, RETRY_STATUS, AnswerTooLarge, completion_text,
                        error_text, one_line, raw_response_class, refused, retry_after)

MODES = ("json_schema", "json_object", "text")  # most to least structured
_KEEP = object()  # "the default redactor"


class ModelFault(Exception):
    """No usable answer after the retries; ``reason`` is the one line the caller records."""

    def __init__(self, reason: str, *, fatal: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal  # the breaker is open: every later request would meet it


@dataclass
class Answer:
    text: str                    # redacted
    data: dict[str, Any] | None  # the JSON object in the text (JSON asked for), redacted string by string
    usage: dict[str, int]
    mode: str
    redacted: Counter = field(default_factory=Counter)  # secrets replaced, by kind


@dataclass
class ClientStats:
    requests: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    fallbacks: Counter = field(default_factory=Counter)  # reason -> how many calls gave up with it

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "retries": self.retries, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens, "fallbacks": dict(sorted(self.fallbacks.items()))}


def parse_object(text: str) -> dict[str, Any] | None:
    """The first ``{...}`` span of ``text`` as a JSON object, or None (models wrap JSON in prose)."""
    found = re.search(r"\{.*\}", text.strip(), re.S)
    if not found:
        return None
    try:
        data = json.loads(found.group(0))
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


class Client:
    """One OpenAI-compatible endpoint (``config``: an ``LLMConfig`` or an ``EmbeddingsConfig``)."""

    def __init__(self, config: Any, *, timeout: float | None = None, max_attempts: int = 3,
                 max_tokens: int | None = None, max_answer_bytes: int | None = None, redactor: Any = _KEEP,
                 backoff: float = 0.5, max_backoff: float = 8.0, max_retry_after: float = 30.0,
                 embeddings: bool = False, seed: int | None = None) -> None:
        from .config import DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT

        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.config = config
        self.timeout = timeout if timeout is not None else getattr(config, "timeout", DEFAULT_TIMEOUT)
        self.max_tokens = max_tokens if max_tokens is not None else getattr(config, "max_tokens", DEFAULT_MAX_TOKENS)
        self.max_answer_bytes = (max_answer_bytes if max_answer_bytes is not None
                                 else getattr(config, "max_answer_bytes", DEFAULT_MAX_ANSWER_BYTES))
        self.max_attempts = max_attempts
        self.backoff, self.max_backoff, self.max_retry_after = backoff, max_backoff, max_retry_after
        if redactor is _KEEP:
            from ..redact import default_redactor

            redactor = default_redactor()
        self.redactor = redactor  # None: answers are kept as written (--no-redact)
        self.json_schema = self.json_object = not embeddings
        self.embeddings = embeddings
        self.stats = ClientStats()
        self.broken: str | None = None  # the breaker's reason, once open
        self.reached = False            # some request got an HTTP answer
        self._rng = random.Random(seed)
        self._sdk: Any = None
        self._client: Any = None

    # --- the interface --------------------------------------------------------------

    def execute(self, messages: list[dict[str, str]], *, mode: str = "json_object",
                schema: dict[str, Any] | None = None, model: str | None = None,
                temperature: float | None = 0, name: str = "answer") -> Answer:
        """One chat answer, redacted on arrival. Raises ``ModelFault`` when there is none."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        for current in MODES[MODES.index(mode):]:
            if current != "text" and not getattr(self, current):
                continue  # the server refused this format before
            body: dict[str, Any] = {"model": model or self.config.model, "messages": messages,
                                    "max_tokens": self.max_tokens}
            if temperature is not None:
                body["temperature"] = temperature
            if current == "json_schema":
                body["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": name, "schema": schema or {"type": "object"}, "strict": False}}
            elif current == "json_object":
                body["response_format"] = {"type": "json_object"}
            try:
                text, usage = self._retrying(lambda: self._chat(body), current)
            except _FormatRefused:
                setattr(self, current, False)
                continue
            self.stats.prompt_tokens += usage.get("prompt_tokens", 0)
            self.stats.completion_tokens += usage.get("completion_tokens", 0)
            return self._arrived(text, usage, current, json_wanted=mode != "text")
        raise self._gave_up(ModelFault("the endpoint refused every response format"))

    def embed(self, texts: list[str], *, model: str) -> list[list[float]]:
        """One embedding per text, in order. Raises ``ModelFault`` when the request fails."""
        def call() -> list[list[float]]:
            resp = self._openai_client().embeddings.create(model=model, input=texts, encoding_format="float")
            rows = getattr(resp, "data", None)
            if not isinstance(rows, list) or not all(isinstance(getattr(d, "embedding", None), list)
                                                     and isinstance(getattr(d, "index", None), int) for d in rows):
                raise ModelFault("bad response: the reply is not a list of embeddings")
            return [list(d.embedding) for d in sorted(rows, key=lambda d: d.index)]
        return self._retrying(call, "text")

    # --- one request ----------------------------------------------------------------

    def _openai_client(self) -> Any:
        if self._client is None:
            import openai  # at the first request: `wikitrace --help` and the tools never import it

            self._sdk = openai
            base_url = getattr(self.config, "base_url", None)
            self._client = openai.OpenAI(api_key=self.config.api_key, base_url=base_url, timeout=self.timeout,
                                         max_retries=0)  # our own loop decides what to retry
        return self._client

    def _chat(self, body: dict[str, Any]) -> tuple[str, dict[str, int]]:
        client = self._openai_client()
        raw_class = raw_response_class()
        if raw_class is None:  # a client whose HTTP layer we do not recognise: the typed way
            return completion_text(client.chat.completions.create(**body).model_dump())
        raw = client.post("/chat/completions", body=body, cast_to=raw_class, stream=True)
        try:
            declared = int(raw.headers.get("content-length") or -1)
            if declared > self.max_answer_bytes:
                raise AnswerTooLarge(declared, self.max_answer_bytes)
            chunks, size = [], 0
            for chunk in raw.iter_bytes():
                size += len(chunk)
                if size > self.max_answer_bytes:
                    raise AnswerTooLarge(size, self.max_answer_bytes)
                chunks.append(chunk)
        finally:
            raw.close()
        try:
            response = json.loads(b"".join(chunks))
        except ValueError:
            response = None
        if not isinstance(response, dict):
            raise ModelFault("bad response: the reply is not a JSON chat completion")
        return completion_text(response)

    def _retrying(self, call: Any, mode: str) -> Any:
        """``call()`` with the retry rules and the breaker; faults become ``ModelFault``."""
        if self.broken:
            raise self._gave_up(ModelFault(self.broken, fatal=True))
        self._openai_client()
        openai = self._sdk
        what = "no attempt"
        for attempt in range(1, self.max_attempts + 1):
            hint: float | None = None
            self.stats.requests += 1
            try:
                result = call()
            except AnswerTooLarge as big:
                self.reached = True
                raise self._gave_up(ModelFault(f"schema: {big}")) from None
            except ModelFault as fault:
                self.reached = True
                raise self._gave_up(fault) from None
            except openai.APITimeoutError as exc:
                what = "connection error" if refused(exc) else "timeout"
            except openai.APIConnectionError:
                what = "connection error"
            except openai.APIStatusError as exc:
                self.reached = True
                status, detail = exc.status_code, error_text(exc)
                if mode != "text" and status in (400, 422) and FORMAT_COMPLAINT.search(detail):
                    raise _FormatRefused() from None
                if status in RETRY_STATUS or status >= 500:
                    what, hint = f"HTTP {status}", retry_after(exc.response.headers)
                else:
                    fix = FATAL_STATUS.get(status)
                    reason = f"HTTP {status}: {one_line(detail)[:160]}" + (f" ({fix})" if fix else "")
                    if fix is not None:
                        self.broken = reason
                    raise self._gave_up(ModelFault(reason, fatal=fix is not None)) from None
            except openai.APIError as exc:  # e.g. a body that is not what the endpoint promised
                self.reached = True
                raise self._gave_up(ModelFault(f"bad response: {one_line(str(exc))[:160]}")) from None
            else:
                self.reached = True
                return result
            if attempt < self.max_attempts:
                self.stats.retries += 1
                time.sleep(self._delay(attempt, hint))
        attempts = f"{self.max_attempts} attempt{'s' if self.max_attempts != 1 else ''}"
        if what == "connection error" and not self.reached:
            endpoint = getattr(self.config, "endpoint", None) or getattr(self.config, "url", "")
            self.broken = f"connection error after {attempts} (is the server at {endpoint} running?)"
            raise self._gave_up(ModelFault(self.broken, fatal=True))
        raise self._gave_up(ModelFault(f"{what} after {attempts}"))

    def _arrived(self, text: str, usage: dict[str, int], mode: str, json_wanted: bool) -> Answer:
        """The answer as callers may keep it: every secret in it replaced. JSON asked for is
        parsed first (also when the server took only plain text), so a replacement never
        cuts through the JSON's own syntax."""
        found: Counter = Counter()
        data = parse_object(text) if json_wanted else None
        if self.redactor is not None:
            text = self.redactor.text(text, found) if data is None else self.redactor.text(text)
            if data is not None:
                data = self.redactor.value(data, found)
        return Answer(text, data, usage, mode, found)

    def _gave_up(self, fault: ModelFault) -> ModelFault:
        self.stats.fallbacks[fault.reason] += 1
        return fault

    def _delay(self, attempt: int, hint: float | None) -> float:
        if hint is not None:
            return max(0.0, min(hint, self.max_retry_after))
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * (0.5 + 0.5 * self._rng.random())


class _FormatRefused(Exception):
    """The server refused the response format (the next, plainer mode is tried)."""


# --- the Batch API ---------------------------------------------------------------------
# The batch path (compilers/batch.py) uploads files and polls batches rather than asking
# for answers, so it drives the SDK's client itself; it gets that client and the SDK's
# error classes here, and every answer it stores is redacted by the compiler first.


def batch_client(config: Any, timeout: float = 600.0) -> Any:
    """A synchronous SDK client for files and batches at ``config``'s endpoint, with the
    SDK's own retries (a status check or an upload is safe to repeat)."""
    import openai

    return openai.OpenAI(api_key=config.api_key, base_url=config.base_url, timeout=timeout, max_retries=3)


@dataclass(frozen=True)
class SDKErrors:
    APIError: type
    NotFoundError: type
    APIConnectionError: type
    APIStatusError: type


def sdk_errors() -> SDKErrors:
    """The SDK's error classes the batch path tells apart."""
    import openai

    return SDKErrors(openai.APIError, openai.NotFoundError, openai.APIConnectionError, openai.APIStatusError)
