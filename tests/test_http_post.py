"""The compile path's own HTTP POST (llm/http_post.py) reads the replies real servers send
(chunked, to the end of the connection, compressed) and tells faults apart as the openai
client's transport does, so the transport's retry rules and recorded reasons stay the same."""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import struct

import pytest

from wikitrace.llm.http_post import HTTPPost, applies
from wikitrace.llm.replies import AnswerTooLarge, PostFault, StatusError, error_text

BODY = {"model": "m", "messages": [{"role": "user", "content": "héllo"}]}


def serve(*answers):
    """Run ``HTTPPost.post`` against a loopback server that answers each request on a
    connection with the next of ``answers`` (raw bytes; None: close without answering;
    "reset": reset the connection). Returns (results or exceptions, requests seen)."""
    seen: list[bytes] = []

    async def go(posts: int, cap: int):
        queue = list(answers)

        async def handle(reader, writer):
            while queue:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except asyncio.IncompleteReadError:
                    break
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                  if line.lower().startswith(b"content-length")))
                seen.append(head + await reader.readexactly(length))
                answer = queue.pop(0)
                if answer == "reset":  # an RST, not a FIN
                    writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                                               struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                if answer is None:
                    break
                writer.write(answer)
                await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        post = HTTPPost(f"http://127.0.0.1:{port}/v1", "sk-test", 5.0, env={}).for_loop()
        out = []
        for _ in range(posts):
            try:
                out.append(await post.post(BODY, cap))
            except (PostFault, StatusError, AnswerTooLarge) as exc:
                out.append(exc)
        await post.aclose()
        server.close()
        return out, post

    return go, seen


def ok(body: bytes, *extra: str) -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + "".join(f"{h}\r\n" for h in extra).encode() + \
        f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def test_replies_in_every_framing_a_server_may_use():
    packed = gzip.compress(b'{"b": 2}')
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n4;x=y\r\n: 1}\r\n0\r\n\r\n"
    go, seen = serve(chunked, ok(packed, "Content-Encoding: gzip"),
                     b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"{}"),
                     b"HTTP/1.0 200 OK\r\n\r\n{\"to\": \"end\"}")
    out, _ = asyncio.run(go(4, 1000))
    assert [r[2] for r in out] == [b'{"a": 1}', b'{"b": 2}', b"{}", b'{"to": "end"}']
    # one connection carried the first three; the body went as the client encodes it
    request = seen[0]
    assert request.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert b"\r\nAuthorization: Bearer sk-test\r\n" in request
    assert request.endswith(json.dumps(BODY, ensure_ascii=False, separators=(",", ":")).encode())


def test_an_error_status_keeps_the_message_and_the_retry_hint():
    error = json.dumps({"error": {"message": "slow down", "type": "rate"}}).encode()
    go, _ = serve(ok(error, "Retry-After: 3").replace(b"200 OK", b"429 Too Many"),
                  ok(b"not json").replace(b"200 OK", b"503 Busy"))
    out, _ = asyncio.run(go(2, 1000))
    assert isinstance(out[0], StatusError) and out[0].status_code == 429
    assert error_text(out[0]) == "slow down" and out[0].headers.get("retry-after") == "3"
    assert isinstance(out[1], StatusError) and error_text(out[1]) == "not json"


def test_faults_are_told_apart_as_the_client_tells_them():
    go, _ = serve(None, "reset")
    out, _ = asyncio.run(go(2, 1000))
    # closed before answering: a "timeout" that did not wait; a reset: a connection error
    assert [(f.what, f.waited) for f in out] == [("timeout", False), ("connection error", False)]
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # nothing listens there once closed

    async def refused():
        with pytest.raises(PostFault) as fault:
            await HTTPPost(f"http://127.0.0.1:{port}/v1", "sk-test", 5.0, env={}).post(BODY, 1000)
        return fault.value.what

    assert asyncio.run(refused()) == "connection error"


def test_a_reply_past_the_cap_is_not_read():
    go, _ = serve(ok(b"x" * 100), b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + b"x" * 100)
    out, _ = asyncio.run(go(2, 50))
    assert all(isinstance(r, AnswerTooLarge) for r in out)


def test_cookies_the_endpoint_sets_go_back_until_it_takes_them_back():
    go, seen = serve(ok(b"{}", "Set-Cookie: route=node-7; Path=/", "Set-Cookie: other=1"),
                     ok(b"{}", "Set-Cookie: other=; Max-Age=0"), ok(b"{}"))
    asyncio.run(go(3, 1000))
    cookies = [next((line for line in r.split(b"\r\n") if line.startswith(b"Cookie:")), None) for r in seen]
    assert cookies == [None, b"Cookie: route=node-7; other=1", b"Cookie: route=node-7"]


@pytest.mark.parametrize("env, url, used", [
    ({}, "http://127.0.0.1:8080/v1", True),
    ({}, None, True),
    ({"HTTPS_PROXY": "http://proxy:3128"}, "https://api.example.com/v1", False),
    ({"all_proxy": "socks5://proxy:1080"}, "http://127.0.0.1:8080/v1", False),
    ({}, "http://user:pw@127.0.0.1:8080/v1", False),
    ({}, "http://127.0.0.1:8080/v1?api-version=1", False),
])
def test_the_client_is_used_where_it_would_do_more(env, url, used):
    assert applies(url, env) is used


def test_a_key_that_would_split_the_request_is_left_to_the_client(monkeypatch):
    from types import SimpleNamespace

    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)

    config = SimpleNamespace(base_url="http://127.0.0.1:9/v1", api_key="sk-1\r\nX-Evil: 1")
    assert HTTPPost.make(config, 5.0) is None
    assert HTTPPost.make(SimpleNamespace(base_url="http://127.0.0.1:9/v1", api_key="sk-1"), 5.0) is not None
