"""A failed coding run that changed only test files.

Changing the test instead of the code is a common way for a coding agent to fail, and many
harnesses tell the agent up front that the tests need no change. Which files are tests is read
from the path by the conventions most projects follow (a ``tests`` folder, ``test_x.py``,
``XTest.java``, ``x.test.ts``), never from the file's content: the log seldom shows it whole.
"""

from __future__ import annotations

import re

from .changes import diff_files
from .insight_parts import edits_of, kind_of_tasks, make_insight
from .reading import Call, Reading
from .schema import CandidateInsight
from .text import base_name, clip

TESTS_ONLY = "tests-only"  # the pattern and lesson key of a run that changed only test files
_TEST_FOLDERS = frozenset({"test", "tests", "__tests__", "spec", "specs"})
# a stem that ends in a test word after a word boundary: test_x, x_test, x-test, XTest, XTests
_TEST_STEM = re.compile(r"^tests?[_-]|[_-](?:test|tests|spec)$|(?<=[a-z0-9])Tests?$|^Tests?$")


def is_test_path(path: str) -> bool:
    """Whether ``path`` names a test file by the common conventions: a folder named test, tests,
    __tests__ or spec(s) on the way to it, or a file name like test_x.py, x_test.go, XTest.java,
    XTests.cs, x.test.js or x.spec.ts. ``contest.py``, ``latest/`` and ``attestation.rs`` are not."""
    parts = [p for p in re.split(r"[/\\]", path.strip()) if p]
    if not parts:
        return False
    if any(p.lower() in _TEST_FOLDERS for p in parts[:-1]):
        return True
    pieces = parts[-1].split(".")
    if len(pieces) > 2 and any(p.lower() in ("test", "spec") for p in pieces[1:-1]):  # x.test.ts, x.spec.js
        return True
    return bool(_TEST_STEM.search(pieces[0]))


def test_only_edits(r: Reading) -> list[tuple[Call, str]]:
    """(call, file) for each change of the run that went through, when every one of them, and
    every file its submitted patch holds, is a test file; empty otherwise (or when it changed none)."""
    key = "test-edits.only"
    if key not in r.memo:
        edits = [(c, e.file) for c, e in edits_of(r)]
        if not edits or not all(is_test_path(f) for _c, f in edits):
            r.memo[key] = []
            return []
        patch = next((diff_files(c.turn.result) for c in reversed(r.calls) if not c.error and c.turn.result
                      and "diff --git" in c.turn.result), [])
        r.memo[key] = edits if all(is_test_path(p) for p, _new in patch) else []
    return r.memo[key]


_NEGATION = re.compile(r"\b(?:not|no|never|nor|don't|doesn't|do not|need not|without)\b|n't\b", re.I)
_TEST_WORD = re.compile(r"\b(?:test|tests|testing)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def hands_off_tests(r: Reading) -> str | None:
    """The first sentence of the task statement that holds a negation and the word test, tests or
    testing: how a harness says the tests need no change. The harness's own words (the user
    messages before the agent's first call, less the task text) are read before the task text,
    where an issue may mention tests in passing. Clipped, otherwise as written; read once per
    run (the cause's support and the lesson both ask)."""
    if "test-edits.told" not in r.memo:
        r.memo["test-edits.told"] = _hands_off_tests(r)
    return r.memo["test-edits.told"]


def _hands_off_tests(r: Reading) -> str | None:
    task = r.run.task.instruction or ""
    opening = []
    for t in r.run.turns:
        if t.type == "function_call" or (t.type == "message" and t.role == "assistant"):
            break
        if t.type == "message" and t.role == "user" and t.content:
            opening.append(t.content.replace(task, "\n") if task else t.content)
    for text in opening + [task]:
        for sentence in _SENTENCE_END.split(text):
            if _NEGATION.search(sentence) and _TEST_WORD.search(sentence):
                return clip(sentence.strip(), 200)
    return None



def where(edits: list[tuple[Call, str]]) -> str:
    """``NumberParserTest.java at turn 5`` or ``a_test.go at turns 3 and 7, b_test.go at turn 4``."""
    turns: dict[str, list[int]] = {}
    for c, f in edits:
        turns.setdefault(base_name(f), []).append(c.n)
    said = []
    for f, ns in list(turns.items())[:3]:
        ns = list(dict.fromkeys(ns))
        said.append(f"{f} at turn {ns[0]}" if len(ns) == 1 else
                    f"{f} at turns {', '.join(map(str, ns[:-1]))} and {ns[-1]}")
    return ", ".join(said) + (f" and {len(turns) - 3} more" if len(turns) > 3 else "")


def test_only_support(r: Reading) -> str:
    """The support of a failed run's test-file edit when the run changed nothing but tests."""
    text = (f"The run changed only test files ({where(test_only_edits(r))}) and was judged a failure: it changed "
            "the test, not the code the test exercises.")
    told = hands_off_tests(r)
    return text + (f" The task statement said: \"{told}\"" if told else "")


def test_only_insight(r: Reading) -> CandidateInsight:
    """The lesson of a failed run that changed only tests: change the code the test exercises."""
    told = hands_off_tests(r)
    return make_insight(
        TESTS_ONLY, "Change the code the failing test exercises, not the test",
        "When a test fails, find the code it calls (the function or class it names) and change that code; leave "
        "the test's expected values as they are unless the task asks for a change to the test itself.",
        f"In {kind_of_tasks(r)}, before editing a test file.",
        f"changed only test files: {where(test_only_edits(r))}" + (f"; the task statement said: \"{told}\"" if told
                                                                    else ""), False)
