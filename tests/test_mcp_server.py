"""`wikitrace mcp`: driven the way an agent's MCP client drives it.

The server runs as a subprocess (`wikitrace mcp --corpus DIR`) and the tests talk to it
with the SDK's own clients, over stdio and over streamable HTTP on loopback.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import TAU_BENCH, EXAMPLES, REPO, example_runs, make_writable_copy, tree_bytes, write_jsonl

mcp = pytest.importorskip("mcp", reason="the MCP SDK is an optional extra: pip install '.[mcp]'")
anyio = pytest.importorskip("anyio")

from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

DIALOGUE = REPO / "tests" / "fixtures" / "dialogue" / "tiny.jsonl"


def _wikitrace() -> list[str]:
    exe = shutil.which("wikitrace")
    return [exe] if exe else [sys.executable, "-m", "wikitrace.cli"]


def _compile(inputs: Path, out: Path) -> Path:
    proc = subprocess.run([*_wikitrace(), "compile", str(inputs), "--out", str(out), "--offline"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = _compile(EXAMPLES, tmp_path_factory.mktemp("mcp") / "corpus")
    proc = subprocess.run([*_wikitrace(), "dialogue", "compile", str(DIALOGUE), "--out", str(out), "--offline"],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def _session(corpus: Path):
    cmd = _wikitrace()
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--corpus", str(corpus)],
                                   env={"PYTHONPATH": str(REPO)})
    return stdio_client(params)


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _with_server(corpus: Path, body):
    async def main():
        async with _session(corpus) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return anyio.run(main)


def test_lists_the_tools_and_calls_each_on_the_example_corpus(corpus):
    before = tree_bytes(corpus)

    async def body(s):
        names = {t.name for t in (await s.list_tools()).tools}
        assert names == {"memory", "actions", "turn", "search", "read", "query", "cite"}
        tools = {t.name: t for t in (await s.list_tools()).tools}
        # The descent rules travel with the memory tool, so the agent reads them.
        assert "failed" in tools["memory"].description and "raw run" in tools["memory"].description
        assert all(t.annotations.read_only_hint for t in tools.values())

        mem = await s.call_tool("memory", {"task": "Refund order 9001 for Dana Lee; it arrived torn."})
        assert not mem.is_error
        mem_text = _text(mem)
        assert "<memory_documents>" in mem_text and "<similar_past_runs>" in mem_text
        assert re.search(r"- \*\*Title:\*\* [^\n]*refund_order", mem_text)  # a lesson about the task's tool
        small = _text(await s.call_tool("memory", {"task": "Refund order 9001", "budget": 60}))
        assert "left out by the budget" in small and small.count("<insight ") < mem_text.count("<insight ")

        actions = _text(await s.call_tool("actions", {"step": "step-0001"}))
        assert "refund_order(" in actions and "ERROR" in actions

        turn = _text(await s.call_tool("turn", {"step": "1", "start": 2, "end": 3}))
        assert "=== step-0001 turn 2" in turn and "=== step-0001 turn 3" in turn and "turn 4" not in turn

        found = _text(await s.call_tool("search", {"pattern": "refund_order", "layers": ["insight"]}))
        assert "insight/" in found and not re.search(r"corpus/compilation/step-\d+\.md:\d+:", found)  # insight pages only
        none = await s.call_tool("search", {"pattern": "zzz-no-such-thing-zzz"})
        assert not none.is_error and "no match" in _text(none)

        page = _text(await s.call_tool("read", {"path": "compilation/step-0001.md"}))
        assert page.startswith("---") and "step-0001" in page
        assert "step-0000/" in _text(await s.call_tool("read", {"path": "raw"}))
        via_mount = _text(await s.call_tool("read", {"path": "/work/corpus/insight/insight-0003.md"}))
        assert "insight-0003" in via_mount

        answer = await s.call_tool("query", {"sample": "", "question": "What is the puppy called?"})
        assert not answer.is_error and "Biscuit" in _text(answer)

        cited = json.loads(_text(await s.call_tool(
            "cite", {"answer": 'Done. {"R": ["step-0001"], "C": ["step-1"], "I": ["insight-0003", "insight-0999"]}'})))
        assert cited["R"] == ["step-0001"] and cited["C"] == ["step-0001"] and cited["I"] == ["insight-0003"]
        assert cited["unknown"] == [{"key": "I", "id": "insight-0999", "reason": "not in the corpus"}]

    _with_server(corpus, body)
    assert tree_bytes(corpus) == before  # read-only: not a byte of the corpus changed


def test_pages_are_resources(corpus):
    async def body(s):
        uris = {str(r.uri) for r in (await s.list_resources()).resources}
        assert {"wikitrace://insight/insight-0003", "wikitrace://compilation/step-0001",
                "wikitrace://raw/step-0002/metadata", "wikitrace://insight/_index"} <= uris
        insights = json.loads((corpus / "corpus.json").read_text())["counts"]["insights"]
        assert len([u for u in uris if u.startswith("wikitrace://insight/insight-")]) == insights
        page = await s.read_resource("wikitrace://insight/insight-0003")
        assert page.contents[0].text == (corpus / "insight" / "insight-0003.md").read_text()
        with pytest.raises(mcp.shared.exceptions.MCPError):
            await s.read_resource("wikitrace://insight/insight-0999")
        with pytest.raises(mcp.shared.exceptions.MCPError):
            await s.read_resource("wikitrace://insight/../../../etc/passwd")

    _with_server(corpus, body)


def test_clear_errors_for_unknown_steps_and_paths_outside_the_corpus(corpus, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("api_key=hunter2\n")
    # A copy we may add a symlink to (published corpora are read-only).
    copy = make_writable_copy(corpus, tmp_path / "copy")
    (copy / "insight" / "leak.md").symlink_to(secret)
    (copy / "raw" / "outside").symlink_to(tmp_path)

    async def body(s):
        bad = await s.call_tool("actions", {"step": "step-0099"})
        assert bad.is_error
        assert "unknown step step-0099" in _text(bad) and "step-0000..step-0005" in _text(bad)
        assert (await s.call_tool("turn", {"step": "0001", "start": 999})).is_error
        assert "out of range" in _text(await s.call_tool("turn", {"step": "0001", "start": 999}))
        for path in ("../secret.txt", "/etc/passwd", str(secret), "raw/../../secret.txt",
                     "insight/leak.md", "raw/outside/secret.txt", "raw/outside"):
            res = await s.call_tool("read", {"path": path})
            assert res.is_error, path
            assert "hunter2" not in _text(res) and "outside the corpus" in _text(res), path
        missing = await s.call_tool("read", {"path": "insight/insight-0999.md"})
        assert missing.is_error and "no file" in _text(missing)
        bad_layer = await s.call_tool("search", {"pattern": "x", "layers": ["secrets"]})
        assert bad_layer.is_error and "unknown layer" in _text(bad_layer)
        assert (await s.call_tool("cite", {"answer": "no citation here"})).is_error
        uris = {str(r.uri) for r in (await s.list_resources()).resources}
        assert "wikitrace://insight/leak" not in uris

    _with_server(copy, body)


def test_a_rebuilt_corpus_is_seen_without_restarting(tmp_path):
    runs = example_runs()
    first = write_jsonl(tmp_path / "first.jsonl", runs[:4])
    everything = write_jsonl(tmp_path / "all.jsonl", runs)
    corpus = _compile(first, tmp_path / "corpus")

    async def body(s):
        assert (await s.call_tool("actions", {"step": "step-0005"})).is_error
        assert "query" not in {t.name for t in (await s.list_tools()).tools}  # no dialogue memory yet
        before = {str(r.uri) for r in (await s.list_resources()).resources}
        _compile(everything, corpus)  # while the server runs
        after = await s.call_tool("actions", {"step": "step-0005"})
        assert not after.is_error, _text(after)
        assert "wikitrace://compilation/step-0005" in {str(r.uri) for r in (await s.list_resources()).resources}
        assert "wikitrace://compilation/step-0005" not in before
        mem = _text(await s.call_tool("memory", {"task": "Change the shipping address of customer Ivo Tan"}))
        assert "step-0005" in mem  # the new runs reach the memory block too

    _with_server(corpus, body)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_streamable_http_on_loopback(corpus):
    from mcp.client.streamable_http import streamable_http_client

    port = _free_port()
    proc = subprocess.Popen([*_wikitrace(), "mcp", "--corpus", str(corpus), "--http", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONPATH=str(REPO)))
    try:
        # the server's start-up imports the MCP SDK and its web stack: on a loaded machine that is
        # slow, so wait while it is alive (it ends at once on a bind error) rather than 30 s
        deadline = time.monotonic() + 300
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()
                assert time.monotonic() < deadline, "the HTTP server did not start"
                time.sleep(0.1)

        async def main():
            async with streamable_http_client(f"http://127.0.0.1:{port}/mcp") as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    assert "actions" in {t.name for t in (await s.list_tools()).tools}
                    res = await s.call_tool("read", {"path": "insight/insight-0000.md"})
                    assert not res.is_error and "insight-0000" in _text(res)
                    assert (await s.call_tool("read", {"path": "../../etc/passwd"})).is_error

        anyio.run(main)
        # Bound to loopback only.
        listening = [line.split() for line in Path("/proc/net/tcp").read_text().splitlines()[1:]] \
            if Path("/proc/net/tcp").exists() else []
        ours = [cols[1] for cols in listening if cols[1].endswith(f":{port:04X}") and cols[3] == "0A"]
        assert ours and all(addr.startswith("0100007F:") for addr in ours)
        # A second server on the same port: one line, no web-server log.
        taken = subprocess.run([*_wikitrace(), "mcp", "--corpus", str(corpus), "--http", str(port)],
                               capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=60)
        assert taken.returncode == 2 and taken.stderr.startswith(f"wikitrace: error: mcp: 127.0.0.1:{port}:")
        assert taken.stderr.count("\n") == 1
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_missing_corpus_and_missing_sdk_are_one_line_errors(tmp_path):
    proc = subprocess.run([*_wikitrace(), "mcp", "--corpus", str(tmp_path / "nope")], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.startswith("wikitrace: error: mcp: no corpus at") and proc.stderr.count("\n") == 1
    # An interpreter where `import mcp` fails, as without the extra.
    blocker = tmp_path / "block"
    (blocker / "mcp").mkdir(parents=True)
    (blocker / "mcp" / "__init__.py").write_text("raise ImportError('blocked for the test')\n")
    code = ("import sys; sys.argv=['wikitrace','mcp','--corpus','.']; from wikitrace.cli import main; main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), str(REPO)])))
    assert proc.returncode == 2
    assert proc.stderr == ("wikitrace: error: mcp: the MCP SDK is not installed — "
                           "pip install 'mcp>=2.3,<3' (the mcp extra; from a wikitrace clone: pip install '.[mcp]')\n")


def test_resources_are_listed_a_page_at_a_time(corpus, monkeypatch):
    """A large corpus answers resources/list in pages with the protocol's cursor."""
    from mcp_types import PaginatedRequestParams

    from wikitrace import mcp_server

    monkeypatch.setattr(mcp_server, "RESOURCE_PAGE", 10)
    server = mcp_server.build_server(corpus)

    async def all_pages():
        uris, cursor, answers = [], None, 0
        while True:
            res = await server._handle_list_resources(None, PaginatedRequestParams(cursor=cursor))
            answers += 1
            assert len(res.resources) <= 10
            uris += [str(r.uri) for r in res.resources]
            cursor = res.next_cursor
            if cursor is None:
                return uris, answers

    uris, answers = anyio.run(all_pages)
    everything = [str(r.uri) for r in anyio.run(server.list_resources)]
    assert uris == everything and len(everything) > 20 and answers == -(-len(everything) // 10)
    with pytest.raises(mcp.shared.exceptions.MCPError):
        anyio.run(server._handle_list_resources, None, PaginatedRequestParams(cursor="not-a-number"))


@pytest.mark.skipif(not TAU_BENCH.is_file(), reason=f"shared tau-bench runs not found at {TAU_BENCH}")
def test_memory_without_a_budget_stays_within_an_agents_context(tmp_path):
    """200 tau-bench runs: the memory tool called with the task only answers within the CLI's
    default budget and says how to ask for more."""
    big = _compile(TAU_BENCH, tmp_path / "tau")

    async def body(s):
        tools = {t.name: t for t in (await s.list_tools()).tools}
        assert "larger budget" in tools["memory"].description
        task = "I want to change my flight to a later one on the same day and use my travel certificate"
        default = _text(await s.call_tool("memory", {"task": task}))
        everything = _text(await s.call_tool("memory", {"task": task, "budget": 0}))
        return default, everything

    default, everything = _with_server(big, body)
    assert len(default.encode()) <= 20_000, len(default.encode())
    assert "left out by the budget of 4000 tokens" in default and "larger budget" in default
    assert len(everything.encode()) > len(default.encode())  # the budget is what kept it small


def test_search_answers_a_page_and_says_how_to_get_the_next(corpus):
    async def body(s):
        first = _text(await s.call_tool("search", {"pattern": "e"}))
        second = _text(await s.call_tool("search", {"pattern": "e", "skip": 50}))
        return first, second

    first, second = _with_server(corpus, body)
    lines = first.splitlines()
    assert len(lines) == 51 and "the next 50: skip=50" in lines[-1]
    assert second.splitlines()[0] != lines[0] and second.splitlines()[0] not in lines[:50]
