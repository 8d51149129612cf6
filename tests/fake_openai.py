"""A scriptable OpenAI-compatible server on the loopback interface, for tests.

It answers ``POST /v1/chat/completions`` and ``GET /v1/models`` from a plain
``http.server`` running in a background thread on ``127.0.0.1`` (port chosen by
the OS), so the real ``openai`` client talks to it over real HTTP: status codes,
headers such as ``Retry-After``, slow answers and dropped connections all behave
as they would against a real server.

Script it per test::

    fake.script(reply(answer), error(429, retry_after=0), reply("not json"))
    fake.respond_with(lambda body: reply(...))   # or a function of the request

Each queued item is used for one request; a callable item is called with the
request body and may return a ``FakeResponse``, a ``str`` (reply content) or a
``dict`` (JSON reply content). When the queue is empty the ``respond_with``
function answers, else a 500 saying nothing was scripted.

Every request is recorded in ``fake.requests`` (``path``, ``body``, ``headers`` with
lower-case names);
``fake.calls`` counts chat completion requests. The ``fake_openai`` pytest
fixture is registered in ``conftest.py``; tests import only the helpers::

    from fake_openai import reply, error
"""

from __future__ import annotations

import functools
import json
import select
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest

API_KEY = "sk-test-SECRET-do-not-leak-0123456789"


@dataclass
class FakeResponse:
    status: int = 200
    body: Any = None  # dict -> JSON, str/bytes -> sent as is
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering
    drop: bool = False  # close the connection without an answer


def completion(content: str, *, model: str = "fake-model", prompt_tokens: int = 100,
               completion_tokens: int = 50, finish_reason: str = "stop") -> dict[str, Any]:
    """The body of a chat completion whose single choice says ``content``."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1700000000,
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": finish_reason,
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply(content: Any, **kw: Any) -> FakeResponse:
    """A 200 answer. ``content`` may be a dict/list (sent as its JSON text) or text."""
    delay = kw.pop("delay", 0.0)
    text = content if isinstance(content, str) else json.dumps(content)
    return FakeResponse(200, completion(text, **kw), delay=delay)


def error(status: int, message: str = "error", *, retry_after: float | str | None = None,
          body: Any = None, delay: float = 0.0) -> FakeResponse:
    """An HTTP error in OpenAI's error shape (or ``body`` verbatim)."""
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
    payload = body if body is not None else {
        "error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error",
                  "param": None, "code": None},
    }
    return FakeResponse(status, payload, headers=headers, delay=delay)


def slow(seconds: float, then: FakeResponse | None = None) -> FakeResponse:
    """Answer only after ``seconds`` (longer than the client timeout, to test timeouts)."""
    base = then or reply({"late": True})
    return FakeResponse(base.status, base.body, dict(base.headers), delay=seconds)


def llama_cpp_json_schema_rejection() -> FakeResponse:
    """What llama-cpp-python's server says to ``response_format={"type": "json_schema"}``."""
    return error(500, body={"error": {
        "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
                   "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}]",
        "type": "internal_server_error", "param": None, "code": None,
    }})


@functools.cache
def merge_instructions() -> str:
    """The system message of every merge request, made once per process. FakeOpenAI makes it
    before it answers anything: made inside a request's handler, its first import of the
    compilers took seconds on a loaded machine, past a test's short client timeout."""
    from wikitrace.compilers.insight_merge import instructions

    return instructions()


def is_merge(body: dict[str, Any]) -> bool:
    """Whether ``body`` asks to merge an insight's lessons (compilers/insight_merge.py)."""
    return bool(body.get("messages")) and body["messages"][0].get("content") == merge_instructions()


def merge_reply(body: dict[str, Any]) -> "FakeResponse | None":
    """A valid answer when ``body`` asks to merge an insight's lessons (compilers/insight_merge.py),
    else None: responders that answer compilations pass merges through this first."""
    if is_merge(body):
        return reply(json.dumps({"guideline": "When this situation comes up, do what the listed runs show worked."}))
    return None


def valid_answer(outcome: str = "success", turns: list[int] | None = None, *,
                 quote: str | None = None, insights: int = 2) -> dict[str, Any]:
    """A compilation JSON that passes ``schema.compilation_from_json``."""
    key = "key_decisions" if outcome == "success" else "failure_causes"
    item: dict[str, Any] = {
        "decision": "Looked the record up before changing it.",
        "support": "The look-up returned the fields the change needed.",
        "turns": turns if turns is not None else [1],
    }
    if quote is not None:
        item["quote"] = quote
    return {
        "title": "Check the record before changing it",
        "description": "The agent read the record first and then made the change.",
        key: [item],
        "candidate_insights": [
            {"title": f"Insight {i}", "guideline": f"Do step {i} with the lookup tool.",
             "applicability": "Applies to record changes; not to pure questions."}
            for i in range(1, insights + 1)
        ],
    }


class FakeOpenAI:
    def __init__(self) -> None:
        merge_instructions()  # the responders' one slow step, taken before any request waits on it
        self.requests: list[dict[str, Any]] = []
        self._queue: deque[Any] = deque()
        self._responder: Callable[[dict[str, Any]], Any] | None = None
        self._lock = threading.Lock()
        self._unread: set = set()  # open connections whose next request (if any) is not recorded yet
        self.model_id = "fake-model"
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep pytest output clean
                pass

            def do_GET(self) -> None:
                fake._record(self, None)
                if self.path.rstrip("/").endswith("/models"):
                    self._send(FakeResponse(200, {"object": "list", "data": [
                        {"id": fake.model_id, "object": "model", "owned_by": "fake"}]}))
                else:
                    self._send(FakeResponse(404, {"error": {"message": f"no route {self.path}"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    body = {"_unparsed": raw.decode("utf-8", "replace")}
                fake._record(self, body)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(FakeResponse(404, {"error": {"message": f"no route {self.path}"}}))
                    return
                self._send(fake._next(body))

            def _send(self, resp: FakeResponse) -> None:
                try:
                    self._answer(resp)
                finally:
                    with fake._lock:  # answered: another request may come on this connection
                        fake._unread.add(self.connection)

            def _answer(self, resp: FakeResponse) -> None:
                if resp.delay:
                    time.sleep(resp.delay)
                if resp.drop:
                    self.close_connection = True
                    return
                payload = resp.body
                if isinstance(payload, (dict, list)):
                    data = json.dumps(payload).encode()
                    ctype = "application/json"
                elif isinstance(payload, bytes):
                    data, ctype = payload, "application/octet-stream"
                else:
                    data, ctype = str(payload or "").encode(), "text/plain"
                try:
                    self.send_response(resp.status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(data)))
                    for k, v in resp.headers.items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) before we answered

        class Server(ThreadingHTTPServer):
            def get_request(self):
                with fake._lock:  # accepted and marked in one step, so ``settle`` never misses it
                    conn, addr = super().get_request()
                    fake._unread.add(conn)
                return conn, addr

            def shutdown_request(self, request):
                super().shutdown_request(request)
                with fake._lock:
                    fake._unread.discard(request)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai", daemon=True)
        self._thread.start()

    # --- scripting -----------------------------------------------------------------

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *responses: Any) -> "FakeOpenAI":
        with self._lock:
            self._queue.extend(responses)
        return self

    def respond_with(self, fn: Callable[[dict[str, Any]], Any] | None) -> "FakeOpenAI":
        self._responder = fn
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
        self._responder = None

    # --- inspection ----------------------------------------------------------------

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r for r in self.requests if r["path"].rstrip("/").endswith("/chat/completions")]

    @property
    def calls(self) -> int:
        return len(self.chat_requests)

    @property
    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.chat_requests]

    @property
    def merge_calls(self) -> int:
        """Chat calls that asked to merge an insight group (one per changed group on the LLM path)."""
        return sum(is_merge(b) for b in self.bodies)

    @property
    def run_calls(self) -> int:
        """Chat calls about one run (its compilation, a repair): every call but the merges."""
        return self.calls - self.merge_calls

    def settle(self, timeout: float = 120.0) -> "FakeOpenAI":
        """Wait until every request sent so far is recorded. For after the client has gone (a
        process that ended, killed or timed out): a request it sent may still sit unread in a
        socket when ``calls`` is read. Every connection must be closed or mid-answer."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                incoming = select.select([self._server.socket], [], [], 0)[0]  # not accepted yet
                if not self._unread and not incoming:
                    return self
            if time.monotonic() > deadline:
                raise AssertionError("fake_openai: a client still holds a connection open; settle() "
                                     "is for after it has gone")
            time.sleep(0.005)

    def response_modes(self) -> list[str]:
        """``response_format.type`` of each chat request, ``"text"`` when none was sent."""
        return [((b or {}).get("response_format") or {}).get("type", "text") for b in self.bodies]

    # --- internals -----------------------------------------------------------------

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self._unread.discard(handler.connection)
            self.requests.append({
                "method": handler.command,
                "path": handler.path,
                "headers": {k.lower(): v for k, v in handler.headers.items()},
                "body": body,
            })

    def _next(self, body: Any) -> FakeResponse:
        with self._lock:
            item = self._queue.popleft() if self._queue else None
        if item is None:
            if self._responder is None:
                return error(500, "fake_openai: no scripted response left")
            item = self._responder
        if callable(item) and not isinstance(item, FakeResponse):
            item = item(body)
        if isinstance(item, FakeResponse):
            return item
        return reply(item)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=2)

    def __enter__(self) -> "FakeOpenAI":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


@pytest.fixture
def fake_openai(monkeypatch: pytest.MonkeyPatch, tmp_path: Any):
    """A running ``FakeOpenAI``; the environment points at it and at a private cache."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("WIKITRACE_CACHE_DIR", str(tmp_path / "llm-cache"))
    with FakeOpenAI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake
