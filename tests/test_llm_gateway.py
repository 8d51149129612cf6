"""The model gateway (wikitrace/llm): the only importer of ``openai``, imported lazily; every
dialogue request carries its limits; a model answer that holds a secret is redacted before any
file, cache or later prompt holds it; faults fall back and are recorded, bugs surface."""

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from fake_openai import error, reply

from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.llm import StructuredLLM
from wikitrace.llm.client import Client, ModelFault
from wikitrace.llm.config import resolve

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
# Made up for this test, in the shape of a project key.
SECRET = "sk-proj-" + "Q7vR2mXw9LpT4bZs8NcY1dHf6KgJ3uEa5WoV0iBn"


def _imports_openai(path: Path) -> list[int]:
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "openai" for a in node.names):
            lines.append(node.lineno)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "openai":
            lines.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr == "import_module" and node.args
              and isinstance(node.args[0], ast.Constant) and str(node.args[0].value).split(".")[0] == "openai"):
            lines.append(node.lineno)
    return lines


def test_only_the_gateway_imports_openai():
    gateway = REPO / "wikitrace" / "llm"
    found = {}
    for folder in ("wikitrace", "benchmarks"):
        for path in sorted((REPO / folder).rglob("*.py")):
            if gateway in path.parents:
                continue
            lines = _imports_openai(path)
            if lines:
                found[str(path.relative_to(REPO))] = lines
    assert found == {}, f"openai imported outside wikitrace/llm: {found}"
    assert _imports_openai(gateway / "client.py"), "the scan must see the gateway's own imports"


def test_loading_the_model_paths_does_not_import_openai():
    code = ("import sys; import wikitrace.llm, wikitrace.llm.client, wikitrace.llm.config, wikitrace.llm.cache, "
            "wikitrace.dialogue.llm, wikitrace.dialogue.embed, wikitrace.agent.similarity, "
            "wikitrace.compilers.llm, wikitrace.compilers.batch; print('openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


def _dialogue_with_secret(tmp_path: Path) -> Path:
    lines = FIXTURE.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["text"] = f"Hi Ben! I adopted a puppy named Biscuit yesterday. The shelter login is {SECRET} by the way."
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")
    return path


def test_a_secret_in_a_dialogue_answer_never_reaches_a_file_or_a_later_prompt(fake_openai, tmp_path):
    """The source message is redacted when loaded, but the model writes the key back in a claim.
    The claim is kept (its redacted quote matches the redacted source), so it reaches the
    snapshots, the pages and the later judge prompts: all of them hold the marker, none the key."""
    def respond(body):
        prompt = body["messages"][0]["content"]
        if prompt.startswith("TASK: extract") and "S1:1" in prompt:
            return {"claims": [{"text": f"Ana uses the shelter login {SECRET}.", "status": "active",
                                "source_message_ids": ["S1:1"],
                                "supporting_quote": f"The shelter login is {SECRET}"}]}
        if prompt.startswith("TASK: extract"):
            return {"claims": []}
        if prompt.startswith("TASK: does a new memory"):
            return {"decision": "NEW", "selected_candidate": None}
        return {"decision": "ADD", "selected_previous": None}
    fake_openai.respond_with(respond)
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=10.0, max_retries=0)
    out = tmp_path / "out"
    compile_dialogues(DialogueOptions(inputs=[_dialogue_with_secret(tmp_path)], out=out, llm=llm))

    assert llm.stats["redacted"] >= 2  # the claim's text and its quote
    files = [p for p in sorted(out.rglob("*")) if p.is_file()]
    assert files
    marker_in = []
    for path in files:
        data = path.read_bytes()
        assert SECRET.encode() not in data, f"{path} holds the key"
        if b"[REDACTED" in data and b"shelter login" in data:
            marker_in.append(path.name)
    assert marker_in, "the redacted claim should have reached the memory (else this test proves nothing)"
    later = [json.dumps(b) for b in fake_openai.bodies[1:]]
    assert all(SECRET not in body for body in later)
    assert any("shelter login" in body and "[REDACTED" in body for body in later), \
        "the claim is sent back to the model in a later prompt, redacted"
    for body in fake_openai.bodies:
        assert isinstance(body.get("max_tokens"), int) and body["max_tokens"] > 0
    make_writable(out)


def test_a_secret_in_a_synthesised_answer_is_redacted_on_arrival(fake_openai):
    fake_openai.script(reply({"can_answer": True, "final_answer": f"use {SECRET}",
                              "supporting_source_refs": ["S1:1"]}))
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=10.0, max_retries=0)
    data = llm.call("synthesis.md.j2", {"can_answer": bool}, p=_Packet())
    assert data is not None and SECRET not in json.dumps(data) and "[REDACTED" in data["final_answer"]
    assert llm.stats["redacted"] == 1


class _Packet:
    """The little of a retrieval packet the synthesis template reads."""

    def __getattr__(self, name):
        return "" if name != "refs" else (lambda: [])


def test_faults_fall_back_with_their_reason_and_an_oversized_answer_is_not_read(fake_openai, monkeypatch):
    monkeypatch.setenv("WIKITRACE_MAX_ANSWER_BYTES", "2000")
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=10.0, max_retries=0)
    fake_openai.script(reply({"claims": ["x" * 5000]}), error(500, retry_after=0), reply("no JSON here"))
    for _ in range(3):
        assert llm.call("claims.md.j2", {"claims": list}, speakers=["A", "B"], messages=[]) is None
    reasons = llm.stats["fallback_reasons"]
    assert any(r.startswith("schema: the answer is larger than the 2000-byte limit") for r in reasons)
    assert reasons.get("HTTP 500 after 1 attempt") == 1
    assert reasons.get("the answer is not the JSON object asked for") == 1
    assert llm.stats["failures"] == 2 and llm.stats["invalid"] == 1


def test_a_dialogue_build_records_why_its_model_calls_fell_back(fake_openai, tmp_path):
    fake_openai.respond_with(lambda body: error(503, retry_after=0))
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=10.0, max_retries=1)
    out = tmp_path / "out"
    res = compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, llm=llm))
    stats = res["samples"][0]["stats"]
    assert stats["llm_fallbacks"] == {"HTTP 503 after 2 attempts": llm.stats["failures"]}
    memory = json.loads(next(out.rglob("memory.json")).read_text(encoding="utf-8"))
    assert memory["stats"]["llm_fallbacks"] == stats["llm_fallbacks"]
    make_writable(out)


def test_a_bad_key_opens_the_breaker_and_a_refused_format_is_remembered(fake_openai):
    client = Client(resolve(None, fake_openai.base_url), max_attempts=2)
    fake_openai.script(error(400, "response_format json_object is not supported by this server"),
                       reply('{"ok": true}'), error(401, "bad key"), reply('{"never": "sent"}'))
    got = client.execute([{"role": "user", "content": "hi"}])
    assert got.data == {"ok": True} and got.mode == "text" and client.json_object is False
    assert "response_format" not in fake_openai.bodies[1]
    with pytest.raises(ModelFault) as first:
        client.execute([{"role": "user", "content": "hi"}])
    assert first.value.fatal and "check OPENAI_API_KEY" in first.value.reason
    with pytest.raises(ModelFault):
        client.execute([{"role": "user", "content": "hi"}])
    assert fake_openai.calls == 3  # the breaker sent nothing after the 401
    assert sum(client.stats.fallbacks.values()) == 2


def test_a_programming_error_is_not_taken_for_a_model_fault(fake_openai, monkeypatch):
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=10.0, max_retries=0)

    def broken(self, *a, **kw):
        raise TypeError("a bug, not a fault of the model")
    monkeypatch.setattr(Client, "execute", broken)
    with pytest.raises(TypeError):
        llm.call("claims.md.j2", {"claims": list}, speakers=["A", "B"], messages=[])
