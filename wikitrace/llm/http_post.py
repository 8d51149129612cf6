"""The compile path's chat request as a plain HTTP/1.1 POST on asyncio's own streams.

The openai client costs the build's main process about 0.9 CPU-s to import before its first
request can leave, and its HTTP stack (httpx2 requests carried over aiohttp) about half a
millisecond of CPU per request: at low latency the main process is what every request
waits on (docs/performance.md). A chat request needs none of that: one POST of a JSON
body to ``<base URL>/chat/completions`` with the key, read back up to the size cap.
``HTTPPost`` sends the request the client sends (same URL, key, organisation and project
headers, user agent and body bytes) over keep-alive connections, and tells faults apart as
the client's aiohttp transport does, so the retry rules and every recorded reason stay
``transport.ChatTransport``'s:

* a refused or reset connection is a "connection error", a read or connect that waited the
  whole timeout a "timeout" (``waited``), a connection closed before any answer a "timeout"
  that did not wait (as the client reports it);
* a 4xx/5xx is a ``StatusError`` whose ``body`` is what the client would have parsed.

Where the client would do something this does not (a proxy from the environment, a URL
with credentials or a query), ``make`` returns None and the client is used.
"""

from __future__ import annotations

import asyncio
import os
import zlib
from typing import Any
from urllib.parse import urlsplit

from . import message_json
from .replies import AnswerTooLarge, Failure, PostFault, StatusError

_PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy")
_HEAD_LIMIT = 1 << 20  # a reply's status line and headers


def applies(base_url: str | None, env: Any = None) -> bool:
    """Whether a request to ``base_url`` can go this way (see the module's docstring)."""
    env = os.environ if env is None else env
    if any(env.get(name) or env.get(name.upper()) for name in _PROXY_VARS):
        return False  # the client would send it through the proxy
    parts = urlsplit(base_url or "https://api.openai.com/v1")
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.query \
        and not parts.username and not parts.password


def _user_agent() -> str:
    """The client's own user agent (the endpoint may count or route by it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"AsyncOpenAI/Python {version('openai')}"
    except PackageNotFoundError:
        return "wikitrace"


def _ssl_context() -> Any:
    """The TLS settings the client's HTTP client makes (its certificate store, the
    SSL_CERT_FILE / SSL_CERT_DIR it honours)."""
    try:
        import httpx2 as httpx
    except ImportError:
        import httpx
    return httpx.create_ssl_context()


class HTTPPost:
    """Chat requests to one endpoint, for one event loop at a time (``for_loop``)."""

    def __init__(self, url: str, api_key: str, timeout: float, env: Any = None) -> None:
        env = os.environ if env is None else env
        parts = urlsplit(url)
        self.tls = _ssl_context() if parts.scheme == "https" else None
        self.host = parts.hostname
        self.port = parts.port or (443 if self.tls else 80)
        self.timeout = timeout
        path = parts.path.rstrip("/") + "/chat/completions"
        headers = [("Host", parts.netloc), ("Accept", "application/json"), ("Content-Type", "application/json"),
                   ("User-Agent", _user_agent()), ("Authorization", f"Bearer {api_key}")]
        # as the client reads them from the environment
        for header, name in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
            if env.get(name) is not None:
                headers.append((header, env[name]))
        if any(c in v for _, v in headers for c in "\r\n") or not all(v.isascii() for _, v in headers):
            raise ValueError("a header value the client would reject or encode otherwise")  # its own way then
        self.head = (f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers)).encode()
        self.cookies: dict[str, str] = {}  # what the endpoint set (a gateway pinning a session)
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    @classmethod
    def make(cls, config: Any, timeout: float) -> "HTTPPost | None":
        # as the client picks it when given none
        base_url = config.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        if not applies(base_url):
            return None
        try:
            return cls(base_url, config.api_key, timeout)
        except Exception:  # no TLS settings to copy, or a header it must not carry: the client's own way
            return None

    def for_loop(self) -> "HTTPPost":
        """The same endpoint with no connection yet (connections belong to one event loop)."""
        other = object.__new__(HTTPPost)
        other.__dict__.update(self.__dict__, _idle=[])
        return other

    async def aclose(self) -> None:
        idle, self._idle = self._idle, []
        for _, writer in idle:
            writer.close()

    async def post(self, body: dict[str, Any], cap: int) -> tuple[int, dict[str, Any], bytes]:
        """Send ``body``; the status, headers (lower-case names) and body of a 2xx, read up to
        ``cap`` bytes. Raises ``PostFault``, ``StatusError``, ``AnswerTooLarge`` or ``Failure``."""
        # Encoded as the client encodes a body (compact, UTF-8), so a server sees the same bytes.
        content = message_json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        head = self.head + b"Content-Length: %d\r\n" % len(content)
        if self.cookies:
            head += ("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()) + "\r\n").encode()
        conn = None
        while self._idle and conn is None:
            conn = self._idle.pop()
            if conn[0].at_eof() or conn[1].is_closing():  # closed by the server while idle
                conn[1].close()
                conn = None
        reusable = False
        try:
            try:
                async with asyncio.timeout(self.timeout):
                    if conn is None:
                        conn = await asyncio.open_connection(self.host, self.port, ssl=self.tls, limit=_HEAD_LIMIT)
                    reader, writer = conn
                    writer.write(head + b"\r\n" + content)
                    await writer.drain()
                    while True:
                        status, headers = _parse_head(await reader.readuntil(b"\r\n\r\n"))
                        if status >= 200:
                            break  # 1xx: an interim answer, the real one follows
            except TimeoutError as exc:
                raise PostFault("timeout", waited=True) from exc
            except (OSError, EOFError) as exc:  # EOFError: closed before the answer's head
                raise PostFault("connection error" if _reset(exc) else "timeout", waited=False) from exc
            self._keep_cookies(headers)
            if status < 400:
                data, reusable = await self._body(reader, headers, cap)
                return status, headers, data
            data, reusable = await self._body(reader, headers, None)  # the error's message is the reason recorded
            raise StatusError(status, headers, data)
        finally:
            if conn is not None:
                if reusable:
                    self._idle.append(conn)
                else:
                    conn[1].close()

    async def _body(self, reader: asyncio.StreamReader, headers: dict[str, Any],
                    cap: int | None) -> tuple[bytes, bool]:
        """The reply's body and whether the connection can carry another request."""
        reusable = headers.get("connection", "").lower() != "close" and headers[":version"] == "HTTP/1.1"
        try:
            async with asyncio.timeout(self.timeout):
                if headers.get("transfer-encoding", "").lower().endswith("chunked"):
                    data = await _chunked(reader, cap)
                elif (length := headers.get("content-length")) is not None:
                    size = int(length)
                    if cap is not None and size > cap:
                        raise AnswerTooLarge(size, cap)
                    data = await reader.readexactly(size)
                else:  # the body ends where the connection does
                    data, reusable = await _to_end(reader, cap), False
        except TimeoutError as exc:
            raise PostFault("timeout", waited=True) from exc
        except (OSError, EOFError, ValueError) as exc:  # cut short, or a malformed length
            raise PostFault("connection error", waited=False) from exc
        coding = headers.get("content-encoding", "").lower()
        if coding in ("gzip", "deflate"):  # not asked for, but the client would have decoded it
            try:
                data = zlib.decompress(data, 31 if coding == "gzip" else 15)
            except zlib.error:
                raise Failure("bad response: the reply's compressed body does not decode") from None
            if cap is not None and len(data) > cap:
                raise AnswerTooLarge(len(data), cap)
        return data, reusable

    def _keep_cookies(self, headers: dict[str, Any]) -> None:
        for line in headers["set-cookie"]:
            pair, *attributes = line.split(";")
            name, eq, value = pair.partition("=")
            name = name.strip()
            if not eq or not name:
                continue
            ages = [a.split("=", 1)[1].strip() for a in attributes if a.strip().lower().startswith("max-age=")]
            if ages and ages[-1].lstrip("-").isdigit() and int(ages[-1]) <= 0:
                self.cookies.pop(name, None)  # the endpoint took it back
            else:
                self.cookies[name] = value.strip()


def _parse_head(raw: bytes) -> tuple[int, dict[str, Any]]:
    """The status and headers (lower-case names; Set-Cookie as a list) of a reply's head."""
    lines = raw.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    try:
        status = int(rest[:3])
    except ValueError:
        raise Failure("bad response: the reply is not HTTP") from None
    headers: dict[str, Any] = {":version": version, "set-cookie": []}
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon:
            continue
        name = name.strip().lower()
        if name == "set-cookie":
            headers[name].append(value.strip())
        else:
            headers[name] = value.strip()
    return status, headers


async def _chunked(reader: asyncio.StreamReader, cap: int | None) -> bytes:
    chunks, size = [], 0
    while True:
        length = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
        if length == 0:
            while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                pass
            return b"".join(chunks)
        size += length
        if cap is not None and size > cap:
            raise AnswerTooLarge(size, cap)
        chunks.append(await reader.readexactly(length))
        await reader.readexactly(2)


async def _to_end(reader: asyncio.StreamReader, cap: int | None) -> bytes:
    chunks, size = [], 0
    while chunk := await reader.read(1 << 16):
        size += len(chunk)
        if cap is not None and size > cap:
            raise AnswerTooLarge(size, cap)
        chunks.append(chunk)
    return b"".join(chunks)


def _reset(exc: BaseException) -> bool:
    """A refused, reset or broken connection somewhere in ``exc``'s causes."""
    seen: BaseException | None = exc
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, ConnectionError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False
