"""Capture that keeps working: the documented hook and wrapper, run as a user pastes them,
on transcripts in today's shapes, into a corpus that does not exist yet; the corpus's own
settings deciding every later add; failures kept where `check` sees them.

Commands run through the installed `wikitrace` of this interpreter's environment (its
folder is put first on PATH), never through what a CI script happens to put there.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO, write_jsonl
from wikitrace.check import check_corpus

CAPTURE = REPO / "tests" / "fixtures" / "capture"
CLAUDE = CAPTURE / "claude-code-current.jsonl"
CLAUDE_ID = "c1f0e6a2-93d4-4b7e-a5c8-0f2e7d9b3a61"
[ROLLOUT] = sorted(CAPTURE.glob("rollout-*.jsonl"))
CODEX_ID = "0199a3f2-7c41-7e90-b2d8-5a1c6e3f9b04"
BIN = Path(sys.executable).parent  # where pip put `wikitrace` and `pytest` for this interpreter


def _env(home: Path, **extra) -> dict:
    return {**os.environ, "HOME": str(home), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", **extra}


def _wikitrace(*args, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "wikitrace"), *args], capture_output=True, text=True, timeout=300,
                          env=env or _env(Path.home()))


def _another_session(src: Path, dst: Path, old_id: str, new_id: str, task: tuple[str, str]) -> Path:
    """The same transcript shape with another session id and task (a second session)."""
    text = src.read_text().replace(old_id, new_id).replace(*task)
    dst.write_text(text)
    return dst


def _settings_command(doc: Path) -> str:
    blocks = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", doc.read_text(), re.S) if '"SessionEnd"' in b]
    [hook] = blocks[0]["hooks"]["SessionEnd"][0]["hooks"]
    return hook["command"]


def _codex_function(doc: Path) -> str:
    [block] = [b for b in re.findall(r"```bash\n(.*?)```", doc.read_text(), re.S) if b.startswith("codex() {")]
    return block


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_ok.py").write_text("def test_it():\n    assert True\n")
    return project


def test_the_claude_code_hook_twice_on_current_transcripts_builds_a_corpus_from_nothing(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    project = _project(tmp_path)
    first = CLAUDE.read_text().splitlines()[0]
    assert json.loads(first)["type"] == "file-history-snapshot"  # the shape that broke detection
    projects = home / ".claude" / "projects" / "-home-dev-shop"
    projects.mkdir(parents=True)
    one = projects / f"{CLAUDE_ID}.jsonl"
    one.write_text(CLAUDE.read_text())
    second_id = "5b2d9e71-0c3a-4f68-9e1d-7a4c2b8f6e05"
    two = _another_session(CLAUDE, projects / f"{second_id}.jsonl", CLAUDE_ID, second_id,
                           ("The cart total ignores the discount code", "The cart total counts the discount twice"))
    command = _settings_command(REPO / "docs" / "capture.md")
    corpus = home / "agent-memory"
    assert not corpus.exists()
    for path, sid in ((one, CLAUDE_ID), (two, second_id)):
        payload = json.dumps({"session_id": sid, "transcript_path": str(path), "cwd": str(project),
                              "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"})
        done = subprocess.run(["sh", "-c", command], input=payload, capture_output=True, text=True, timeout=300,
                              env=_env(home, CLAUDE_PROJECT_DIR=str(project)), cwd=project)
        assert done.returncode == 0, done.stderr
    runs = json.loads((corpus / "corpus.json").read_text())["runs"]
    assert [(r["run_id"], r["outcome"]) for r in runs] == [(CLAUDE_ID, "success"), (second_id, "success")]
    assert check_corpus(corpus) == []
    assert not (corpus / ".wikitrace" / "add-failures.log").exists()
    # the task is what the user asked, not the slash command typed before it
    meta = (corpus / "raw" / runs[0]["step"] / "metadata.md").read_text()
    assert "The cart total ignores the discount code" in meta and "<command-name>" not in meta.split("---")[1]


def test_the_codex_wrapper_twice_builds_a_corpus_from_nothing(tmp_path):
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    project = _project(tmp_path)
    # A stand-in `codex`: writes the rollout named by $ROLLOUT where Codex CLI keeps sessions.
    fake = home / "bin" / "codex"
    fake.write_text('#!/bin/sh\nd="$HOME/.codex/sessions/2026/11/30"\nmkdir -p "$d"\ncp "$ROLLOUT" "$d/"\n')
    fake.chmod(0o755)
    second_id = "0199a3f2-8d52-7f01-83e9-6b2d7f4a0c15"
    second = _another_session(ROLLOUT, tmp_path / f"rollout-2026-11-30T11-20-41-{second_id}.jsonl", CODEX_ID,
                              second_id, ("Monthly balances come out negative", "Yearly interest comes out negative"))
    script = _codex_function(REPO / "docs" / "capture.md") + '\ncodex exec "fix the balances"\n'
    corpus = home / "agent-memory"
    for rollout in (ROLLOUT, second):
        env = _env(home, ROLLOUT=str(rollout))
        env["PATH"] = f"{home / 'bin'}{os.pathsep}{env['PATH']}"
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=300, env=env,
                              cwd=project)
        assert done.returncode == 0, done.stderr
        assert done.stderr == ""
    runs = json.loads((corpus / "corpus.json").read_text())["runs"]
    assert [r["run_id"] for r in runs] == [CODEX_ID, second_id]
    assert check_corpus(corpus) == []


def test_a_codex_rollout_reads_as_the_session_it_was():
    from wikitrace.runs.load import LoadReport, detect, iter_runs

    assert detect(ROLLOUT) == "codex-cli"
    report = LoadReport()
    [run] = iter_runs([ROLLOUT], None, report, outcomes={CODEX_ID: _verdict(True)})
    assert run.run_id == CODEX_ID and run.task.metadata["model"] == "gpt-5-codex"
    assert run.task.instruction.startswith("Monthly balances come out negative")
    calls = [t for t in run.turns if t.type == "function_call"]
    assert [c.name for c in calls] == ["shell", "apply_patch", "shell", "shell"]
    assert [c.is_error for c in calls] == [False, False, True, False]  # `make test` exited 2, then 0
    assert calls[0].arguments["command"][-1].startswith("rg -n")
    assert calls[1].reasoning.startswith("The pro-rating divides by 30")
    assert "AGENTS.md" not in json.dumps([t.to_record() for t in run.turns])
    assert run.source["context_messages"] == 2


def _verdict(success: bool):
    from wikitrace.runs.outcomes import parse_verdict

    return parse_verdict("success" if success else "failure", "test")


def test_a_transcript_whose_snapshots_outrun_the_detection_head_is_still_claude_code(tmp_path):
    from wikitrace.runs._common import SNIFF_BYTES
    from wikitrace.runs.load import detect

    lines = CLAUDE.read_text().splitlines()
    big = {"type": "file-history-snapshot", "messageId": "m9", "isSnapshotUpdate": False,
           "snapshot": {"messageId": "m9", "timestamp": "2026-11-30T09:00:00.000Z",
                        "trackedFileBackups": {f"src/module_{i}.py": {"backupFileName": f"{i:016x}@v2", "version": 2}
                                               for i in range(SNIFF_BYTES // 40)}}}
    path = tmp_path / "long.jsonl"
    path.write_text("\n".join([json.dumps(big), json.dumps({"type": "summary", "summary": "s", "leafUuid": "x"})]
                              + lines) + "\n")
    assert path.stat().st_size > 2 * SNIFF_BYTES
    assert detect(path) == "claude-code"
    # a JSONL of something else whose lines merely carry a `type` is not taken for a transcript
    other = write_jsonl(tmp_path / "events.jsonl", [{"type": "summary", "text": "x"}, {"type": "user", "id": 1}])
    with pytest.raises(Exception, match="cannot tell the format"):
        detect(other)


def test_every_later_add_works_on_a_corpus_compiled_with_an_outcomes_file(tmp_path):
    fixtures = REPO / "tests" / "fixtures" / "importers" / "claude_code"
    session = next(fixtures.glob("0b7c*.jsonl"))
    corpus = tmp_path / "memory"
    done = _wikitrace("compile", str(session), "--outcomes", str(fixtures / "outcomes.json"), "--out", str(corpus), "-q")
    assert done.returncode == 0, done.stderr
    for n, outcome in ((1, "success"), (2, "failure"), (3, "success")):
        sid = f"9e0c1d2b-0000-4000-8000-00000000000{n}"
        path = _another_session(CLAUDE, tmp_path / f"{sid}.jsonl", CLAUDE_ID, sid, ("discount code", f"code {n}"))
        done = _wikitrace("add", str(path), "--corpus", str(corpus), "--outcome", outcome, "-q")
        assert done.returncode == 0, done.stderr
    assert len(json.loads((corpus / "corpus.json").read_text())["runs"]) == 4
    assert check_corpus(corpus) == []


def test_an_offline_corpus_never_calls_a_model_because_a_key_is_set(tmp_path, fake_openai):
    corpus = tmp_path / "memory"
    plain = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    done = _wikitrace("compile", str(REPO / "examples" / "runs.jsonl"), "--out", str(corpus), "--offline", "-q",
                      env=plain)
    assert done.returncode == 0, done.stderr
    env = dict(os.environ)
    assert env["OPENAI_API_KEY"] and env["OPENAI_BASE_URL"] == fake_openai.base_url
    done = _wikitrace("add", str(CLAUDE), "--corpus", str(corpus), "--outcome", "success", "--json", env=env)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["added"][0]["compiler"] == "offline"
    assert fake_openai.requests == []


def test_a_failed_add_is_logged_and_check_reports_it(tmp_path):
    corpus = tmp_path / "memory"
    assert _wikitrace("add", str(CLAUDE), "--corpus", str(corpus), "--outcome", "success", "-q").returncode == 0
    assert check_corpus(corpus) == []
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"not": "a transcript"}\n')
    done = _wikitrace("add", str(broken), "--corpus", str(corpus), "-q")
    assert done.returncode != 0 and done.stderr.count("\n") == 1
    hook = subprocess.run([str(BIN / "wikitrace"), "add", "--claude-code-hook", "--corpus", str(corpus)],
                          input='{"session_id": "x"}', capture_output=True, text=True, timeout=60)
    assert hook.returncode == 2
    log = (corpus / ".wikitrace" / "add-failures.log").read_text().splitlines()
    assert len(log) == 2 and "broken.jsonl" in log[0] and "transcript_path" in log[1]
    [problem] = check_corpus(corpus)
    assert "2 failed `wikitrace add`s" in problem and "delete the file" in problem
    (corpus / ".wikitrace" / "add-failures.log").unlink()
    assert check_corpus(corpus) == []


def test_an_add_to_a_folder_of_other_files_creates_nothing(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "todo.txt").write_text("mine\n")
    done = _wikitrace("add", str(CLAUDE), "--corpus", str(folder), "--outcome", "success")
    assert done.returncode != 0 and "holds no corpus" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["todo.txt"]  # not even a failure log
    assert not (folder / "corpus.json").exists()


def test_forget_of_an_unknown_id_leaves_no_journal(tmp_path):
    corpus = tmp_path / "memory"
    assert _wikitrace("compile", str(REPO / "examples" / "runs.jsonl"), "--out", str(corpus), "-q").returncode == 0
    done = _wikitrace("forget", "no-such-run", "--corpus", str(corpus))
    assert done.returncode == 2
    assert not (corpus / ".wikitrace" / "runs.journal").exists()
    assert check_corpus(corpus) == []


def test_a_first_add_without_a_verdict_creates_nothing_but_the_log_line(tmp_path):
    corpus = tmp_path / "memory"
    done = _wikitrace("add", str(CLAUDE), "--corpus", str(corpus))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "pass --outcome" in done.stderr
    assert sorted(p.name for p in corpus.rglob("*")) == [".wikitrace", "add-failures.log"]
    assert "1 failed `wikitrace add`" in check_corpus(corpus)[0]
    assert _wikitrace("add", str(CLAUDE), "--corpus", str(corpus), "--outcome", "failure").returncode == 0
    assert json.loads((corpus / "corpus.json").read_text())["runs"][0]["outcome"] == "failure"
