"""The LLM path's limits and faults, end to end against the loopback fake.

CLI cases drive the installed ``wikitrace`` in a subprocess and assert the exit
code, what stderr says, and that no traceback reaches the user.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import frontmatter
import pytest

from fake_openai import error, is_merge, merge_reply, reply, slow, valid_answer
from helpers import EXAMPLES, tree_bytes
from test_llm_compiler import compile_one, make_compiler, make_run
from wikitrace.compilers.llm import LLMCompiler
from wikitrace.llm.transport import AnswerTooLarge, read_capped
from wikitrace.llm.config import (DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT, LLMConfigError,
                                  resolve)
from wikitrace.runs.model import Turn

BROKEN_RUN = "Update Dev Anand"  # a phrase only the example run address-002 contains (a merge prompt may quote its request too)


def _outcome_of(body):
    return "failure" if "failure_causes" in body["messages"][0]["content"] else "success"


def _good(body):
    if merge_reply(body) is not None:  # an insight group's merge
        return merge_reply(body)
    return reply(valid_answer(_outcome_of(body), turns=[2]))


def _broken_for_one_run(body):
    """Valid answers, except malformed ones (repairs included) for the run address-002."""
    if not is_merge(body) and any(BROKEN_RUN in m["content"] for m in body["messages"]):
        return reply("{not json at all")
    return _good(body)


def wikitrace(*args: str, env: dict | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    exe = shutil.which("wikitrace")
    cmd = [exe] if exe else [sys.executable, "-m", "wikitrace.cli"]
    full_env = dict(os.environ, COLUMNS="400", **(env or {}))
    return subprocess.run(cmd + list(args), env=full_env, capture_output=True, text=True, timeout=timeout)


def compile_cli(out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    proc = wikitrace("compile", str(EXAMPLES), "--out", str(out), "--model", "test-model", *extra, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def pages_by_run(out: Path) -> dict[str, dict]:
    data = json.loads((out / "corpus.json").read_text())
    return {r["run_id"]: frontmatter.load(out / f"compilation/{r['step']}.md").metadata for r in data["runs"]}


# --- limits: --max-tokens, --timeout, and the environment ------------------------------------


def test_max_tokens_goes_out_in_every_request_repairs_included(fake_openai, tmp_path):
    fake_openai.respond_with(_broken_for_one_run)
    proc = compile_cli(tmp_path / "corpus", "--max-tokens", "321")
    assert proc.returncode == 0, proc.stderr
    bodies = fake_openai.bodies
    assert any(len(b["messages"]) == 4 for b in bodies), "the broken run should have had a repair call"
    assert {b.get("max_tokens") for b in bodies} == {321}


def test_max_tokens_is_sent_by_default(fake_openai, tmp_path):
    fake_openai.script(reply(valid_answer("success", [3])))
    compiler = LLMCompiler(resolve("m", None), use_cache=False)
    compile_one(compiler, make_run(True))
    assert fake_openai.bodies[0]["max_tokens"] == DEFAULT_MAX_TOKENS


def test_limits_resolve_from_option_then_environment_then_default():
    url = "http://127.0.0.1:1/v1"
    base = resolve(None, url, env={})
    assert (base.max_tokens, base.timeout, base.max_answer_bytes) == (DEFAULT_MAX_TOKENS, DEFAULT_TIMEOUT,
                                                                      DEFAULT_MAX_ANSWER_BYTES)
    env = {"WIKITRACE_MAX_TOKENS": "900", "WIKITRACE_TIMEOUT": "7.5", "WIKITRACE_MAX_ANSWER_BYTES": "4096"}
    from_env = resolve(None, url, env=env)
    assert (from_env.max_tokens, from_env.timeout, from_env.max_answer_bytes) == (900, 7.5, 4096)
    flags = resolve(None, url, env=env, max_tokens=50, timeout=3)
    assert (flags.max_tokens, flags.timeout) == (50, 3)
    for var, value in [("WIKITRACE_MAX_TOKENS", "lots"), ("WIKITRACE_TIMEOUT", "-1"),
                       ("WIKITRACE_MAX_TOKENS", "1.5"), ("WIKITRACE_MAX_ANSWER_BYTES", "0")]:
        with pytest.raises(LLMConfigError, match=var):
            resolve(None, url, env={var: value})


def test_bad_max_tokens_in_the_environment_is_one_clear_line(fake_openai, tmp_path):
    proc = compile_cli(tmp_path / "corpus", env={"WIKITRACE_MAX_TOKENS": "lots"})
    assert proc.returncode != 0
    assert "WIKITRACE_MAX_TOKENS" in proc.stderr and "'lots'" in proc.stderr
    assert fake_openai.calls == 0 and not (tmp_path / "corpus").exists()


def test_timeout_option_limits_each_request(fake_openai, tmp_path):
    def respond(body):
        if any(BROKEN_RUN in m["content"] for m in body["messages"]):
            return slow(3.0, _good(body))
        return _good(body)

    fake_openai.respond_with(respond)
    out = tmp_path / "corpus"
    proc = compile_cli(out, "--timeout", "0.3")
    assert proc.returncode == 0, proc.stderr
    page = pages_by_run(out)["address-002"]
    assert page["compiler"] == "offline-fallback" and page["fallback_reason"].startswith("timeout after")
    assert "timeout after" in proc.stderr


# --- content checks beyond the schema ------------------------------------------------------------


def _with_lessons(*guidelines: str, outcome: str = "success", turns=(3,)) -> dict:
    answer = valid_answer(outcome, list(turns), insights=len(guidelines))
    for lesson, text in zip(answer["candidate_insights"], guidelines):
        lesson["guideline"] = text
    return answer


def test_lesson_copying_episode_values_is_repaired(fake_openai, tmp_path):
    fake_openai.script(reply(_with_lessons("Move order #W100 to zip 12345 only after reading it.")),
                       reply(_with_lessons("Read an order before changing its address.")))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm" and fake_openai.calls == 2
    repair = fake_openai.bodies[1]["messages"][3]["content"]
    assert "copies values of this episode (12345, w100)" in repair
    assert comp.insights[0].guideline == "Read an order before changing its address."


def test_lesson_still_copying_after_repair_is_dropped_and_counted(fake_openai, tmp_path):
    bad = "As at turn 3, send order #W100 again."
    good = "Read an order before changing its address."
    fake_openai.script(reply(_with_lessons(bad, good)), reply(_with_lessons(good, bad)))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm"
    assert [i.guideline for i in comp.insights] == [good]
    assert comp.dropped_insights == 1 and compiler.stats().dropped_insights == 1
    repair = fake_openai.bodies[1]["messages"][3]["content"]
    assert "names 'turn 3' of this run" in repair


def test_answer_whose_every_lesson_copies_values_falls_back_with_the_reason(fake_openai, tmp_path):
    bad = _with_lessons("Change order #W100 first.")
    fake_openai.script(reply(bad), reply(bad))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True))
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason.startswith("content: $.candidate_insights[0].guideline copies values of this episode")


def test_lesson_repeating_the_prompt_example_is_repaired(fake_openai, tmp_path):
    echo = "Check the order, then: the action to take, stated in at most two sentences."
    fake_openai.script(reply(_with_lessons(echo)), reply(_with_lessons("Read an order before changing it.")))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True))
    assert comp.compiler == "llm"
    assert "repeats the prompt's wording" in fake_openai.bodies[1]["messages"][3]["content"]


def test_values_the_agent_instructions_state_are_not_episode_values(fake_openai, tmp_path):
    run = make_run(True)
    run.turns[0] = Turn(0, "message", role="system", content="Refunds above 500 dollars need a supervisor.")
    run.turns[2].arguments = {"order_id": "#W100", "refund": 500}
    fake_openai.script(reply(_with_lessons("Refunds above 500 dollars go to a supervisor first.")))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), run)
    assert comp.compiler == "llm" and fake_openai.calls == 1


def test_quote_must_occur_in_its_turn(fake_openai, tmp_path):
    # The text is turn 3's observation, but the item cites turn 2 only.
    fake_openai.script(reply(valid_answer("success", [2], quote="ok: address updated")))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm" and comp.evidence[0].quote is None
    assert comp.dropped_quotes == 1 and compiler.stats().dropped_quotes == 1


# --- the cache holds only answers that passed ------------------------------------------------------


def test_malformed_answer_is_never_replayed_from_the_cache(fake_openai, tmp_path):
    out = tmp_path / "corpus"
    fake_openai.respond_with(_broken_for_one_run)
    first = compile_cli(out)
    assert first.returncode == 0, first.stderr
    assert pages_by_run(out)["address-002"]["compiler"] == "offline-fallback"

    sent = fake_openai.calls
    fake_openai.respond_with(_good)  # the server works now
    again = compile_cli(out)
    assert again.returncode == 0, again.stderr
    assert fake_openai.calls == sent + 1, "the run that fell back must be asked again, once"
    assert {p["compiler"] for p in pages_by_run(out).values()} == {"llm"}


def test_no_cache_bypasses_reading_the_cache(fake_openai, tmp_path):
    fake_openai.respond_with(_good)
    assert compile_cli(tmp_path / "a").returncode == 0
    first = fake_openai.calls
    assert fake_openai.run_calls == 6 and fake_openai.merge_calls > 0  # a call per run, then per insight group
    assert compile_cli(tmp_path / "b", "--no-cache").returncode == 0
    assert fake_openai.calls == 2 * first, "--no-cache must ask the model for every run and merge"
    assert compile_cli(tmp_path / "c").returncode == 0
    assert fake_openai.calls == 2 * first, "answers are still stored with --no-cache"


def test_no_cache_with_batch_is_refused_in_one_line(fake_openai, tmp_path):
    proc = compile_cli(tmp_path / "corpus", "--no-cache", "--batch")
    assert proc.returncode != 0 and "--no-cache" in proc.stderr and fake_openai.calls == 0


def _first_key(compiler: LLMCompiler, run) -> str:
    return compiler.cache_key_for(compiler.render_messages(run, "json_schema"), "json_schema")


def test_cached_answer_that_fails_the_checks_is_asked_again(fake_openai, tmp_path):
    """Batch results are stored unchecked; one that fails is repaired live, then cached repaired."""
    from wikitrace.llm.cache import CachedAnswer

    compiler = make_compiler(tmp_path)
    run = make_run(True)
    key = _first_key(compiler, run)
    compiler.cache.put(key, CachedAnswer("{broken"), model="test-model", mode="json_schema", messages=[])
    fake_openai.script(reply(valid_answer("success", [3])))
    assert compile_one(compiler, run).compiler == "llm"
    assert fake_openai.calls == 1 and len(fake_openai.bodies[0]["messages"]) == 4  # a repair, not a replay
    assert "{broken" not in compiler.cache.path(key).read_text(encoding="utf-8")


def test_cached_answer_that_fails_twice_is_deleted(fake_openai, tmp_path):
    from wikitrace.llm.cache import CachedAnswer

    compiler = make_compiler(tmp_path)
    run = make_run(True)
    key = _first_key(compiler, run)
    compiler.cache.put(key, CachedAnswer("{broken"), model="test-model", mode="json_schema", messages=[])
    fake_openai.script(reply("still broken"))
    assert compile_one(compiler, run).compiler == "offline-fallback"
    assert not compiler.cache.path(key).exists()


# --- answers: invented refs, size cap ----------------------------------------------------------------


def test_cause_whose_turn_refs_are_all_invented_is_dropped_and_counted(fake_openai, tmp_path):
    answer = valid_answer("failure", [3])
    invented = dict(answer["failure_causes"][0], decision="Skipped a check that never happened.", turns=[42, 99])
    answer["failure_causes"].insert(0, invented)
    fake_openai.script(reply(answer))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(False))
    assert comp.compiler == "llm" and fake_openai.calls == 1
    assert [e.turns for e in comp.evidence] == [[3]]
    assert (comp.dropped_items, comp.dropped_refs) == (1, 2)
    assert compiler.stats().dropped_items == 1


def test_answer_whose_every_cause_cites_invented_turns_is_repaired_then_replaced(fake_openai, tmp_path):
    invented = valid_answer("failure", [42])
    fake_openai.script(reply(invented), reply(invented))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(False))
    assert comp.compiler == "offline-fallback" and fake_openai.calls == 2
    assert "no item of $.failure_causes cites a turn the log has" in fake_openai.bodies[1]["messages"][3]["content"]
    assert comp.fallback_reason.startswith("schema: no item of $.failure_causes cites a turn")


def test_answer_larger_than_the_cap_is_a_schema_fault(fake_openai, tmp_path):
    huge = valid_answer("success", [3])
    huge["description"] = "x " * 600_000  # 1.2 MB
    fake_openai.script(reply(huge), reply(valid_answer("success", [3])))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm" and compiler.stats().repairs == 1
    repair = fake_openai.bodies[1]["messages"]
    assert "larger than the 1000000-byte limit" in repair[3]["content"]
    assert len(repair[2]["content"]) < 200  # the oversized answer is not sent back

    fake_openai.script(reply(huge), reply(huge))
    replaced = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True, "b"))
    assert replaced.compiler == "offline-fallback"
    assert replaced.fallback_reason.startswith("schema: the answer is larger than the 1000000-byte limit")


def test_answer_size_cap_is_configurable(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKITRACE_MAX_ANSWER_BYTES", "2000")
    wordy = valid_answer("success", [3])
    wordy["description"] = "A long description. " * 200  # 4 KB
    fake_openai.script(reply(wordy), reply(valid_answer("success", [3])))
    compiler = make_compiler(tmp_path, resolve("test-model", None), use_cache=False)
    assert compiler.max_answer_bytes == 2000
    assert compile_one(compiler, make_run(True)).compiler == "llm" and compiler.stats().repairs == 1


def test_oversized_answer_is_read_no_further_than_the_cap():
    class Streamed:
        headers: dict = {}  # no Content-Length: only reading tells

        def __init__(self):
            self.chunks_read = 0
            self.closed = False

        async def aiter_bytes(self):
            for _ in range(1000):  # 64 MB if read to the end
                self.chunks_read += 1
                yield b"x" * 65536

        async def aclose(self):
            self.closed = True

    raw = Streamed()
    with pytest.raises(AnswerTooLarge):
        asyncio.run(read_capped(raw, 1_000_000))
    assert raw.chunks_read == 16 and raw.closed  # 16 x 64 KB is the first read past 1 MB

    declared = Streamed()
    declared.headers = {"content-length": str(50_000_000)}
    with pytest.raises(AnswerTooLarge):
        asyncio.run(read_capped(declared, 1_000_000))
    assert declared.chunks_read == 0 and declared.closed


@pytest.mark.parametrize("status,hint", [(401, "OPENAI_API_KEY"), (403, "permissions"), (404, "--base-url")])
def test_fatal_http_status_stops_the_build_after_one_call(fake_openai, tmp_path, status, hint):
    fake_openai.respond_with(lambda body: error(status, "refused by the fake"))
    out = tmp_path / "corpus"
    proc = compile_cli(out, "--concurrency", "8")
    assert fake_openai.calls == 1
    assert proc.returncode == 1
    assert f"HTTP {status}" in proc.stderr and hint in proc.stderr and "nothing was published" in proc.stderr
    assert not out.exists() and not list(tmp_path.glob(".corpus.building*"))


# --- no answer at all: nothing published; the summary names the compiler -----------------------------


def test_build_where_no_llm_call_succeeded_publishes_nothing(tmp_path):
    out = tmp_path / "corpus"
    offline = wikitrace("compile", str(EXAMPLES), "--out", str(out), "--offline")
    assert offline.returncode == 0, offline.stderr
    before = tree_bytes(out)
    # Port 9 (discard) is closed on loopback: every connection is refused.
    proc = compile_cli(out, "--base-url", "http://127.0.0.1:9/v1")
    assert proc.returncode == 1
    assert "compiled none of the 6 runs" in proc.stderr and "connection error" in proc.stderr
    assert "nothing was published" in proc.stderr
    assert tree_bytes(out) == before


def test_summary_names_compiler_model_and_fallback_reasons(fake_openai, tmp_path):
    fake_openai.respond_with(_broken_for_one_run)
    proc = compile_cli(tmp_path / "corpus")
    assert proc.returncode == 0, proc.stderr
    assert f"llm: test-model at {fake_openai.base_url}" in proc.stderr
    assert "5 llm, 1 offline-fallback pages" in proc.stderr
    assert "1 (1× invalid JSON: the answer is not valid JSON" in proc.stderr

    offline = wikitrace("compile", str(EXAMPLES), "--out", str(tmp_path / "off"), "--offline")
    assert offline.returncode == 0 and "Traceback" not in offline.stderr
    assert "offline (rule-based, no model) (6 offline pages)" in offline.stderr


def test_model_text_in_a_fallback_reason_is_printed_as_text(fake_openai, tmp_path):
    """A reason quotes the model; rich markup in it must neither vanish nor crash the summary."""
    def respond(body):
        if any(BROKEN_RUN in m["content"] for m in body["messages"]):
            echo = valid_answer(_outcome_of(body), [2])
            echo["description"] = "[/]"  # closes no tag: rich markup would raise here
            return reply(echo)
        return _good(body)

    fake_openai.respond_with(respond)
    proc = compile_cli(tmp_path / "corpus")
    assert proc.returncode == 0, proc.stderr
    assert "1× schema: $.description has no words in it ('[/]')" in proc.stderr
