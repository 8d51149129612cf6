"""wikitrace compile through the LLM path, against a loopback OpenAI fake.

Covers what a user sees in the corpus (compiler labels, recorded fallbacks,
call counts in corpus.json) and crash safety: a build killed with SIGKILL and
run again repeats no completed LLM call and ends byte-identical to a build
that was never interrupted.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import frontmatter

from fake_openai import merge_reply, reply, slow, valid_answer
from helpers import EXAMPLES, example_runs, tree_bytes, without_build_stamp, write_jsonl
from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus


def _answer_for(body):
    """A deterministic valid answer for whatever run (or insight merge) the request is about."""
    merged = merge_reply(body)
    if merged is not None:
        return merged
    system = body["messages"][0]["content"]
    outcome = "failure" if "failure_causes" in system else "success"
    return reply(json.dumps(valid_answer(outcome, turns=[2])))


def test_llm_build_labels_pages_and_records_fallbacks(fake_openai, tmp_path):
    calls = {"n": 0}

    def respond(body):
        calls["n"] += 1
        # that run's compile request is always answered broken, its repair too (an insight merge may
        # quote the run's request as where its lesson applies: merges are answered well)
        if merge_reply(body) is None and any("Update Dev Anand" in m["content"] for m in body["messages"]):
            return reply("{not json at all")
        return _answer_for(body)

    fake_openai.respond_with(respond)
    out = tmp_path / "corpus"
    result = build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True, concurrency=3))
    assert result.runs == 6
    data = json.loads((out / "corpus.json").read_text())
    by_run = {r["run_id"]: r for r in data["runs"]}
    assert by_run["address-002"]["compiler"] == "offline-fallback"
    assert {r["compiler"] for k, r in by_run.items() if k != "address-002"} == {"llm"}
    fallback = frontmatter.load(out / f"compilation/{by_run['address-002']['step']}.md")
    assert fallback["fallback_reason"] and "LLM compiler failed" in fallback.content
    good = frontmatter.load(out / f"compilation/{by_run['refund-001']['step']}.md")
    assert good["compiler"] == "llm" and good["model"]
    assert "`turn step-0000 2`" in good.content
    stats = data["build"]["stats"]
    assert stats["fallbacks"] == 1 and stats["calls"] == fake_openai.calls
    assert data["counts"]["by_compiler"] == {"llm": 5, "offline-fallback": 1}
    assert check_corpus(out) == []
    # A rebuild carries the good pages over; the fallback run asks the model again
    # (malformed answers are never cached), gets the same garbage, same bytes.
    before = tree_bytes(out)
    sent = fake_openai.calls
    build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True))
    assert fake_openai.calls == sent + 2  # the first request and its repair
    assert json.loads((out / "corpus.json").read_text())["build"]["reused_runs"] == 5
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(before)
    # A fresh output folder is served from the cache, except the run that fell back.
    fresh = build(BuildOptions(inputs=[EXAMPLES], out=tmp_path / "fresh", quiet=True))
    # every insight merge too: one cached answer per group
    assert fake_openai.calls == sent + 4 and fresh.stats["cache_hits"] == 5 + len(data["insights"])


def test_api_key_never_reaches_the_corpus(fake_openai, tmp_path):
    from fake_openai import API_KEY

    fake_openai.respond_with(_answer_for)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True))
    for path, blob in tree_bytes(out).items():
        assert API_KEY.encode() not in blob, path
    for p in Path(os.environ["WIKITRACE_CACHE_DIR"]).rglob("*"):
        if p.is_file():
            assert API_KEY.encode() not in p.read_bytes()


def test_kill_9_then_resume_repeats_no_completed_call(fake_openai, tmp_path):
    cache = Path(os.environ["WIKITRACE_CACHE_DIR"])
    fake_openai.respond_with(lambda body: slow(0.4, _answer_for(body)))
    out = tmp_path / "corpus"
    # A published corpus from earlier must survive the kill untouched.
    build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True, offline=True))
    published = tree_bytes(out)
    clean = tmp_path / "clean"
    shutil.copytree(out, clean)  # the same starting point for an uninterrupted build

    env = dict(os.environ)
    cmd = [sys.executable, "-m", "wikitrace.cli", "compile", str(EXAMPLES), "--out", str(out), "--concurrency", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Until the third answer is on disk, however long a loaded machine takes to get there (a
    # 30 s deadline ran out before the first answer, and the kill landed before the build began).
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and len(list(cache.rglob("*.json"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)  # a no-op if the build already ended (the assertion below says so)
    proc.wait()
    completed = len(list(cache.rglob("*.json")))
    assert 3 <= completed < 6, "the kill should land mid-build"
    interrupted = tree_bytes(out)  # published in place: pages may be new, the indexes are not yet
    for rel in ("corpus.json", "raw/_index.md", "compilation/_index.md", "insight/_index.md", "index/prompt.bin"):
        assert interrupted[rel] == published[rel], "indexes change only after every page is in place"
    fake_openai.settle()  # a request the killed build had just sent is counted now, not during the resume
    sent_before, merges_before = fake_openai.run_calls, fake_openai.merge_calls
    assert merges_before == 0, "the merges come after every run is compiled"

    fake_openai.respond_with(_answer_for)
    result = build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True))
    resumed_calls = fake_openai.run_calls - sent_before
    assert resumed_calls == 6 - completed, "a call that had completed before the kill was sent again"
    assert result.stats["cache_hits"] == completed
    assert fake_openai.merge_calls == result.insights  # then one merge per insight group

    # Byte-identical to a build that was never interrupted.
    build(BuildOptions(inputs=[EXAMPLES], out=clean, quiet=True))
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(tree_bytes(clean))
    assert check_corpus(out) == []
    final = tree_bytes(clean)
    for rel, blob in interrupted.items():  # no file was ever half-written
        assert blob in (published.get(rel), final.get(rel)), rel


SECRETS = {
    "openai": "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2,
    "github": "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "aws": "AKIA" + "IOSFODNN7EXAMPLE",
    "bearer": "Authorization: Bearer " + "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "url": "postgres://admin:" + "hunter2hunter2" + "@db.internal:5432/app",
}


def test_secrets_reach_neither_the_llm_nor_the_corpus(fake_openai, tmp_path):
    from helpers import example_runs, write_jsonl

    runs = example_runs()[:2]
    runs[0]["task"]["instruction"] += f" My key is {SECRETS['openai']}."
    runs[0]["turns"][2]["result"] += f" token={SECRETS['github']} {SECRETS['bearer']}"
    runs[0]["turns"][2]["reasoning"] = f"Use {SECRETS['aws']} and {SECRETS['url']}"
    runs[1]["turns"][2]["arguments"] = {"order_id": "5120", "note": SECRETS["github"]}
    src = write_jsonl(tmp_path / "runs.jsonl", runs)
    fake_openai.respond_with(_answer_for)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[src], out=out, quiet=True))
    sent = json.dumps([r["body"] for r in fake_openai.requests])
    files = tree_bytes(out)
    cached = b"".join(p.read_bytes() for p in Path(os.environ["WIKITRACE_CACHE_DIR"]).rglob("*") if p.is_file())
    needles = [SECRETS["openai"], SECRETS["github"], SECRETS["aws"], "hunter2hunter2",
               SECRETS["bearer"].split()[-1]]
    for needle in needles:
        assert needle not in sent, needle
        assert needle.encode() not in cached, needle
        for path, blob in files.items():
            assert needle.encode() not in blob, (needle, path)
    data = json.loads(files["corpus.json"])
    assert data["runs"][0]["redactions"] and sum(data["build"]["redactions"].values()) >= 6
    assert b"[REDACTED:" in files["raw/step-0000/solver.full.jsonl"]


def test_a_compiler_bug_falls_back_and_is_counted(fake_openai, tmp_path, monkeypatch):
    from wikitrace.compilers.llm import LLMCompiler

    working = LLMCompiler.compile

    async def broken(self, run):
        if run.run_id == "address-002":
            raise KeyError("surprise")
        return await working(self, run)

    fake_openai.respond_with(_answer_for)
    monkeypatch.setattr(LLMCompiler, "compile", broken)
    out = tmp_path / "corpus"
    result = build(BuildOptions(inputs=[EXAMPLES], out=out, quiet=True))
    assert result.runs == 6 and result.stats["fallbacks"] == 1
    assert result.stats["fallback_reasons"] == {"internal error": 1}
    step = next(r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"] if r["run_id"] == "address-002")
    page = frontmatter.load(out / f"compilation/{step}.md")
    assert page["compiler"] == "offline-fallback" and "KeyError" in page["fallback_reason"]


def test_a_build_answered_from_the_cache_never_imports_openai(fake_openai, tmp_path):
    """Importing the client costs ~0.5 s; a rebuild whose answers are all cached skips it."""
    fake_openai.respond_with(_answer_for)
    build(BuildOptions(inputs=[EXAMPLES], out=tmp_path / "first", quiet=True))
    calls = fake_openai.calls
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from wikitrace.build import BuildOptions, build\n"
        f"r = build(BuildOptions(inputs=[Path({str(EXAMPLES)!r})], out=Path({str(tmp_path / 'again')!r}), quiet=True))\n"
        "print(r.stats['cache_hits'], r.stats['calls'], 'openai' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ), capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == [str(calls), "0", "False"]
    assert fake_openai.calls == calls


def test_the_reader_process_makes_the_same_prompts_and_lesson_keys_as_the_build(fake_openai, tmp_path, monkeypatch):
    """On the LLM path the reader process also compiles each run offline (the keys of the
    model's lessons, a fallback's page) and renders its prompt (compilers/llm_offline.py):
    the corpus and the response cache must be what a build that reads in-process makes,
    --task-type and a run that falls back included."""
    def respond(body):
        if any("Update Dev Anand" in m["content"] for m in body["messages"]):  # never a usable answer
            return reply("{not json at all")
        return _answer_for(body)

    fake_openai.respond_with(respond)
    runs = example_runs()
    for run in runs[:2]:  # no task type of their own: --task-type gives theirs (lessons and prompts use it)
        del run["task"]["task_type"]
    src = write_jsonl(tmp_path / "runs.jsonl", runs)
    built = {}
    for where, threshold in (("beside", 0), ("here", 10**12)):
        monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", threshold)
        built[where] = build(BuildOptions(inputs=[src], out=tmp_path / where, quiet=True, concurrency=3,
                                          task_type="support desk", cache_dir=tmp_path / f"cache-{where}"))
    assert without_build_stamp(tree_bytes(tmp_path / "beside")) == without_build_stamp(tree_bytes(tmp_path / "here"))
    assert tree_bytes(tmp_path / "cache-beside") == tree_bytes(tmp_path / "cache-here")
    assert built["beside"].by_compiler == built["here"].by_compiler == {"llm": 5, "offline-fallback": 1}
    data = json.loads((tmp_path / "beside" / "corpus.json").read_text())
    assert [r["task_type"] for r in data["runs"]][:2] == ["support desk", "support desk"]


def test_requests_in_flight_never_pass_concurrency(fake_openai, tmp_path):
    """`--concurrency N` is the most requests the endpoint sees at once, however many runs
    the build has ready (it prepares more than N, so the next leaves as soon as one is answered)."""
    import threading

    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def respond(body):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.15)  # long enough for every waiting request to be sent meanwhile
        with lock:
            state["now"] -= 1
        return _answer_for(body)

    fake_openai.respond_with(respond)
    runs = []
    for copy in range(3):
        for run in example_runs():
            run["run_id"] = f"{run['run_id']}-{copy}"
            run["task"]["instruction"] += f" (copy {copy})"
            runs.append(run)
    src = write_jsonl(tmp_path / "runs.jsonl", runs)
    result = build(BuildOptions(inputs=[src], out=tmp_path / "corpus", quiet=True, concurrency=3,
                                cache_dir=tmp_path / "cache"))
    assert result.by_compiler == {"llm": 18}
    assert state["most"] == 3  # reached, never passed
