"""Did a call fail? One text rule for every importer, plus the per-format signals.

A call's ``is_error`` comes from the strongest signal its format logs:

1. a structured flag or status (Claude Code ``tool_result.is_error``, an ATIF result's
   ``is_error``/``status``, a shell exit status such as mini-swe-agent's
   ``<returncode>``): ``from_exit_status`` / ``from_status``;
2. otherwise the observation text, judged by ``observation_is_error``: the general
   shapes error output takes in shells, compilers, interpreters, package managers and
   agent harnesses, never phrases picked from one data set.

``observation_is_error`` looks at whole lines (a shape must start a line, after an
optional ``file:line:`` location), so a file listing that merely contains the word
"error" in its code is not an error.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

# Shapes of error output that may be indented (nested in other output).
_LINE_SHAPES = [
    # a shell could not run the command: "bash: javac: command not found", "sh: 1: mvn: not found"
    r"(?:[\w./-]+: )?(?:line \d+: |\d+: )?[^\s:]+: (?:command )?not found\s*$",
    r".*: command not found\b",
    # a tool refusing a path: "cat: x.py: No such file or directory", "cd: /x: Permission denied"
    r"[\w./-]+: (?:.*: )?(?:No such file or directory|Permission denied|Is a directory|Not a directory)\s*$",
    # Python: a traceback
    r"Traceback \(most recent call last\):",
    # Java and JVM tools: 'Exception in thread "main" java.lang.X'
    r"Exception in thread \"",
    r"\[(?:ERROR|FATAL)\]",
    r"npm ERR!",
    # a request that could not be carried out: "Could not find [X]", "Unable to locate package x"
    r"(?:Could not|Couldn't|Cannot|Can't|Unable to|Failed to) (?:find|locate|open|read|resolve|load)\b",
    # a harness or environment rejecting the action the agent sent
    r"Invalid (?:action|command|input)\b",
    r"Nothing happens\.",
    # an edit refused because it would break the file (SWE-agent's linter check)
    r"Your proposed edit has introduced new syntax error",
    r"(?:Your |The )?(?:edit|change)s? (?:was|were|has been|have been) (?:rejected|reverted|not applied)",
    # a shell that could not parse the command line: "bash: line 1: syntax error near unexpected
    # token `('", "sh: 1: Syntax error: \"(\" unexpected", "...: syntax error: unexpected end of file"
    r"(?:[\w./-]+: )*(?:line \d+: )?[Ss]yntax error(?: near unexpected token|: unexpected|:)",
    r"(?:[\w.-]+: )?command not found: ",  # zsh's order of the same message
    # a program that could not open its input: "python: can't open file 'x': [Errno 2] ..."
    r"(?:[\w./-]+: )?can't open file\b",
    # a command the harness would not run or stopped: "Your bash command contained syntax errors
    # and was NOT executed", "The command 'x' was cancelled because it took more than 25 seconds"
    r"(?:Your |The )?(?:\w+ )?command\b[^\n]{0,200}?\b(?:was|were) (?:NOT|not) (?:executed|run)\b",
    r"(?:Your |The )?(?:\w+ )?command\b[^\n]{0,200}?\b(?:timed out|was cancell?ed|was killed)\b",
    r"EXECUTION TIMED OUT\b",
    # OpenHands' note on a command still running when it stopped waiting: "[The command has no new
    # output after 120 seconds. You may wait longer ...]"
    r"\[?(?:The )?command has no new output after \d+ seconds\b",
]
_LINE = re.compile(r"^[ \t]*(?:" + "|".join(_LINE_SHAPES) + ")", re.M)
# Shapes that start in column 0. Indented, the same words are usually program text a
# command printed (a docstring's "Raises: ValueError: ...", a field "error: str").
_COLUMN0_SHAPES = [
    # the closing line of an uncaught exception: "ValueError: x", "java.io.IOException: x"
    r"(?:[a-z_]\w*\.)*[A-Z]\w*(?:Error|Exception): ",
    # compilers, linters, git, package managers: "error: x", "Foo.java:12: error: x",
    # "fatal: x", "gcc: error: x", "error[E0425]: x", "ERROR: x", "make: *** x"
    r"(?:[^\s:]+:\d+(?::\d+)?:\s*|[\w.+-]+: )?(?:error|fatal|ERROR|FATAL|Error)(?:\[[\w-]+\])?:",
    r"(?:g?make|ninja)(?:\[\d+\])?: \*\*\*",
    # failing tests and builds: pytest/unittest, JUnit via Maven or Gradle
    r"FAILED\b(?!\.?[\w/-])", r"FAIL: ", r"BUILD FAIL(?:URE|ED)\b", r"=+ .*\b[1-9]\d* (?:failed|errors?)\b",
    r"Tests run: \d+, Failures: (?:[1-9]|\d+, Errors: [1-9])",
    # a test runner's failing summary: pytest's "=== FAILURES ===", "1 failed, 3 passed in 0.1s"
    # (-q prints it bare), jest's "Tests:  1 failed, 4 passed", mocha's "2 failing", cargo's
    # "test result: FAILED", go's "--- FAIL: TestX" and "FAIL\tpkg", Gradle's "3 tests completed, 1 failed"
    r"=+ (?:FAILURES|ERRORS) =+",
    r"[ \t]*(?:[A-Za-z][\w ]{0,20}:[ \t]*)?(?:\d+ [a-z]+[,;][ \t]*)*[1-9]\d* (?:failed|failing|failures?)"
    r"(?=[ \t]*(?:$|[,;(]|in \d))",
    r"test result: FAILED\b", r"--- FAIL: ", r"FAIL\b(?!\.?[\w/-])",  # not a listed file: FAIL.md
    r"\d+ tests? completed, [1-9]\d* failed\b",
    # a tool's own refusal, as agent harnesses (SWE-agent's open, search_dir, find_file, goto,
    # str_replace_editor) and command-line programs print them: the usage line alone, a named
    # file or folder that is not there, nothing open to work on, an argument it does not take
    r"(?:The )?(?:[Ff]ile|[Dd]irectory|[Ff]older|[Pp]ath|[Mm]odule|[Pp]ackage)\b[^\n]{0,200}?"
    r"\b(?:not found|does not exist|doesn't exist|already exists)\b",
    r"No (?:file|buffer|document|editor) (?:is )?(?:open|opened|loaded|selected)\b",
    r"No (?:replacement|change|edit)s? (?:was|were) (?:performed|made|applied)\b",
    r"(?:Unrecognized|Unknown|Unsupported) (?:command|option|argument|parameter|subcommand)s?\b",
    r"(?:Parameter|Argument|Option) [^\n]{1,80}? is required\b",
    # a search the tool would not list: SWE-agent's search_dir / search_file "More than 156 files
    # matched for "X" in /r. Please narrow your search."
    r"More than \d+ (?:files|lines|matches|results) matched\b[^\n]{0,300}?\bPlease narrow\b",
    # sed rejecting its script: "sed: -e expression #1, char 42: unterminated `s' command"
    r"sed: -e expression #\d+, char \d+: ",
    r"Invalid (?:[`'\"]?[\w-]+[`'\"]? ){0,3}?(?:parameter|argument|option|value|path|range|request|syntax)\b",
]
_COLUMN0 = re.compile(r"^(?:" + "|".join(_COLUMN0_SHAPES) + ")", re.M)

# An observation that is only a failure notice: "Error", "error - no such user"; or only a
# tool's usage line (a tool answering a call it cannot parse with how it should be called;
# a help text the agent asked for runs longer than three lines).
_WHOLE = re.compile(r"^\s*(?:error|failed|failure)\b(?!\.?[\w/-])", re.I)  # not a file name: error.log, failed/
_USAGE_ONLY = re.compile(r"\A\s*usage: [^\n]*(?:\n[^\n]*){0,2}\Z", re.I)


def failure_line(text: Any) -> str | None:
    """The first line that by itself shows the failure (a shape above), stripped; a banner
    line (``=== FAILURES ===``) only when no other line does: pytest's ``FAILED tests/x.py::
    test_y`` or ``1 failed, 2 passed`` says more than the heading above them."""
    if not isinstance(text, str):
        return None
    hits = [line.strip() for line in text.splitlines() if _LINE.match(line) or _COLUMN0.match(line)]
    return next((h for h in hits if not _BANNER.match(h)), hits[0] if hits else None)


# a heading ruled off with one repeated character: "=== FAILURES ===", "____ test_x ____"
_BANNER = re.compile(r"^([=_*#~-])\1{2,}.*\1{3}$")


def observation_is_error(text: Any) -> bool:
    """True when the observation shows the call failed (see the module docstring)."""
    if not isinstance(text, str):
        return False
    return _text_is_error(text) if len(text) <= _KEPT_CHARS else _is_error(text)


_KEPT_CHARS = 16_384  # answers up to this long are judged once per text, the rest each time


@lru_cache(maxsize=1024)
def _text_is_error(text: str) -> bool:
    """Per answer text: trials of one task get the same answers (two in three of tau-bench's)."""
    return _is_error(text)


def _is_error(text: str) -> bool:
    if not text.strip():
        return False
    return bool(_WHOLE.match(text) or _USAGE_ONLY.match(text.strip()) or _LINE.search(text) or _COLUMN0.search(text))


def from_exit_status(code: Any) -> bool | None:
    """A shell exit status: non-zero is an error; None when there is no integer status."""
    if isinstance(code, bool) or not isinstance(code, int):
        return None
    return code != 0


_OK_STATUS = {"ok", "success", "succeeded", "completed", "done", "passed"}
_ERROR_STATUS = {"error", "failed", "failure", "errored", "timeout", "timed_out", "cancelled", "canceled",
                 "rejected", "denied", "aborted"}


def from_status(status: Any) -> bool | None:
    """A logged status word or flag: True/False, or None when it says neither."""
    if isinstance(status, bool):
        return status
    if isinstance(status, str):
        word = status.strip().lower()
        if word in _ERROR_STATUS:
            return True
        if word in _OK_STATUS:
            return False
    return None


def judge(*signals: bool | None, text: Any = None) -> bool | None:
    """The first structured signal that says something, else the text rule.

    With no signal and no text the answer is None (undeterminable); with text it is
    always True or False.
    """
    for signal in signals:
        if signal is not None:
            return signal
    if text is None:
        return None
    return observation_is_error(text)


# A test runner's summary of a run in which tests ran and none failed: pytest's "3 passed in
# 0.1s", unittest's "Ran 3 tests" then "OK", JUnit's "Tests run: 3, Failures: 0, Errors: 0",
# go's "ok  <package>", cargo's "test result: ok.", jest's "Tests:  3 passed", mocha's "3 passing".
_PASSED = re.compile(
    r"^[ \t=]*(?:[A-Za-z][\w ]{0,20}:[ \t]*)?(?:\d+ [a-z]+[,;][ \t]*)*[1-9]\d* (?:passed|passing)\b.*$"
    r"|^Ran [1-9]\d* tests? in [\d.]+s\s*\n\s*\nOK\b.*$"
    r"|^(?:\[INFO\] )?Tests run: [1-9]\d*, Failures: 0, Errors: 0\b.*$"
    r"|^ok\s+\S+\s+[\d.]+s\s*$|^test result: ok\..*$",
    re.M,
)


def tests_passed(text: Any) -> str | None:
    """The summary line of a test run that passed, or None (also when any failure shows)."""
    return _tests_passed(text) if isinstance(text, str) else None


@lru_cache(maxsize=1024)
def _tests_passed(text: str) -> str | None:
    """Per answer text: the reading, the items and the trial record each ask it of every change."""
    if observation_is_error(text):
        return None
    m = _PASSED.search(text)
    return " ".join(m.group(0).strip(" =").split()) if m else None


# a test runner's summary of failing tests: pytest's "=== FAILURES ===", "FAILED tests/x.py::t" and
# "1 failed, 2 passed in 0.1s", unittest's "FAIL: test_x", JUnit's "Tests run: 3, Failures: 1", go's
# "--- FAIL: TestX", cargo's "test result: FAILED", jest's "Tests: 1 failed", mocha's "2 failing"
_TESTS_FAILED = re.compile(r"^=+ (?:FAILURES|ERRORS) =+\s*$|^FAILED \S|^FAIL: \S|^--- FAIL: |^test result: FAILED"
                           r"|^(?:\[\w+\] )?Tests run: \d+, Failures: (?:[1-9]|\d+, Errors: [1-9])"
                           r"|(?:^|[\s,=:])[1-9]\d* (?:failed|failing)(?=[ \t]*(?:$|[,;(=]|in \d))", re.M)


def reports_failing_tests(text: Any) -> bool:
    """Whether an answer is a test runner's report of failing tests."""
    return isinstance(text, str) and bool(_TESTS_FAILED.search(text))


def is_test_report(text: Any) -> bool:
    """Whether an answer is a test runner's report, passing or failing: the command ran tests,
    which checks the code and changes nothing."""
    return tests_passed(text) is not None or reports_failing_tests(text)


def failing_part(text: str | None) -> str:
    """An error answer from where it says what failed: a test runner's ``FAILED x::t`` line under
    its progress dots and banner, a build's [ERROR] line under its [INFO] ones, a harness's note
    under the output a command printed first; the whole answer when it opens with its failure."""
    line = failure_line(text)
    part = text or "" if not line or (text or "").lstrip().startswith(line) else text[text.index(line):]
    return re.sub(r"\s*</\w+>\s*$", "", part)  # mini-swe-agent's closing </output>

