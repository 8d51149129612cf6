"""What a call ran and what it changed: the program behind a shell call, and the file and
function an edit touched, in the shapes Claude Code, SWE-agent (0.x and 1.x), OpenHands-like
editors and plain shells log them."""

from __future__ import annotations

import pytest

from wikitrace.compilers.changes import edit_of, what_ran
from wikitrace.runs.model import Turn


def _call(name, arguments, result=""):
    return Turn(turn=3, type="function_call", name=name, arguments=arguments, result=result)


@pytest.mark.parametrize("name, arguments, program", [
    ("bash", {"command": "cd /repo && python -m pytest -q"}, "python"),
    ("Bash", {"command": "pytest tests/test_a.py", "description": "Run the tests"}, "pytest"),
    ("cd", "cd /lumen__cli && python -m pytest tests -q", "python"),  # SWE-agent names a call by its first word
    ("mvn", "mvn -q test", "mvn"),
    ("str_replace_editor", {"command": "view", "path": "/r/a.py"}, "str_replace_editor"),
    ("get_user_details", {"user_id": "u1"}, "get_user_details"),
])
def test_what_ran(name, arguments, program):
    assert what_ran(_call(name, arguments)) == program


def test_claude_code_edit_names_the_function_from_the_echoed_snippet():
    old = "        return amount.quantize(CENT, rounding=ROUND_HALF_EVEN)"
    new = "        return amount.quantize(CENT, rounding=ROUND_HALF_UP)"
    echo = ("The file /r/ledger/invoice.py has been updated. Here's the result of running `cat -n` on a snippet of the "
            "edited file:\n    27→\n    28→    def total(self):\n    29→        amount = sum(self.lines)\n"
            f"    30→{new}\n    31→\n    32→    def tax(self):")
    edit = edit_of(_call("Edit", {"file_path": "/r/ledger/invoice.py", "old_string": old, "new_string": new}, echo))
    assert (edit.file, edit.function) == ("/r/ledger/invoice.py", "total")


def test_an_edit_whose_text_declares_the_function():
    edit = edit_of(_call("str_replace_editor", {"command": "str_replace", "path": "src/Json.java",
                                                "old_str": "  public int size() {\n    return n;",
                                                "new_str": "  public int size() {\n    return Math.max(0, n);"}))
    assert (edit.file, edit.function) == ("src/Json.java", "size")


def test_swe_agent_edit_takes_the_file_from_the_editor_and_the_function_from_the_listing():
    echo = ("[File: /r/src/Parser.java (213 lines total)]\n(113 more lines above)\n115:    public Token readToken() {\n"
            "116:        skipBlanks();\n117:        if (pos >= input.length()) return Token.EOF;\n(94 more lines below)\n"
            "File updated. Please review the changes and make sure they are correct.")
    edit = edit_of(_call("edit", "edit 117:117\n        if (pos >= input.length()) return Token.EOF;\nend_of_edit", echo))
    assert (edit.file, edit.function) == ("/r/src/Parser.java", "readToken")


def test_swe_agent_1x_editor_line():
    line = "str_replace_editor str_replace /r/lumen/cli.py   --old_str '    name = argv[1]' --new_str '    name = argv[1] if argv else None'"
    echo = "The file /r/lumen/cli.py has been edited. Here's the result:\n    40\tdef parse_args(argv):\n    41\t    name = argv[1] if argv else None\n"
    edit = edit_of(_call("str_replace_editor", line, echo))
    assert (edit.file, edit.function) == ("/r/lumen/cli.py", "parse_args")
    assert edit_of(_call("str_replace_editor", "str_replace_editor view /r/lumen/cli.py", "...")) is None


@pytest.mark.parametrize("call, file", [
    (_call("bash", {"command": "sed -i 's/a/b/' src/app.py"}), "src/app.py"),
    (_call("bash", {"command": "cat > repro.py <<'EOF'\nprint(1)\nEOF"}), "repro.py"),
    (_call("bash", {"command": "echo x | tee notes.txt"}), "notes.txt"),
    (_call("Write", {"file_path": "/r/new.py", "content": "def main():\n    pass\n"}), "/r/new.py"),
])
def test_shell_and_write_edits(call, file):
    assert edit_of(call).file == file


@pytest.mark.parametrize("call", [
    _call("bash", {"command": "grep -rn parse src > /dev/null"}),
    _call("Read", {"file_path": "/r/a.py"}),
    _call("str_replace_editor", {"command": "view", "path": "/r/a.py"}),
    _call("bash", {"command": "python -m pytest -q 2>&1"}),
    _call("calculate", {"input": "3 > 2.5"}),  # a comparison in a tool's input is no redirect
])
def test_calls_that_change_no_file(call):
    assert edit_of(call) is None
