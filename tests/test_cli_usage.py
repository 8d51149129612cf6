"""One usage contract for the whole command line.

Every command, whichever parser reads it (typer/click, or the argparse fast paths of
``prompt`` and ``query``), answers a bad command line with exactly one line on stderr,
``wikitrace: error: <where>: <what> — <what to do>``, and exit code 2: never click's
usage box, never argparse's usage text or its ``python -m ...: error:`` prefix.

The cases are made from the typer definitions themselves, so a command added later is
covered without touching this file: for every command, an unknown option; for every
command with a required parameter, that parameter missing; for every number option, a
word instead of a number and (when it has a minimum) a value just below it. The
required parameters are filled in, so each case fails for the one reason it names.
"""

import os
import subprocess
import typing
from pathlib import Path

import pytest
from typer.main import get_command

from test_cli_errors import WIKITRACE
from wikitrace.cli import app

ROOT_COMMAND = get_command(app)


def leaf_commands(group=ROOT_COMMAND, path=()):
    for name, command in sorted(group.commands.items()):
        if hasattr(command, "commands"):
            yield from leaf_commands(command, path + (name,))
        else:
            yield path + (name,), command


COMMANDS = dict(leaf_commands())


def annotation(command, param) -> type:
    """The Python type the typer command declares for ``param`` (Optional unwrapped)."""
    hint = typing.get_type_hints(command.callback)[param.name]
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)) and args:
        hint = args[0]
    return typing.get_origin(hint) or hint


def filled(command, corpus: Path, skip=None) -> list[str]:
    """Arguments that satisfy every required parameter but ``skip``: a plain word each,
    and ``--corpus`` pointing at a folder, so a fast path gets its chance to parse."""
    argv = []
    for param in command.params:
        if param is skip:
            continue
        if param.param_type_name == "argument" and param.required:
            argv.append("x")
        elif param.param_type_name == "option" and param.required:
            argv += [param.opts[0], "x"]
        elif param.param_type_name == "option" and "--corpus" in param.opts:
            argv += ["--corpus", str(corpus)]
    return argv


def usage_cases(corpus: Path):
    for path, command in COMMANDS.items():
        name = " ".join(path)
        yield f"{name}: unknown option", [*path, *filled(command, corpus), "--no-such-option"], "--no-such-option"
        for param in command.params:
            if param.required:
                yield (f"{name}: missing {param.name}", [*path, *filled(command, corpus, skip=param)],
                       param.opts[0] if param.param_type_name == "option" else None)
            if param.param_type_name != "option" or annotation(command, param) not in (int, float):
                continue
            option = [o for o in param.opts if o.startswith("--")][0]
            yield f"{name} {option}: not a number", [*path, *filled(command, corpus), option, "abc"], option
            if param.min is not None:
                below = param.min - 1 if annotation(command, param) is int else param.min / 2 - 1
                yield f"{name} {option}: below {param.min}", [*path, *filled(command, corpus), option, str(below)], option


def run(argv, module=None):
    env = {k: v for k, v in os.environ.items() if k != "WIKITRACE_CORPUS"}
    exe = [WIKITRACE] if module is None else [os.path.join(os.path.dirname(WIKITRACE), "python"), "-m", module]
    return subprocess.run([*exe, *argv], capture_output=True, text=True, env=env, timeout=120)


def assert_one_usage_line(proc, names: str | None = None) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    line = lines[0]
    assert line.startswith("wikitrace: error: ") and " — " in line, line
    for foreign in ("Usage:", "usage:", "Try '", "Error:", "python -m", "Traceback", "internal error"):
        assert foreign not in line, line
    if names:
        assert names in line, line
    return line


def test_the_commands_are_all_there():
    """The cases below cover what `wikitrace --help` lists, subcommands included."""
    names = {" ".join(p) for p in COMMANDS}
    assert {"compile", "add", "forget", "check", "prompt", "query", "cite prompt", "cite parse", "cite record",
            "descents", "eval", "mcp", "tools install", "dialogue compile", "dialogue add",
            "dialogue forget"} <= names
    listed = subprocess.run([WIKITRACE, "--help"], capture_output=True, text=True).stdout
    assert all(p[0] in listed for p in COMMANDS)


def test_every_bad_command_line_is_one_error_line(tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    cases = list(usage_cases(corpus))
    assert len(cases) > 2 * len(COMMANDS)  # each command at least one, numbers and required ones more
    failures = []
    for label, argv, names in cases:
        proc = run(argv)
        try:
            assert_one_usage_line(proc, names)
        except AssertionError as exc:
            failures.append(f"{label}: wikitrace {' '.join(argv)}\n    {exc}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("argv, names", [
    (["query", "--budget", "abc", "what did Caroline paint?"], "--budget"),
    (["query", "--budget", "10", "what did Caroline paint?"], "--budget"),
    (["query", "--bud", "100", "what did Caroline paint?"], "--bud"),  # no abbreviations on the fast path
    (["prompt", "--task", "refund", "--budget", "-5"], "--budget"),
    (["prompt", "--task", "refund", "--similar", "two"], "--similar"),
    (["--no-such-option"], "--no-such-option"),
    (["no-such-command"], "no-such-command"),
    (["dialogue", "no-such-command"], "no-such-command"),
    (["compile", "runs.jsonl", "--out"], "--out"),  # an option's value missing at the end
])
def test_fast_paths_and_groups_say_the_same_line(tmp_path, argv, names):
    line = assert_one_usage_line(run([*argv[:1], "--corpus", str(tmp_path), *argv[1:]] if argv[0] in ("query", "prompt")
                                     else argv), names)
    if "--budget" in argv and "10" in argv:
        assert "50" in line  # the limit is said


def test_python_m_dialogue_query_says_the_same_line(tmp_path):
    proc = run(["query", "--corpus", str(tmp_path), "--budget", "10", "a question"], module="wikitrace.dialogue")
    assert "50" in assert_one_usage_line(proc, "--budget")


# --- the fast parsers agree with the typer commands -------------------------------------

def _fast_parser(name):
    if name == "compile":
        from wikitrace.build_cli import compile_parser

        return compile_parser()
    if name == "add":
        from wikitrace.add_cli import add_parser

        return add_parser()
    if name == "prompt":
        from wikitrace.agent.cli_glue import prompt_parser

        return prompt_parser()
    from wikitrace.dialogue.cli_support import query_parser

    return query_parser()


@pytest.mark.parametrize("name", ["prompt", "query", "add", "compile"])
def test_fast_parser_has_the_typer_options_defaults_and_limits(name, monkeypatch):
    from wikitrace.fast_args import AtLeast

    monkeypatch.setenv("WIKITRACE_CORPUS", "/somewhere/corpus")
    command = COMMANDS[(name,)]
    by_dest = {}
    for action in _fast_parser(name)._actions:
        by_dest.setdefault(action.dest, []).append(action)
    assert set(by_dest) == {p.name for p in command.params}
    for param in command.params:
        actions = by_dest[param.name]
        flags = {o for a in actions for o in a.option_strings}
        assert flags == set(param.opts + param.secondary_opts) - {param.name}, param.name
        default = "/somewhere/corpus" if param.envvar == "WIKITRACE_CORPUS" else param.default  # typed when parsed
        assert actions[0].default == default, param.name
        kind = annotation(command, param)
        if kind is list:  # repeatable: every value kept, of the element's type
            import argparse

            assert (actions[0].nargs == "+" if param.param_type_name == "argument"
                    else isinstance(actions[0], argparse._AppendAction)), param.name
            kind = typing.get_args(typing.get_type_hints(command.callback)[param.name])[0]
        if kind is bool:
            assert all(a.nargs == 0 for a in actions), param.name
            continue
        typ = actions[0].type
        if param.min is not None or kind in (int, float):
            assert isinstance(typ, AtLeast) and typ.minimum == param.min and typ.kind is kind, param.name
        elif kind is Path:
            assert typ is Path, param.name
        else:
            assert typ is None and kind is str, param.name
        if param.param_type_name == "argument":
            assert actions[0].option_strings == [], param.name


@pytest.mark.parametrize("name, argv", [
    ("query", ["q", "--budget", "49"]), ("query", ["q", "--budget", "x"]), ("query", ["q", "-h"]),
    ("query", ["q", "--bud", "60"]), ("query", []), ("prompt", ["--budget", "-1"]), ("prompt", ["--help"]),
    ("prompt", ["--similar", "1.5"]), ("prompt", ["--no-such-option"]),
    ("add", ["run.jsonl", "--timeout", "0"]), ("add", ["run.jsonl", "--max-tokens", "0"]), ("add", ["--help"]),
    ("add", ["run.jsonl", "--timeout", "soon"]), ("add", ["run.jsonl", "--no-such-option"]),
    ("add", ["run.jsonl", "other.jsonl"]),
])
def test_fast_path_gives_way_to_typer_on_anything_it_cannot_take(name, argv, tmp_path):
    """Declining (None) is how a fast path reports a usage error: typer then says the line."""
    from wikitrace.add_cli import add_main
    from wikitrace.agent.cli_glue import prompt_main
    from wikitrace.dialogue.cli_support import query_main

    main = {"prompt": prompt_main, "query": query_main, "add": add_main}[name]
    assert main(["--corpus", str(tmp_path), *argv]) is None


@pytest.mark.parametrize("argv", [
    ["runs.jsonl"], ["runs.jsonl", "--out", "c", "--concurrency", "0"], ["runs.jsonl", "-o", "c", "--timeout", "0"],
    ["runs.jsonl", "-o", "c", "--max-tokens", "many"], ["runs.jsonl", "-o", "c", "--help"], ["-o", "c"],
    ["runs.jsonl", "-o", "c", "--no-such-option"], ["a.jsonl", "-o", "c", "b.jsonl"],
])
def test_compile_fast_path_gives_way_to_typer_on_anything_it_cannot_take(argv):
    from wikitrace.build_cli import compile_main

    assert compile_main(argv) is None


def test_compile_fast_path_builds_what_typer_builds(tmp_path, monkeypatch):
    """The same command line gives the build the same options by either parser."""
    from typer.testing import CliRunner

    from wikitrace import build_cli, entry

    seen = []
    monkeypatch.setattr(build_cli, "run_build", lambda opts, as_json=False: seen.append((opts, as_json)) or 0)
    (tmp_path / "tpl").mkdir()
    argv = ["compile", "a.jsonl", "b", "--out", str(tmp_path / "c"), "--from", "native", "--templates",
            str(tmp_path / "tpl"), "--task-type", "retail", "--model", "m", "--base-url", "http://h/v1",
            "--concurrency", "32", "--cache-dir", "cache", "--no-cache", "--max-tokens", "99", "--timeout", "2.5",
            "--outcomes", "o.csv", "--strict", "--no-redact", "--redact-pattern", "k[0-9]+", "--redact-pattern", "x",
            "--restore", "-q", "--json", "--mount-path", "/m"]
    for args in (argv, ["compile", "a.jsonl", "-o", str(tmp_path / "c")]):
        assert entry.fast_path(args) == 0
        CliRunner().invoke(app, args, catch_exceptions=False)
        assert len(seen) == 2 and seen[0] == seen[1]
        seen.clear()
