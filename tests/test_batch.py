"""``--batch``: the Batch API pre-fills the response cache; the normal build does the rest.

Against ``FakeBatchAPI`` (loopback HTTP, the real ``openai`` client): answers
come back into the cache so the build sends no chat request for them; failed
items are compiled live or fall back, recorded; a restart resumes with only the
batch id (or the state file) and submits nothing again; cached runs are never
resubmitted; files are split under the per-file limits; no key in any request line.
"""

import copy
import itertools
import json
import re
import time

import pytest
from rich.progress import Progress

from fake_batch_api import MISSING, default_batch_answer, line_error, line_status
from fake_openai import API_KEY, error, is_merge, merge_reply, reply, valid_answer
from helpers import EXAMPLES
from wikitrace.build import BuildOptions, build, make_compiler
from wikitrace.compilers import batch as B
from wikitrace.runs.load import iter_runs

FAST = 0.001  # poll interval in tests


def _runs():
    return iter_runs([EXAMPLES])


def _compiler(tmp_path):
    """A compiler configured as the build's will be (same env, same cache dir)."""
    return make_compiler(BuildOptions(inputs=[EXAMPLES], out=tmp_path / "corpus"))


def _build(tmp_path):
    out = tmp_path / "corpus"
    result = build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True))
    return result, json.loads((out / "corpus.json").read_text())


def _mentions(body, text):
    return any(text in m["content"] for m in body["messages"])


def _live_answer(body):
    if is_merge(body):  # the insight merges go live after the batch, through the normal path
        return merge_reply(body)
    system = body["messages"][0]["content"]
    outcome = "failure" if "failure_causes" in system else "success"
    return reply(json.dumps(valid_answer(outcome, turns=[2])))


def test_batch_answers_fill_the_cache_and_the_build_sends_no_chat_call(fake_batch, tmp_path):
    state = tmp_path / ".corpus.batch.json"
    report = B.prefill_cache(_runs(), _compiler(tmp_path), state, poll_interval=FAST)
    assert (report.submitted, report.succeeded, report.failed, report.skipped_cached) == (6, 6, [], 0)
    assert len(report.batch_ids) == 1 and report.statuses == {report.batch_ids[0]: "completed"}
    assert not state.exists()  # everything stored: nothing left to resume
    counts = fake_batch.endpoint_counts()
    assert counts["POST /v1/files"] == 1 and counts["POST /v1/batches"] == 1
    assert counts["GET /v1/batches/{id}"] == fake_batch.polls_to_complete
    assert fake_batch.calls == 0

    (upload,) = fake_batch.uploaded_bytes()
    assert API_KEY.encode() not in upload and b"Authorization" not in upload and b"sk-" not in upload
    lines = [json.loads(x) for x in upload.splitlines()]
    assert len(lines) == 6
    for line in lines:
        assert set(line) == {"custom_id", "method", "url", "body"}
        assert re.fullmatch(r"[0-9a-f]{64}", line["custom_id"])
        assert (line["method"], line["url"]) == ("POST", "/v1/chat/completions")
        assert line["body"]["model"] and line["body"]["messages"][0]["role"] == "system"
        assert line["body"]["response_format"]["type"] == "json_schema"

    # any request about a run now gets a 500; the insight merges are not in the batch: they go
    # live after it, one per insight group
    fake_batch.respond_with(lambda body: merge_reply(body) or error(500))
    result, data = _build(tmp_path)
    assert fake_batch.run_calls == 0 and fake_batch.merge_calls == len(data["insights"]) > 0
    assert result.stats["cache_hits"] == 6 and result.stats["calls"] == fake_batch.merge_calls
    assert data["counts"]["by_compiler"] == {"llm": 6}


def test_failed_items_are_compiled_live_or_fall_back(fake_batch, tmp_path):
    def scripted(cid, body):
        if _mentions(body, "Ben Ito"):  # refund-002
            return line_status(500, "The server had an error")
        if _mentions(body, "'Kindred'"):  # stock-002
            return line_error("server_error", "could not process")
        if _mentions(body, "Dev Anand"):  # address-002: no line at all
            return MISSING
        if _mentions(body, "The Dispossessed"):  # stock-001: an answer that is not JSON
            return "I think the agent did fine."
        return default_batch_answer(cid, body)

    fake_batch.batch_responder = scripted
    report = B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "state.json", poll_interval=FAST)
    assert report.submitted == 6 and report.succeeded == 3  # the non-JSON answer is stored as is
    reasons = {f.run_id: f.reason for f in report.failed}
    assert set(reasons) == {"refund-002", "stock-002", "address-002"}
    assert reasons["refund-002"].startswith("HTTP 500") and "server had an error" in reasons["refund-002"]
    assert reasons["stock-002"].startswith("server_error: could not process")
    assert reasons["address-002"].startswith("no result (batch completed")
    assert all(re.fullmatch(r"[0-9a-f]{64}", f.custom_id) for f in report.failed)
    assert "3 failed" in report.summary()

    live = []

    def respond(body):
        if is_merge(body):
            return merge_reply(body)
        live.append(body)
        if _mentions(body, "Dev Anand"):
            return reply("{still not json")  # first call and repair: the run falls back
        return _live_answer(body)

    fake_batch.respond_with(respond)
    result, data = _build(tmp_path)
    # refund-002, stock-002: one call each; address-002: a call and a repair;
    # stock-001: its cached answer fails validation, so one repair call.
    assert fake_batch.run_calls == 5 and fake_batch.calls == result.stats["calls"]
    assert result.stats["repairs"] == 2 and result.stats["fallbacks"] == 1
    assert sum(_mentions(b, "Dev Anand") for b in live) == 2
    assert sum(_mentions(b, "The Dispossessed") for b in live) == 1
    assert not any(_mentions(b, "Refund order 4411") or _mentions(b, "Cleo Ruiz") for b in live)
    by_run = {r["run_id"]: r["compiler"] for r in data["runs"]}
    assert by_run["address-002"] == "offline-fallback"
    assert data["counts"]["by_compiler"] == {"llm": 5, "offline-fallback": 1}


def test_resume_with_only_the_batch_id_submits_nothing(fake_batch, tmp_path):
    # Process 1 plans and submits, then dies before collecting anything.
    first = _compiler(tmp_path)
    plan = B.plan_batch(_runs(), first, tmp_path / "work")
    ids = B.submit(plan, B.make_client(first))
    plan.cleanup()
    assert len(ids) == 1 and fake_batch.count("POST", "/files") == 1
    del first

    # Process 2: a fresh compiler, the same cache dir, only the batch id.
    report = B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "none.json", resume_batch=ids[0],
                             poll_interval=FAST)
    assert report.resumed and report.succeeded == 6 and report.batch_ids == ids
    assert fake_batch.count("POST", "/files") == 1 and fake_batch.count("POST", "/batches") == 1
    assert fake_batch.count("GET", f"/files/{fake_batch.batches[ids[0]]['obj']['input_file_id']}/content") == 1

    _, data = _build(tmp_path)
    assert fake_batch.run_calls == 0 and data["build"]["stats"]["cache_hits"] == 6


def test_answers_are_on_disk_when_the_prefill_returns(fake_batch, tmp_path, monkeypatch):
    # The cache writes behind; a build in another process must find every answer at once.
    from wikitrace.llm.cache import ResponseCache

    write = ResponseCache._write

    def slow_write(self, key, data):
        time.sleep(0.05)
        write(self, key, data)

    monkeypatch.setattr(ResponseCache, "_write", slow_write)
    compiler = _compiler(tmp_path)
    report = B.prefill_cache(_runs(), compiler, tmp_path / "state.json", poll_interval=FAST)
    assert report.succeeded == 6
    plan = B.plan_batch(_runs(), _compiler(tmp_path), tmp_path / "again")  # a fresh cache reads the disk
    plan.cleanup()
    assert plan.skipped_cached == 6


def test_an_interrupted_wait_resumes_from_the_state_file(fake_batch, tmp_path):
    state = tmp_path / ".corpus.batch.json"

    def ctrl_c(batch_id, status, done, total):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        B.prefill_cache(_runs(), _compiler(tmp_path), state, poll_interval=FAST, progress=ctrl_c)
    saved = json.loads(state.read_text())
    assert set(saved) >= {"batch_ids", "created_at", "model", "endpoint"}
    assert saved["model"] == "gpt-4o-mini" and saved["endpoint"] == fake_batch.base_url
    assert API_KEY not in state.read_text()

    seen = []
    report = B.prefill_cache(_runs(), _compiler(tmp_path), state, poll_interval=FAST,
                             progress=lambda *a: seen.append(a))
    assert report.resumed and report.succeeded == 6 and report.batch_ids == saved["batch_ids"]
    assert fake_batch.count("POST", "/files") == 1 and fake_batch.count("POST", "/batches") == 1
    assert seen[-1][1:] == ("completed", 6, 6)
    assert not state.exists()


def test_a_state_file_for_another_model_is_not_collected_silently(fake_batch, tmp_path, monkeypatch):
    state = tmp_path / "state.json"
    B.write_state(state, ["batch_x"], model="gpt-4o", endpoint=fake_batch.base_url)
    with pytest.raises(B.BatchError, match="--model gpt-4o"):
        B.prefill_cache(_runs(), _compiler(tmp_path), state, poll_interval=FAST)
    assert fake_batch.requests == []


def test_cached_runs_are_not_resubmitted(fake_batch, tmp_path):
    compiler = _compiler(tmp_path)
    first = B.prefill_cache(itertools.islice(_runs(), 2), compiler, tmp_path / "s.json", poll_interval=FAST)
    assert first.submitted == 2 and first.succeeded == 2

    second = B.prefill_cache(_runs(), compiler, tmp_path / "s.json", poll_interval=FAST)
    assert second.skipped_cached == 2 and second.submitted == 4 and second.succeeded == 4
    uploads = fake_batch.uploaded_bytes()
    assert [len(u.splitlines()) for u in uploads] == [2, 4]
    first_ids = {json.loads(x)["custom_id"] for x in uploads[0].splitlines()}
    assert first_ids.isdisjoint(json.loads(x)["custom_id"] for x in uploads[1].splitlines())

    before = len(fake_batch.requests)
    third = B.prefill_cache(_runs(), compiler, tmp_path / "s.json", poll_interval=FAST)
    assert (third.submitted, third.skipped_cached, third.batch_ids) == (0, 6, [])
    assert len(fake_batch.requests) == before  # nothing to do: no request at all


def test_identical_requests_are_sent_once(fake_batch, tmp_path):
    runs = list(_runs())
    twin = copy.deepcopy(runs[0])
    twin.run_id = "refund-001-again"
    compiler = _compiler(tmp_path)
    if compiler.render_messages(twin) != compiler.render_messages(runs[0]):
        pytest.skip("the prompt names the run id")
    plan = B.plan_batch(runs + [twin], compiler)
    try:
        assert plan.requests == 6 and plan.duplicates == 1
    finally:
        plan.cleanup()
    assert not plan.directory.exists()


def test_requests_are_split_under_the_per_file_limits(fake_batch, tmp_path):
    fake_batch.max_requests = 4  # the fake rejects bigger files, as the real API does at 50,000
    report = B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "s.json", poll_interval=FAST,
                             max_requests=4)
    assert len(report.batch_ids) == 2 and report.succeeded == 6 and not report.failed
    assert [len(u.splitlines()) for u in fake_batch.uploaded_bytes()] == [4, 2]

    # By bytes: room for two lines per file.
    compiler = _compiler(tmp_path / "other")
    compiler.cache.dir = tmp_path / "other-cache"
    sizes = []
    plan = B.plan_batch(_runs(), compiler, tmp_path / "w")
    for f in plan.files:
        sizes += [len(x) + 1 for x in f.path.read_bytes().splitlines()]
    plan.cleanup()
    limit = max(a + b for a, b in zip(sizes[::2], sizes[1::2]))
    plan = B.plan_batch(_runs(), compiler, tmp_path / "w", max_bytes=limit)
    try:
        assert all(f.bytes <= limit and f.path.stat().st_size == f.bytes for f in plan.files)
        assert sum(f.requests for f in plan.files) == 6 and len(plan.files) >= 3
    finally:
        plan.cleanup()
    plan = B.plan_batch(_runs(), compiler, tmp_path / "w", max_bytes=min(sizes) - 1)
    assert plan.requests == 0 and len(plan.too_large) == 6 and plan.files == []


def test_an_expired_batch_gives_its_partial_output(fake_batch, tmp_path):
    fake_batch.final_status = "expired"
    fake_batch.batch_responder = lambda cid, body: (
        line_error("batch_expired", "This request could not be executed before the completion window expired.")
        if _mentions(body, "Ben Ito") else MISSING if _mentions(body, "Dev Anand")
        else default_batch_answer(cid, body))
    bar = Progress(disable=True)
    report = B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "s.json", poll_interval=FAST, progress=bar)
    assert report.succeeded == 4 and report.statuses[report.batch_ids[0]] == "expired"
    reasons = {f.run_id: f.reason for f in report.failed}
    assert reasons["refund-002"].startswith("batch_expired")
    assert reasons["address-002"] == "no result (batch expired)"
    assert "batch status expired" in report.summary()
    assert any(t.description.endswith("expired") and (t.completed, t.total) == (6, 6) for t in bar.tasks)


def test_a_batch_the_api_rejects_stops_unless_live_is_allowed(fake_batch, tmp_path):
    fake_batch.max_requests = 2
    with pytest.raises(B.BatchError, match=r"rejected 1 of 1 batches .*invalid_request.*6 runs got no answer"):
        B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "s.json", poll_interval=FAST)
    assert not (tmp_path / "s.json").exists()  # nothing left to collect
    report = B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "s.json", poll_interval=FAST,
                             live_if_rejected=True)
    assert list(report.rejected) == report.batch_ids and "invalid_request" in report.rejected[report.batch_ids[0]]
    assert report.succeeded == 0 and len(report.failed) == 6
    assert all(f.reason.startswith("no result (batch failed: invalid_request") for f in report.failed)
    fake_batch.respond_with(_live_answer)
    result, data = _build(tmp_path)
    assert fake_batch.run_calls == 6 and data["counts"]["by_compiler"] == {"llm": 6}


def test_an_endpoint_without_the_batch_api_says_so(fake_openai, tmp_path):
    with pytest.raises(B.BatchError, match="may not offer the Batch API"):
        B.prefill_cache(_runs(), _compiler(tmp_path), tmp_path / "s.json", poll_interval=FAST)
    assert not (tmp_path / "s.json").exists()


def test_results_survive_unusual_line_breaks_in_run_text(fake_batch, tmp_path):
    runs = list(_runs())
    odd = copy.deepcopy(runs[0])
    odd.run_id = "odd-001"
    odd.task.instruction += " \u2028second line\u0085third\u000bfourth — ünïcode"
    compiler = _compiler(tmp_path)
    plan = B.plan_batch([odd], compiler)
    ids = B.submit(plan, B.make_client(compiler))
    plan.cleanup()
    # Resume downloads the uploaded input file to learn each request's messages.
    report = B.resume(ids[0], compiler, poll_interval=FAST)
    assert (report.submitted, report.succeeded, report.failed) == (1, 1, [])
    (messages,) = [json.loads(x)["body"]["messages"] for x in fake_batch.uploaded_bytes()[0].splitlines()]
    key = compiler._key(messages, "json_schema")
    assert compiler.cache.get(key) is not None
    record = json.loads(compiler.cache.path(key).read_text())
    assert record["key"] == key and record["mode"] == "json_schema"


def test_batch_then_build_with_the_run_reader_process_sends_no_chat_call(fake_batch, tmp_path, monkeypatch):
    """Large inputs are read by a helper process; its runs must make the very prompts the
    batch pass made (same cache keys), so the build is answered from the cache."""
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    out = tmp_path / "corpus"
    result = build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True, batch=True, batch_poll_interval=FAST))
    assert result.batch is not None and result.batch.succeeded == 6
    assert fake_batch.run_calls == 0 and result.stats["calls"] == fake_batch.merge_calls
    assert result.stats["cache_hits"] == 6
    assert json.loads((out / "corpus.json").read_text())["counts"]["by_compiler"] == {"llm": 6}
