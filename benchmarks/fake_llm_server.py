"""A loopback OpenAI-compatible server for benchmarks: fixed latency, counted calls.

It answers ``/v1/chat/completions`` with a valid compilation for whatever run
the request is about (or a merged guideline for an insight group's merge), after ``latency`` seconds, and counts every call. Runs in
its own process (``python benchmarks/fake_llm_server.py PORT LATENCY``) so the
server's work does not share the build's interpreter lock.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

ANSWER = {
    "title": "Look the record up before changing it",
    "description": "The agent read what it needed, then acted on it.",
    "candidate_insights": [
        {"title": "Read before you write", "guideline": "Call the look-up tool before the tool that changes state.",
         "applicability": "Applies to tasks that change records; not to pure questions."},
        {"title": "Confirm the change", "guideline": "State the change and get a yes before calling the write tool.",
         "applicability": "Applies when a user is in the loop."},
    ],
}


def _reply(key: str | None) -> bytes:
    answer = (dict(ANSWER, **{key: [{"decision": "Looked the record up first.", "support": "It returned the fields.",
                                     "turns": [0]}]}) if key else
              {"guideline": "When the lesson applies, look the record up first and act on what it returns."})
    return json.dumps({
        "id": "chatcmpl-bench", "object": "chat.completion", "created": 0, "model": "bench",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": json.dumps(answer)},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1234567890, "completion_tokens": 120},
    }).encode()


# Made once: the server shares the build's two cores, so it must cost next to nothing
# per call. The request is not parsed; its schema name says which answer fits.
# An insight group's merge (compilers/insight_merge.py) gets a valid merged guideline, so a
# rebuild answers it from the cache as it would with a real model.
_MERGE = b"into one guideline for an agent"
_REPLIES = {b"trajectory_compilation_failure": _reply("failure_causes"), None: _reply("key_decisions"),
            _MERGE: _reply(None)}


def _body(request_body: bytes) -> bytes:
    failure = b"trajectory_compilation_failure" in request_body or b'"failure_causes"' in request_body
    reply = _REPLIES[_MERGE if _MERGE in request_body else b"trajectory_compilation_failure" if failure else None]
    # Prompt tokens estimated as bytes / 4, as the README's cost table does.
    return reply.replace(b"1234567890", str(len(request_body) // 4).encode(), 1)


async def serve(port: int, latency: float) -> None:
    calls = merges = inflight = max_inflight = 0
    first = last = 0.0

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal calls, merges, inflight, max_inflight, first, last
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path, _ = lines[0].split(" ", 2)
                headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:] if ":" in l)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if path.endswith("/chat/completions"):
                    calls += 1
                    merges += _MERGE in body  # an insight group's merge, not a run's compilation
                    first = first or time.monotonic()
                    inflight += 1
                    max_inflight = max(max_inflight, inflight)
                    if latency:
                        await asyncio.sleep(latency)
                    inflight -= 1
                    last = time.monotonic()
                    payload, status = _body(body), "200 OK"
                elif path.endswith("/calls"):
                    # first/last on the system's monotonic clock, which a client process reads too
                    payload, status = json.dumps({"calls": calls, "merges": merges, "max_inflight": max_inflight,
                                          "busy_seconds": last - first, "first": first, "last": last}).encode(), "200 OK"
                else:
                    payload, status = b'{"data": []}', "200 OK"
                writer.write(f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                             f"Content-Length: {len(payload)}\r\n\r\n".encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionResetError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=512)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2])))
