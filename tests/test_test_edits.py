"""A failed coding run that changed only test files is told so plainly: which files, at which
turns, the task statement's own sentence saying the tests need no change, the file a
successful trial changed instead, and the lesson to change the code, not the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from coding_corpus import NEW_SYSTEM, NEW_TEMPLATE, STATS, TALLY, _edited, _tally_runs, _traj

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.test_edits import is_test_path

CORPUS = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus"


@pytest.mark.parametrize("path", [
    "tests/test_stats.py", "/repo/test/foo.py", "src/__tests__/cart.js", "spec/models/user_spec.rb",
    "pkg/a/test_parser.py", "pkg/a/parser_test.py", "internal/cache/lru_test.go",
    "/acme__jsonkit/src/main/java/acme/NumberParserTest.java", "Lib/Money/MoneyTests.cs",
    "web/src/cart.test.js", "web/src/cart.test.tsx", "web/src/cart.spec.ts", "src\\tests\\helpers.py",
])
def test_paths_by_the_common_test_conventions_are_test_files(path):
    assert is_test_path(path)


@pytest.mark.parametrize("path", [
    "contest.py", "src/latest/parser.py", "src/attestation.rs", "tally/stats.py", "src/main/java/acme/Contest.java",
    "testimony/notes.md", "src/protest_utils.py", "lib/spectrum.ts", "docs/testing.md", "src/Latest.java",
    "src/inspector.spec", "",
])
def test_near_misses_are_not_test_files(path):
    assert not is_test_path(path)


TEST_FILE = f"{TALLY}/tests/test_stats.py"
HANDS_OFF = "This means you DON'T have to modify the testing logic or any of the tests in any way!"


def _test_editing_run() -> dict:
    """SWE-agent 1.x on the tally task: it rewrites the failing test's expected value and submits."""
    old, new = "    assert median([1, 2, 3, 4]) == 2.5", "    assert median([1, 2, 3, 4]) == 2"
    return _traj([
        ("", f"cd {TALLY} && python -m pytest -q tests/test_stats.py",
         "......F..\nFAILED tests/test_stats.py::test_median_even - assert 2 == 2.5\n1 failed, 8 passed in 0.11s"),
        ("The test expects the mean; make it expect the lower middle value.",
         f"str_replace_editor str_replace {TEST_FILE}   --old_str '{old}' --new_str '{new}'",
         _edited(TEST_FILE, [(31, new)])),
        ("", "submit", f"diff --git a/tests/test_stats.py b/tests/test_stats.py\n-{old}\n+{new}\n"),
    ], "acme__tally-7", NEW_TEMPLATE, NEW_SYSTEM, exit_status="submitted",
        submission=f"diff --git a/tests/test_stats.py b/tests/test_stats.py\n-{old}\n+{new}\n", cost=0.1)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The tally task's successful trial (it changed tally/stats.py) beside a trial that changed the test."""
    src = tmp_path_factory.mktemp("runs")
    for name, obj, report in (("ok", _tally_runs()["ok"], {"resolved": ["acme__tally-7"]}),
                              ("tests", _test_editing_run(), {"resolved": [], "unresolved": ["acme__tally-7"]})):
        d = src / f"swe-{name}"
        d.mkdir()
        (d / "acme__tally-7.traj").write_text(json.dumps(obj), encoding="utf-8")
        (d / "results.json").write_text(json.dumps(report), encoding="utf-8")
    out = src / "out"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    return out, data, {r["run_id"]: (r["step"], r["outcome"]) for r in data["runs"]}  # ids as the importer made them


def _page(out: Path, step: str) -> str:
    return (out / "compilation" / f"{step}.md").read_text()


def test_a_failure_that_changed_only_the_test_says_so_and_quotes_the_task_statement(built):
    out, data, steps = built
    (step,) = [s for s, outcome in steps.values() if outcome == "failure"]
    page = _page(out, step)
    first = page.split("### Cause 1\n", 1)[1].split("### Cause 2", 1)[0]
    assert ("**Decision**: Called str_replace_editor at turn 2, changing \\`/tally/tests/test_stats.py\\`, a test "
            "file, and no call of this run changed a file outside the tests.") in first
    assert ("**Support**: The run changed only test files (test_stats.py at turn 2) and was judged a failure: it "
            f"changed the test, not the code the test exercises. The task statement said: \"{HANDS_OFF}\"") in first
    # the successful trial of the task changed the code: named, and said to be no test file
    short = page.split("## In short\n", 1)[1].split("## Task", 1)[0]
    assert "made the change str_replace_editor of stats.py at its turn 3" in short
    assert "stats.py is not a test file; this run changed only test files." in short
    lessons = [i for i in data["insights"] if any(s["step"] == step for s in i["sources"])]
    assert [i["title"] for i in lessons if i["key"] == "tests-only"] == [
        "Change the code the failing test exercises, not the test"]
    assert not [i for i in lessons if i["key"].startswith("went-through|")]  # not the generic check-the-request lesson


def test_the_successful_trial_that_changed_the_code_is_told_nothing_of_tests(built):
    out, data, steps = built
    (step,) = [s for s, outcome in steps.values() if outcome == "success"]
    page = _page(out, step)
    assert "a test file" not in page and "changed only test files" not in page
    assert "tests-only" not in next(r for r in data["runs"] if r["step"] == step)["patterns"]


@pytest.fixture(scope="module")
def coding(tmp_path_factory):
    out = tmp_path_factory.mktemp("coding") / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                       outcomes=CORPUS / "claude-code" / "outcomes.json"))
    return out, json.loads((out / "corpus.json").read_text())


def test_the_coding_corpus_names_the_test_edit_of_its_one_test_only_failure_and_no_other(coding):
    out, data = coding
    said = {r["step"]: r["run_id"] for r in data["runs"] if "changed only test files" in _page(out, r["step"])}
    assert list(said.values()) == ["swe-llama/acme__jsonkit-101"]  # it edited NumberParserTest.java alone
    (step,) = said
    page = _page(out, step)
    assert ("changing \\`/acme__jsonkit/src/test/java/acme/jsonkit/io/NumberParserTest.java\\`, a test file, and no "
            "call of this run changed a file outside the tests.") in page.split("### Cause 2", 1)[0]
    assert "The task statement said" not in page  # SWE-agent 0.x's template says nothing of the tests
    assert "NumberParser.java is not a test file; this run changed only test files." in page
    assert [r["step"] for r in data["runs"] if "tests-only" in r["patterns"]] == [step]


def test_a_failure_that_changed_the_code_as_well_as_the_test_is_told_nothing_of_tests(tmp_path):
    run = _test_editing_run()
    old, new = "    return s[len(s) // 2 - (1 if len(s) % 2 == 0 else 0)]", "    return s[len(s) // 2]"
    code_edit = {**run["trajectory"][1], "thought": "And take the upper middle value.",
                 "action": f"str_replace_editor str_replace {STATS}   --old_str '{old}' --new_str '{new}'",
                 "observation": _edited(STATS, [(16, new)])}
    run["trajectory"].insert(2, code_edit)
    patch = run["info"]["submission"] + f"diff --git a/tally/stats.py b/tally/stats.py\n-{old}\n+{new}\n"
    run["info"]["submission"] = run["trajectory"][-1]["observation"] = patch
    d = tmp_path / "swe-both"
    d.mkdir()
    (d / "acme__tally-7.traj").write_text(json.dumps(run), encoding="utf-8")
    (d / "results.json").write_text(json.dumps({"resolved": [], "unresolved": ["acme__tally-7"]}), encoding="utf-8")
    build(BuildOptions(inputs=[tmp_path / "swe-both"], out=tmp_path / "out", offline=True, quiet=True))
    data = json.loads((tmp_path / "out" / "corpus.json").read_text())
    (entry,) = data["runs"]
    page = _page(tmp_path / "out", entry["step"])
    assert entry["outcome"] == "failure" and "changing \\`/tally/tally/stats.py\\`" in page  # both edits were read
    assert "a test file" not in page and "changed only test files" not in page
    assert "tests-only" not in entry["patterns"]


def test_the_harness_sentence_on_tests_is_quoted_before_an_issue_s_passing_mention():
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.test_edits import hands_off_tests
    from wikitrace.runs.model import Outcome, Run, Task, Turn

    issue = "median is wrong for even lengths. The tests do not cover lists of one value."
    opening = NEW_TEMPLATE.format(issue=issue, repo="tally")
    turns = [Turn(turn=0, type="message", role="user", content=opening),
             Turn(turn=1, type="function_call", name="submit", arguments="submit", result="")]
    run = Run(run_id="r", task=Task(id="t", instruction=issue), turns=turns, outcome=Outcome(success=False, steps=1))
    assert hands_off_tests(read_run(run)) == HANDS_OFF
    bare = Run(run_id="r", task=Task(id="t", instruction=issue), turns=turns[1:], outcome=Outcome(success=False, steps=1))
    assert hands_off_tests(read_run(bare)) == "The tests do not cover lists of one value."
