"""Tool errors the text rule must see (and program output it must not take for one).

The shapes come from the tools themselves: SWE-agent's own commands (open, goto,
find_file, search_dir, create, str_replace_editor), shells that cannot parse or
find a command, harnesses that refuse or time out a command, and test runners'
failing summaries. The fixture tests/fixtures/importers/swe_agent_tools holds two
real-shaped SWE-agent trajectories (0.x and 1.x) with these messages in place.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from wikitrace.runs import swe_agent
from wikitrace.runs.errors import observation_is_error
from wikitrace.runs.model import Run

TOOLS = Path(__file__).parent / "fixtures" / "importers" / "swe_agent_tools"


@pytest.mark.parametrize("text", [
    # SWE-agent 0.x commands
    "File src/Parser.java not found",
    "Directory src/lib not found",
    "No file open. Use the open command first.",
    "Usage: goto <line>",
    "Usage: open \"<file>\" [<line_number>]",
    "Error: File 'Repro.java' already exists.\n[File: /r/Repro.java (3 lines total)]\n1:class Repro {",
    # SWE-agent 1.x editor and harness
    "The path /r/src/cli.py does not exist. Please provide a valid path.",
    "No replacement was performed, old_str `x = 1` did not appear verbatim in /r/a.py.",
    "Invalid `view_range` parameter: [40, 10]. Its second element `10` should be larger than the first",
    "Unrecognized command insert_line. The allowed commands for the str_replace_editor tool are: view, create",
    "Parameter `old_str` is required for command: str_replace.",
    "File already exists at: /r/a.py. Cannot overwrite files using command `create`.",
    "Your bash command contained syntax errors and was NOT executed. Please fix the syntax errors and try again.",
    "The command 'python serve.py' was cancelled because it took more than 300 seconds. Please try a different command.",
    # shells
    "/bin/bash: line 377: syntax error near unexpected token `)'\n/bin/bash: line 377: `grep -n x | head)'",
    "bash: -c: line 1: syntax error: unexpected end of file",
    "sh: 1: Syntax error: \"(\" unexpected",
    "zsh: command not found: javac",
    "python: can't open file '/r/reproduce.py': [Errno 2] No such file or directory",
    "More than 156 files matched for \"JsonFactory\" in /fasterxml__jackson-core. Please narrow your search.",
    "More than 40 lines matched for \"value\" in /r/src/Writer.java. Please narrow your search.",
    "sed: -e expression #1, char 42: unterminated `s' command",
    # failing test summaries
    "....F\n=================================== FAILURES ===================================\n___ test_x ___",
    "F..\n1 failed, 2 passed in 0.05s",
    "Tests:       1 failed, 4 passed, 5 total",
    "  2 passing (5ms)\n  1 failing\n",
    "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured",
    "--- FAIL: TestParse (0.00s)\nFAIL\nFAIL\texample.com/parse\t0.01s",
    "Ran 4 tests in 0.002s\n\nFAILED (failures=1)",
    "5 tests completed, 1 failed",
])
def test_tool_error_shapes(text):
    assert observation_is_error(text) is True


@pytest.mark.parametrize("text", [
    "Found 0 matches for \"x\" in /r",
    "No matches found for \"TOKEN_LIMIT\" in /r/Parser.java",  # an answer, not a failure
    "3 passed in 0.12s",
    "0 failed, 3 passed",
    "Ran 3 tests in 0.001s\n\nOK",
    "ok  \texample.com/parse\t0.01s",
    "test result: ok. 3 passed; 0 failed; 0 ignored",
    "5 tests completed, 0 failed",
    "[File: /r/a.py (10 lines total)]\n1:import os\n2:print('File not found')",
    "Your command ran successfully and did not produce any output.",
    # help the agent asked for is longer than a usage line
    "usage: tool [-h] [--foo FOO]\n\npositional arguments:\n  x   the x\n\noptions:\n  -h, --help  show this help",
    "    return 'Invalid value'",
    "1:def f():\n2:    '''Return 3 failed items'''",
])
def test_output_that_is_no_error(text):
    assert observation_is_error(text) is False


def test_swe_agent_tool_messages_in_a_trajectory_are_errors():
    runs = {r.run_id: r for p in sorted(TOOLS.glob("*.traj")) for r in swe_agent.read(p) if isinstance(r, Run)}
    parser = runs["lumen__parser-7"]
    errors = {t.arguments.split("\n")[0] for t in parser.actions if t.is_error}
    assert {"open src/Parser.java", "find_file Parser.java src/lib", "goto 117", "goto", "create Repro.java",
            "search_dir \"EOF\" /lumen__parser/src/test/java/lumen/eof", "mvn -q test -Dtest=ParserTest",
            "grep -n \"readToken(\" lumen/*.java | head -n 5)"} == errors
    cli = runs["lumen__cli-3"]
    assert [t.turn for t in cli.actions if t.is_error] == [1, 4, 5]  # missing path, failing tests, no replacement


def test_a_listing_or_an_environment_dump_is_output_not_an_error():
    """``ls`` answering with files named error.log or FAILED.md, and ``env`` printing variables
    named ERROR_LEVEL or FAIL_FAST, are ordinary output; the same words as a failure notice are not."""
    from wikitrace.runs.errors import observation_is_error
    for listing in ("error.log\nerrors/\nmain.py", "FAILED.md\nREADME.md\nsrc", "failed/\nok/",
                    "PATH=/usr/bin\nERROR_LEVEL=3\nFAIL_FAST=1\nHOME=/root", "AWS_REGION=eu-west-1\nTEMPO_STRICT=0"):
        assert not observation_is_error(listing), listing
    for notice in ("Error: not found", "error - no such user", "FAILED (failures=1)", "FAIL\tgithub.com/acme/x\t0.1s",
                   "Error."):
        assert observation_is_error(notice), notice
