"""The installed CLI behaves like the tools people know: --version, -h, completion,
flags shown as flags, environment variables in help, $WIKITRACE_CORPUS everywhere,
--json (one object on stdout, human text on stderr), messages that stand alone,
progress that a log can read, and a prompt that fits a context window by default."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import EXAMPLES, REPO
from test_cli_errors import DIALOGUE, WIKITRACE, cli

DESCENTS_EXAMPLE = REPO / "examples" / "descents.jsonl"
EVAL_EXAMPLE = REPO / "examples" / "eval_results.csv"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    out = tmp_path_factory.mktemp("conventions") / "corpus"
    assert cli("compile", EXAMPLES, "--out", out, "-q").returncode == 0
    return out


def test_version_and_short_help():
    from wikitrace import __version__

    for flag in ("--version", "-V"):
        proc = cli(flag)
        assert proc.returncode == 0 and proc.stdout.strip() == f"wikitrace {__version__}"
    for args in (["-h"], ["compile", "-h"], ["tools", "install", "-h"], ["dialogue", "compile", "-h"]):
        proc = cli(*args)
        assert proc.returncode == 0 and proc.stdout.startswith("Usage: wikitrace"), args


def test_help_shows_flags_as_flags_and_the_plot_extra():
    text = cli("compile", "--help").stdout
    assert "<bool>" not in text
    assert "--offline " in text and "--offline <" not in text
    for fmt in ("native", "atif", "swe-agent", "mini-swe-agent", "claude-code", "codex-cli", "openai-chat",
                "react-text"):
        assert fmt in text  # every importer listed
    assert "the plot extra" in " ".join(cli("eval", "--help").stdout.split())


def test_a_flag_takes_no_value(tmp_path):
    """`--offline true`: never taken as a boolean, nor as an input the build skips; one usage
    line saying flags take no value, and nothing built."""
    proc = cli("compile", EXAMPLES, "--offline", "true", "--out", tmp_path / "c", "-q", "--json")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "flags such as --offline take no value" in proc.stderr and proc.stderr.count("\n") == 1
    assert not (tmp_path / "c").exists()


def test_shell_completion():
    proc = subprocess.run([WIKITRACE], capture_output=True, text=True,
                          env={**os.environ, "_WIKITRACE_COMPLETE": "complete_bash",
                               "COMP_WORDS": "wikitrace comp", "COMP_CWORD": "1"})
    assert proc.returncode == 0 and proc.stdout.split() == ["compile"]
    # --show-completion detects the shell from the parent processes, as it does for
    # a user typing it: run it from bash, whatever started the test runner.
    script = subprocess.run(["bash", "-c", f"'{WIKITRACE}' --show-completion; exit $?"],
                            capture_output=True, text=True)
    assert script.returncode == 0 and "_WIKITRACE_COMPLETE" in script.stdout


def test_environment_variables_are_listed_in_help():
    root = cli("--help").stdout
    for var in ("WIKITRACE_CORPUS", "OPENAI_API_KEY", "OPENAI_BASE_URL", "WIKITRACE_MODEL", "WIKITRACE_CACHE_DIR"):
        assert var in root
    for args in (["prompt"], ["check"], ["query"], ["cite", "parse"], ["cite", "prompt"]):
        assert "WIKITRACE_CORPUS" in cli(*args, "--help").stdout, args


def test_wikitrace_corpus_is_the_default_corpus_everywhere(corpus, tmp_path):
    env = {"WIKITRACE_CORPUS": str(corpus)}
    assert cli("check", env=env).returncode == 0
    prompt = cli("prompt", "--task", "refund an order", env=env)
    assert prompt.returncode == 0 and "<memory_documents>" in prompt.stdout
    assert cli("prompt", "--task", "refund an order", "--json", env=env).returncode == 0  # the fast path too
    assert cli("cite", "parse", "-", env=env, input='{"R": ["step-0000"], "C": [], "I": []}').returncode == 0
    assert "step-0000" in cli("cite", "prompt", env=env).stdout
    dialogue = tmp_path / "d"
    assert cli("dialogue", "compile", DIALOGUE, "--out", dialogue, "-q").returncode == 0
    query = cli("query", "where did they go?", "--json", env={"WIKITRACE_CORPUS": str(dialogue)})
    assert query.returncode == 0 and json.loads(query.stdout)
    missing = cli("check")
    assert missing.returncode == 2 and "set WIKITRACE_CORPUS" in missing.stderr


def test_json_is_one_object_on_stdout_and_human_text_on_stderr(corpus, tmp_path):
    build = cli("compile", EXAMPLES, "--out", tmp_path / "c", "--json")
    report = json.loads(build.stdout)
    assert report["runs"] == 6 and report["insights"] > 0 and report["out"].endswith("c")
    assert "corpus published at" in build.stderr
    check = cli("check", corpus, "--json")
    assert json.loads(check.stdout) == {"corpus": str(corpus), "ok": True, "problems": []}
    dialogue = cli("dialogue", "compile", DIALOGUE, "--out", tmp_path / "d", "--offline", "--json")
    summary = json.loads(dialogue.stdout)
    assert summary["samples"] and summary["extractor"] == "offline"
    assert "compiled 1 sample(s)" in dialogue.stderr  # the human summary went to stderr
    installed = cli("tools", "install", tmp_path / "tools", "--json")
    assert {Path(p).name for p in json.loads(installed.stdout)["written"]} >= {"grep", "turn", "actions"}


def test_quiet_prints_nothing_but_errors(tmp_path):
    proc = cli("compile", EXAMPLES, "--out", tmp_path / "c", "-q")
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_messages_stand_alone_without_docs_folder(tmp_path):
    """An installed package has no docs/: no message may send the user there."""
    (tmp_path / "notes.xyz").write_text("hello\n")
    failures = [
        cli("compile", tmp_path / "notes.xyz", "--out", tmp_path / "c", "-q"),
        cli("compile", EXAMPLES, "--out", tmp_path / "c2", "--batch", "--offline"),
        cli("descents", EXAMPLES.parent / "eval_results.csv"),
        cli("compile", "--help"),
    ]
    for proc in failures:
        assert "docs/" not in proc.stdout + proc.stderr, proc.stderr


def test_progress_in_a_log_is_plain_lines_after_the_format_is_named(tmp_path):
    proc = cli("compile", EXAMPLES, "--out", tmp_path / "c")
    lines = proc.stderr.splitlines()
    assert lines[0] == f"reading {EXAMPLES} as native"  # before any work
    progress = [line for line in lines if line.startswith("compiling runs: ")]
    assert progress and progress[-1].startswith("compiling runs: 6/6 (100%)")
    assert not any("\r" in line or "\x1b[" in line for line in lines)  # no redraws in a log
    assert all(line.strip() for line in lines[:2])


def test_long_paths_are_never_wrapped(tmp_path):
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 6)
    deep.mkdir(parents=True)
    src = deep / "runs.jsonl"
    shutil.copy(EXAMPLES, src)
    (deep / "junk.jsonl").write_text('{"not": "a run"}\n')
    proc = cli("compile", deep, "--out", tmp_path / "c", "--offline")
    assert f"reading {src} as native" in proc.stderr.splitlines()
    skipped = [line for line in proc.stderr.splitlines() if line.strip().startswith("skipped:")]
    assert skipped and str(deep) in skipped[0]


def test_one_problem_is_singular(corpus, tmp_path):
    from helpers import make_writable_copy

    broken = make_writable_copy(corpus, tmp_path / "b")
    (broken / "insight" / "insight-0000.md").unlink()
    out = cli("check", broken).stdout
    assert "problems" in out.splitlines()[-1]  # several follow from one missing page
    src = tmp_path / "one-bad.jsonl"
    src.write_text(EXAMPLES.read_text() + "not json\n")
    build = cli("compile", src, "--out", tmp_path / "c", "--json")
    assert "(1 problem)" in build.stderr and "1 problems" not in build.stderr


def test_eval_accepts_the_papers_method_names():
    proc = cli("eval", EVAL_EXAMPLE, "--json", "--resamples", "50")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["reference"] == "No Memory" and result["rerun"] == "No Memory Rerun"
    assert cli("eval", EVAL_EXAMPLE, "--reference", "no memory", "--resamples", "0").returncode == 0
    wrong = cli("eval", EVAL_EXAMPLE, "--reference", "nobody", "--resamples", "0")
    assert wrong.returncode == 2 and "No Memory" in wrong.stderr


def test_descents_example_transcript():
    proc = cli("descents", DESCENTS_EXAMPLE, "--json")
    assert proc.returncode == 0, proc.stderr
    labels = {r["name"]: r["label"] for r in json.loads(proc.stdout)}
    assert labels == {"airline-change-001": "Descent", "airline-bags-002": "Stay", "airline-status-003": "Stay"}


def test_prompt_budget_default_fits_a_context_window_and_zero_inlines_all(tmp_path):
    from wikitrace.agent.prompt import DEFAULT_BUDGET

    runs = [json.loads(line) for line in EXAMPLES.read_text().splitlines()]
    # forty kinds of task, so forty sets of lessons (runs of one kind share their insight pages)
    many = [dict(r, run_id=f"{r['run_id']}-{i}", task=dict(r["task"], task_type=f"{r['task'].get('task_type') or 'kind'}-{i}"))
            for i in range(40) for r in runs]
    src = tmp_path / "many.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in many))
    out = tmp_path / "c"
    assert cli("compile", src, "--out", out, "-q").returncode == 0
    default = cli("prompt", "--corpus", out, "--task", "refund order 4411", "--json")
    everything = cli("prompt", "--corpus", out, "--task", "refund order 4411", "--json", "--budget", "0")
    d, e = json.loads(default.stdout), json.loads(everything.stdout)
    assert d["tokens"] <= DEFAULT_BUDGET < e["tokens"]
    assert d["left_out"] > 0 and e["left_out"] == 0
    assert "left out" in default.stderr
    assert str(DEFAULT_BUDGET) in cli("prompt", "--help").stdout


def test_tools_install_skips_caches_and_never_overwrites_silently(tmp_path):
    dest = tmp_path / "tools"
    first = cli("tools", "install", dest)
    assert first.returncode == 0
    assert not (dest / "__pycache__" / "nothing").exists()
    names = {p.name for p in dest.iterdir()}
    assert names <= {"actions", "turn", "grep", "_corpus.py", "_turns.py", "_search_files.py", "_grep.py", "__pycache__"}
    assert cli("tools", "install", dest).returncode == 0  # the same files again: fine
    (dest / "grep").chmod(0o644)
    (dest / "grep").write_text("#!/bin/sh\necho my own grep\n")
    refused = cli("tools", "install", dest)
    assert refused.returncode == 2 and "--force" in refused.stderr
    assert (dest / "grep").read_text() == "#!/bin/sh\necho my own grep\n"
    assert cli("tools", "install", dest, "--force").returncode == 0
    assert "my own grep" not in (dest / "grep").read_text()


def test_tools_install_does_not_copy_a_pycache(tmp_path):
    from wikitrace.tools_install import tool_files

    source = tmp_path / "src"
    source.mkdir()
    (source / "turn").write_text("x")
    (source / "__pycache__").mkdir()
    (source / "__pycache__" / "_corpus.cpython-311.pyc").write_bytes(b"\0")
    (source / "stale.pyc").write_bytes(b"\0")
    assert [p.name for p in tool_files(source)] == ["turn"]
