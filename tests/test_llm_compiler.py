"""The LLM compiler against a loopback fake OpenAI server: every fault ends as documented."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from fake_openai import (
    API_KEY,
    FakeResponse,
    error,
    llama_cpp_json_schema_rejection,
    reply,
    slow,
    valid_answer,
)
from wikitrace.llm.cache import ResponseCache, cache_key
from wikitrace.compilers.llm import LLMCompiler, clip, extract_json
from wikitrace.llm.config import DEFAULT_MODEL, PLACEHOLDER_KEY, LLMConfigError, resolve
from wikitrace.runs.model import Outcome, Run, Task, Turn

REPO = Path(__file__).resolve().parents[1]


def make_run(success: bool = True, run_id: str = "run-1", *, observation: str = '{"status": "pending"}',
             ended_by: str | None = "agent") -> Run:
    turns = [
        Turn(0, "message", role="system", content="# Retail Agent Policy\nAlways look things up first."),
        Turn(1, "message", role="user", content="Please change the address on my order."),
        Turn(2, "function_call", role="assistant", name="get_order_details",
             arguments={"order_id": "#W100"}, reasoning="I need the order first.", result=observation),
        Turn(3, "function_call", role="assistant", name="modify_order_address",
             arguments={"order_id": "#W100", "zip": "12345"},
             result="ok: address updated" if success else "Error: zip code does not match the city",
             is_error=not success),
        Turn(4, "episode_over", extra={"ended_by": ended_by} if ended_by else {}),
    ]
    return Run(
        run_id=run_id,
        task=Task(id=run_id, instruction="Change the shipping address of order #W100.", task_type="retail"),
        turns=turns,
        outcome=Outcome(success=success, steps=2, score=1.0 if success else 0.0, ended_by=ended_by),
    )


def make_compiler(tmp_path: Path, config=None, **kw) -> LLMCompiler:
    """A compiler for the fake server the fixture put in the environment; tiny delays."""
    opts = dict(cache_dir=tmp_path / "cache", timeout=2.0, max_attempts=3, backoff=0.001,
                max_backoff=0.01, max_retry_after=0.05, seed=7)
    opts.update(kw)
    return LLMCompiler(config or resolve("test-model", None), **opts)


def compile_one(compiler: LLMCompiler, run: Run):
    async def go():
        try:
            return await compiler.compile(run)
        finally:
            await compiler.aclose()

    return asyncio.run(go())


# --- good answers ------------------------------------------------------------------------


def test_valid_json_is_used_as_sent(fake_openai, tmp_path):
    answer = valid_answer("success", [2, 3], quote="ok: address updated")
    fake_openai.script(reply(answer, prompt_tokens=321, completion_tokens=45))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True))

    assert comp.compiler == "llm" and comp.model == "test-model" and comp.fallback_reason is None
    assert comp.title == "[success] " + answer["title"]
    assert comp.description == answer["description"]
    assert comp.evidence_heading == "Key Decisions"
    assert [(e.decision, e.turns, e.quote) for e in comp.evidence] == [
        (answer["key_decisions"][0]["decision"], [2, 3], "ok: address updated")]
    assert [i.title for i in comp.insights] == ["Insight 1", "Insight 2"]
    assert comp.usage == {"prompt_tokens": 321, "completion_tokens": 45}
    assert comp.dropped_refs == 0 and comp.dropped_quotes == 0

    assert fake_openai.calls == 1
    body = fake_openai.bodies[0]
    assert body["model"] == "test-model"
    assert body["response_format"]["type"] == "json_schema"
    schema = body["response_format"]["json_schema"]["schema"]
    assert "key_decisions" in schema["required"]
    system, user = body["messages"]
    assert system["role"] == "system" and user["role"] == "user"
    assert "[turn 2] action: get_order_details" in user["content"]
    assert "Result: success" in user["content"]


def test_system_prompt_depends_on_outcome(fake_openai, tmp_path):
    fake_openai.script(reply(valid_answer("success", [3])), reply(valid_answer("failure", [3])))
    compiler = make_compiler(tmp_path, use_cache=False)
    ok = compile_one(compiler, make_run(True))
    bad = compile_one(compiler, make_run(False, ended_by="harness: step limit"))
    assert ok.compiler == bad.compiler == "llm"
    assert bad.evidence_heading == "Failure Causes"
    s_success = fake_openai.bodies[0]["messages"][0]["content"]
    s_failure = fake_openai.bodies[1]["messages"][0]["content"]
    assert s_success != s_failure
    assert '"key_decisions"' in s_success and '"failure_causes"' not in s_success
    assert '"failure_causes"' in s_failure and '"key_decisions"' not in s_failure
    assert "harness" in s_failure and "how much of the work was done" in s_failure
    for s in (s_success, s_failure):
        assert "English" in s and "3 candidate insights at most" in s and '"turns"' in s
        assert "Retail Agent Policy" in s  # the agent's own instructions are shown
    user_failure = fake_openai.bodies[1]["messages"][1]["content"]
    assert "Result: failure" in user_failure and "not the agent's decision" in user_failure
    assert "observation (error): Error: zip code" in user_failure
    assert fake_openai.bodies[1]["response_format"]["json_schema"]["schema"]["required"][2] == "failure_causes"


def test_long_observations_are_clipped_and_say_so(fake_openai, tmp_path):
    fake_openai.script(reply(valid_answer("success", [2])))
    long_obs = "A" * 3000 + "MIDDLE" + "Z" * 3000
    compile_one(make_compiler(tmp_path, use_cache=False, clip_limit=600), make_run(True, observation=long_obs))
    user = fake_openai.bodies[0]["messages"][1]["content"]
    assert "MIDDLE" not in user and "characters clipped" in user
    assert "Texts longer than 600 characters are cut" in user
    assert clip(long_obs, 600) == clip(long_obs, 600)  # deterministic
    assert len(clip(long_obs, 600)) < 700


def test_turn_refs_that_do_not_exist_are_dropped_and_counted(fake_openai, tmp_path):
    answer = valid_answer("success", [2, 42, 99], quote="words that never occurred in the run")
    fake_openai.script(reply(answer))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True))
    assert comp.compiler == "llm"
    assert comp.evidence[0].turns == [2]
    assert comp.dropped_refs == 2
    assert comp.evidence[0].quote is None and comp.dropped_quotes == 1


# --- bad answers: repair once, then fall back ----------------------------------------------


def test_malformed_json_is_repaired_with_one_call(fake_openai, tmp_path):
    fake_openai.script(reply('{"title": "half an answer", "description": '), reply(valid_answer("success", [3])))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm"
    assert fake_openai.calls == 2
    repair_msgs = fake_openai.bodies[1]["messages"]
    assert [m["role"] for m in repair_msgs] == ["system", "user", "assistant", "user"]
    assert repair_msgs[2]["content"] == '{"title": "half an answer", "description": '
    assert "not valid JSON" in repair_msgs[3]["content"]
    assert compiler.stats().repairs == 1 and compiler.stats().fallbacks == 0
    assert comp.usage == {"prompt_tokens": 200, "completion_tokens": 100}


def test_malformed_twice_falls_back(fake_openai, tmp_path):
    fake_openai.script(reply("I cannot answer in JSON."), reply("still no json"))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(False))
    assert fake_openai.calls == 2
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "invalid JSON: the answer contains no JSON object"
    assert comp.evidence and comp.insights  # the offline reading of the run
    assert compiler.stats().fallbacks == 1


def test_schema_violation_twice_falls_back_with_reason(fake_openai, tmp_path):
    broken = valid_answer("success", [3])
    broken["candidate_insights"] = []
    fake_openai.script(reply(broken), reply(broken))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert fake_openai.calls == 2
    assert "$.candidate_insights must be a non-empty list" in fake_openai.bodies[1]["messages"][3]["content"]
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "schema: $.candidate_insights must be a non-empty list"
    assert comp.model is None and comp.usage == {}
    s = compiler.stats()
    assert (s.calls, s.repairs, s.fallbacks, s.runs) == (2, 1, 1, 1)


def test_schema_violation_then_fixed(fake_openai, tmp_path):
    broken = valid_answer("failure", [3])
    del broken["failure_causes"][0]["support"]
    fake_openai.script(reply(broken), reply(valid_answer("failure", [3])))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(False))
    assert comp.compiler == "llm" and fake_openai.calls == 2
    assert "$.failure_causes[0].support must be a non-empty string" in fake_openai.bodies[1]["messages"][3]["content"]


def test_answer_echoing_the_format_example_is_repaired_or_replaced(fake_openai, tmp_path):
    echo = valid_answer("success", [3])
    echo["title"] = "A short name for the case"
    echo["key_decisions"][0]["decision"] = "what the agent chose to do, and at which turn"
    echo["candidate_insights"][0]["guideline"] = "} {"
    fake_openai.script(reply(echo), reply(valid_answer("success", [3])), reply(echo), reply(echo))
    compiler = make_compiler(tmp_path, use_cache=False)
    fixed = compile_one(compiler, make_run(True, "a"))
    assert fixed.compiler == "llm"
    repair = fake_openai.bodies[1]["messages"][3]["content"]
    assert "$.title copies the example text" in repair
    assert "$.key_decisions[0].decision copies the example text" in repair
    assert "$.candidate_insights[0].guideline has no words" in repair

    replaced = compile_one(compiler, make_run(True, "b"))
    assert replaced.compiler == "offline-fallback"
    assert replaced.fallback_reason.startswith("schema: $.title copies the example text 'A short name for the case'")
    # The reason counts the faults only; the empty lesson alone would have been dropped.
    assert replaced.fallback_reason.endswith("(and 1 more problem)")


def test_text_from_the_agent_instructions_is_not_an_echo(fake_openai, tmp_path):
    answer = valid_answer("success", [0])
    answer["key_decisions"][0]["support"] = "Retail Agent Policy Always look things up first"
    fake_openai.script(reply(answer))
    assert compile_one(make_compiler(tmp_path, use_cache=False), make_run(True)).compiler == "llm"
    assert fake_openai.calls == 1


def test_extract_json_tolerates_what_small_models_emit():
    good = {"a": 1, "b": [1, 2]}
    assert extract_json(json.dumps(good)) == good
    assert extract_json("Sure! Here it is:\n```json\n" + json.dumps(good) + "\n```\nDone.") == good
    assert extract_json('Reasoning first.\n{"a": 1, "b": [1, 2,],}\n') == good
    assert extract_json('{"text": "line one\nline two\ttabbed"}') == {"text": "line one\nline two\ttabbed"}
    assert extract_json('{"x": {"y": 1}} trailing words') == {"x": {"y": 1}}
    for bad, msg in [("", "empty"), ("no braces", "no JSON object"), ('{"a": ', "not valid JSON")]:
        with pytest.raises(ValueError, match=msg):
            extract_json(bad)


# --- transport faults ----------------------------------------------------------------------


def test_429_then_200_succeeds_and_counts_the_retry(fake_openai, tmp_path):
    fake_openai.script(error(429, "slow down", retry_after=0), reply(valid_answer("success", [3])))
    # A long backoff proves Retry-After (0 s) was honoured instead.
    compiler = make_compiler(tmp_path, use_cache=False, backoff=30.0, max_backoff=30.0)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm"
    s = compiler.stats()
    assert (s.calls, s.retries, s.fallbacks) == (2, 1, 0)


def test_5xx_until_attempts_run_out(fake_openai, tmp_path):
    fake_openai.script(*[error(503, "overloaded") for _ in range(3)])
    compiler = make_compiler(tmp_path, use_cache=False, max_attempts=3)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "HTTP 503 after 3 attempts"
    assert compiler.stats().retries == 2 and fake_openai.calls == 3


def test_timeout_falls_back_with_reason(fake_openai, tmp_path):
    # Once the endpoint has answered, a timeout is retried; before, it is not (see below).
    fake_openai.script(reply(valid_answer("success", [3])), slow(1.0), slow(1.0))
    compiler = make_compiler(tmp_path, use_cache=False, timeout=0.2, max_attempts=2)
    assert compile_one(compiler, make_run(True)).compiler == "llm"
    comp = compile_one(compiler, make_run(False))
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "timeout after 2 attempts"
    assert compiler.stats().retries == 1 and fake_openai.settle().calls == 3


def test_a_first_request_that_times_out_is_not_retried_and_opens_the_breaker(fake_openai, tmp_path):
    fake_openai.script(slow(1.0), slow(1.0))
    compiler = make_compiler(tmp_path, use_cache=False, timeout=0.2, max_attempts=2)
    first = compile_one(compiler, make_run(False))
    assert first.compiler == "offline-fallback" and first.fallback_reason.startswith("timeout after 0.2 s")
    second = compile_one(compiler, make_run(True))
    assert second.compiler == "offline-fallback" and "judged dead" in second.fallback_reason
    assert fake_openai.settle().calls == 1 and compiler.stats().retries == 0


def test_dropped_connection_is_retried(fake_openai, tmp_path):
    fake_openai.script(FakeResponse(drop=True), reply(valid_answer("success", [3])))
    compiler = make_compiler(tmp_path, use_cache=False)
    assert compile_one(compiler, make_run(True)).compiler == "llm"
    assert compiler.stats().retries == 1


def test_unreachable_server_falls_back(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = resolve("m", "http://127.0.0.1:9/v1", env={})
    compiler = LLMCompiler(config, use_cache=False, max_attempts=2, backoff=0.001, timeout=1.0)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "connection error after 2 attempts (is the server at http://127.0.0.1:9/v1 running?)"


def test_auth_error_is_fatal_for_the_rest_of_the_build(fake_openai, tmp_path):
    fake_openai.script(error(401, "Incorrect API key provided"))
    compiler = make_compiler(tmp_path, use_cache=False)
    first = compile_one(compiler, make_run(True, "a"))
    second = compile_one(compiler, make_run(True, "b"))
    assert first.fallback_reason == second.fallback_reason
    assert first.fallback_reason.startswith("HTTP 401: Incorrect API key provided") and "OPENAI_API_KEY" in first.fallback_reason
    assert fake_openai.calls == 1  # the second run did not try again
    assert compiler.stats().fallbacks == 2


def test_non_json_200_body_never_crashes(fake_openai, tmp_path):
    fake_openai.script(FakeResponse(200, "<html>proxy page</html>"), FakeResponse(200, "<html>again</html>"))
    comp = compile_one(make_compiler(tmp_path, use_cache=False), make_run(True))
    assert comp.compiler == "offline-fallback" and comp.fallback_reason


# --- structured-output degradation -----------------------------------------------------------


def test_json_schema_rejected_by_500_switches_to_json_object_and_remembers(fake_openai, tmp_path):
    fake_openai.script(llama_cpp_json_schema_rejection())
    fake_openai.respond_with(lambda body: reply(valid_answer(
        "success" if "key_decisions" in json.dumps(body["response_format"]) else "failure", [3])))
    compiler = make_compiler(tmp_path, use_cache=False)
    first = compile_one(compiler, make_run(True, "a"))
    assert first.compiler == "llm"
    assert fake_openai.response_modes() == ["json_schema", "json_object"]
    assert fake_openai.bodies[1]["response_format"]["schema"]["required"][2] == "key_decisions"
    assert compiler.response_mode == "json_object"
    compile_one(compiler, make_run(False, "b"))
    compile_one(compiler, make_run(True, "c"))
    assert fake_openai.response_modes() == ["json_schema", "json_object", "json_object", "json_object"]
    assert compiler.stats().retries == 0 and compiler.stats().fallbacks == 0


def test_degrades_to_plain_text_and_extracts_json(fake_openai, tmp_path):
    fenced = "The agent looked first.\n```json\n" + json.dumps(valid_answer("success", [2]), indent=1) + "\n```"
    fake_openai.script(error(400, "response_format json_schema is not supported"),
                       error(400, "response_format json_object is not supported"), reply(fenced))
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "llm"
    assert fake_openai.response_modes() == ["json_schema", "json_object", "text"]
    assert "response_format" not in fake_openai.bodies[2]
    assert "```json" in fake_openai.bodies[2]["messages"][0]["content"]  # text mode asks for a fenced block
    assert compiler.response_mode == "text"


def test_plain_400_in_text_mode_is_not_mistaken_for_a_format_problem(fake_openai, tmp_path):
    fake_openai.script(*[error(400, "maximum context length exceeded") for _ in range(3)])
    compiler = make_compiler(tmp_path, use_cache=False)
    comp = compile_one(compiler, make_run(True))
    assert comp.compiler == "offline-fallback"
    assert comp.fallback_reason == "HTTP 400: maximum context length exceeded"
    assert compiler.response_mode == "json_schema"  # nothing learnt from a context-length error


def test_concurrent_runs_probe_the_mode_once(fake_openai, tmp_path):
    fake_openai.script(llama_cpp_json_schema_rejection())
    fake_openai.respond_with(lambda body: reply(valid_answer(
        "success" if "key_decisions" in json.dumps(body["response_format"]) else "failure", [3]), delay=0.02))
    compiler = make_compiler(tmp_path, use_cache=False, concurrency=4)
    runs = [make_run(i % 2 == 0, f"run-{i}") for i in range(8)]

    async def build():
        gate = asyncio.Semaphore(4)

        async def one(run):
            async with gate:
                return await compiler.compile(run)

        try:
            return await asyncio.gather(*(one(r) for r in runs))
        finally:
            await compiler.aclose()

    comps = asyncio.run(build())
    assert [c.compiler for c in comps] == ["llm"] * 8
    assert fake_openai.response_modes().count("json_schema") == 1
    assert fake_openai.calls == 9


# --- cache ---------------------------------------------------------------------------------------


def test_second_compile_of_same_run_makes_no_http_call(fake_openai, tmp_path):
    fake_openai.script(reply(valid_answer("success", [3])))
    first = make_compiler(tmp_path)
    a = compile_one(first, make_run(True))
    assert fake_openai.calls == 1 and first.stats().cache_hits == 0

    second = make_compiler(tmp_path)  # a new build, same cache folder
    b = compile_one(second, make_run(True))
    assert fake_openai.calls == 1
    assert second.stats().cache_hits == 1 and second.stats().calls == 0
    assert (a.title, a.evidence, a.insights, a.usage) == (b.title, b.evidence, b.insights, b.usage)

    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 1 and files[0].parent.name == files[0].stem[:2]


def test_a_repaired_answer_is_cached_in_its_repaired_form(fake_openai, tmp_path):
    fake_openai.script(reply("not json"), reply(valid_answer("success", [3])))
    compile_one(make_compiler(tmp_path), make_run(True))
    again = make_compiler(tmp_path)
    assert compile_one(again, make_run(True)).compiler == "llm"
    assert fake_openai.calls == 2 and again.stats().cache_hits == 1 and again.stats().repairs == 0
    (entry,) = list((tmp_path / "cache").rglob("*.json"))
    assert "not json" not in entry.read_text(encoding="utf-8")


def test_cache_finds_an_answer_given_in_a_degraded_mode(fake_openai, tmp_path):
    fake_openai.script(llama_cpp_json_schema_rejection(), reply(valid_answer("success", [3])))
    compile_one(make_compiler(tmp_path), make_run(True))
    fresh = make_compiler(tmp_path)  # starts at json_schema again
    assert compile_one(fresh, make_run(True)).compiler == "llm"
    assert fake_openai.calls == 2 and fresh.stats().calls == 0


def test_cache_written_before_mode_marks_still_answers_in_a_degraded_mode(fake_openai, tmp_path):
    """A cache without <dir>/modes (older wikitrace) may hold any mode: all are looked up."""
    fake_openai.script(llama_cpp_json_schema_rejection(), reply(valid_answer("success", [3])))
    compile_one(make_compiler(tmp_path), make_run(True))
    marks = tmp_path / "cache" / "modes"
    assert sorted(p.name for p in marks.iterdir()) == ["json_object"]
    for mark in marks.iterdir():
        mark.unlink()
    marks.rmdir()
    fresh = make_compiler(tmp_path)
    assert compile_one(fresh, make_run(True)).compiler == "llm"
    assert fake_openai.calls == 2 and fresh.stats().calls == 0


def test_corrupt_cache_file_is_ignored_and_overwritten(fake_openai, tmp_path):
    fake_openai.respond_with(lambda body: reply(valid_answer("success", [3])))
    compile_one(make_compiler(tmp_path), make_run(True))
    (path,) = list((tmp_path / "cache").rglob("*.json"))
    path.write_text("{ truncated", encoding="utf-8")
    again = make_compiler(tmp_path)
    assert compile_one(again, make_run(True)).compiler == "llm"
    assert fake_openai.calls == 2 and again.stats().cache_hits == 0
    assert json.loads(path.read_text(encoding="utf-8"))["text"]


def test_cache_key_covers_model_messages_and_mode(tmp_path):
    msgs = [{"role": "user", "content": "x"}]
    k = cache_key("m", msgs, "json_schema")
    assert k == cache_key("m", [{"role": "user", "content": "x"}], "json_schema")
    assert len({k, cache_key("m2", msgs, "json_schema"), cache_key("m", msgs, "text"),
                cache_key("m", [{"role": "user", "content": "y"}], "json_schema")}) == 4
    cache = ResponseCache(tmp_path)
    assert cache.get(k) is None


def test_cache_dir_from_environment(fake_openai, tmp_path):
    fake_openai.script(reply(valid_answer("success", [3])))
    compiler = LLMCompiler(resolve("m", None), backoff=0.001)  # WIKITRACE_CACHE_DIR set by the fixture
    compile_one(compiler, make_run(True))
    assert list((tmp_path / "llm-cache").rglob("*.json"))


def test_api_key_never_leaves_the_auth_header(fake_openai, tmp_path):
    fake_openai.script(reply("broken"), reply(valid_answer("success", [3])))
    compiler = make_compiler(tmp_path)
    compile_one(compiler, make_run(True))
    for request in fake_openai.chat_requests:
        assert API_KEY not in json.dumps(request["body"])
        assert request["headers"].get("authorization") == f"Bearer {API_KEY}"
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert API_KEY not in path.read_text(encoding="utf-8")
            assert "Authorization" not in path.read_text(encoding="utf-8")
    assert API_KEY not in repr(compiler.config) and API_KEY not in compiler.config.describe()


# --- configuration ---------------------------------------------------------------------------------


def test_resolve_without_anything_means_offline():
    assert resolve(None, None, env={}) is None
    assert resolve(None, None, env={"WIKITRACE_MODEL": "m"}) is None


def test_resolve_key_and_model():
    cfg = resolve(None, None, env={"OPENAI_API_KEY": "sk-abc"})
    assert cfg.model == DEFAULT_MODEL and cfg.base_url is None and cfg.api_key == "sk-abc"
    assert "sk-abc" not in repr(cfg) and "sk-abc" not in str(cfg)
    assert resolve(None, None, env={"OPENAI_API_KEY": "k", "WIKITRACE_MODEL": "env-m"}).model == "env-m"
    assert resolve("arg-m", None, env={"OPENAI_API_KEY": "k", "WIKITRACE_MODEL": "env-m"}).model == "arg-m"


def test_resolve_base_url_without_key_uses_a_placeholder():
    cfg = resolve(None, None, env={"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1/"})
    assert cfg.base_url == "http://127.0.0.1:8080/v1" and cfg.api_key == PLACEHOLDER_KEY
    assert cfg.key_source == "placeholder"
    assert resolve("m", "http://localhost:11434/v1", env={"OPENAI_BASE_URL": "http://x/v1"}).base_url \
        == "http://localhost:11434/v1"


@pytest.mark.parametrize("model, base_url, env, names", [
    ("gpt-4o", None, {}, ["OPENAI_API_KEY", "--base-url", "OPENAI_BASE_URL"]),
    (None, "localhost:8080", {}, ["--base-url"]),
    (None, None, {"OPENAI_BASE_URL": "ftp://x"}, ["OPENAI_BASE_URL"]),
    (None, "https://api.openai.com/v1", {}, ["OPENAI_API_KEY"]),
])
def test_resolve_errors_name_what_to_set(model, base_url, env, names):
    with pytest.raises(LLMConfigError) as info:
        resolve(model, base_url, env=env)
    for name in names:
        assert name in str(info.value)


# --- misc -----------------------------------------------------------------------------------------------


def test_backoff_jitter_is_seedable():
    config = resolve("m", "http://127.0.0.1:9/v1", env={})
    a = make_compiler(Path("/nonexistent"), config, use_cache=False, backoff=1.0, max_backoff=100.0, seed=3)
    b = make_compiler(Path("/nonexistent"), config, use_cache=False, backoff=1.0, max_backoff=100.0, seed=3)
    da = [a.transport.delay(n, None) for n in range(1, 5)]
    assert da == [b.transport.delay(n, None) for n in range(1, 5)]
    assert all(2 ** (n - 1) * 0.5 <= d <= 2 ** (n - 1) for n, d in zip(range(1, 5), da))
    assert a.transport.delay(1, 1000.0) == a.transport.max_retry_after


def test_user_templates_override_the_bundled_prompts(fake_openai, tmp_path):
    override = tmp_path / "tpl"
    (override / "prompts").mkdir(parents=True)
    (override / "prompts" / "compile.user.j2").write_text(
        "CUSTOM {{ task.instruction }} {{ turns | length }} turns, {{ outcome.label }}\n", encoding="utf-8")
    fake_openai.script(reply(valid_answer("success", [3])))
    compile_one(make_compiler(tmp_path, use_cache=False, templates=override), make_run(True))
    assert fake_openai.bodies[0]["messages"][1]["content"].startswith("CUSTOM Change the shipping address")


def test_package_modules_do_not_import_openai():
    code = ("import sys; import wikitrace.cli, wikitrace.llm.config, wikitrace.llm.cache, "
            "wikitrace.compilers.offline; print('openai' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "False"


# --- properties -----------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(obj=st.dictionaries(st.text(max_size=8), _json_values, min_size=1, max_size=4),
       before=st.sampled_from(["", "Here you go:\n", "```json\n"]), indent=st.sampled_from([None, 2]))
def test_extract_json_recovers_any_object(obj, before, indent):
    text = before + json.dumps(obj, indent=indent) + ("\n```" if before.startswith("```") else "")
    assert extract_json(text) == obj


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=200))
def test_extract_json_only_ever_raises_value_error(text):
    try:
        extract_json(text)
    except ValueError:
        pass


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=500), st.integers(min_value=10, max_value=300))
def test_clip_is_bounded_and_keeps_both_ends(text, limit):
    out = clip(text, limit)
    if len(text) <= limit:
        assert out == text
    else:
        assert out.startswith(text[: (limit * 2) // 3]) and out.endswith(text[-(limit - (limit * 2) // 3):])
        assert "characters clipped" in out


def test_fake_server_lists_models(fake_openai):
    import urllib.request

    with urllib.request.urlopen(fake_openai.base_url + "/models", timeout=5) as resp:
        assert json.load(resp)["data"][0]["id"] == fake_openai.model_id
    assert fake_openai.calls == 0


def test_settle_waits_for_a_request_the_fake_has_not_read_yet(fake_openai):
    # A client that sent a request and died: the fake must not be read before it has the request.
    import socket
    import threading

    fake_openai.respond_with(lambda body: reply("{}"))
    body = b'{"model": "m", "messages": []}'
    head = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: fake\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    host, port = fake_openai._server.server_address[:2]
    client = socket.create_connection((host, port))
    client.sendall(head + body[:5])  # the fake is now reading a request it cannot record yet
    rest = threading.Event()

    def finish():
        rest.wait()
        client.sendall(body[5:])
        client.close()

    sender = threading.Thread(target=finish)
    sender.start()
    try:
        waiter = threading.Thread(target=fake_openai.settle)
        waiter.start()
        waiter.join(0.3)
        assert waiter.is_alive() and fake_openai.calls == 0, "settle returned before the request was in"
    finally:
        rest.set()
        sender.join()
    waiter.join(60)
    assert not waiter.is_alive() and fake_openai.calls == 1


def test_a_request_carries_what_the_client_itself_would_send(fake_openai, tmp_path, monkeypatch):
    """The compile path sends each body through the client's HTTP client directly
    (llm/direct_post.py): the endpoint must see the same path, key, organisation and
    project headers and the same body bytes as from the client's own post."""
    from wikitrace.llm import direct_post

    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-test")
    fake_openai.respond_with(lambda body: reply(valid_answer("success", [3])))
    seen, posts = {}, []
    real_post = direct_post.DirectPost.post

    async def counted_post(self, body):
        posts.append(body)
        return await real_post(self, body)

    monkeypatch.setattr(direct_post.DirectPost, "post", counted_post)
    for label, make in (("direct", direct_post.DirectPost.make), ("client", lambda *a: None)):
        monkeypatch.setattr(direct_post.DirectPost, "make", make)
        fake_openai.reset()
        fake_openai.respond_with(lambda body: reply(valid_answer("success", [3])))
        comp = compile_one(make_compiler(tmp_path / label), make_run(True))
        assert comp.compiler == "llm"
        (request,) = fake_openai.chat_requests
        seen[label] = request
    assert len(posts) == 1  # the first request went the direct way, the second through the client
    direct, client = seen["direct"], seen["client"]
    assert direct["path"] == client["path"] and direct["path"].endswith("/chat/completions")
    assert direct["body"] == client["body"]
    kept = ("authorization", "openai-organization", "openai-project", "content-type", "accept", "user-agent",
            "content-length")
    assert {k: direct["headers"].get(k) for k in kept} == {k: client["headers"].get(k) for k in kept}
    assert direct["headers"]["authorization"] == f"Bearer {API_KEY}"
    assert direct["headers"]["openai-organization"] == "org-test"
    assert direct["headers"]["openai-project"] == "proj-test"


def test_a_cookie_the_endpoint_set_goes_back_with_the_next_request(fake_openai, tmp_path):
    """Requests made from the headers worked out once (llm/direct_post.py) still carry the
    cookies an endpoint set, as the client's own requests do (a gateway pinning a session by cookie)."""
    answer = reply(valid_answer("success", [3]))
    fake_openai.respond_with(lambda body: FakeResponse(200, answer.body, {"Set-Cookie": "route=node-7; Path=/"}))
    compiler = make_compiler(tmp_path)

    async def go():
        try:
            for i in range(3):
                run = make_run(True, run_id=f"run-{i}", observation=f'{{"status": "pending", "n": {i}}}')
                assert (await compiler.compile(run)).compiler == "llm"
        finally:
            await compiler.aclose()

    asyncio.run(go())
    sent = [r["headers"].get("cookie") for r in fake_openai.chat_requests]
    assert sent == [None, "route=node-7", "route=node-7"]
    assert {r["headers"]["authorization"] for r in fake_openai.chat_requests} == {f"Bearer {API_KEY}"}

