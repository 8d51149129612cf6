"""`wikitrace add` sends its request without importing the openai client while the endpoint
answers plainly (llm/light_post.py): the same body, the same pages. Anything else (an error
status, settings only the client applies) goes through the client as before."""

from __future__ import annotations

import os
import subprocess
import sys

from fake_openai import error
from helpers import write_jsonl
from test_insight_layer import flight_change
from test_insight_merge import responder

from wikitrace.build import BuildOptions, build

ADD = ("import sys\nfrom pathlib import Path\nfrom wikitrace.add import AddOptions, add_runs\n"
       "r = add_runs(AddOptions(run_file=Path(sys.argv[1]), corpus=Path(sys.argv[2]), quiet=True))\n"
       "print('openai' in sys.modules, r.stats['calls'], [a['compiler'] for a in r.added])\n")


def _corpus(fake_openai, tmp_path):
    fake_openai.respond_with(responder())
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [flight_change(k, searched=k < 3, success=k < 3)
                                                                 for k in range(6)])], out=out, quiet=True))
    return out, write_jsonl(tmp_path / "b.jsonl", [flight_change(40, searched=True, success=False)])


def _add(run_file, out, **env) -> list[str]:
    done = subprocess.run([sys.executable, "-c", ADD, str(run_file), str(out)], env=dict(os.environ, **env),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def _pages(root):
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and ".wikitrace" not in p.parts and p.name != "corpus.json"}


def test_an_add_asks_the_model_without_the_client_and_writes_the_same_pages(fake_openai, tmp_path):
    import shutil

    out, run_file = _corpus(fake_openai, tmp_path)
    shutil.copytree(out, tmp_path / "copy")
    shutil.copytree(tmp_path / "llm-cache", tmp_path / "cache-copy")
    calls = fake_openai.calls
    assert _add(run_file, out)[0] == "False"  # no client imported
    light = fake_openai.chat_requests[calls:]
    assert light and all(r["headers"]["authorization"] == f"Bearer {os.environ['OPENAI_API_KEY']}" for r in light)
    # the same add through the client (a setting only it applies keeps the light path off)
    calls = fake_openai.calls
    assert _add(run_file, tmp_path / "copy", OPENAI_ORG_ID="org-test",
                WIKITRACE_CACHE_DIR=str(tmp_path / "cache-copy"))[0] == "True"
    client = fake_openai.chat_requests[calls:]
    assert [r["body"] for r in client] == [r["body"] for r in light]
    assert _pages(tmp_path / "copy") == _pages(out)


def test_an_error_status_is_judged_by_the_client(fake_openai, tmp_path):
    out, run_file = _corpus(fake_openai, tmp_path)
    fake_openai.respond_with(lambda body: error(500, "down"))
    imported, _calls, compilers = _add(run_file, out)
    assert imported == "True"  # the client sent it again, retried it and recorded the reason
    assert compilers == "['offline-fallback']"


def _light(fake_openai, cap: int = 1 << 20, timeout: float = 5.0):
    from wikitrace.llm.config import resolve
    from wikitrace.llm.light_post import LightPost

    return LightPost.make(resolve("test-model"), timeout, cap)


def _post(light, body=None):
    import asyncio

    return asyncio.run(light.post(body or {"model": "test-model", "messages": [{"role": "user", "content": "é"}]}))


def test_only_a_plain_answer_is_taken_and_everything_else_goes_back_to_the_client(fake_openai, monkeypatch):
    import pytest
    from fake_openai import FakeResponse, completion, reply, slow

    from wikitrace.llm.light_post import WAITED
    from wikitrace.llm.replies import AnswerTooLarge

    light = _light(fake_openai)
    fake_openai.respond_with(lambda body: reply("ok"))
    assert _post(light) == completion("ok")
    assert fake_openai.chat_requests[-1]["body"]["messages"][0]["content"] == "é"
    for answer in (error(500, "down"), error(400, "response_format"), FakeResponse(200, "not json"),
                   FakeResponse(200, [1, 2]), FakeResponse(200, None, drop=True)):
        fake_openai.respond_with(lambda body, answer=answer: answer)
        assert _post(light) is None, answer
    fake_openai.respond_with(lambda body: reply("x" * 5000))
    with pytest.raises(AnswerTooLarge):
        _post(_light(fake_openai, cap=1000))
    fake_openai.respond_with(lambda body: slow(3.0))
    assert _post(_light(fake_openai, timeout=0.3)) == WAITED
    for name, value in (("OPENAI_ORG_ID", "org-test"), ("HTTPS_PROXY", "http://proxy:3128")):
        with monkeypatch.context() as m:
            m.setenv(name, value)
            assert _light(fake_openai) is None


def test_a_hanging_endpoint_costs_an_add_one_timeout(fake_openai, tmp_path):
    from fake_openai import slow

    out, run_file = _corpus(fake_openai, tmp_path)
    fake_openai.respond_with(lambda body: slow(3.0))
    calls = fake_openai.calls
    imported, _calls, compilers = _add(run_file, out, WIKITRACE_TIMEOUT="0.5")
    assert imported == "False" and compilers == "['offline-fallback']"
    assert fake_openai.settle().calls == calls + 1  # judged dead at the first timeout, not asked again
