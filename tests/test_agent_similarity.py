"""The optional embeddings backend, against a loopback fake /v1/embeddings server."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures" / "agent"
sys.path.insert(0, str(FIX))

import agent_corpus  # noqa: E402

from wikitrace.agent.corpusdata import load_corpus  # noqa: E402
from wikitrace.agent.prompt import build_prompt  # noqa: E402
from wikitrace.agent.similarity import OpenAIEmbeddings, make_backend, rank_runs  # noqa: E402

DIM = 32


def fake_vector(text: str) -> list[float]:
    """A hashed bag of words: texts sharing words get close vectors."""
    v = [0.0] * DIM
    for w in re.findall(r"[a-z]+", text.lower()):
        if len(w) > 3:
            v[int(hashlib.md5(w.encode()).hexdigest(), 16) % DIM] += 1.0
    return v


@pytest.fixture()
def fake_server(monkeypatch):
    calls: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            calls.append({"path": self.path, "body": body})
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            data = [{"object": "embedding", "index": i, "embedding": fake_vector(t)} for i, t in enumerate(inputs)]
            out = json.dumps({"object": "list", "data": data, "model": body["model"],
                              "usage": {"prompt_tokens": 1, "total_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", calls
    server.shutdown()
    server.server_close()


def test_embeddings_backend_ranks_by_cosine_and_caches_runs(tmp_path, fake_server):
    pytest.importorskip("openai")
    base_url, calls = fake_server
    corpus = load_corpus(agent_corpus.write_corpus(tmp_path / "c"))
    backend = OpenAIEmbeddings(model="fake-embed", base_url=base_url, api_key="x", batch_size=4)
    ranked = rank_runs(corpus, "Your task is to: heat some egg and put it in the fridge.", k=2, backend=backend)
    assert ranked[0][0].step == "step-0002"
    assert all(c["path"] == "/v1/embeddings" and c["body"]["model"] == "fake-embed" for c in calls)
    # 6 run texts in batches of 4, then the query
    assert [len(c["body"]["input"]) for c in calls] == [4, 2, 1]
    rank_runs(corpus, "look at the book under the desklamp", k=1, backend=backend)
    assert len(calls) == 4  # runs were cached on the corpus; only the task was embedded
    parts = build_prompt(corpus, "look at the book under the desklamp", backend=backend, k=1)
    assert [r.step for r in parts.similar_runs] == ["step-0004"]


def test_cli_prompt_with_embeddings(tmp_path, fake_server):
    from typer.testing import CliRunner

    from wikitrace.cli import app

    base_url, calls = fake_server
    d = agent_corpus.write_corpus(tmp_path / "c")
    r = CliRunner().invoke(app, ["prompt", "--corpus", str(d), "--task", "heat some egg for the fridge", "--json",
                                 "--embedding-model", "fake-embed", "--base-url", base_url, "--similar", "1"],
                           env={"OPENAI_API_KEY": "x"})
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["similar_runs"][0]["step"] == "step-0002"
    assert calls


def test_make_backend_errors():
    assert make_backend("bm25").name == "bm25"
    with pytest.raises(ValueError):
        make_backend("embeddings")
    with pytest.raises(ValueError):
        make_backend("nope")


def test_a_failing_embeddings_endpoint_falls_back_to_bm25_and_says_so(tmp_path):
    import socket

    with socket.socket() as s:  # a port with nobody listening: connection refused
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    corpus = load_corpus(agent_corpus.write_corpus(tmp_path / "c"))
    backend = OpenAIEmbeddings(model="fake-embed", base_url=dead, api_key="x", batch_size=4)
    task = "Your task is to: heat some egg and put it in the fridge."
    parts = build_prompt(corpus, task, backend=backend, k=2)
    plain = build_prompt(corpus, task, k=2)
    assert [r.step for r in parts.similar_runs] == [r.step for r in plain.similar_runs]
    assert any("BM25" in n and "embeddings backend failed" in n for n in parts.notes)
