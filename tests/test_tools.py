"""The agent-side tools (tools/actions, tools/turn, tools/grep) run as real subprocesses
against a small corpus written by hand, plus `wikitrace.tools_install.install`."""

from __future__ import annotations

import json
import re
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from wikitrace.tools_install import install

TOOLS = Path(__file__).resolve().parent.parent / "tools"
REPO = TOOLS.parent


def _write_jsonl(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), "utf-8")


@pytest.fixture()
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "corpus"
    _write_jsonl(root / "raw/step-0000/solver.full.jsonl", [
        {"turn": 0, "type": "message", "role": "system", "content": "You are a helpful agent."},
        {"turn": 1, "type": "message", "role": "user", "content": "Hello there,\nplease help."},
        {"turn": 2, "type": "answer", "role": "assistant", "content": "Done: 42"},
    ])
    long_result = "Reservation ZFA04Y: " + "flight HAT170 economy " * 20
    _write_jsonl(root / "raw/step-0001/solver.full.jsonl", [
        {"turn": 0, "type": "message", "role": "user", "content": "Cancel my booking ZFA04Y"},
        {"turn": 1, "type": "function_call", "name": "get_user_details",
         "arguments": {"user_id": "mia_li_3668"}, "reasoning": "First look the user up.",
         "result": '{"name": "Mia Li", "membership": "gold"}', "is_error": False,
         "tool_call_id": "call_1"},
        {"turn": 2, "type": "function_call", "name": "cancel_reservation",
         "arguments": '{"reservation_id": "ZFA04Y", "reason": "change of plan"}',
         "reasoning": "Cancel it.", "result": "Error: reservation ZFA04Y cannot be cancelled"
         " because the flight already departed yesterday and the fare is non-refundable",
         "is_error": True},
        {"turn": 3, "type": "function_call", "name": "get_reservation_details",
         "arguments": {"reservation_id": "ZFA04Y"}, "result": long_result, "is_error": False},
        {"turn": 4, "type": "message", "role": "assistant",
         "content": "Sorry, that booking cannot be cancelled."},
        {"turn": 5, "type": "episode_over", "ended_by": "agent"},
    ])
    # a gap in the step ids: nearest-id hints must skip over it
    _write_jsonl(root / "raw/step-0005/solver.full.jsonl", [
        {"turn": 0, "type": "message", "role": "user", "content": "hi"},
    ])
    (root / "raw/_index.md").write_text("# Runs\n- step-0000 success\n- step-0001 failure\n")
    (root / "raw/step-0001/metadata.md").write_text("---\ntype: raw-run\n---\nCancel ZFA04Y\n")
    (root / "compilation").mkdir()
    (root / "compilation/step-0001.md").write_text(
        "---\ntype: trajectory-compilation\n---\n# [failure] Cancel reservation ZFA04Y\n"
        "The agent tried cancel_reservation on a departed flight.\n", "utf-8")
    (root / "insight").mkdir()
    (root / "insight/insight-0000.md").write_text(
        "---\ntype: insight\n---\n## Insight\nCheck the flight status before "
        "cancel_reservation.\n", "utf-8")
    (root / "insight/latin1.md").write_bytes("cancel_reservation caf\xe9\n".encode("latin-1"))
    return root


def run(tool: str, *args: str, corpus: Path | None = None, env: dict | None = None,
        script_dir: Path = TOOLS) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("WIKITRACE_CORPUS", None)
    if corpus is not None:
        full_env["WIKITRACE_CORPUS"] = str(corpus)
    full_env.update(env or {})
    return subprocess.run([sys.executable, str(script_dir / tool), *args], env=full_env,
                          capture_output=True, text=True, timeout=60)


def assert_one_line_error(proc: subprocess.CompletedProcess) -> str:
    assert proc.returncode == 2, proc
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    return proc.stderr


# ----------------------------------------------------------------------- actions

def test_actions_numbers_each_turn_and_marks_errors(corpus):
    proc = run("actions", "step-0001", corpus=corpus)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["0", "1", "2", "3", "4", "5"]
    assert lines[0] == "  0  [user] Cancel my booking ZFA04Y"
    assert lines[1].startswith('  1  get_user_details(user_id="mia_li_3668")  -> ok: ')
    assert "Mia Li" in lines[1]
    # string arguments are decoded; an error result is flagged and clipped to 80 chars
    assert lines[2].startswith(
        '  2  cancel_reservation(reservation_id="ZFA04Y", reason="change of plan")  -> ERROR: ')
    clipped = lines[2].split("-> ERROR: ", 1)[1]
    assert clipped.startswith("Error: reservation ZFA04Y cannot be cancelled")
    assert len(clipped) == 80 and clipped.endswith("...")
    assert "-> ok: Reservation ZFA04Y" in lines[3] and len(lines[3].split("-> ok: ")[1]) == 80
    assert lines[4] == "  4  [assistant] Sorry, that booking cannot be cancelled."
    assert lines[5].startswith("  5  [episode_over]") and "agent" in lines[5]


@pytest.mark.parametrize("step", ["step-0000", "0000", "0", "step-0", "raw/step-0000/"])
def test_actions_accepts_step_spellings(corpus, step):
    proc = run("actions", step, corpus=corpus)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [
        "  0  [system] You are a helpful agent.",
        "  1  [user] Hello there, please help.",
        "  2  [answer] Done: 42",
    ]


def test_actions_json(corpus):
    proc = run("actions", "1", "--json", corpus=corpus)
    assert proc.returncode == 0, proc.stderr
    items = json.loads(proc.stdout)
    assert [i["turn"] for i in items] == list(range(6))
    assert items[2]["is_error"] is True and items[1]["is_error"] is False
    assert items[2]["arguments"] == {"reservation_id": "ZFA04Y", "reason": "change of plan"}
    assert items[2]["summary"].startswith("cancel_reservation(")


def test_corpus_flag_beats_env(corpus, tmp_path):
    proc = run("actions", "1", "--corpus", str(corpus), env={"WIKITRACE_CORPUS": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.splitlines()) == 6


def test_unknown_step_names_range_and_nearest(corpus):
    err = assert_one_line_error(run("actions", "step-0003", corpus=corpus))
    assert "step-0003" in err
    assert "step-0000..step-0005" in err
    assert "nearest: step-0001, step-0005" in err
    err = assert_one_line_error(run("turn", "99", "0", corpus=corpus))
    assert "step-0099" in err and "step-0000..step-0005" in err and "nearest: step-0005" in err
    err = assert_one_line_error(run("actions", "banana", corpus=corpus))
    assert "'banana' is not a step id" in err and "step-0000..step-0005" in err


def test_missing_corpus_says_to_set_env(tmp_path):
    for tool, args in (("actions", ["1"]), ("turn", ["1", "0"]), ("grep", ["x"])):
        err = assert_one_line_error(run(tool, *args, corpus=tmp_path / "nowhere"))
        assert "WIKITRACE_CORPUS" in err and str(tmp_path / "nowhere") in err


def test_usage_errors_are_one_line(corpus):
    err = assert_one_line_error(run("actions", corpus=corpus))
    assert "missing STEP" in err and "usage: actions" in err
    err = assert_one_line_error(run("actions", "1", "--bogus", corpus=corpus))
    assert "unknown option --bogus" in err
    help_proc = run("grep", "--help", corpus=corpus)
    assert help_proc.returncode == 0 and help_proc.stdout.startswith("usage: grep")


# -------------------------------------------------------------------------- turn

def test_turn_shows_everything(corpus):
    proc = run("turn", "step-0001", "1", "2", corpus=corpus)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert out.count("=== step-0001 turn ") == 2
    assert "=== step-0001 turn 1 (function_call) ===" in out
    assert "reasoning:\nFirst look the user up." in out
    assert 'action: get_user_details\narguments:\n{\n  "user_id": "mia_li_3668"\n}' in out
    assert 'observation:\n{"name": "Mia Li", "membership": "gold"}' in out
    assert "is_error: false" in out and "is_error: true" in out
    assert 'tool_call_id: "call_1"' in out
    # the full error text, not a clip
    assert "the fare is non-refundable" in out
    assert "turn 0 " not in out and "turn 3 " not in out


def test_turn_single_and_dotted_range(corpus):
    single = run("turn", "1", "4", corpus=corpus).stdout
    assert single.startswith("=== step-0001 turn 4 (message, assistant) ===\ncontent:\nSorry")
    dotted = run("turn", "1", "3..5", corpus=corpus)
    assert dotted.returncode == 0
    assert [line for line in dotted.stdout.splitlines() if line.startswith("===")] == [
        "=== step-0001 turn 3 (function_call) ===",
        "=== step-0001 turn 4 (message, assistant) ===",
        "=== step-0001 turn 5 (episode_over) ===",
    ]
    full = run("turn", "1", "3", corpus=corpus).stdout
    assert ("flight HAT170 economy " * 20).strip() in full


def test_turn_json_is_the_records(corpus):
    proc = run("turn", "0", "0", "2", "--json", corpus=corpus)
    assert proc.returncode == 0
    assert json.loads(proc.stdout) == [
        {"turn": 0, "type": "message", "role": "system", "content": "You are a helpful agent."},
        {"turn": 1, "type": "message", "role": "user", "content": "Hello there,\nplease help."},
        {"turn": 2, "type": "answer", "role": "assistant", "content": "Done: 42"},
    ]


@pytest.mark.parametrize("args", [["6"], ["4", "9"], ["-1"], ["3", "1"]])
def test_turn_out_of_range_names_the_valid_range(corpus, args):
    err = assert_one_line_error(run("turn", "step-0001", *args, corpus=corpus))
    assert "step-0001 has turns 0..5" in err


def test_turn_needs_a_turn_number(corpus):
    err = assert_one_line_error(run("turn", "1", corpus=corpus))
    assert "missing turn A" in err and "0..5" in err
    err = assert_one_line_error(run("turn", "1", "two", corpus=corpus))
    assert "'two' is not a number" in err


# -------------------------------------------------------------------------- grep

NO_RG = {"WIKITRACE_TOOLS_NO_RG": "1"}


def test_grep_python_fallback_all_layers(corpus):
    proc = run("grep", "cancel_reservation", corpus=corpus, env=NO_RG)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    paths = {line.split(":", 1)[0] for line in lines}
    assert paths == {
        "step-0001 turn 2",  # a turn-log line is named by its turn, as `turn` takes it
        f"{corpus}/compilation/step-0001.md",
        f"{corpus}/insight/insight-0000.md",  # latin1.md is not UTF-8: skipped
    }
    assert f"{corpus}/compilation/step-0001.md:5: The agent tried cancel_reservation" \
           " on a departed flight." in lines
    assert (f"{corpus}/insight/insight-0000.md:5: Check the flight status before "
            "cancel_reservation.") in lines
    # raw jsonl lines are printed too, bounded in length
    assert all(len(line) < len(str(corpus)) + 300 for line in lines)


def test_grep_layer_filter_case_and_files_only(corpus):
    only = run("grep", "ZFA04Y", "--layer", "compilation", corpus=corpus, env=NO_RG)
    assert only.stdout.splitlines() == [
        f"{corpus}/compilation/step-0001.md:4: # [failure] Cancel reservation ZFA04Y"]
    two = run("grep", "zfa04y", "-i", "-l", "--layer", "raw,compilation",
              corpus=corpus, env=NO_RG)
    assert two.returncode == 0, two.stderr
    assert two.stdout.splitlines() == [
        f"{corpus}/raw/step-0001/metadata.md",
        f"{corpus}/raw/step-0001/solver.full.jsonl",
        f"{corpus}/compilation/step-0001.md",
    ]
    none = run("grep", "zfa04y", "--layer", "insight", corpus=corpus, env=NO_RG)
    assert none.returncode == 1 and none.stdout == "" and "no match" in none.stderr
    bad = assert_one_line_error(run("grep", "x", "--layer", "wiki", corpus=corpus, env=NO_RG))
    assert "unknown layer 'wiki'" in bad


def test_grep_max_bounds_output_and_counts_the_rest(corpus):
    proc = run("grep", "ZFA04Y", "--max", "2", corpus=corpus, env=NO_RG)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert len(lines) == 3
    total = len(run("grep", "ZFA04Y", "--max", "0", corpus=corpus, env=NO_RG)
                .stdout.splitlines())
    assert total > 3
    assert lines[2] == (f"[{total - 2} more matching lines not shown; the next 2: --skip 2; or narrow the search "
                        f"(--layer, -l, a longer pattern)]")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compiled") / "corpus"
    done = subprocess.run([sys.executable, "-m", "wikitrace.cli", "compile", str(REPO / "examples" / "runs.jsonl"),
                           "--out", str(out), "--offline", "-q"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("env", [NO_RG, None], ids=["python", "rg-if-present"])
def test_grep_shows_each_hit_once_caps_by_default_and_pages_with_skip(compiled, env):
    corpus = compiled
    assert any(compiled.glob("raw/step-*/turns.md"))
    every = run("grep", "e", "--max", "0", corpus=corpus, env=env).stdout.splitlines()
    assert len(every) > 60  # a common letter: more hits than the default page
    assert not any("/turns.md:" in line for line in every)  # a turn's line shows once, as `step-N turn T`
    assert any(re.match(r"step-\d{4} turn \d+: ", line) for line in every)
    assert len(every) == len(set(every))
    page = run("grep", "e", corpus=corpus, env=env).stdout.splitlines()
    assert page[:50] == every[:50] and len(page) == 51
    rest = len(every) - 50
    assert page[50].startswith(f"[{rest if rest <= 200 else 'over 200'} more matching lines not shown; "
                               f"the next 50: --skip 50;")
    second = run("grep", "e", "--skip", "50", "--max", "10", corpus=corpus, env=env).stdout.splitlines()
    assert second[:10] == every[50:60]
    assert run("grep", "e", "--skip", "-1", corpus=corpus, env=env).returncode == 2


def test_grep_clips_long_lines_around_the_match(corpus):
    proc = run("grep", "HAT170 economy $", "--layer", "raw", corpus=corpus, env=NO_RG)
    assert proc.returncode == 1  # `$` is end of line: the jsonl line goes on after it
    proc = run("grep", "get_reservation_details", "--layer", "raw", corpus=corpus, env=NO_RG)
    (line,) = proc.stdout.splitlines()
    text = line.split(": ", 1)[1]
    assert "get_reservation_details" in text and text.endswith("...") and len(text) <= 246


def test_grep_json_and_bad_pattern(corpus):
    proc = run("grep", "ZFA04Y", "--layer", "compilation", "--json", corpus=corpus, env=NO_RG)
    assert json.loads(proc.stdout) == [{"path": f"{corpus}/compilation/step-0001.md", "line": 4,
                                        "text": "# [failure] Cancel reservation ZFA04Y"}]
    err = assert_one_line_error(run("grep", "(unclosed", corpus=corpus, env=NO_RG))
    assert "bad pattern" in err
    dash = run("grep", "-e", "-refundable", "--layer", "raw", corpus=corpus, env=NO_RG)
    assert dash.returncode == 0 and "non-refundable" in dash.stdout


def test_grep_without_rg_on_path_uses_python(corpus, tmp_path):
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    proc = run("grep", "departed", "--layer", "compilation", corpus=corpus,
               env={"PATH": str(empty)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == (f"{corpus}/compilation/step-0001.md:5: "
                           "The agent tried cancel_reservation on a departed flight.\n")


def test_grep_uses_rg_when_on_path(corpus, tmp_path):
    """A stand-in `rg` records its arguments and answers in rg's --null format."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "rg-args.json"
    fake = bin_dir / "rg"
    fake.write_text(
        f"#!{sys.executable}\n"
        "import json, sys\n"
        f"json.dump(sys.argv[1:], open({str(log)!r}, 'w'))\n"
        "folders = sys.argv[sys.argv.index('--') + 1:]\n"
        "out = sys.stdout.buffer\n"
        "out.write(folders[0].encode() + b'/a.md\\x003:hello: world\\n')\n"
        "out.write(folders[0].encode() + b'/b.md\\x0012:second\\n')\n")
    fake.chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = run("grep", "-i", "hello", "--layer", "insight", corpus=corpus, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [f"{corpus}/insight/a.md:3: hello: world",
                                        f"{corpus}/insight/b.md:12: second"]
    args = json.loads(log.read_text())
    assert "--ignore-case" in args and "--null" in args
    assert args[args.index("--regexp") + 1] == "hello"
    assert args[args.index("--") + 1:] == [f"{corpus}/insight"]
    # the env switch turns rg off even when it is on PATH
    forced = run("grep", "departed", "--layer", "compilation", corpus=corpus,
                 env={**env, **NO_RG})
    assert forced.stdout.startswith(f"{corpus}/compilation/step-0001.md:5: ")


# ----------------------------------------------------------------------- install

def test_install_copies_runnable_tools(corpus, tmp_path):
    dest = tmp_path / "installed" / "tools"
    written = install(dest)
    names = {p.name for p in written}
    assert {"actions", "turn", "grep", "_corpus.py", "_turns.py", "_search_files.py", "_grep.py"} <= names
    # the shared modules are byte-compiled so a read-only mount starts from bytecode
    assert any(p.suffix == ".pyc" and p.name.startswith("_corpus.") for p in written)
    for name in ("actions", "turn", "grep"):
        mode = stat.S_IMODE((dest / name).stat().st_mode)
        assert mode == 0o755
        assert (dest / name).read_text().startswith("#!/usr/bin/env python3\n")
    assert all(p.exists() for p in written)
    proc = run("actions", "1", corpus=corpus, script_dir=dest)
    assert proc.returncode == 0, proc.stderr
    assert "-> ERROR: " in proc.stdout
    proc = run("grep", "departed", "--layer", "compilation", corpus=corpus, script_dir=dest,
               env=NO_RG)
    assert proc.returncode == 0 and "departed" in proc.stdout
    # installing again over the same folder is fine
    assert {p.name for p in install(dest)} == names


def test_install_refuses_a_file(tmp_path):
    target = tmp_path / "tools"
    target.write_text("not a folder")
    with pytest.raises(ValueError, match="is a file"):
        install(target)


def test_launcher_without_shared_module_says_so(corpus, tmp_path):
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "actions").write_bytes((TOOLS / "actions").read_bytes())
    err = assert_one_line_error(run("actions", "1", corpus=corpus, script_dir=lonely))
    assert "_corpus.py is missing" in err


@pytest.mark.parametrize("missing, broken, working", [("_turns.py", "actions", "grep"),
                                                      ("_grep.py", "grep", "turn"),
                                                      ("_search_files.py", "grep", "actions")])
def test_a_missing_tool_module_is_named_and_the_other_tools_still_run(corpus, tmp_path, missing, broken,
                                                                       working):
    partial = tmp_path / "partial"
    partial.mkdir()
    for source in TOOLS.iterdir():
        if source.is_file() and source.name != missing:
            (partial / source.name).write_bytes(source.read_bytes())
    args = {"actions": ["1"], "turn": ["1", "0"], "grep": ["departed"]}
    err = assert_one_line_error(run(broken, *args[broken], corpus=corpus, script_dir=partial, env=NO_RG))
    assert f"{missing} is missing" in err and "wikitrace tools install" in err
    proc = run(working, *args[working], corpus=corpus, script_dir=partial, env=NO_RG)
    assert proc.returncode == 0 and proc.stdout, proc.stderr
