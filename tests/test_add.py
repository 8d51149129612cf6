"""`wikitrace add`: one finished run into a compiled corpus, through the installed command.

The property a user relies on: compiling A and then adding B leaves the same corpus,
byte for byte, as compiling A and B together (only corpus.json's build block, which
records time and call counts, may differ), and on the LLM path it costs one call.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fake_openai import merge_reply, reply, valid_answer
from helpers import EXAMPLES, REPO, example_runs, tree_bytes, write_jsonl
from wikitrace.check import check_corpus

SESSION = REPO / "tests" / "fixtures" / "hooks" / "claude-session.jsonl"
SESSION_ID = "7d3e9a51-2c4b-4f0e-8a61-5b9c0e2f4d17"


BIN = Path(sys.executable).parent  # where pip put `wikitrace` and `pytest` for this interpreter


def wikitrace(*args, env=None, stdin=None, cwd=None) -> subprocess.CompletedProcess:
    exe = BIN / "wikitrace"
    cmd = [str(exe), *args] if exe.is_file() else [sys.executable, "-m", "wikitrace.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env or dict(os.environ), input=stdin, cwd=cwd,
                          timeout=300)


def ok(*args, **kw) -> subprocess.CompletedProcess:
    done = wikitrace(*args, **kw)
    assert done.returncode == 0, done.stderr
    return done


def same_corpus(a: Path, b: Path) -> None:
    """Every file outside .wikitrace/ byte-identical, corpus.json up to its build block; the
    manifests the same but for the stat fields (mtime, inode) of each file."""
    left, right = tree_bytes(a), tree_bytes(b)
    cj_left, cj_right = left.pop("corpus.json"), right.pop("corpus.json")
    assert left.keys() == right.keys()
    for rel in left:
        assert left[rel] == right[rel], rel
    assert cj_left.split(b'\n "build": ')[0] == cj_right.split(b'\n "build": ')[0]
    ma, mb = (json.loads((p / ".wikitrace" / "runs.json").read_text()) for p in (a, b))
    assert ma["data"] == mb["data"]
    assert {k: v[:2] for k, v in ma["files"].items() if k != "corpus.json"} == \
        {k: v[:2] for k, v in mb["files"].items() if k != "corpus.json"}
    assert check_corpus(a) == []


def split_examples(tmp_path: Path, tail: int = 1) -> tuple[Path, Path]:
    runs = example_runs()
    return (write_jsonl(tmp_path / "A.jsonl", runs[:-tail]), write_jsonl(tmp_path / "B.jsonl", runs[-tail:]))


def test_add_leaves_what_compiling_both_inputs_writes(tmp_path):
    a, b = split_examples(tmp_path)
    ok("compile", str(a), "--out", str(tmp_path / "added"), "--offline", "-q")
    done = ok("add", str(b), "--corpus", str(tmp_path / "added"), "--json")
    summary = json.loads(done.stdout)
    assert [r["run_id"] for r in summary["added"]] == ["address-002"]
    assert summary["added"][0]["step"] == "step-0005" and summary["runs"] == 6
    assert "added address-002 as step-0005" in done.stderr
    ok("compile", str(a), str(b), "--out", str(tmp_path / "together"), "--offline", "-q")
    same_corpus(tmp_path / "added", tmp_path / "together")


def test_another_experiments_run_of_a_task_is_added_beside_it_as_compile_keeps_both(tmp_path):
    """SWE-agent names each trajectory after its task: the same instance from another experiment's
    folder, with other steps, is another run. Compile keeps both (the later as <folder>/<id>);
    adding it to a corpus of the first experiment leaves the same corpus, not a replaced run."""
    fixtures = REPO / "tests" / "fixtures" / "importers" / "swe_agent"
    first, second = tmp_path / "exp1", tmp_path / "exp2"
    shutil.copytree(fixtures, first)
    second.mkdir()
    shutil.copy(fixtures / "results.json", second / "results.json")
    other = json.loads((fixtures / "django__django-11099.traj").read_text())
    other["trajectory"][0]["observation"] = "Another experiment saw another listing here."
    rerun = second / "django__django-11099.traj"
    rerun.write_text(json.dumps(other))
    ok("compile", str(first), "--out", str(tmp_path / "added"), "--offline", "-q")
    done = ok("add", str(rerun), "--corpus", str(tmp_path / "added"), "--json")
    assert [r["run_id"] for r in json.loads(done.stdout)["added"]] == ["exp2/django__django-11099"]
    assert "appears again (a different run); kept as 'exp2/django__django-11099'" in done.stderr
    ok("compile", str(first), str(rerun), "--out", str(tmp_path / "together"), "--offline", "-q")
    same_corpus(tmp_path / "added", tmp_path / "together")


def test_several_runs_in_one_file_are_added_in_file_order(tmp_path):
    a, b = split_examples(tmp_path, tail=3)
    ok("compile", str(a), "--out", str(tmp_path / "added"), "-q")
    summary = json.loads(ok("add", str(b), "--corpus", str(tmp_path / "added"), "--json").stdout)
    assert [r["step"] for r in summary["added"]] == ["step-0003", "step-0004", "step-0005"]
    assert [r["run_id"] for r in summary["added"]] == [r["run_id"] for r in example_runs()[-3:]]
    ok("compile", str(a), str(b), "--out", str(tmp_path / "together"), "-q")
    same_corpus(tmp_path / "added", tmp_path / "together")


def _answer_for(body):
    if merge_reply(body) is not None:
        return merge_reply(body)
    system = body["messages"][0]["content"]
    return reply(json.dumps(valid_answer("failure" if "failure_causes" in system else "success", turns=[2])))


def test_llm_path_makes_exactly_one_call_and_matches_compiling_both(fake_openai, tmp_path):
    fake_openai.respond_with(_answer_for)
    a, b = split_examples(tmp_path)
    ok("compile", str(a), "--out", str(tmp_path / "added"), "-q")
    first = json.loads((tmp_path / "added" / "corpus.json").read_text())
    # one call per run, then one merge per insight group
    assert (fake_openai.run_calls, fake_openai.merge_calls) == (5, len(first["insights"]))
    before = fake_openai.calls
    env = dict(os.environ)
    env.pop("WIKITRACE_MODEL", None)  # the corpus's model is the default
    done = ok("add", str(b), "--corpus", str(tmp_path / "added"), "--json", env=env)
    added = json.loads(done.stdout)["added"]
    assert fake_openai.run_calls == 6, "add must cost exactly one LLM call for its run"
    # ... and one merge for each insight group the new run is a source of (the others come from the cache)
    assert fake_openai.calls - before == 1 + len(added[0]["insights"]) and added[0]["insights"]
    assert added[0]["compiler"] == "llm"
    calls = fake_openai.calls
    ok("compile", str(a), str(b), "--out", str(tmp_path / "together"), "-q")  # every answer from the cache
    assert fake_openai.calls == calls
    same_corpus(tmp_path / "added", tmp_path / "together")


def test_an_llm_corpus_refuses_to_add_offline(fake_openai, tmp_path):
    fake_openai.respond_with(_answer_for)
    a, b = split_examples(tmp_path)
    ok("compile", str(a), "--out", str(tmp_path / "c"), "-q")
    before = tree_bytes(tmp_path / "c")
    done = wikitrace("add", str(b), "--corpus", str(tmp_path / "c"), "--offline")
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "was compiled by the LLM 'gpt-4o-mini'; this add would use the offline compiler" in done.stderr
    assert tree_bytes(tmp_path / "c") == before


def test_adding_a_run_already_there_changes_nothing_and_says_so(tmp_path):
    a, b = split_examples(tmp_path)
    corpus = tmp_path / "c"
    ok("compile", str(a), str(b), "--out", str(corpus), "-q")
    def stats():  # the lock file inside .wikitrace/ records who holds it: not corpus content
        return {p: (p.stat().st_mtime_ns, p.stat().st_ino) for p in corpus.rglob("*") if p.name != "lock"
                and p != corpus / ".wikitrace"}

    before = stats()
    done = ok("add", str(b), "--corpus", str(corpus))
    assert "already in the corpus: address-002 is step-0005; nothing to add" in done.stderr
    assert stats() == before


def test_a_folder_of_other_files_is_one_line_and_left_alone_a_new_folder_becomes_a_corpus(tmp_path):
    _, b = split_examples(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.md").write_text("mine\n")
    done = wikitrace("add", str(b), "--corpus", str(notes))
    assert done.returncode == 2  # an input error: the --corpus given holds something else
    assert done.stderr.startswith("wikitrace: error: ") and done.stderr.count("\n") == 1
    assert "holds no corpus" in done.stderr and "wikitrace compile" in done.stderr
    assert sorted(p.name for p in notes.rglob("*")) == ["todo.md"]
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "missing", tmp_path / "empty"):  # the first add creates the corpus
        done = wikitrace("add", str(b), "--corpus", str(folder))
        assert done.returncode == 0, done.stderr
        assert "a new corpus, 1 runs" in done.stderr and check_corpus(folder) == []
        fresh = tmp_path / f"compiled-{folder.name}"
        ok("compile", str(b), "--out", str(fresh), "-q")
        same_corpus(folder, fresh)


def test_a_run_without_a_verdict_needs_outcome(tmp_path):
    a, _ = split_examples(tmp_path)
    corpus = tmp_path / "c"
    ok("compile", str(a), "--out", str(corpus), "-q")
    before = tree_bytes(corpus)
    done = wikitrace("add", str(SESSION), "--corpus", str(corpus))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "carry no verdict of their own (claude-code) — pass --outcome success|failure|SCORE" in done.stderr
    assert tree_bytes(corpus) == before
    # A verdict that contradicts the run's own is refused rather than chosen silently.
    runs = example_runs()
    own = write_jsonl(tmp_path / "own.jsonl", [runs[-1]])  # address-002 says failure itself
    done = wikitrace("add", str(own), "--corpus", str(corpus), "--outcome", "success")
    assert done.returncode == 2 and "says failure itself, --outcome says success" in done.stderr
    assert tree_bytes(corpus) == before


def test_a_session_with_outcome_matches_compiling_it_with_an_outcomes_file(tmp_path):
    a, _ = split_examples(tmp_path)
    ok("compile", str(a), "--out", str(tmp_path / "added"), "-q")
    ok("add", str(SESSION), "--corpus", str(tmp_path / "added"), "--outcome", "success")
    verdicts = tmp_path / "verdicts.json"
    verdicts.write_text(json.dumps({SESSION_ID: "success"}))
    fresh = tmp_path / "fresh"
    ok("compile", str(a), str(SESSION), "--outcomes", str(verdicts), "--out", str(fresh), "-q")
    added, together = tree_bytes(tmp_path / "added"), tree_bytes(fresh)
    stamps = [json.loads(t.pop("corpus.json")) for t in (added, together)]
    assert added == together
    for data in stamps:  # the outcomes file is part of compile's build key; nothing else differs
        data.pop("build"), data.pop("build_key")
    assert stamps[0] == stamps[1]


def test_a_resumed_session_replaces_its_pages(tmp_path):
    a, _ = split_examples(tmp_path)
    lines = SESSION.read_text().splitlines(keepends=True)
    short = tmp_path / "short.jsonl"
    short.write_text("".join(lines[:9]))  # the session as it stood when it first ended
    corpus = tmp_path / "c"
    ok("compile", str(a), "--out", str(corpus), "-q")
    ok("add", str(short), "--corpus", str(corpus), "--outcome", "failure")
    done = ok("add", str(SESSION), "--corpus", str(corpus), "--outcome", "success")
    assert f"replaced {SESSION_ID} as step-0005 (success" in done.stderr
    ref = tmp_path / "ref"
    ok("compile", str(a), "--out", str(ref), "-q")
    ok("add", str(SESSION), "--corpus", str(ref), "--outcome", "success")
    left, right = tree_bytes(corpus), tree_bytes(ref)
    # The session's lessons get ids in another order than in a corpus that never saw the short one
    # (a lesson only the short session taught is retired: a success that reran its failing tests
    # to a pass teaches that way, not the failing-tests lesson); nothing else differs and no page
    # of the short session is left behind.
    data, other = (json.loads((c / "corpus.json").read_text()) for c in (corpus, ref))
    own = [{f"insight/{i['id']}.md" for i in d["insights"] if [s["step"] for s in i["sources"]] == ["step-0005"]}
           for d in (data, other)]  # the session's lessons, ids in either order
    assert len(own[0]) == len(own[1]) and set(left) - own[0] == set(right) - own[1]
    assert {k for k in set(left) - own[0] if left[k] != right[k] and not k.startswith("index/")} <= {
        "corpus.json", "compilation/step-0005.md", "raw/step-0005/metadata.md", "insight/_index.md"}
    assert sorted(i["key"] for i in data["insights"]) == sorted(i["key"] for i in other["insights"])
    assert all(i["sources"] for i in data["insights"])
    retired = data["retired"]["insights"]
    assert not [k for k in left if any(k == f"insight/{i}.md" for i in retired)]  # no page left behind
    assert other["retired"]["insights"] == [] and [r["step"] for r in data["runs"]][-1] == "step-0005"


def test_redaction_patterns_of_the_corpus_apply_to_the_added_run(tmp_path):
    runs = example_runs()
    a = write_jsonl(tmp_path / "A.jsonl", runs[:-1])
    secret_run = dict(runs[-1], run_id="leaky-001")
    secret_run["task"] = dict(secret_run["task"], instruction=secret_run["task"]["instruction"] + " Ticket ACME-778812.")
    b = write_jsonl(tmp_path / "B.jsonl", [secret_run])
    corpus = tmp_path / "c"
    ok("compile", str(a), "--out", str(corpus), "--redact-pattern", r"ACME-\d+", "-q")
    ok("add", str(b), "--corpus", str(corpus))
    blobs = [p.read_bytes() for p in corpus.rglob("*") if p.is_file()]
    assert not any(b"ACME-778812" in blob for blob in blobs), "the corpus's --redact-pattern was not applied"
    assert any(b"leaky-001" in blob for blob in blobs)


def test_a_kill_mid_add_leaves_the_published_corpus_and_the_next_add_converges(tmp_path):
    a, b = split_examples(tmp_path, tail=2)
    corpus, ref = tmp_path / "c", tmp_path / "ref"
    ok("compile", str(a), "--out", str(corpus), "-q")
    published = tree_bytes(corpus)
    env = {**os.environ, "WIKITRACE_PUBLISH_PAUSE": "0.3"}  # each file put in place 0.3 s apart
    cmd = [sys.executable, "-m", "wikitrace.cli", "add", str(b), "--corpus", str(corpus)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = corpus / ".wikitrace" / "runs.journal"
    first_page = corpus / "raw" / "step-0004"  # the first new run's folder: its pages go in first
    deadline = time.monotonic() + 120
    while not (first_page.is_dir() and os.listdir(first_page)) and proc.poll() is None \
            and time.monotonic() < deadline:
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)  # ~14 more files to put in place, 0.3 s apart, before any index
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the add ended before the kill"
    now = tree_bytes(corpus)
    assert set(now) - set(published), "the kill should land after some pages were written"
    for rel in ("corpus.json", "index.md", "raw/_index.md", "compilation/_index.md", "insight/_index.md",
                "index/prompt.bin"):
        assert now[rel] == published[rel], f"{rel} changed before every page was in place"
    ok("add", str(b), "--corpus", str(corpus))
    ok("compile", str(a), str(b), "--out", str(ref), "-q")
    same_corpus(corpus, ref)
    assert not journal.exists() and not os.listdir(corpus / ".wikitrace" / "tmp")


def test_add_run_for_a_harness(tmp_path):
    import wikitrace

    a, b = split_examples(tmp_path)
    ok("compile", str(a), "--out", str(tmp_path / "c"), "-q")
    result = wikitrace.add_run(SESSION, corpus=tmp_path / "c", outcome="success")
    assert [(r["run_id"], r["step"], r["outcome"]) for r in result.added] == [(SESSION_ID, "step-0005", "success")]
    again = wikitrace.add_run(SESSION, corpus=tmp_path / "c", outcome="success")
    assert again.added == [] and again.present == [{"run_id": SESSION_ID, "step": "step-0005"}]
    from wikitrace.errors import WikitraceError

    with pytest.raises(WikitraceError, match="pass --outcome"):
        wikitrace.add_run(SESSION, corpus=tmp_path / "c")  # no verdict given: the session is new to this check
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("mine\n")
    with pytest.raises(WikitraceError, match="holds no corpus"):
        wikitrace.add_run(b, corpus=tmp_path / "notes")
    assert wikitrace.add_run(b, corpus=tmp_path / "nowhere").created  # the first add creates the corpus


def _hook_command(doc: Path) -> str:
    text = doc.read_text()
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S) if '"SessionEnd"' in b]
    assert len(blocks) == 1, f"{doc.name} should show one SessionEnd settings block"
    [entry] = blocks[0]["hooks"]["SessionEnd"]
    [hook] = entry["hooks"]
    assert hook["type"] == "command"
    return hook["command"]


def _documented_hook_command() -> str:
    """The command of the SessionEnd hook in docs/capture.md (and the README), exactly as a
    user pastes it."""
    command = _hook_command(REPO / "docs" / "capture.md")
    assert _hook_command(REPO / "README.md") == command, "README and docs/capture.md show different hooks"
    return command


@pytest.mark.parametrize("tests_pass", [True, False])
def test_the_documented_claude_code_hook_adds_the_session(tmp_path, tests_pass):
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    (project / "test_ok.py").write_text(f"def test_it():\n    assert {tests_pass}\n")
    transcript = home / ".claude" / "projects" / "-home-dev-billing" / SESSION.name
    transcript.parent.mkdir(parents=True)
    shutil.copy(SESSION, transcript)
    # the hook calls `pytest` and `wikitrace` by name: the ones installed beside this interpreter
    env = {**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(project),
           "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    ok("compile", str(EXAMPLES), "--out", str(home / "agent-memory"), "-q", env=env)
    payload = json.dumps({"session_id": SESSION_ID, "transcript_path": str(transcript), "cwd": str(project),
                          "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
    done = subprocess.run(["sh", "-c", _documented_hook_command()], input=payload, capture_output=True, text=True,
                          env=env, cwd=project, timeout=300)
    assert done.returncode == 0, done.stderr
    data = json.loads((home / "agent-memory" / "corpus.json").read_text())
    [entry] = [r for r in data["runs"] if r["run_id"] == SESSION_ID]
    assert entry["step"] == "step-0006" and entry["outcome"] == ("success" if tests_pass else "failure")
    assert check_corpus(home / "agent-memory") == []
    # Run again for the same session (a second hook firing): nothing changes.
    before = tree_bytes(home / "agent-memory")
    again = subprocess.run(["sh", "-c", _documented_hook_command()], input=payload, capture_output=True, text=True,
                           env=env, cwd=project, timeout=300)
    assert again.returncode == 0 and tree_bytes(home / "agent-memory") == before


def test_an_add_while_another_build_holds_the_corpus_is_one_line(tmp_path):
    import fcntl

    a, b = split_examples(tmp_path)
    corpus = tmp_path / "c"
    ok("compile", str(a), "--out", str(corpus), "-q")
    before = tree_bytes(corpus)
    with open(corpus / ".wikitrace" / "lock", "a+") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        done = wikitrace("add", str(b), "--corpus", str(corpus))
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "another wikitrace build" in done.stderr and "Traceback" not in done.stderr
    assert tree_bytes(corpus) == before


def test_wikitrace_corpus_is_the_default_and_quiet_prints_nothing(tmp_path):
    a, b = split_examples(tmp_path)
    corpus = tmp_path / "c"
    ok("compile", str(a), "--out", str(corpus), "-q")
    done = ok("add", str(b), "-q", env={**os.environ, "WIKITRACE_CORPUS": str(corpus)})
    assert done.stdout == "" and done.stderr == ""
    assert [r["run_id"] for r in json.loads((corpus / "corpus.json").read_text())["runs"]][-1] == "address-002"


def test_a_forgotten_run_is_not_added_back(tmp_path):
    a, b = split_examples(tmp_path)
    corpus = tmp_path / "c"
    ok("compile", str(a), str(b), "--out", str(corpus), "-q")
    ok("forget", "address-002", "--corpus", str(corpus))
    before = tree_bytes(corpus)
    done = ok("add", str(b), "--corpus", str(corpus), "--json")
    assert json.loads(done.stdout)["forgotten"] == ["address-002"] and json.loads(done.stdout)["added"] == []
    assert "not added: address-002 was removed with `wikitrace forget`" in done.stderr
    assert tree_bytes(corpus) == before
