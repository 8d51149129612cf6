"""What a coding agent's call does, in kinds every coding agent shares: a file edit, a file view,
a search, a test run, a submit, or another shell command.

Agents name the same act differently (SWE-agent's ``edit`` and ``str_replace_editor``, Claude
Code's ``Edit``/``MultiEdit``/``Write``, Codex's ``apply_patch``), so two runs are compared by
the kind of their calls and what those calls aimed at, never by tool names. Each importer
knows its own tools and declares them (``TOOL_KINDS`` in runs/<format>.py); a shell command is
read by the program it runs. A format with no table has no kinds (a chat tool is no coding
act), except a call of a shell tool, whose command says what it did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import is_test_report
from .model import Turn

EDIT, VIEW, SEARCH, TEST, SUBMIT, SHELL = "edit", "view", "search", "test", "submit", "shell"
EDITOR = "editor"  # an editor tool whose subcommand says whether it viewed or changed the file
SHELL_TOOLS = frozenset(("bash", "shell", "sh", "terminal", "execute_bash", "run", "local_shell", "exec_command"))

_VIEW_SUBCOMMANDS = frozenset(("view", "read", "show", "cat", "list"))
_PATH_KEYS = ("file_path", "path", "filename", "file", "target_file", "notebook_path")
_CD = re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")
_WRITES = re.compile(r"\bsed\s+-i|\btee\s|(?<![<>&0-9])>>?\s*(?!/dev/|&)[\w./~-]|^\s*(?:patch|git\s+apply)\b")
_VIEWERS = frozenset(("cat", "head", "tail", "less", "more", "nl", "bat"))
_SEARCHERS = frozenset(("grep", "egrep", "rg", "ag", "ack", "find", "fd", "ls", "tree", "locate"))
_TEST_RUNNERS = frozenset(("pytest", "py.test", "tox", "nox", "jest", "mocha", "vitest", "phpunit", "rspec", "ctest"))
# build tools whose ``test`` subcommand runs the tests: ``mvn test``, ``go test ./...``, ``npm test``
_BUILDERS = frozenset(("mvn", "gradle", "./gradlew", "gradlew", "go", "cargo", "npm", "yarn", "pnpm", "make", "dotnet",
                       "mix", "bazel", "sbt"))


@dataclass(frozen=True)
class Kind:
    """A call's kind, and the file it viewed or changed when the call names one."""

    kind: str
    target: str | None = None


def _tables() -> dict[str, dict[str, str]]:
    from . import claude_code, codex_cli, mini_swe_agent, openhands, swe_agent

    return {"swe-agent": swe_agent.TOOL_KINDS, "mini-swe-agent": mini_swe_agent.TOOL_KINDS,
            "claude-code": claude_code.TOOL_KINDS, "openhands": openhands.TOOL_KINDS,
            "codex-cli": codex_cli.TOOL_KINDS}


_TABLES: dict[str, dict[str, str]] | None = None


def table(fmt: str | None) -> dict[str, str] | None:
    """The tool table of a format, None for a format whose importer declares none."""
    global _TABLES
    if _TABLES is None:
        _TABLES = _tables()
    return _TABLES.get(fmt or "")


def kind_of(turn: Turn, fmt: str | None) -> Kind | None:
    """The kind of a call of a run read from ``fmt``; None when neither the format's table nor a
    shell command says what it did."""
    if turn.extra.get("submits"):
        return Kind(SUBMIT)
    tools = table(fmt)
    name = turn.name or ""
    kind = tools.get(name) if tools is not None else None
    if kind is None:
        if tools is not None and "*" in tools:  # SWE-agent: any other action is a shell command line
            kind = tools["*"]
        elif name.lower() in SHELL_TOOLS:
            kind = SHELL
        else:
            return None
    if kind == EDITOR:
        sub = _subcommand(turn)
        kind = VIEW if sub in _VIEW_SUBCOMMANDS else EDIT
        return Kind(kind, _path(turn))
    if kind == SHELL:
        return _shell_kind(turn)
    return Kind(kind, _path(turn) if kind in (EDIT, VIEW) else None)


def _subcommand(turn: Turn) -> str:
    args = turn.arguments
    if isinstance(args, dict):
        return str(args.get("command") or "").lower()
    words = str(args or "").split()
    return words[1].lower() if len(words) > 1 else ""


def _path(turn: Turn) -> str | None:
    """The file a call names: a path argument, else the first word after the command (and after an
    editor's subcommand) that looks like a path."""
    args = turn.arguments
    if isinstance(args, dict):
        return next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None)
    words = str(args or "").split("\n", 1)[0].split()
    return next((w.strip("'\"") for w in words[1:4] if "/" in w or re.search(r"\.\w{1,5}$", w)), None)


def _command(turn: Turn) -> str:
    args = turn.arguments
    if isinstance(args, dict):
        cmd = args.get("command") or args.get("cmd")
        if isinstance(cmd, list):  # Codex's shell: ["bash", "-lc", "pytest -q"]
            cmd = cmd[-1] if cmd and isinstance(cmd[-1], str) else " ".join(map(str, cmd))
        return cmd if isinstance(cmd, str) else ""
    return str(args or "")


def _shell_kind(turn: Turn) -> Kind:
    """A shell command by what it ran: a test runner (or an answer that is a test report), a file
    written, a file printed, a search; any other command is a shell command."""
    command = _CD.sub("", _command(turn)).strip()
    words = command.split()
    if words[:1] == ["sudo"]:
        words = words[1:]
    program = words[0].rsplit("/", 1)[-1] if words and words[0].startswith("/") else (words[0] if words else "")
    second = words[1] if len(words) > 1 else ""
    if is_test_report(turn.result) or program in _TEST_RUNNERS or (program in _BUILDERS and second == "test") \
            or (program.startswith("python") and " ".join(words[1:3]) in ("-m pytest", "-m unittest")):
        return Kind(TEST)
    if _WRITES.search(re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "''", command)):
        return Kind(EDIT)
    if program in _VIEWERS or (program == "sed" and second == "-n"):
        target = next((w for w in reversed(words[1:]) if not w.startswith("-") and ("/" in w or "." in w)), None)
        return Kind(VIEW, target)
    if program in _SEARCHERS or (program == "git" and second == "grep"):
        return Kind(SEARCH)
    return Kind(SHELL)
