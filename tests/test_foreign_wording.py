"""Sentences the offline compiler writes about logs of task types it was not tuned on (the
ReAct notebooks' FEVER and WebShop printouts, SWE-agent on Java, a pytest session): each
must be true of the log's own structure, or worded so that it is true of every format."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wikitrace.build import BuildOptions, build

FIX = Path(__file__).parent / "fixtures" / "importers"


def _corpus(tmp_path: Path, *inputs: Path, outcomes: Path | None = None) -> tuple[Path, dict]:
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=list(inputs), out=out, offline=True, quiet=True, outcomes=outcomes))
    return out, json.loads((out / "corpus.json").read_text())


def _page(out: Path, data: dict, run_id: str) -> str:
    step = next(r["step"] for r in data["runs"] if r["run_id"] == run_id)
    return (out / "compilation" / f"{step}.md").read_text()


def test_a_verdict_from_the_tasks_label_set_is_not_an_unsupported_value(tmp_path):
    """FEVER episode 2417 answered Finish[SUPPORTS] where NOT ENOUGH INFO was expected. Both are
    labels the task answers with: no look-up returns a verdict, so the page may not say that no
    observation held it, and the lesson is about checking the claim, not finding a page."""
    out, data = _corpus(tmp_path, FIX / "react_notebook" / "fever_printout.txt")
    page = _page(out, data, "fever_printout-2417")
    assert "the task expected the verdict \"NOT ENOUGH INFO\"" in page
    assert "no look-up had returned" not in page
    assert "no earlier observation, user message or call holds this value" not in page
    keys = {i["key"] for i in data["insights"]}
    assert "answer|Finish|verdict" in keys
    assert not any(k.startswith("answer|Finish|not-found") for k in keys), keys


def test_a_click_that_ends_a_shopping_run_is_not_worded_as_an_answer(tmp_path):
    """WebShop runs end with click[Buy Now], which the log records as no answer: their lessons
    may not speak of answering from look-ups or of giving a looked-up value, while a QA run's
    Finish[..], which the log records as the run's answer, still is one."""
    _out, shop = _corpus(tmp_path / "shop", FIX / "react_notebook" / "webshop_printout.txt")
    words = [f"{i['title']} {i['guideline']}" for i in shop["insights"]]
    assert any(i["key"].startswith("procedure|click") for i in shop["insights"])
    for phrase in ("answer from what the look-ups returned", "a value a look-up returned", "giving an answer"):
        assert not any(phrase in w for w in words), (phrase, words)
    _out, qa = _corpus(tmp_path / "qa", FIX / "react_notebook" / "hotpotqa_printout.txt")
    procedures = [i for i in qa["insights"] if i["key"].startswith("procedure|Finish")]
    assert procedures and all(":shown" not in i["key"] and ":unshown" not in i["key"] for i in procedures)


_PYTEST_FAILING = """============================= test session starts ==============================
platform linux -- Python 3.12.3, pytest-8.2.0, pluggy-1.5.0
rootdir: /home/dev/shelf
collected 3 items

tests/test_shelf.py .F.                                                  [100%]

=================================== FAILURES ===================================
______________________________ test_shelf_capacity ______________________________

    def test_shelf_capacity():
        shelf = Shelf(slots=4)
>       assert shelf.free() == 4
E       AssertionError: assert 3 == 4

tests/test_shelf.py:14: AssertionError
=========================== short test summary info ============================
FAILED tests/test_shelf.py::test_shelf_capacity - AssertionError: assert 3 == 4
========================= 1 failed, 2 passed in 0.06s ==========================
"""


def test_a_failing_pytest_run_is_named_by_its_failed_test_not_its_banner():
    """pytest opens its report with a '=== FAILURES ===' banner; the line that says what failed
    is the 'FAILED <file>::<test>' one below it: the failing-tests lesson (one per program) names
    it beside the run, and no text of the lesson holds the banner."""
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.runs.model import Outcome, Run, Task, Turn
    bash = lambda n, cmd, out, err: Turn(turn=n, type="function_call", role="assistant", name="Bash",  # noqa: E731
                                         arguments={"command": cmd, "description": "Run the shelf tests"},
                                         result=out, is_error=err)
    turns = [Turn(turn=0, type="message", role="user", content="The shelf reports one slot too few; fix it."),
             bash(1, "python -m pytest tests/test_shelf.py", _PYTEST_FAILING, True),
             Turn(turn=2, type="function_call", role="assistant", name="Edit",
                  arguments={"file_path": "/home/dev/shelf/shelf.py", "old_string": "self.slots - 1",
                             "new_string": "self.slots"},
                  result="The file /home/dev/shelf/shelf.py has been updated.", is_error=False),
             bash(3, "python -m pytest tests/test_shelf.py", "...                                  [100%]\n3 passed in 0.04s", False),
             Turn(turn=4, type="episode_over")]
    run = Run(run_id="shelf-1", task=Task(id="shelf-1", instruction="Fix the shelf's free-slot count.",
                                          task_type="claude-code"), turns=turns, outcome=Outcome(success=True, steps=3))
    lessons = [i for i in compile_offline(run).insights if i.key.startswith("error|")]
    assert lessons, [i.key for i in compile_offline(run).insights]
    assert lessons[0].key == "error|Bash python|failing tests"
    assert lessons[0].detail.startswith("turn 1: python reported failing tests (FAILED tests/test_shelf.py::"
                                        "test_shelf_capacity - AssertionError: assert 3 == 4)"), lessons[0].detail
    assert "=====" not in lessons[0].title + lessons[0].guideline + lessons[0].detail


def test_programs_the_shell_could_not_find_are_one_environment_lesson_across_runs(tmp_path):
    """Two runs of one task type in an image without a JDK: the failed one met 'javac: command
    not found', the successful one 'mvn: command not found'. That is one fact of the
    environment, so one lesson with both runs, each naming its program, and a contrast that
    counts both outcomes, not a 'javac' lesson met by 1 failed and 0 successful runs."""
    from helpers import write_jsonl
    from test_offline_content import _call, _msg, _record, _turns
    issue = "Ledger.total() double-counts refunds."
    failed = _turns(_msg("user", issue),
                    _call("bash", {"command": "javac -d out src/Ledger.java"}, "/bin/bash: line 88: javac: command not found"),
                    _call("bash", {"command": "cat src/Ledger.java"}, "class Ledger { long total() { return a + r + r; } }"),
                    _call("submit", {}, "Submitted."), {"type": "episode_over"})
    passed = _turns(_msg("user", issue),
                    _call("bash", {"command": "mvn -q test"}, "/bin/bash: line 41: mvn: command not found"),
                    _call("str_replace_editor", {"command": "str_replace", "path": "src/Ledger.java",
                                                 "old_str": "a + r + r", "new_str": "a + r"},
                          "The file src/Ledger.java has been edited."),
                    _call("submit", {}, "Submitted."), {"type": "episode_over"})
    runs = [_record("ledger-1", "java-bugfix", issue, failed, False), _record("ledger-2", "java-bugfix", issue, passed, True)]
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", runs)], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    missing = [i for i in data["insights"] if i["key"] == "error|missing-program"]
    assert len(missing) == 1 and not any("javac" in i["key"] or "mvn" in i["key"] for i in data["insights"])
    (entry,) = missing
    assert entry["counts"] == {"runs": 2, "success": 1, "failure": 1}
    c = entry["contrast"]
    assert (c["failed_met"], c["success_met"]) == (1, 1) and c["verdict"] != "failure"
    details = sorted(s["detail"] for s in entry["sources"])
    assert any("javac not found" in d for d in details) and any("mvn not found" in d for d in details), details
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "What successful runs that met it did" in page


def test_an_action_refused_for_the_blank_lines_before_it_is_shown_as_sent(tmp_path):
    """FEVER episode 808: the model wrote 'Action 3:' and the Finish[..] two lines further down;
    the harness refused it as an invalid action. The call reads as Finish, but the page shows
    the text as sent, and the lesson is about its form, not about its label."""
    out, data = _corpus(tmp_path, FIX / "react_notebook" / "fever_printout.txt")
    page = _page(out, data, "fever_printout-808")
    assert 'sent as: "\\n\\nFinish[NOT ENOUGH INFO]"' in page
    step = next(r["step"] for r in data["runs"] if r["run_id"] == "fever_printout-808")
    (lesson,) = [i for i in data["insights"] if i["key"].startswith("error|Finish|")
                 and any(s["step"] == step for s in i["sources"])]
    assert "no blank line before its name" in lesson["guideline"]
    # a call sent as its name opens carries no such note
    assert "sent as:" not in _page(out, data, "fever_printout-2417")


def test_a_log_without_a_system_prompt_gets_no_title_about_its_rules(tmp_path):
    """A WebShop printout has no system prompt, so no rules: a lesson on its closing click may
    not tell a reader to check 'the rules on it'."""
    _out, shop = _corpus(tmp_path, FIX / "react_notebook" / "webshop_printout.txt")
    # (its run the harness stopped while clicking through pages teaches acting before the step limit)
    went = [i for i in shop["insights"] if i["key"].startswith(("went-through|", "stopped"))]
    assert went and not any("rules" in i["title"] or "rules" in i["guideline"] for i in shop["insights"]), went


def test_a_purchase_that_ended_a_failed_run_is_not_called_a_wrong_answer(tmp_path):
    """A WebShop run ends with click[Buy Now] and a partial score: the page says the call ended a
    run judged a failure, with its score, not that 'this answer' was judged wrong."""
    out, data = _corpus(tmp_path, FIX / "react_notebook" / "webshop_printout.txt")
    pages = [_page(out, data, r["run_id"]) for r in data["runs"] if r["outcome"] == "failure"]
    closing = [p for p in pages if "This call ended the run, and the run was judged a failure (score " in p]
    assert closing and not any("This answer ended the run" in p for p in pages)


def test_a_rule_is_quoted_only_from_the_logs_own_prompt_and_only_on_chat_task_logs():
    """The rule beside a change the task expected otherwise (compilers/rule_reasons.py) is written
    only where the log has a system prompt and expected calls: on every importer fixture judged a
    failure it is absent, or each quote is the prompt's own words."""
    from fixture_runs import RUNS, relabeled
    from wikitrace.compilers.offline import compile_offline

    for run in RUNS:
        failed = relabeled(run, False)
        system = next((t for t in failed.turns if t.type == "message" and t.role == "system"), None)
        for fact in compile_offline(failed).in_short:
            if "The system prompt's rule on" not in fact.text:
                continue
            assert system is not None and "expected_calls" in (failed.task.metadata or {}), failed.run_id
            prompt = " ".join((system.content or "").split())
            said = fact.text.split("The system prompt's rule on", 1)[1]
            for quoted in re.findall(r"\"([^\"]+)\"", said.split("; ")[0]):
                assert quoted.rstrip(" …") in prompt, (failed.run_id, quoted)


def test_the_qa_in_short_sentences_stay_off_every_other_format():
    """The In short's sentences for text-action QA logs (a shared form of failed calls, an answer
    about both of two things from one side, a planned look-up never made, a named comparison
    judged by look-up values) are written for Reflexion's HotpotQA printouts in the fixtures and
    for no run of any other format, whichever way it is labelled: their calls send JSON, or
    give no answer, or share no such form."""
    import re

    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.offline import compile_offline

    ours = re.compile(r"put quote marks in (?:its|their) text|packed several calls into one argument|"
                      r"^The question names two things|planned to \S+ \"|the look-ups (?:place|give) |"
                      r"rests on no value a look-up returned")
    seen = {"react-text": 0}
    for run in RUNS:
        for success in (True, False):
            for fact in compile_offline(relabeled(run, success)).in_short:
                if ours.search(fact.text):
                    fmt = run.source.get("format")
                    assert fmt == "react-text", (fmt, run.run_id, fact.text)
                    seen[fmt] += 1
    assert seen["react-text"] >= 7  # the Reflexion fixture's slips are read: the pattern is not dead
