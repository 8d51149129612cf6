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
    # a verdict is chosen from the task's labels: what successes did is never weighed on a verdict's words
    (verdict,) = [i for i in data["insights"] if i["key"] == "answer|Finish|verdict"]
    assert verdict["versus"] and not any("answered with words a look-up had returned" in v or "question" in v
                                         for v in verdict["versus"]), verdict["versus"]
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
    # the success's way there: the item it opened and the option it chose, then the click that ended it
    (way,) = [i for i in shop["insights"] if i["key"].startswith("procedure|click")]
    assert way["title"] == "Settle with click[Buy Now] after opening a listed item and choosing the options the task names"
    assert way["guideline"].startswith("To settle the task: look with search, then open an item a list showed with "
                                       "click, then choose the options the task names with click, then end with "
                                       "click[Buy Now].")
    # where a click's words came from is no answer's source: no choice between runs is worded on it
    assert not any(p.startswith("said|") for r in shop["runs"] for p in r["patterns"])
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
                                          task_type="claude-code"), turns=turns, outcome=Outcome(success=False, steps=3))
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
            if any(x in fact.text for x in (" forbids this change: ", " allows this change", "The user's reason, ")):
                # a rule's verdict (rule_verdicts.py, record_rules.py) needs the prompt, expected calls and records
                assert system is not None and "expected_calls" in (failed.task.metadata or {}), failed.run_id
            if "The user's words on its condition" in fact.text or "The user's reason, " in fact.text \
                    or " that it could not: " in fact.text:
                # what a user and the agent said of a rule (rule_talk.py) needs a person and expected calls
                assert "expected_calls" in (failed.task.metadata or {}) and any(
                    t.role == "user" for t in failed.turns), failed.run_id
            if "The system prompt's rule on" not in fact.text:
                continue
            assert system is not None and "expected_calls" in (failed.task.metadata or {}), failed.run_id
            prompt = " ".join((system.content or "").split())
            said = fact.text.split("The system prompt's rule on", 1)[1]
            for quoted in re.findall(r"\"([^\"]+)\"", said.split("; ")[0]):  # "…" where a case was cut
                assert all(p.strip(" .") in prompt for p in quoted.split("…") if p.strip(" .")), (failed.run_id, quoted)


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


def test_the_qa_advice_sentences_stay_on_logs_of_plain_text_look_ups_and_answers():
    """The QA advice sentences (qa_reasons.py: an answer the run's reflection already named, the
    expected form a page opens with, look-ups that each sent a phrase, what worked on a success;
    offered_names.py: names an error listed and no call sent, an expected answer left unchecked
    in a list a look-up returned) are written for ReAct-style logs, whose calls send plain text and end with a free-text answer
    (Reflexion's printouts, a FEVER- or HotpotQA-style notebook printout), and for no run of any
    tool-calling or coding format, whichever way it is labelled."""
    import re

    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.offline import compile_offline

    ours = re.compile(r"reflections? the run was given at turn \d+ already names?|opens with the expected name|"
                      r"sent a phrase that mixes the task's words|^What worked: |send it the listed name that fits the "
                      r"question|check each listed candidate against every condition")
    seen: dict[str, int] = {}
    for run in RUNS:
        for success in (True, False):
            for fact in compile_offline(relabeled(run, success)).in_short:
                if ours.search(fact.text):
                    fmt = run.source.get("format")
                    assert fmt in ("react-text", "react-notebook"), (fmt, run.run_id, fact.text)
                    seen[fmt] = seen.get(fmt, 0) + 1
    assert seen.get("react-text", 0) >= 4, seen  # the Reflexion fixture's cases are read: the pattern is not dead


def test_the_fact_kinds_insights_lead_with_stay_on_the_formats_that_show_them():
    """The kinds an insight may lead with from the QA and rule facts (corpus/fact_leads.py) are
    kept for a run only where its log shows them: the QA kinds on Reflexion's text-action
    printouts, a rule on logs with a system prompt and the task's expected calls, its quote the
    prompt's own words; on every other importer fixture, labelled either way, none is kept."""
    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.offline import compile_offline
    from wikitrace.corpus.checked_facts import run_facts

    qa = {"quoted-name", "packed-calls", "one-sided", "planned-look-up", "named-comparison", "unsupported-comparison"}
    seen = {"qa": 0, "rule": 0}
    for run in RUNS:
        for success in (True, False):
            labelled = relabeled(run, success)
            for fact in run_facts(compile_offline(labelled)):
                if fact["kind"] in qa:
                    assert run.source.get("format") == "react-text", (run.run_id, fact)
                    if not fact["kind"].endswith("comparison"):  # about a tool the run called
                        assert fact["about"][0] in {t.name for t in labelled.turns if t.name}, (run.run_id, fact)
                    seen["qa"] += 1
                elif fact["kind"] == "rule":
                    system = next((t for t in labelled.turns if t.type == "message" and t.role == "system"), None)
                    assert system is not None and "expected_calls" in (labelled.task.metadata or {}), run.run_id
                    tool, _on, quote, _how = fact["about"]
                    assert tool in {t.name for t in labelled.turns if t.name} | {
                        e.get("name") for e in labelled.task.metadata["expected_calls"]}
                    prompt = " ".join((system.content or "").split())
                    for quoted in re.findall(r"\"([^\"]+)\"", quote):
                        assert quoted.rstrip(" …") in prompt, (run.run_id, quoted)
                    seen["rule"] += 1
    assert seen["qa"] >= 5  # the Reflexion fixture's slips are read: the check is not empty


def test_no_refusal_or_users_words_on_logs_without_a_person():
    """A SWE-agent, ReAct or coding log has no person the agent serves: an agent message saying it
    cannot do something is no refusal told to a user, and no message is the user's words on a
    rule (compilers/rule_talk.py), on every importer fixture that has no person's replies."""
    from dataclasses import replace

    from fixture_runs import RUNS
    from wikitrace.compilers import rule_talk
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.rules import _words
    from wikitrace.runs.model import Turn

    alone = [run for run in RUNS if not read_run(run).has_interlocutor]
    templates = 0
    assert len(alone) > 20
    for run in alone:
        last = max(t.turn for t in run.turns)
        said = Turn(last + 1, "message", "assistant", content="I cannot change the file, the build broke it.")
        r = read_run(replace(run, turns=[*run.turns, said]))
        assert rule_talk.refusal(r, frozenset({"file"}), frozenset()) is None, run.run_id
        for t in run.turns:  # a task statement in a user message's form is nobody's words on a rule
            if t.role == "user" and t.type == "message" and _words(t.content or ""):
                templates += 1
                assert rule_talk.users_words(r, _words(t.content), None) is None, run.run_id
    assert templates  # the SWE-agent and ReAct fixtures state their task as a user message


# --- In short on coding logs: what was changed, by tool and program alike ------------------------

CODING = FIX / "coding_fixes"
JEST_SESSION = "3f0a9c21-7b44-4e2d-9a10-6c8e2d4b1f57"  # npx jest fails, Edit in shippingFee, jest passes
LINT_SESSION = "8c2d6e90-1a3f-4b57-8e0d-2f9b7a6c4e13"  # npm run lint errors with an empty tool_result
QUESTION_SESSION = "b51e07d4-9c6a-4f12-a3e8-7d0c4b2e9f61"  # Grep, then an answer: no change, no error
JAVA_EPISODE = "acme__tally-31"  # SWE-agent: mvn test fails, edit in rateFor, mvn test passes, submit


def _in_short(page: str) -> list[str]:
    block = page.split("## In short", 1)[1].split("\n## ", 1)[0]
    return [line[2:] for line in block.splitlines() if line.startswith("- ")]


def _coding(tmp_path: Path, verdicts: dict[str, str]) -> tuple[Path, dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    table = tmp_path / "outcomes.json"
    table.write_text(json.dumps(verdicts))
    return _corpus(tmp_path, CODING, outcomes=table)


def test_a_fail_edit_pass_success_says_what_was_changed_and_that_the_test_then_passed(tmp_path):
    """A Claude Code session and a SWE-agent Java episode each ran a failing test, edited one
    function and ran the same test green. The first In-short fact says the file, the function and
    the passing summary; it is not "Bash failed; a later npx call went through"."""
    out, data = _coding(tmp_path, {JEST_SESSION: "success", JAVA_EPISODE: "success", LINT_SESSION: "failure",
                                   QUESTION_SESSION: "failure"})
    jest = _in_short(_page(out, data, JEST_SESSION))[0]
    assert jest.startswith("After \\`npx jest shipping\\` failed at turn 1, Edit changed "
                           "\\`/home/ana/shop/src/cart/shipping.js\\` (in \\`shippingFee\\`) at turn 3; the same command "
                           "then went through at turn 4 and its tests passed ("), jest
    java = _in_short(_page(out, data, JAVA_EPISODE))[0]
    assert "edit changed \\`/acme__tally/src/main/java/acme/tally/RateTable.java\\` (in \\`rateFor\\`) at turn 4" in java
    assert "then went through at turn 5 and its tests passed (\\[INFO\\] Tests run: 5, Failures: 0" in java


def test_a_failure_whose_own_test_passed_after_its_change_says_so(tmp_path):
    """The same jest session judged a failure: its own last test run passed after the edit, which
    the page states so a reader does not take the green run for the fix; the Java episode too."""
    out, data = _coding(tmp_path, {JEST_SESSION: "failure", JAVA_EPISODE: "failure", LINT_SESSION: "success",
                                   QUESTION_SESSION: "success"})
    jest = _in_short(_page(out, data, JEST_SESSION))
    assert any(f.startswith("After the run's last file change (turn 3), \\`npx jest shipping\\` passed at turn 4 ("
                            ) and "yet the run was judged a failure" in f for f in jest), jest
    java = _in_short(_page(out, data, JAVA_EPISODE))
    assert any("passed at turn 5" in f and "judged a failure" in f for f in java), java


def test_a_shell_error_is_named_by_tool_and_program_and_an_empty_answer_is_not_quoted(tmp_path):
    """`Bash` ran `npm run lint` and its tool_result was empty with is_error: the fact names the
    program it says no later call of went through, and says no output was recorded instead of
    quoting an empty string."""
    out, data = _coding(tmp_path, {JEST_SESSION: "success", JAVA_EPISODE: "success", LINT_SESSION: "failure",
                                   QUESTION_SESSION: "failure"})
    [fact] = _in_short(_page(out, data, LINT_SESSION))
    assert fact.startswith("Bash (npm) failed at turn 1 (no output recorded), and no later npm call went through."), fact
    assert '("")' not in fact


def test_a_log_that_never_holds_expected_calls_is_not_told_it_lacks_them(tmp_path):
    """Claude Code and SWE-agent logs carry no expected calls or answer; a page with no settled
    fact says it has no expected result, without tau-bench's "expected calls" wording, and a
    success with file edits names them instead of "its last state-changing call went through"."""
    for verdict in ("success", "failure"):
        out, data = _coding(tmp_path / verdict, {JEST_SESSION: verdict, JAVA_EPISODE: verdict,
                                                 LINT_SESSION: verdict, QUESTION_SESSION: verdict})
        for run in data["runs"]:
            page = _page(out, data, run["run_id"])
            assert "expected calls" not in page, (run["run_id"], _in_short(page))
            assert "last state-changing call," not in "\n".join(_in_short(page))
        facts = _in_short(_page(out, data, QUESTION_SESSION))
        assert facts[0].startswith("The log holds no expected result" if verdict == "success"
                                   else "The log records no error left standing"), facts


COST_STOPPED = "acme__tally-44"  # SWE-agent: three look-ups, then exit_cost


def test_insights_of_coding_logs_name_no_step_limit_no_rules_and_no_empty_message(tmp_path):
    """A SWE-agent episode the harness stopped on its cost limit is not told of a step limit; a
    Claude Code question answered from Grep (no system prompt, no one to refuse) is not told to
    say why it refused under rules; an error with an empty answer is not told to "fix what the
    message names"."""
    _out, data = _coding(tmp_path, {JEST_SESSION: "success", JAVA_EPISODE: "success", LINT_SESSION: "failure",
                                    QUESTION_SESSION: "success", COST_STOPPED: "failure"})
    by_key = {i["key"]: i for i in data["insights"]}
    idle = by_key["idle|lookups"]
    assert "before the harness's limit ends the run" in idle["guideline"], idle["guideline"]
    assert "step limit" not in idle["guideline"] + idle["applicability"], idle
    answered = by_key["answer-from"]
    assert answered["guideline"].endswith("answer from what Grep returned and change nothing."), answered["guideline"]
    assert not any(w in answered["guideline"] for w in ("rules", "refusal")), answered["guideline"]
    [silent] = [i for i in data["insights"] if i["key"].startswith("error|Bash npm")]
    assert silent["title"] == "When Bash npm fails with no output, make it print why before sending it again", silent["title"]
    assert "fix what the message names" not in silent["guideline"] and '""' not in silent["guideline"]


def test_a_partly_scored_purchase_says_its_score_and_the_option_it_never_chose(tmp_path):
    """A WebShop episode bought the beanie after click[navy blue] was refused (the page lists
    "navy") and scored 0.67: the In short gives the score and the refused option, instead of
    saying the log settles nothing."""
    out, data = _corpus(tmp_path, FIX / "webshop_partial")
    [run] = data["runs"]
    facts = _in_short(_page(out, data, run["run_id"]))
    assert facts[0].startswith("The run ended with click(Buy Now) at turn 5 and scored 0.666667, short of a success; "
                               "click(navy blue) at turn 3 had been refused (\"Invalid action!\") and was never sent "
                               "again; it chose no color option of the 3 listed at turn 2, while navy holds the task's "
                               "word navy."), facts  # $19.90 is under the task's limit: no word on the price


def test_a_partly_scored_purchase_above_the_tasks_price_limit_says_so(tmp_path):
    """The same episode with the beanie listed at $29.90 against "price lower than 25.00 dollars":
    the In short names the listed price, the turn that listed it and the task's own words."""
    text = (FIX / "webshop_partial" / "webshop_partial_printout.txt").read_text()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "webshop_dear_printout.txt").write_text(text.replace("$19.90", "$29.90"))
    out, data = _corpus(tmp_path, tmp_path / "in")
    [run] = data["runs"]
    facts = _in_short(_page(out, data, run["run_id"]))
    assert "; the item it opened at turn 2 was listed at $29.90 (turn 1), above the task's limit " \
           "(\"lower than 25.00 dollars\"). (turns [1]" in facts[0], facts


def test_a_passing_test_run_on_a_failure_page_is_not_called_a_change(tmp_path):
    """The Java episode judged a failure: its green `mvn test` is listed among the causes with what
    it said, not as "the change it made may not be what the task asked for"; the edit and the
    submit stay on the page."""
    out, data = _coding(tmp_path, {JEST_SESSION: "failure", JAVA_EPISODE: "failure", LINT_SESSION: "failure",
                                   QUESTION_SESSION: "failure"})
    page = _page(out, data, JAVA_EPISODE)
    causes = page.split("## Failure Causes", 1)[1].split("\n## ", 1)[0]
    causes = re.split(r"### (?:Cause|Context) ", causes)[1:]
    test_run = next(c for c in causes if "**Decision**: Called mvn at turn 5." in c)
    assert "Its tests passed (\\[INFO\\] Tests run: 5, Failures: 0" in test_run, test_run
    assert "the change it made" not in test_run
    assert any("Called submit at turn 6" in c for c in causes) and any("Called edit at turn 4" in c for c in causes)


def test_a_tool_that_fails_with_no_output_gets_advice_that_fits_a_tool_not_a_shell(tmp_path):
    """An MCP tool (no shell) failed with an empty result: its lesson does not speak of exit
    statuses or verbose flags, which only a command has; the shell's empty lint error does."""
    pager = "e7c3a1f0-5d28-4b96-8f41-0a2b9c6d3e85"
    _out, data = _coding(tmp_path, {pager: "failure", LINT_SESSION: "failure"})
    [tool] = [i for i in data["insights"] if i["key"].startswith("error|mcp__pager__send_page")]
    [shell] = [i for i in data["insights"] if i["key"].startswith("error|Bash npm")]
    assert "check with a look-up whether it took effect" in tool["guideline"], tool["guideline"]
    assert "exit status" not in tool["guideline"] and "exit status" in shell["guideline"]


def test_a_success_names_the_files_its_patch_changed_when_an_edit_echo_names_none(tmp_path):
    """SWE-agent's older editor answers "File updated." without the file: the page says that edit
    changed a file the log does not name, and that the submit ended the run with a patch of
    Ledger.java (from the diff it answered with), not just "its last change went through"."""
    out, data = _coding(tmp_path, {"acme__tally-52": "success"})
    [fact] = _in_short(_page(out, data, "acme__tally-52"))
    assert fact.startswith("The run's file changes: edit at turn 2 changed a file the log does not name; submit at "
                           "turn 3 ended the run with a patch of \\`src/main/java/acme/tally/Ledger.java\\`."), fact


def test_the_why_of_a_missed_change_stays_on_logs_that_record_expected_calls():
    """The reasons an expected change was never made or a call failed (a listed record never looked
    up, an offer let drop, a value nothing had shown, what a quoted rule settles) need the task's
    expected calls, named JSON arguments, a system prompt or a person who answers: on every importer
    fixture without them, labelled either way, none is written."""
    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.offline import compile_offline
    from wikitrace.compilers.reading import read_run

    ours = re.compile(r"Look up every one of the `|^The agent offered the \S+ change at turn |which no earlier answer or "
                      r"user message held|No earlier answer or user message held|On these fields, ")
    for run in RUNS:
        expected = "expected_calls" in (run.task.metadata or {})
        named = any(isinstance(t.arguments, dict) for t in run.turns if t.type == "function_call")
        for success in (True, False):
            labelled = relabeled(run, success)
            for fact in compile_offline(labelled).in_short:
                if ours.search(fact.text):
                    assert named and (expected or "failed at turn" in fact.text), (run.run_id, fact.text)
                    if fact.text.startswith("The agent offered"):
                        assert read_run(labelled).has_interlocutor, (run.run_id, fact.text)


def test_coding_lessons_are_titled_by_what_to_do_not_by_the_tools_that_ran():
    """A coding run that found its file by reading it and saw its failing test pass after two
    edits: the lesson's title says what to do ("Read the code, then change it, ..."), never
    "Settle with Bash python after Read"; no insight of any coding fixture opens with "Settle with"."""
    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.insight_parts import main_edit
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.compilers.reading import read_run
    coding = [r for r in RUNS if main_edit(read_run(r)) is not None]
    assert len(coding) >= 8
    for run in coding:
        for success in (True, False):
            for i in compile_offline(relabeled(run, success)).insights:
                assert not i.title.startswith("Settle with") and not i.title.endswith("fails with no output"), i.title


def test_a_session_that_fixed_two_files_says_both_and_that_its_test_then_passed(tmp_path):
    out, data = _corpus(tmp_path, FIX / "claude_code_twofiles", outcomes=FIX / "claude_code_twofiles" / "outcomes.json")
    [run] = data["runs"]
    facts = _in_short(_page(out, data, run["run_id"]))
    assert "\\`/home/mia/tempo/tempo/units.py\\` at turn 4" in facts[0] and "parse.py\\` at turn 5" in facts[0], facts
    assert "then went through at turn 6 and its tests passed (4 passed in 0.03s)" in facts[0], facts
    [procedure] = [i for i in data["insights"] if i["key"].startswith("procedure|")]
    assert procedure["title"] == "Read the code, then change it, then see the failing python command pass", procedure
    page = _page(out, data, run["run_id"])
    assert "The first call returned an error (FAILED tests/test_durations.py::test_hours_minutes_seconds" in page
    assert "Looked up with Bash" in page and "agreed" not in page
    # the closing TodoWrite (the agent ticking its own list) is no change and no lesson's last step
    assert "Called TodoWrite" not in page and not any("TodoWrite" in i["title"] for i in data["insights"]), page


def test_code_that_only_prints_is_no_change_and_its_lesson_names_no_change(tmp_path):
    """inspect_ai's python tool worked out a sum with print(...): no page calls it the run's last
    state-changing call, and no lesson says "Settle with python print"."""
    from fixture_runs import relabeled

    from wikitrace.compilers.offline import compile_offline
    for success in (True, False):
        comp = compile_offline(relabeled("gsm_tools-17-epoch1-Lm3QzR8wNc5vKp2TyB7dXe", success))
        text = " ".join([*(f if isinstance(f, str) else f.text for f in comp.in_short),
                         *(e.decision for e in comp.evidence), *(i.title for i in comp.insights)])
        assert "state-changing call, python" not in text and "Called python" not in text, text
        assert not any(i.key.startswith(("procedure|python", "went-through|python")) for i in comp.insights)


def test_the_leads_naming_unmade_changes_idle_runs_and_value_sources_hold_on_every_importer(tmp_path):
    """The insight leads that name an unmade change, a failure without any tool call, and where a
    settle recipe's values came from are written only where each importer fixture's own runs show
    them: an unmade change only for logs recording expected calls, naming a tool those calls
    hold; "without a single tool call" only over runs with no call; "from the user's words" only
    for runs with a user message."""
    from fixture_runs import RUNS

    from wikitrace.build import BuildInputError

    by_id = {r.run_id: r for r in RUNS}
    for folder in sorted(p for p in FIX.iterdir() if p.is_dir()):
        try:
            _out, data = _corpus(tmp_path / folder.name, folder)
        except BuildInputError:  # a format that logs no verdict needs an outcomes table: nothing to read
            continue
        runs = {r["step"]: by_id.get(r["run_id"]) for r in data["runs"]}
        for entry in data["insights"]:
            g = entry["guideline"]
            pairs = [(runs[s["step"]], s["outcome"]) for s in entry["sources"] if runs.get(s["step"]) is not None]
            sources = [r for r, _o in pairs]
            named = re.search(r"a change the task expected never went through \(([^)]*)\)", g)
            if named:
                expected = {c.get("name") for r in sources for c in json.loads(
                    (r.task.metadata or {}).get("expected_calls") or "[]")}
                for tool in re.findall(r"(?:another )?(\w+) in \d+", named.group(1)):
                    assert tool in expected, (folder.name, tool, g)
            idle = re.search(r"In (\d+) of the (\d+) failed runs here.*? the agent answered without a single tool call", g)
            if idle:
                failed = [r for r, outcome in pairs if outcome == "failure"]
                assert int(idle.group(1)) == sum(not any(t.type == "function_call" for t in r.turns) for r in failed)
            if "from the user's words (" in g:
                assert all(sum(t.role == "user" for t in r.turns) > 1 for r in sources), (folder.name, g)


def test_record_rule_breaches_are_true_or_absent_on_every_format():
    """The rule shapes read by structure (compilers/record_rules.py): a prompt saying changes go
    "without changing the path, command, and file" and that a value "must be the same across all
    the files", put in front of every importer fixture's run, gives a breach only where a call's
    values and a JSON record looked up before it show one, and every breach given reads back from
    the log (the In short checks: tests/test_in_short.py)."""
    from dataclasses import replace

    from fixture_runs import RUNS
    from test_in_short import _rule_breach
    from wikitrace.compilers import rule_reasons
    from wikitrace.compilers.reading import read_run
    from wikitrace.runs.model import Turn

    prompt = ("# Rules\n\n## Change files\n\n- Change files: Files can be changed without changing the path, command, "
              "and file name. The mode must be the same across all the files.\n")
    checked = 0
    for run in RUNS:
        first = min((t.turn for t in run.turns), default=0)
        turns = [t for t in run.turns if not (t.type == "message" and t.role == "system")]
        r = read_run(replace(run, turns=[Turn(first - 1, "message", "system", content=prompt), *turns]))
        for c in (c for c in r.calls if c.writes and not c.error):
            checked += 1
            found = rule_reasons._with_breach(r, c, None, set())
            if found is not None:
                text = f"{c.name} at turn {c.n} went through. {found.text}"
                by_n = {t.turn: t for t in r.run.turns}
                assert _rule_breach(r.run, by_n, text) != text, (run.run_id, found.text)
    assert checked > 20


def test_a_prompt_sentence_naming_a_records_value_is_kept_only_from_the_logs_own_prompt():
    """The rule sentences a run keeps for its changes (compilers/value_rules.py), which an insight
    quotes when their value decides the change: on every importer fixture, whichever way it is
    labelled, none without a system prompt, and each the prompt's own words naming the value."""
    from fixture_runs import RUNS, relabeled
    from wikitrace.compilers.offline import compile_offline

    for run in RUNS:
        for success in (True, False):
            labelled = relabeled(run, success)
            system = next((t for t in labelled.turns if t.type == "message" and t.role == "system"), None)
            for tool, _field, value, sentence in compile_offline(labelled).value_rules:
                assert system is not None, labelled.run_id
                assert sentence in " ".join((system.content or "").split()), (labelled.run_id, sentence)
                assert value.lower().replace("_", " ") in sentence.lower() and tool, (labelled.run_id, value)


def test_the_sentences_on_what_a_look_up_or_a_yes_had_shown_stay_on_logs_that_show_it():
    """A yes to other amounts, a failed change against a count or a balance a look-up showed, a
    change on a record whose dates were past, a change the agent said it made that no call made:
    each needs named JSON arguments and answers (the yes and the claim, a person who answers; the
    claim, expected calls), so every importer fixture without them, labelled either way, gets
    none; the tau-bench-shaped fixture gets each of them."""
    from fixture_runs import RUNS, relabeled

    from wikitrace.compilers.offline import compile_offline
    from wikitrace.compilers.reading import read_run

    ours = {"yes": re.compile(r"; the user's yes \(turn \d+\) answered the agent's message at turn \d+, which named "),
            "count": re.compile(r" showed with \d+ under `"),
            "balance": re.compile(r", whose record in \S+'s answer \(turn \d+\) holds `"),
            "past": re.compile(r" are all dated \S+(?: to \S+)?, before the current time the system prompt states"),
            "told": re.compile(r"^The agent told the user at turn \d+ that the \w+ had been \w+ ")}
    seen = {k: 0 for k in ours}
    for run in RUNS:
        named = any(isinstance(t.arguments, dict) for t in run.turns if t.type == "function_call")
        for success in (True, False):
            labelled = relabeled(run, success)
            for fact in compile_offline(labelled).in_short:
                for kind, pattern in ours.items():
                    if pattern.search(fact.text.replace("\\`", "`")):
                        assert named, (run.run_id, fact.text)
                        assert kind not in ("yes", "told") or read_run(labelled).has_interlocutor, (run.run_id, fact.text)
                        assert kind != "told" or "expected_calls" in (run.task.metadata or {}), (run.run_id, fact.text)
                        seen[kind] += 1 if run.source.get("format") == "openai-chat" else 0
    assert all(seen.values()), seen  # the tau-bench-shaped fixture shows each: no pattern is dead


def test_an_error_lessons_title_says_what_to_do_and_asks_nobody_on_logs_without_a_person(tmp_path):
    """The FEVER and WebShop printouts: an error lesson's title names the error and then the action
    its page advises (an index or a prompt that shows titles alone still says what to do); an error
    that lists the names it has ("Similar: [...]") is answered with one of them; and no advice on a
    log without a person tells the agent to ask for a value."""
    out, data = _corpus(tmp_path, FIX / "react_notebook" / "fever_printout.txt",
                        FIX / "react_notebook" / "webshop_printout.txt")
    errors = [i for i in data["insights"] if i["key"].startswith("error|") and i["key"].count("|") == 2]
    assert len(errors) >= 3
    for entry in errors:
        tool = entry["key"].split("|")[1]
        m = re.fullmatch(rf"When {re.escape(tool)} answers \"[^\"]+\", (\w+) (.+)", entry["title"])
        assert m, entry["title"]
        verb = m.group(1)
        assert verb in entry["advice"].split(f"answers \"{entry['key'].split('|', 2)[2]}\", ", 1)[-1], entry
    similar = next(i for i in errors if "Similar:" in i["key"])
    assert "with the name the error lists that fits what the task asks" in similar["advice"]
    for page in (out / "insight").glob("insight-*.md"):
        assert "ask for it" not in page.read_text(), page.name


def test_a_successful_purchase_says_which_option_it_chose_and_its_score(tmp_path):
    """WebShop episode 0 opened the towels, chose grey (the task's colour) and bought them for a
    score of 1: its In short says that, not only that its last change went through."""
    out, data = _corpus(tmp_path, FIX / "react_notebook" / "webshop_printout.txt")
    facts = _in_short(_page(out, data, data["runs"][0]["run_id"]))
    assert facts[0].startswith("The run chose grey among the 2 color options at turn 3 (the task's word grey), then "
                               "ended with click(Buy Now) at turn 4, which scored 1."), facts


def test_a_shops_wrong_ending_lesson_counts_what_its_partly_scored_runs_left_out(tmp_path):
    """Two partly scored purchases: one never chose the colour the task names, one also opened an
    item listed above the task's price limit. Each source line says what its run left out, and the
    lesson counts both kinds over its failed runs."""
    text = (FIX / "webshop_partial" / "webshop_partial_printout.txt").read_text()
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "webshop_two_printout.txt").write_text(
        text + text.replace("\n7\n", "\n8\n", 1).replace("$19.90", "$29.90").replace("\n7 0.66", "\n8 0.66"))
    _out, data = _corpus(tmp_path, tmp_path / "in")
    assert len(data["runs"]) == 2
    (entry,) = [i for i in data["insights"] if i["key"].startswith("answer|click")]
    details = [s["detail"] for s in entry["sources"]]
    assert all("; it chose no color option of the 3 listed at turn 2, while navy holds the task's word navy; " in d
               for d in details), details
    assert sum("above the task's limit (\"lower than 25.00 dollars\"); score" in d for d in details) == 1, details
    assert entry["guideline"].endswith(" Of the failed runs here, 2 never chose an option of a group the task names one "
                                       "of and 1 opened an item listed above the task's price limit: check those parts "
                                       "first."), entry["guideline"]
