"""Importers tell the truth about real-shaped logs: harness steps, errors, verdicts, readable ids.

The contract the compilers rely on:
- a harness step is never a ``function_call``: it is an ``episode_over`` turn with
  ``role == "harness"`` and the reason as ``content``; ``Outcome.ended_by`` is
  ``"harness: <reason>"``;
- scoring lines (rewards, ``Answer is CORRECT``, score pages, gold answers) are the
  outcome, never part of a turn's ``result``;
- ``is_error`` is True/False on every answered call whose format lets one judge.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from wikitrace.runs import harness
from wikitrace.runs.errors import observation_is_error
from wikitrace.runs.load import LoadReport, iter_runs

FIX = Path(__file__).parent / "fixtures" / "importers"
EXPERIMENT = FIX / "swe_experiment" / "20250101_sweagent_gpt4o"
NOTEBOOK = FIX / "react_notebook"
SCORING = re.compile(r"Episode finished, reward|Your score \(min|Answer is (?:CORRECT|INCORRECT)|gt_answer|Correct answer:")


def _load(*paths, **kw):
    report = LoadReport()
    runs = list(iter_runs([Path(p) for p in paths], kw.pop("fmt", None), report, **kw))
    return runs, report


def _check_contract(run):
    """What every importer promises the compilers, checked on one run."""
    ended = run.outcome.ended_by
    for t in run.turns:
        if t.type == "function_call":
            assert not re.match(r"exit_\w+$|reset$", t.name or ""), (run.run_id, t.name)
            assert not SCORING.search(t.result or ""), (run.run_id, t.turn, t.result)
            if t.result is not None:
                assert t.is_error in (True, False), (run.run_id, t.turn)
    closing = run.turns[-1]
    assert closing.type == "episode_over"
    if harness.is_harness(ended):
        assert closing.role == "harness" and closing.content == ended.split(":", 1)[1].strip()
    else:
        assert closing.role != "harness"
    assert sum(1 for t in run.turns if t.type == "episode_over") == 1


# -- SWE-bench experiment folders ------------------------------------------------------------

def test_experiment_folder_verdicts_and_true_skip_messages():
    runs, report = _load(EXPERIMENT)
    by_id = {r.run_id: r for r in runs}
    assert set(by_id) == {"acme__widgets-101", "acme__widgets-102", "acme__widgets-103"}
    assert by_id["acme__widgets-101"].outcome.success is True  # resolved_ids
    assert by_id["acme__widgets-102"].outcome.success is False  # empty_patch_ids
    assert by_id["acme__widgets-103"].outcome.success is False  # unresolved_ids
    assert all("results/results.json" in r.source["outcome_from"] for r in runs)
    assert report.missing_outcome == 2
    incomplete = next(e for e in report.errors if "acme__widgets-104" in e)
    assert "incomplete_ids" in incomplete and "evaluation did not finish" in incomplete
    absent = next(e for e in report.errors if "acme__widgets-105" in e)
    assert "does not list it" in absent and "incomplete" not in absent
    # logs/ and results/ are evaluation output, not runs: listed as ignored, not as errors
    assert not any("/logs/" in e or "report.json" in e or "all_preds" in e for e in report.errors)
    assert any(i.endswith("logs: evaluation output of a SWE-bench experiment folder (verdicts are read from "
                          "results/results.json), not runs") for i in report.ignored)


def test_skip_message_names_the_outcomes_file_that_was_passed(tmp_path):
    out = tmp_path / "outcomes.json"
    out.write_text(json.dumps({"acme__widgets-105": "failure"}))
    runs, report = _load(EXPERIMENT, outcomes=out)
    assert "acme__widgets-105" in {r.run_id for r in runs}
    message = next(e for e in report.errors if "acme__widgets-104" in e)
    assert f"--outcomes {out} has no entry for it" in message
    assert "pass --outcomes FILE" not in message


def test_swe_agent_harness_stops_are_not_agent_calls():
    runs, _ = _load(EXPERIMENT)
    by_id = {r.run_id: r for r in runs}
    cost = by_id["acme__widgets-101"]  # SWE-agent 0.x: an exit_cost action, then autosubmission
    assert [c.name for c in cost.actions] == ["find_file", "javac", "open", "edit", "edit", "mvn"]
    assert cost.outcome.ended_by == "harness: cost limit reached (exit_cost; patch autosubmitted)"
    closing = cost.turns[-1]
    assert closing.role == "harness" and closing.content.startswith("cost limit reached")
    assert closing.extra["observation"] == "Exited (autosubmitted)"
    assert cost.turns[-2].type == "answer"  # the autosubmitted patch is still the run's answer
    context = by_id["acme__widgets-102"]  # SWE-agent 1.x: a step with no action closes the run
    assert context.outcome.ended_by == "harness: context window exceeded (exit_context)"
    assert not any(t.type == "message" and "Exit due to" in (t.content or "") for t in context.turns)
    agent = by_id["acme__widgets-103"]
    assert agent.outcome.ended_by == "agent: submitted" and agent.turns[-1].role is None
    for run in runs:
        _check_contract(run)


def test_swe_agent_errors_the_agent_saw():
    runs, _ = _load(EXPERIMENT)
    cost = {r.run_id: r for r in runs}["acme__widgets-101"]
    marks = [(c.name, c.is_error) for c in cost.actions]
    assert marks == [("find_file", False), ("javac", True),  # command not found
                     ("open", False),  # a file view whose code says "// error:" is not an error
                     ("edit", True),  # rejected by the linter for a syntax error
                     ("edit", False), ("mvn", True)]  # [ERROR] build output


@pytest.mark.parametrize("stats, config, expected", [
    ({"api_calls": 50, "instance_cost": 0.4}, {"agent": {"step_limit": 50, "cost_limit": 3.0}},
     "harness: step limit reached (50 of 50 model calls; LimitsExceeded)"),
    ({"api_calls": 12, "instance_cost": 3.01}, {"agent": {"step_limit": 50, "cost_limit": 3.0}},
     "harness: cost limit reached ($3.01 of $3.00; LimitsExceeded)"),
    ({"api_calls": 12}, {}, "harness: step or cost limit reached (LimitsExceeded)"),
])
def test_mini_swe_agent_names_the_limit_that_stopped_it(tmp_path, stats, config, expected):
    src = FIX / "mini_swe_agent" / "pylint-dev__pylint-7080" / "pylint-dev__pylint-7080.traj.json"
    obj = json.loads(src.read_text())
    obj["info"].update(exit_status="LimitsExceeded", model_stats=stats, config=config)
    path = tmp_path / "pylint-dev__pylint-7080.traj.json"
    path.write_text(json.dumps(obj))
    runs, _ = _load(path, outcomes={"pylint-dev__pylint-7080": _verdict(False)})
    assert runs[0].outcome.ended_by == expected
    _check_contract(runs[0])


def _verdict(success):
    from wikitrace.runs.outcomes import Verdict

    return Verdict(success, None, "test")


# -- OpenAI chat (tau-bench) ---------------------------------------------------------------

def _tau(traj, reward=0.0):
    return {"task_id": 7, "trial": 0, "reward": reward, "info": {"task": {"instruction": "Change my flight."}},
            "traj": traj}


def _call(i, name, args="{}"):
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": args}}]}


def test_tau_bench_endings_and_error_results(tmp_path):
    system = {"role": "system", "content": "# Airline Agent Policy\nBe careful."}
    cut = [system, {"role": "user", "content": "Hi, change my flight."}]
    for i in range(3):
        cut += [_call(i, "get_reservation_details", '{"reservation_id": "ABC123"}'),
                {"role": "tool", "tool_call_id": f"c{i}", "content": "Error: reservation not found"}]
    handoff = [system, {"role": "user", "content": "I want a human."}, _call(9, "transfer_to_human_agents"),
               {"role": "tool", "tool_call_id": "c9", "content": "Transfer successful"}]
    stop = [system, {"role": "user", "content": "Cancel it."}, {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "Thanks ###STOP###"}]
    path = tmp_path / "tau.json"
    path.write_text(json.dumps([_tau(cut), dict(_tau(handoff), trial=1), dict(_tau(stop, 1.0), trial=2)]))
    runs, report = _load(path)
    assert not report.errors
    cut_run, handoff_run, stop_run = runs
    assert cut_run.outcome.ended_by.startswith("harness: step limit reached (cut off after 3 agent steps")
    assert [c.is_error for c in cut_run.actions] == [True, True, True]
    assert handoff_run.outcome.ended_by == "agent: transfer_to_human_agents"
    assert handoff_run.actions[0].is_error is False
    assert stop_run.outcome.ended_by == "user"
    for run in runs:
        _check_contract(run)


# -- ATIF statuses -------------------------------------------------------------------------

def test_atif_status_words_and_text_give_is_error(tmp_path):
    steps = [{"step_id": 1, "source": "user", "message": "Build it."}]
    for i, result in enumerate([{"content": "ok", "status": "failed"}, {"content": "done"},
                                {"content": "make: *** No rule to make target 'all'.\nmake: error: stop"},
                                {"content": "all good", "is_error": True}]):
        steps.append({"step_id": i + 2, "source": "agent", "message": "",
                      "tool_calls": [{"tool_call_id": f"t{i}", "function_name": "bash", "arguments": {"cmd": "make"}}],
                      "observation": {"results": [dict(result, source_call_id=f"t{i}")]}})
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps({"schema_version": "ATIF-v1.4", "session_id": "s1", "steps": steps}))
    runs, _ = _load(path, outcomes={"s1": _verdict(False)})
    assert [c.is_error for c in runs[0].actions] == [True, False, True, True]


# -- the text rule ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "/bin/bash: line 3: javac: command not found",
    "sh: 1: gradle: not found",
    "cat: pom.xml: No such file or directory",
    "Traceback (most recent call last):\n  File \"r.py\", line 1\nZeroDivisionError: division by zero",
    "src/App.java:14: error: ';' expected",
    "fatal: pathspec 'x' did not match any files",
    "[ERROR] Failed to execute goal org.apache.maven.plugins",
    "npm ERR! missing script: test",
    "error[E0425]: cannot find value `x` in this scope",
    "Exception in thread \"main\" java.lang.IllegalStateException",
    "Your proposed edit has introduced new syntax error(s). Please fix it.",
    "Invalid action!",
    "Nothing happens.",
    "Could not find [Foo Bar]. Similar: ['Foo']",
    "Error: payment method not found",
])
def test_error_shapes(text):
    assert observation_is_error(text) is True


@pytest.mark.parametrize("text", [
    "[File: /r/a.py (3 lines total)]\n1:def f():\n2:    raise ValueError('error: bad')\n3:",
    "    Raises:\n        ValueError: if the input is empty",
    "Found 2 matches for \"error\" in /repo",
    "File updated. Please review the changes and make sure they are correct.",
    "No more results.",
    "OK.",
    "{\"status\": \"error: none\", \"id\": 3}",
    "The error rate of the model was 3%.",
    "",
])
def test_not_error_shapes(text):
    assert observation_is_error(text) is False


# -- ReAct notebook printouts ---------------------------------------------------------------

def test_fever_printout_verdicts_ids_and_step_limit():
    runs, report = _load(NOTEBOOK / "fever_printout.txt")
    assert report.detected == {str(NOTEBOOK / "fever_printout.txt"): "react-notebook"} and not report.errors
    by_id = {r.run_id: r for r in runs}
    assert set(by_id) == {"fever_printout-1021", "fever_printout-2417", "fever_printout-808"}
    good, bad, limit = by_id["fever_printout-1021"], by_id["fever_printout-2417"], by_id["fever_printout-808"]
    assert good.outcome.success is True and good.outcome.score == 1.0 and good.task.id == "fever-1021"
    assert good.task.instruction == "The Danube flows through exactly three capital cities."
    assert bad.outcome.success is False and bad.task.metadata["gold_answer"] == "NOT ENOUGH INFO"
    assert bad.actions[-1].name == "Finish" and bad.actions[-1].result == ""  # the reward line is gone
    # seven steps without a finishing answer in the real notebook: the harness ended it
    assert limit.outcome.ended_by.startswith("harness: step limit reached")
    assert [c.is_error for c in limit.actions] == [True, False, True, True]  # not found, lookup, invalid x2
    assert limit.actions[2].name == "Finish" and limit.actions[2].arguments == "NOT ENOUGH INFO"  # split action line
    for run in runs:
        _check_contract(run)


def test_hotpotqa_printout_boolean_rewards():
    runs, report = _load(NOTEBOOK / "hotpotqa_printout.txt")
    assert not report.errors
    assert [(r.run_id, r.outcome.success, r.outcome.ended_by) for r in runs] == [
        ("hotpotqa_printout-5512", True, "agent"), ("hotpotqa_printout-77", False, "agent")]
    assert runs[1].task.metadata["gold_answer"] == "Larry Page and Sergey Brin"
    assert not any("Sergey" in (t.result or "") + (t.content or "") for t in runs[1].turns)
    for run in runs:
        _check_contract(run)


def test_webshop_printout_scores_resets_and_thoughts():
    runs, report = _load(NOTEBOOK / "webshop_printout.txt")
    assert not report.errors
    by_id = {r.run_id: r for r in runs}
    assert list(by_id) == [f"webshop_printout-{i}" for i in range(4)]
    assert [r.outcome.score for r in runs] == [1.0, 0.5, 0.0, 0.0]  # the last two from the running tally
    assert [r.outcome.success for r in runs] == [True, False, False, False]
    towel = by_id["webshop_printout-0"]
    assert towel.task.instruction == "i want a pack of two cotton tea towels in grey, and price lower than 20.00 dollars"
    assert towel.turns[0].role == "user" and towel.turns[0].extra == {"harness_action": "reset"}
    assert [c.name for c in towel.actions] == ["search", "click", "click", "click"]  # think is no call
    assert towel.actions[1].reasoning.startswith("B0TOWEL001 is grey cotton")
    assert by_id["webshop_printout-1"].actions[2].is_error is True  # Invalid action!
    assert by_id["webshop_printout-2"].outcome.ended_by.startswith("harness: step limit reached")
    bottle = by_id["webshop_printout-3"]
    assert bottle.outcome.ended_by == "agent"  # bought, scored 0
    # a thought the model's token limit cut before its "]" is still a thought, not a call named "think[For"
    assert [c.name for c in bottle.actions] == ["search", "click", "click"]
    assert bottle.actions[-1].reasoning.startswith("For a stainless steel water bottle of 1 liter")
    for run in runs:
        _check_contract(run)


def test_alfworld_printout_verdicts():
    runs, report = _load(NOTEBOOK / "alfworld_printout.txt")
    assert not report.errors
    won, lost = runs
    assert won.run_id == "alfworld_printout-1" and won.outcome.success is True
    assert won.task.id.startswith("pick_and_place_simple-Mug") and won.task.instruction == "put a mug on the desk."
    assert won.actions[0].reasoning.startswith("First I need to find a mug")  # think: is reasoning
    assert lost.outcome.success is False and lost.outcome.ended_by.startswith("harness: step limit reached")
    assert [c.is_error for c in lost.actions] == [False, True, False, True]  # Nothing happens.
    for run in runs:
        _check_contract(run)


# -- Reflexion logs ------------------------------------------------------------------------

def test_reflexion_scoring_lines_and_readable_ids():
    runs, _ = _load(FIX / "react" / "hotpotqa_small.txt")
    assert {r.run_id for r in runs} == {"hotpotqa_small-q001-t1", "hotpotqa_small-q002-t1",
                                        "hotpotqa_small-q003-t1", "hotpotqa_small-q002-t2"}
    for run in runs:
        _check_contract(run)
    halted = next(r for r in runs if r.source["label"] == "HALTED")
    assert halted.turns[-1].role == "harness"


def test_reflexion_block_without_verdict_takes_a_hand_written_outcome(tmp_path):
    log = tmp_path / "notes.txt"
    log.write_text("Question: Where is the Louvre?\nThought 1: Search it.\nAction 1: Search[Louvre]\n"
                   "Observation 1: The Louvre is a museum in Paris.\nThought 2: Paris.\nAction 2: Finish[Paris]\n"
                   "Observation 2: Episode finished\n")
    runs, report = _load(log)
    assert runs == [] and "no outcome for run 'notes-q001'" in report.errors[0]
    runs, report = _load(log, outcomes={"notes-q001": _verdict(True)})
    assert runs[0].outcome.success is True


def test_reflexion_answer_line_gives_the_verdict_outside_sections(tmp_path):
    log = tmp_path / "loose.txt"
    log.write_text("Question: Where is the Louvre?\nThought 1: Paris.\nAction 1: Finish[Paris]\n"
                   "Observation 1: Answer is CORRECT\nCorrect answer: Paris\n")
    runs, _ = _load(log)
    assert runs[0].outcome.success is True and runs[0].actions[0].result == ""
    _check_contract(runs[0])


def test_harbor_trial_that_timed_out_ends_by_the_harness(tmp_path):
    trial = tmp_path / "hello-world__T1"
    (trial / "agent").mkdir(parents=True)
    src = FIX / "atif" / "hello-world__Xk2p9" / "agent" / "trajectory.json"
    (trial / "agent" / "trajectory.json").write_bytes(src.read_bytes())
    (trial / "result.json").write_text(json.dumps({
        "trial_name": "hello-world__T1", "verifier_result": {"rewards": {"reward": 0.0}},
        "exception_info": {"exception_type": "AgentTimeoutError",
                           "exception_message": "Agent execution timed out after 900.0 seconds\nstack..."}}))
    runs, _ = _load(trial / "agent" / "trajectory.json")
    run = runs[0]
    assert run.outcome.success is False
    assert run.outcome.ended_by == ("harness: the trial stopped with AgentTimeoutError "
                                    "(Agent execution timed out after 900.0 seconds)")
    _check_contract(run)


@pytest.mark.parametrize("text, expected", [
    ("===== 1 failed, 3 passed in 0.12s =====", True),
    ("FAILED tests/test_cart.py::test_total - assert 90 == 100", True),
    ("[ERROR] Tests run: 4, Failures: 1, Errors: 0, Skipped: 0", True),
    ("BUILD FAILURE", True),
    ("===== 3 passed in 0.12s =====", False),
    ("Tests run: 4, Failures: 0, Errors: 0, Skipped: 0\nBUILD SUCCESS", False),
    ("@dataclass\nclass Result:\n    error: str = ''", False),  # program text, indented
])
def test_failing_tests_and_program_text(text, expected):
    assert observation_is_error(text) is expected


def test_report_passed_as_outcomes_says_the_run_is_incomplete(tmp_path):
    trajs = tmp_path / "trajs"
    trajs.mkdir()
    for name in ("acme__widgets-103", "acme__widgets-104"):
        (trajs / f"{name}.traj").write_bytes((EXPERIMENT / "trajs" / f"{name}.traj").read_bytes())
    report_file = tmp_path / "final_report.json"
    report_file.write_bytes((EXPERIMENT / "results" / "results.json").read_bytes())
    runs, report = _load(trajs, outcomes=report_file)
    assert [r.run_id for r in runs] == ["acme__widgets-103"]
    message = next(e for e in report.errors if "acme__widgets-104" in e)
    assert f"{report_file} lists it in incomplete_ids" in message and "pass --outcomes" not in message
    assert "has no entry" not in message


def test_native_records_follow_the_same_rules():
    """examples/runs.jsonl: a harness-ended run closes with a harness turn; calls without
    is_error are judged by their text."""
    example = Path(__file__).resolve().parents[1] / "examples" / "runs.jsonl"
    records = [json.loads(line) for line in example.read_text().splitlines() if line.strip()]
    limited = next(r for r in records if (r["outcome"].get("ended_by") or "").startswith("harness"))
    for t in limited["turns"]:
        t.pop("is_error", None)
    from wikitrace.runs.native import run_from_dict

    run = run_from_dict(limited, "example")
    assert all(c.is_error is True for c in run.actions)  # "Error: order ... not found"
    _check_contract(run)
