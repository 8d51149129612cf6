"""Every documented command true: the shell blocks of README.md and docs/*.md, run as written.

Every ```bash / ```sh block runs, one page's blocks in page order in one scratch folder, with
the `wikitrace` installed beside this interpreter first on PATH, a scratch HOME and no LLM
endpoint. A block that cannot run here says so on the line before its fence:

    <!-- doc-test: skip: needs docker -->

(a reason is required). The scratch folder holds what a reader following the README has, under
the names the pages use: the repository's `examples/` and `tools/`, `corpus/` compiled from
the example runs, `runs/` and `past-runs/` (the example runs), and one file per placeholder
the pages name (`episode-0042.jsonl`, `session.jsonl`, `answer.txt`, `session-19.json`,
`conversations/`). Client configuration blocks (Claude Code settings and hooks, MCP server
entries for Claude Desktop/Cursor, Codex CLI's config.toml, the Agents SDK snippet) are
checked against each client's shape.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers import REPO, example_runs, write_jsonl

BIN = Path(sys.executable).parent
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.S | re.M)
_MARK = re.compile(r"<!--\s*doc-test:\s*(\w+)(?::\s*(.*?))?\s*-->\s*$")


@dataclass
class Block:
    page: Path
    line: int
    lang: str
    body: str
    mark: str | None  # "skip" or None
    reason: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _MARK.search(before)
        found.append(Block(page, line, m.group(1), m.group(2), mark.group(1) if mark else None,
                           (mark.group(2) or "") if mark else ""))
    return found


def _shell(page: Path) -> list[Block]:
    return [b for b in blocks(page) if b.lang in ("bash", "sh")]


def test_every_mark_is_known_and_gives_a_reason():
    for page in PAGES:
        for b in blocks(page):
            if b.mark is not None:
                assert b.mark == "skip", f"{b.where}: unknown doc-test mark {b.mark!r} (use skip: REASON)"
                assert b.reason.strip(), f"{b.where}: a skipped block says why"
                assert b.lang in ("bash", "sh"), f"{b.where}: only shell blocks are run, so only they are marked"


@pytest.fixture(scope="module")
def reader(tmp_path_factory) -> Path:
    """What a reader has after the README's first block, under the names the pages use."""
    base = tmp_path_factory.mktemp("reader")
    for folder in ("examples", "tools"):
        shutil.copytree(REPO / folder, base / folder)
    (base / "runs").mkdir()
    shutil.copy(REPO / "examples" / "runs.jsonl", base / "runs" / "runs.jsonl")
    shutil.copytree(base / "runs", base / "past-runs")
    done = subprocess.run([str(BIN / "wikitrace"), "compile", "runs", "--out", "corpus", "-q"], cwd=base,
                          env=_env(base), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    won = next(r for r in example_runs() if r["outcome"]["success"])
    write_jsonl(base / "episode-0042.jsonl", [{**won, "run_id": "episode-0042"}])
    shutil.copy(REPO / "tests" / "fixtures" / "capture" / "claude-code-current.jsonl", base / "session.jsonl")
    (base / "answer.txt").write_text('Done.\n{"R": ["step-0000"], "C": ["step-0000"], "I": ["insight-0000"]}\n')
    (base / "conversations").mkdir()  # a LoCoMo conversation, its last session held back for `dialogue add`
    locomo = json.loads((REPO / "tests" / "fixtures" / "dialogue" / "locomo-mini.json").read_text())
    last = max(int(k.split("_")[1]) for k in locomo if re.fullmatch(r"session_\d+", k))
    held = {k: locomo.pop(k) for k in (f"session_{last}", f"session_{last}_date_time") if k in locomo}
    (base / "conversations" / "conv-26.json").write_text(json.dumps(locomo))
    (base / "session-19.json").write_text(json.dumps(held))
    return base


def _env(base: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WIKITRACE_CORPUS"))}
    home = base / "home"
    home.mkdir(exist_ok=True)
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", GIT_AUTHOR_NAME="doc test",
               GIT_AUTHOR_EMAIL="doc@test", GIT_COMMITTER_NAME="doc test", GIT_COMMITTER_EMAIL="doc@test")
    return env


@pytest.mark.parametrize("page", [p for p in PAGES if any(b.mark is None for b in _shell(p))],
                         ids=lambda p: p.relative_to(REPO).as_posix())
def test_the_shell_blocks_of_a_page_run_as_written(page, reader, tmp_path):
    work = tmp_path / "reader"
    shutil.copytree(reader, work, symlinks=True)
    env = _env(work)
    for b in _shell(page):
        if b.mark == "skip":
            continue
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b.body], cwd=work, env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{b.where}: exit {done.returncode}\n{b.body}\n--- stderr:\n{done.stderr[-3000:]}"
        assert "Traceback" not in done.stderr, f"{b.where}:\n{done.stderr[-3000:]}"


# -- client configuration blocks ------------------------------------------------------------

_HOOK_EVENTS = {"PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
                "PreCompact", "SessionStart", "SessionEnd"}


def _check_mcp_entry(where: str, entry: dict) -> None:
    assert isinstance(entry.get("command"), str) and entry["command"], f"{where}: command is a program name"
    args = entry.get("args")
    assert isinstance(args, list) and all(isinstance(a, str) for a in args), f"{where}: args is a list of strings"
    assert args[:1] == ["mcp"] and "--corpus" in args, f"{where}: runs `wikitrace mcp --corpus DIR`"
    assert Path(args[args.index("--corpus") + 1]).is_absolute(), f"{where}: clients need an absolute corpus path"


def _config_blocks():
    for page in PAGES:
        for b in blocks(page):
            if b.lang == "json" and ('"mcpServers"' in b.body or '"hooks"' in b.body):
                yield b
            elif b.lang == "toml" or (b.lang == "python" and "MCPServerStdio" in b.body):
                yield b


@pytest.mark.parametrize("block", list(_config_blocks()), ids=lambda b: b.where)
def test_client_configuration_blocks_have_each_clients_shape(block):
    if block.lang == "json":
        data = json.loads(block.body)
        if "mcpServers" in data:  # Claude Desktop, Cursor, Claude Code's .mcp.json
            for name, entry in data["mcpServers"].items():
                _check_mcp_entry(f"{block.where} {name}", entry)
        if "hooks" in data:  # Claude Code settings.json
            for event, matchers in data["hooks"].items():
                assert event in _HOOK_EVENTS, f"{block.where}: {event} is not a Claude Code hook event"
                for matcher in matchers:
                    assert set(matcher) <= {"matcher", "hooks"}, block.where
                    for hook in matcher["hooks"]:
                        assert hook["type"] == "command" and isinstance(hook["command"], str), block.where
                        assert isinstance(hook.get("timeout", 60), (int, float)), block.where
    elif block.lang == "toml":  # Codex CLI's ~/.codex/config.toml
        data = tomllib.loads(block.body)
        assert set(data) == {"mcp_servers"}, f"{block.where}: a Codex config block holds [mcp_servers.NAME]"
        for name, entry in data["mcp_servers"].items():
            assert set(entry) <= {"command", "args", "env", "cwd", "startup_timeout_sec", "tool_timeout_sec",
                                  "enabled"}, block.where
            _check_mcp_entry(f"{block.where} {name}", entry)
    else:  # the OpenAI Agents SDK: MCPServerStdio(name=..., params={"command", "args"})
        tree = ast.parse(block.body)
        [params] = [n.value for n in ast.walk(tree) if isinstance(n, ast.Assign)
                    and any(isinstance(t, ast.Name) and t.id == "params" for t in n.targets)]
        _check_mcp_entry(block.where, ast.literal_eval(params))
        [call] = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "MCPServerStdio"]
        assert {k.arg for k in call.keywords} >= {"name", "params"}, block.where


def test_the_mcp_command_in_each_config_starts_the_server(tmp_path, reader):
    """The args every client config passes are ones `wikitrace mcp` accepts (a missing corpus is
    its one-line error, not a usage error)."""
    done = subprocess.run([str(BIN / "wikitrace"), "mcp", "--corpus", str(tmp_path / "nowhere")],
                          capture_output=True, text=True, timeout=60, env=_env(reader))
    assert done.returncode == 2 and done.stderr.startswith("wikitrace: error: mcp: no corpus at ")
    assert "{root}" not in done.stderr and str(tmp_path / "nowhere") in done.stderr


# -- what --help and the README promise about the command line -------------------------------

_INTERNAL_VARIABLES = {"WIKITRACE_HELPER_PARENT", "WIKITRACE_PUBLISH_PAUSE", "WIKITRACE_KILL_AT", "WIKITRACE_VERSION", "WIKITRACE_COMPLETE"}


def _wikitrace(*args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(BIN / "wikitrace"), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


def test_help_names_every_environment_variable_the_code_reads():
    read = set()
    for path in [*(REPO / "wikitrace").rglob("*.py"), *(REPO / "tools").glob("*.py")]:
        read |= set(re.findall(r"\b((?:WIKITRACE|OPENAI)_[A-Z][A-Z_]*[A-Z])\b", path.read_text(encoding="utf-8")))
    shown = " ".join(_wikitrace("--help").stdout.split())
    missing = sorted(v for v in read - _INTERNAL_VARIABLES if v not in shown)
    assert not missing, f"wikitrace --help does not name {missing}"


@pytest.mark.parametrize("shell,first", [("zsh", "#compdef wikitrace"), ("fish", "complete --command wikitrace"),
                                         ("bash", "_wikitrace_completion()")])
def test_show_completion_prints_the_script_of_the_shell_asked_for(shell, first):
    done = _wikitrace("--show-completion", shell)
    assert done.returncode == 0 and done.stdout.startswith(first)


def test_a_flag_given_a_value_is_a_usage_error_not_a_skipped_input(tmp_path):
    done = _wikitrace("compile", str(REPO / "examples" / "runs.jsonl"), "--out", str(tmp_path / "c"), "--offline", "true")
    assert done.returncode == 2 and "flags such as --offline take no value" in done.stderr
    assert not (tmp_path / "c").exists()


def test_compiling_a_folder_that_holds_its_own_corpus_reads_only_the_runs(tmp_path):
    shutil.copy(REPO / "examples" / "runs.jsonl", tmp_path / "runs.jsonl")
    for _ in range(2):
        done = _wikitrace("compile", ".", "--out", "corpus", "--json", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["runs"] == len(example_runs()) and summary["skipped"] == []
    assert any("a wikitrace corpus" in line for line in summary["ignored_files"])


def test_resume_batch_against_an_endpoint_that_is_down_says_so_at_once(tmp_path):
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = dict(os.environ, OPENAI_API_KEY="sk-test", OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1")
    done = subprocess.run([str(BIN / "wikitrace"), "compile", str(REPO / "examples" / "runs.jsonl"), "--out",
                           str(tmp_path / "c"), "--resume-batch", "batch_abc123", "-q"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert "nothing answered at the endpoint: check OPENAI_BASE_URL" in done.stderr


def test_the_root_page_links_dialogue_memory_and_each_run_page_has_a_name_of_its_own(tmp_path):
    corpus = tmp_path / "corpus"
    for args in (("dialogue", "compile", str(REPO / "tests" / "fixtures" / "dialogue" / "locomo-mini.json")),
                 ("compile", str(REPO / "examples" / "runs.jsonl"))):
        done = _wikitrace(*args, "--out", str(corpus), "-q")
        assert done.returncode == 0, done.stderr
    assert "](dialogue/_index.md)" in (corpus / "index.md").read_text()
    import frontmatter

    names = [frontmatter.load(p).metadata["aliases"] for p in sorted(corpus.glob("raw/step-*/*.md"))]
    flat = [a for n in names for a in n]
    assert len(flat) == len(set(flat)) == 2 * len(example_runs())  # metadata.md and turns.md of every run
    from wikitrace.check import check_corpus

    assert check_corpus(corpus) == []


def test_a_compile_with_restore_keeps_the_session_dialogue_add_added(tmp_path):
    """README's order: compile, add a session, forget another, compile the inputs --restore."""
    locomo = json.loads((REPO / "tests" / "fixtures" / "dialogue" / "locomo-mini.json").read_text())
    last = max(int(k.split("_")[1]) for k in locomo if re.fullmatch(r"session_\d+", k))
    whole = tmp_path / "whole" / "conv-26.json"
    whole.parent.mkdir()
    whole.write_text(json.dumps(locomo))
    held = {k: locomo.pop(k) for k in (f"session_{last}", f"session_{last}_date_time") if k in locomo}
    (tmp_path / "conversations").mkdir()
    (tmp_path / "conversations" / "conv-26.json").write_text(json.dumps(locomo))
    (tmp_path / "session.json").write_text(json.dumps(held))
    for args in (("dialogue", "compile", "conversations", "--out", "corpus", "-q"),
                 ("dialogue", "add", "session.json", "--corpus", "corpus", "--sample", "conv-26", "-q"),
                 ("dialogue", "forget", "--corpus", "corpus", "--sample", "conv-26", "--session", "2", "-q"),
                 ("dialogue", "compile", "conversations", "--out", "corpus", "--restore")):
        done = _wikitrace(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    assert f"kept: session {last} of conv-26, added with `wikitrace dialogue add`" in done.stderr
    sessions = [str(s["id"]) for s in json.loads((tmp_path / "corpus" / "dialogue" / "conv-26" / "memory.json")
                                                 .read_text())["sessions"]]
    assert sessions == [str(n) for n in range(1, last + 1)]
    done = _wikitrace("dialogue", "compile", str(whole.parent), "--out", "direct", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    mine, direct = (tmp_path / c / "dialogue" / "conv-26" for c in ("corpus", "direct"))
    assert {p.relative_to(mine): p.read_bytes() for p in mine.rglob("*") if p.is_file()} == \
        {p.relative_to(direct): p.read_bytes() for p in direct.rglob("*") if p.is_file()}
