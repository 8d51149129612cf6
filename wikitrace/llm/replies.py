"""What a chat request's reply or fault means, for both sides of the gateway: the errors the
compiler carries (``Failure``, ``FormatRejected``, ``AnswerTooLarge``), which HTTP statuses are
retried or end the build, the reply body read up to a size cap, and its text and token usage.
``transport`` (asynchronous) and ``client`` (synchronous) both judge replies by these rules.

``openai`` is never imported at module level here.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from typing import Any

FORMAT_COMPLAINT = re.compile(r"response_format|json_schema|json_object|structured output|grammar", re.I)
RETRY_STATUS = {408, 409, 429}
FATAL_STATUS = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and its permissions",
                 404: "check --base-url / OPENAI_BASE_URL and the model name"}


# --- errors carried inside the compiler (never out of compile()) -----------------------


class Failure(Exception):
    """A call that could not produce an answer; ``reason`` is the fallback reason."""

    def __init__(self, reason: str, *, fatal: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal  # the same error will hit every run (bad key, wrong URL)


class FormatRejected(Exception):
    def __init__(self, reason: str, explicit: bool):
        super().__init__(reason)
        self.reason = reason
        self.explicit = explicit  # the error text names response_format / json_schema


def aiohttp_client(openai: Any) -> Any:
    """The openai client's own aiohttp transport (the ``openai[aiohttp]`` extra), or
    None for its default httpx one. Same requests and error types; measured at about
    half the CPU per request, which is most of the pipeline's own cost at high
    concurrency (benchmarks/scale.py)."""
    make = getattr(openai, "DefaultAioHttpClient", None)
    if make is None:
        return None
    try:
        return make()  # its defaults keep up to 100 connections alive: enough for any --concurrency
    except (RuntimeError, ImportError, TypeError):  # aiohttp not installed, or an older client
        return None


def refused(exc: BaseException) -> bool:
    """A 'timeout' whose cause is a refused or reset connection (the aiohttp
    transport reports a failed connect as a connect timeout)."""
    seen = 0
    cause = exc.__cause__ or exc.__context__
    while cause is not None and seen < 10:
        if isinstance(cause, ConnectionError):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def waited_out(exc: BaseException) -> bool:
    """A 'timeout' that waited the whole timeout for an answer (a socket read timed out),
    not a connection the server dropped (which the client reports as a timeout too)."""
    seen = 0
    cause: BaseException | None = exc
    while cause is not None and seen < 10:
        if isinstance(cause, TimeoutError):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def raw_response_class() -> Any:
    """The HTTP response class the openai client returns as-is for ``cast_to``
    (``httpx.Response``, or ``httpx2.Response`` in newer releases), if known."""
    import openai._base_client as base

    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if module is not None and hasattr(module, "Response"):
            return module.Response
    return None


class AnswerTooLarge(Exception):
    """A reply past the size cap; it was not read to the end."""

    def __init__(self, seen: int, cap: int):
        super().__init__(f"the answer is larger than the {cap}-byte limit (at least {seen} bytes)")
        self.seen, self.cap = seen, cap


async def read_capped(raw: Any, cap: int) -> bytes:
    """The body of a streamed HTTP response, given up (and the connection closed)
    as soon as it passes ``cap`` bytes, so an endless answer never sits in memory."""
    try:
        declared = int(raw.headers.get("content-length") or -1)
        if declared > cap:
            raise AnswerTooLarge(declared, cap)
        chunks: list[bytes] = []
        size = 0
        async for chunk in raw.aiter_bytes():
            size += len(chunk)
            if size > cap:
                chunks.clear()
                raise AnswerTooLarge(size, cap)
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        await raw.aclose()


def completion_json(content: bytes, raw: Any) -> dict[str, Any]:
    """A chat completion body as a dict; a body that is not one is a bad response."""
    import openai

    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise openai.APIResponseValidationError(response=raw, body=content[:200].decode("utf-8", "replace"),
                                                message="the reply is not a JSON chat completion")
    return data


def completion_text(response: dict[str, Any]) -> tuple[str, dict[str, int]]:
    choices = response.get("choices") or []
    text = ""
    if choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        text = (message.get("content") if isinstance(message, dict) else None) or ""
        if not isinstance(text, str):
            text = ""
    usage: dict[str, int] = {}
    raw_usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    for field_name in ("prompt_tokens", "completion_tokens"):
        value = raw_usage.get(field_name)
        if isinstance(value, int) and not isinstance(value, bool):
            usage[field_name] = value
    return text, usage


def error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            msg = inner.get("message") or inner.get("msg") or json.dumps(inner)
        else:
            msg = str(inner)
    elif body is not None:
        msg = str(body)
    else:
        msg = getattr(exc, "message", "") or str(exc)
    return str(msg)


def retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def one_line(text: str) -> str:
    return " ".join(str(text).split())
