"""A dead model never makes a page worse, and costs one timeout per build.

Against the loopback fake: a run whose content changed, compiled while the endpoint
refuses, rejects the key, fails, answers garbage or hangs, keeps the page the model
wrote for it; the build exits 1 naming the runs that wait for the model, and the next
build with a live endpoint asks again. A hanging endpoint is judged dead once: the
fake counts the requests it saw.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import frontmatter
import pytest

from fake_openai import FakeResponse, error, merge_reply, reply, slow, valid_answer
from helpers import example_runs, write_jsonl

CHANGED = "address-002"


def wikitrace(*args, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "wikitrace.cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "400", **(env or {})}, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def _good(body):
    if merge_reply(body) is not None:  # an insight group's merged guideline
        return merge_reply(body)
    system = body["messages"][0]["content"]
    return reply(valid_answer("failure" if "failure_causes" in system else "success", turns=[2]))


def _inputs(tmp_path: Path) -> tuple[Path, Path]:
    runs = example_runs()
    changed = []
    for run in runs:
        if run["run_id"] == CHANGED:  # the session went on: same run id, new content
            run = dict(run, task=dict(run["task"], instruction=run["task"]["instruction"] + " Also check the zip."))
        changed.append(run)
    return write_jsonl(tmp_path / "before.jsonl", runs), write_jsonl(tmp_path / "after.jsonl", changed)


def _page(out: Path, run_id: str) -> tuple[bytes, dict]:
    step = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}[run_id]
    path = out / "compilation" / f"{step}.md"
    return path.read_bytes(), frontmatter.load(path).metadata


@pytest.fixture()
def llm_corpus(fake_openai, tmp_path):
    fake_openai.respond_with(_good)
    before, after = _inputs(tmp_path)
    out = tmp_path / "corpus"
    done = wikitrace("compile", before, "--out", out, "--model", "test-model", "-q")
    assert done.returncode == 0, done.stderr
    assert _page(out, CHANGED)[1]["compiler"] == "llm"
    fake_openai.reset()
    return out, after


# fault: (environment, the fake's answer, requests the fake sees for the one changed run)
DEAD = {
    "refused": ({"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, None, 0),  # nothing listens on the discard port
    "401": ({}, lambda body: error(401, "bad key"), 1),
    "500": ({}, lambda body: error(500, "the model crashed"), 4),  # its 4 attempts
    "malformed": ({}, lambda body: FakeResponse(200, "<html>proxy error</html>"), 1),
    "bad answer": ({}, lambda body: reply("{not json at all"), 2),  # the answer and its one repair
    "hang": ({"WIKITRACE_TIMEOUT": "0.5"}, lambda body: slow(5.0, _good(body)), 1),
}


@pytest.mark.parametrize("fault", list(DEAD))
def test_a_changed_run_keeps_its_llm_page_while_the_model_is_dead(fault, llm_corpus, fake_openai):
    out, after = llm_corpus
    env, respond, requests = DEAD[fault]
    fake_openai.respond_with(respond)
    page, meta = _page(out, CHANGED)
    entry = next(r for r in json.loads((out / "corpus.json").read_text())["runs"] if r["run_id"] == CHANGED)

    dead = wikitrace("compile", after, "--out", out, "--model", "test-model", env=env)
    assert dead.returncode == 1, dead.stderr
    assert fake_openai.settle().calls == requests  # settle: a request that timed out may still be unread
    assert "wait for the model" in dead.stderr and CHANGED in dead.stderr.split("wait for the model")[1]
    assert _page(out, CHANGED)[0] == page, "the page the model wrote was replaced"
    data = json.loads((out / "corpus.json").read_text())
    assert next(r for r in data["runs"] if r["run_id"] == CHANGED) == entry
    assert data["build"]["waiting_for_model"] == [CHANGED]
    assert data["counts"]["by_compiler"] == {"llm": 6}

    fake_openai.respond_with(_good)  # the model is back: the run is asked again
    calls = fake_openai.run_calls
    alive = wikitrace("compile", after, "--out", out, "--model", "test-model", "-q")
    assert alive.returncode == 0, alive.stderr
    assert fake_openai.run_calls == calls + 1  # the one changed run (and merges of the groups it is in)
    new_page, new_meta = _page(out, CHANGED)
    assert new_page != page and new_meta["compiler"] == "llm"


def test_add_of_a_resumed_session_keeps_the_llm_page_while_the_model_is_dead(llm_corpus, fake_openai, tmp_path):
    out, _after = llm_corpus
    run = next(r for r in example_runs() if r["run_id"] == CHANGED)
    resumed = write_jsonl(tmp_path / "resumed.jsonl",
                          [dict(run, task=dict(run["task"], instruction=run["task"]["instruction"] + " And more."))])
    page, _ = _page(out, CHANGED)
    fake_openai.respond_with(lambda body: error(500, "down"))
    done = wikitrace("add", resumed, "--corpus", out, "--json")
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["waiting_for_model"] == [CHANGED]
    assert _page(out, CHANGED)[0] == page


def test_a_new_run_with_no_page_yet_gets_an_offline_fallback_page_recorded_as_such(llm_corpus, fake_openai, tmp_path):
    out, _after = llm_corpus
    run = next(r for r in example_runs() if r["run_id"] == CHANGED)
    run = dict(run, run_id="brand-new-001", task=dict(run["task"], instruction="A task no cache has seen."))
    fake_openai.respond_with(lambda body: error(500, "down"))
    done = wikitrace("add", write_jsonl(tmp_path / "new.jsonl", [run]), "--corpus", out, "--json")
    assert done.returncode == 0, done.stderr
    meta = _page(out, "brand-new-001")[1]
    assert meta["compiler"] == "offline-fallback" and "HTTP 500" in meta["fallback_reason"]


def test_a_hanging_endpoint_costs_one_timeout_per_build(fake_openai, tmp_path):
    fake_openai.respond_with(lambda body: slow(5.0, _good(body)))
    runs = example_runs()
    done = wikitrace("compile", write_jsonl(tmp_path / "runs.jsonl", runs), "--out", tmp_path / "c",
                     "--model", "test-model", "--timeout", "0.5", "--concurrency", "8")
    assert done.returncode == 1 and "nothing was published" in done.stderr, done.stderr
    assert fake_openai.settle().calls == 1, f"{fake_openai.calls} requests for {len(runs)} runs: the first timeout should end it"
    assert "judged dead" in done.stderr


def test_an_endpoint_that_stops_answering_mid_build_is_given_up_after_one_request_s_retries(fake_openai, tmp_path):
    answered = []

    def respond(body):
        if not answered:
            answered.append(body)
            return _good(body)
        return slow(5.0, _good(body))

    fake_openai.respond_with(respond)
    runs = example_runs()
    done = wikitrace("compile", write_jsonl(tmp_path / "runs.jsonl", runs), "--out", tmp_path / "c",
                     "--model", "test-model", "--timeout", "0.5", "--concurrency", "1")
    assert done.returncode == 0, done.stderr  # new runs: one llm page, the others offline-fallback pages
    assert fake_openai.settle().calls == 1 + 4, "one answered request, then one run's 4 attempts; the other runs wait for none"
    by_compiler = json.loads((tmp_path / "c" / "corpus.json").read_text())["counts"]["by_compiler"]
    assert by_compiler == {"llm": 1, "offline-fallback": len(runs) - 1}
