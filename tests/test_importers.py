"""Importers on small hand-written fixtures: detection, turn mapping, outcomes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikitrace.runs import _common, atif, claude_code, codex_cli, load, mini_swe_agent, react_text, swe_agent
from wikitrace.runs import outcomes as oc
from wikitrace.runs.load import LoadReport, detect, iter_runs
from wikitrace.runs.model import Run, RunError

FIX = Path(__file__).parent / "fixtures" / "importers"
CLAUDE = FIX / "claude_code" / "0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90.jsonl"
ROLLOUT = FIX.parent / "capture" / "rollout-2026-11-30T10-04-09-0199a3f2-7c41-7e90-b2d8-5a1c6e3f9b04.jsonl"


def _items(module, path):
    items = list(module.read(path))
    return [i for i in items if isinstance(i, Run)], [i for i in items if isinstance(i, RunError)]


def _load(*paths, **kw):
    report = LoadReport()
    runs = list(iter_runs([Path(p) for p in paths], kw.pop("fmt", None), report, **kw))
    return runs, report


def _by_type(run, kind):
    return [t for t in run.turns if t.type == kind]


# -- detection ----------------------------------------------------------------------------

@pytest.mark.parametrize("path, fmt", [
    (FIX / "swe_agent" / "astropy__astropy-12907.traj", "swe-agent"),
    (FIX / "mini_swe_agent" / "sympy__sympy-20590" / "sympy__sympy-20590.traj.json", "mini-swe-agent"),
    (CLAUDE, "claude-code"),
    (FIX / "atif" / "standalone" / "trajectory.json", "atif"),
    (FIX / "react" / "hotpotqa_small.txt", "react-text"),
])
def test_detect(path, fmt):
    assert detect(path) == fmt


def test_detect_by_content_without_telltale_names(tmp_path):
    """Renamed files are still recognised from their content."""
    for src, fmt in [
        (FIX / "atif" / "standalone" / "trajectory.json", "atif"),
        (FIX / "mini_swe_agent" / "pylint-dev__pylint-7080" / "pylint-dev__pylint-7080.traj.json", "mini-swe-agent"),
        (FIX / "swe_agent" / "django__django-11099.traj", "swe-agent"),
        (CLAUDE, "claude-code"),
        (FIX / "react" / "hotpotqa_small.txt", "react-text"),
    ]:
        dst = tmp_path / ("renamed" + (".jsonl" if src.suffix == ".jsonl" else ".json" if src.suffix != ".txt" else ".log"))
        dst.write_bytes(src.read_bytes())
        assert detect(dst) == fmt, src


def test_detected_formats_are_reported():
    _, report = _load(FIX)
    assert set(report.detected.values()) == {"swe-agent", "mini-swe-agent", "claude-code", "atif", "react-text",
                                             "react-notebook", "otlp", "inspect-ai", "agents-sdk", "langfuse",
                                             "openhands", "openai-chat"}
    # verdict and outcome files beside the runs are not taken for runs
    assert not any(p.endswith(("results.json", "result.json", "report.json", "outcomes.csv", "outcomes.json"))
                   for p in report.detected)


def test_format_names_and_aliases():
    assert load.format_name("Reflexion") == "react-text"
    assert load.format_name("tau-bench") == "openai-chat"
    assert set(load.FORMATS) >= {"native", "openai-chat", "swe-agent", "mini-swe-agent", "claude-code", "atif", "react-text",
                                 "otlp", "inspect-ai", "agents-sdk", "langfuse", "openhands"}
    assert load.format_name("OpenInference") == "otlp" and load.format_name("inspect") == "inspect-ai"
    with pytest.raises(RunError, match="unknown format"):
        load.format_name("nope")


# -- SWE-agent ----------------------------------------------------------------------------

def test_swe_agent_turns_and_results_json():
    runs, errors = _items(swe_agent, FIX / "swe_agent" / "astropy__astropy-12907.traj")
    assert not errors and len(runs) == 1
    run = runs[0]
    assert run.run_id == run.task.id == "astropy__astropy-12907"
    assert run.task.instruction.startswith("Modeling's `separability_matrix`")  # text after ISSUE:
    calls = run.actions
    assert [c.name for c in calls] == ["create", "python", "edit", "submit"]
    assert calls[0].reasoning == "First I reproduce the bug."
    assert calls[1].result.startswith("Traceback")
    assert calls[2].arguments.startswith("edit 245:245\n")
    # a step without an action stays a message, its observation a tool message
    assert any(t.type == "message" and t.role == "assistant" and "could not parse" in t.content for t in run.turns)
    assert _by_type(run, "answer")[0].content.startswith("diff --git")
    assert run.turns[-1].type == "episode_over" and run.turns[-1].extra["ended_by"] == "agent: submitted"
    assert run.outcome.success is True and run.outcome.steps == 4
    assert "results.json" in run.source["outcome_from"]
    assert run.source["original"]["info"]["exit_status"] == "submitted"


def test_swe_agent_unresolved_and_missing_outcome():
    runs, report = _load(FIX / "swe_agent")
    by_id = {r.run_id: r for r in runs}
    assert by_id["django__django-11099"].outcome.success is False
    assert by_id["django__django-11099"].task.instruction == "UsernameValidator allows trailing newline in usernames"
    assert by_id["django__django-11099"].outcome.ended_by == "harness: cost limit reached (exit_cost)"
    assert "psf__requests-2317" not in by_id  # not in results.json: reported and skipped
    assert report.missing_outcome == 1
    assert any("no outcome for run 'psf__requests-2317'" in e and "--outcomes" in e for e in report.errors)


def test_missing_outcome_strict_raises():
    with pytest.raises(RunError, match="no outcome for run 'psf__requests-2317'"):
        _load(FIX / "swe_agent", strict=True)


def test_outcomes_file_fills_missing(tmp_path):
    out = tmp_path / "outcomes.jsonl"
    out.write_text('{"run_id": "psf__requests-2317", "outcome": "failure", "score": 0.5}\n')
    runs, report = _load(FIX / "swe_agent", outcomes=out)
    run = {r.run_id: r for r in runs}["psf__requests-2317"]
    assert run.outcome.success is False and run.outcome.score == 0.5 and run.outcome.steps == 1
    assert report.missing_outcome == 0
    assert report.outcomes == {"success": 1, "failure": 2}


# -- mini-swe-agent -----------------------------------------------------------------------

def test_mini_swe_agent_v1_code_blocks():
    path = FIX / "mini_swe_agent" / "sympy__sympy-20590" / "sympy__sympy-20590.traj.json"
    runs, errors = _items(mini_swe_agent, path)
    assert not errors
    run = runs[0]
    assert run.outcome is None  # no verdict in the file and no results.json nearby
    assert run.task.instruction.startswith("Consider the following PR description")
    calls = run.actions
    assert [c.arguments["command"] for c in calls][:2] == [
        "grep -n __slots__ sympy/core/symbol.py", "python -c 'import sympy; sympy.Symbol(\"x\").__dict__'"]
    assert calls[0].reasoning == "THOUGHT: Find where Symbol defines __slots__."
    assert calls[0].is_error is False and calls[1].is_error is True  # from <returncode>
    # the format-error reply is a message, not an observation
    assert any(t.type == "message" and t.role == "user" and "EXACTLY ONE" in t.content for t in run.turns)
    # the submit command has no observation: its result is the submission
    assert calls[-1].result.startswith("diff --git") and calls[-1].is_error is False
    assert run.source["ended_by"] == "agent: submitted"


def test_mini_swe_agent_v2_actions_and_outcomes_csv():
    runs, report = _load(FIX / "mini_swe_agent", outcomes=FIX / "mini_swe_agent" / "outcomes.csv")
    by_id = {r.run_id: r for r in runs}
    assert by_id["sympy__sympy-20590"].outcome.success is True
    v2 = by_id["pylint-dev__pylint-7080"]
    assert v2.outcome.success is False and v2.outcome.ended_by == "harness: step or cost limit reached (LimitsExceeded)"
    assert [c.arguments["command"] for c in v2.actions] == ["ls pylint", "pytest tests/test_self.py -x"]
    assert [c.is_error for c in v2.actions] == [False, True]  # extra.returncode
    assert not report.errors


def test_mini_swe_agent_without_outcome_is_skipped():
    runs, report = _load(FIX / "mini_swe_agent")
    assert runs == [] and report.missing_outcome == 2


# -- Claude Code --------------------------------------------------------------------------

def test_claude_code_session():
    runs, errors = _items(claude_code, CLAUDE)
    assert not errors
    run = runs[0]
    assert run.run_id == "0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90"
    assert run.task.instruction == "The cart total test fails; please fix it."  # isMeta caveat skipped
    assert run.task.metadata["model"] == "claude-sonnet-4-20250514"
    bash, task_call, edit = run.actions
    assert bash.name == "Bash" and bash.arguments["command"] == "pytest tests/test_cart.py"
    assert bash.reasoning == "I should run the tests first.\n\nLet me run the test suite."  # thinking + text
    assert bash.is_error is True and "assert 90 == 100" in bash.result
    assert task_call.result == "The discount is applied twice in cart.py line 40."  # list content
    assert edit.reasoning == "Fixing the double discount." and edit.is_error is False  # no flag: judged by its text
    # sidechain entries are kept apart: not turns, counted
    assert run.source["sidechain_entries"] == 2 and run.source["meta_entries"] == 1
    assert not any("In cart.py line 40." == (t.content or "") for t in run.turns)
    assert run.turns[-2].content == "Fixed: the discount was applied twice."
    assert len(run.source["original"]) == 14  # every line, sidechains included


def test_claude_code_sidechain_only_file_is_reported():
    runs, errors = _items(claude_code, FIX / "claude_code" / "agent-5e21.jsonl")
    assert runs == [] and "only sidechain" in str(errors[0])


def test_claude_code_needs_outcomes():
    runs, report = _load(FIX / "claude_code")
    assert runs == [] and report.missing_outcome == 1
    runs, report = _load(FIX / "claude_code", outcomes=FIX / "claude_code" / "outcomes.json")
    assert len(runs) == 1 and runs[0].outcome.success is True
    assert sum("only sidechain" in e for e in report.errors) == 1


def test_claude_code_bad_lines_are_reported_and_rest_read(tmp_path):
    lines = CLAUDE.read_text().splitlines()
    lines.insert(3, '{"type": "assistant", "message": {"content": [')  # cut-off line
    lines.insert(5, "\x01\x02 not json")
    bad = tmp_path / "session.jsonl"
    bad.write_bytes(("\n".join(lines) + "\n").encode() + b"\xff\xfe oops\n")
    runs, errors = _items(claude_code, bad)
    assert len(runs) == 1 and len(runs[0].actions) == 3
    assert [str(e).split(": ", 1)[0] for e in errors] == [f"{bad}:4", f"{bad}:6", f"{bad}:{len(lines) + 1}"]


def test_codex_rollout_bad_lines_are_reported_and_rest_read(tmp_path):
    lines = ROLLOUT.read_text().splitlines()
    lines.insert(2, '{"timestamp": "T", "type": "response_item", "payload": {"type": "mess')  # cut-off line
    lines.insert(4, '["a", "list", "not", "an", "object"]')
    bad = tmp_path / ROLLOUT.name
    bad.write_text("\n".join(lines) + "\n")
    runs, errors = _items(codex_cli, bad)
    assert len(runs) == 1 and [c.name for c in runs[0].actions] == ["shell", "apply_patch", "shell", "shell"]
    assert [str(e).split(": ", 1)[0] for e in errors] == [f"{bad}:3", f"{bad}:5"]
    assert "must be a JSON object" in str(errors[1])
    # the run keeps every line that parsed, the list included, as the file had them
    assert runs[0].source["original"][3] == ["a", "list", "not", "an", "object"]


@pytest.mark.parametrize("module", [claude_code, codex_cli])
def test_a_binary_session_file_is_one_error_and_no_run(tmp_path, module):
    path = tmp_path / "rollout-0001.jsonl"
    path.write_bytes(b"\x00\x01\x02 PK not a log")
    runs, errors = _items(module, path)
    assert runs == [] and len(errors) == 1 and "binary file" in str(errors[0])


# -- ATIF ---------------------------------------------------------------------------------

def test_atif_harbor_trial_with_reward():
    path = FIX / "atif" / "hello-world__Xk2p9" / "agent" / "trajectory.json"
    runs, errors = _items(atif, path)
    assert not errors
    run = runs[0]
    assert run.run_id == "hello-world__Xk2p9" and run.task.id == "hello-world"
    assert run.outcome.success is True and run.outcome.score == 1.0 and run.outcome.steps == 2
    first, second = run.actions
    assert first.reasoning == "One echo is enough.\n\nI will write the file."
    assert second.reasoning is None and second.result == "Hello, world!"
    assert first.result == ""
    assert any(t.role == "tool" and t.content == "context compacted" for t in run.turns)  # no source_call_id
    last_msg = [t for t in run.turns if t.type == "message"][-1]
    assert last_msg.role == "assistant" and last_msg.reasoning == "Verified."


def test_atif_errors_and_subagents_without_verdict():
    runs, errors = _items(atif, FIX / "atif" / "standalone" / "trajectory.json")
    run = runs[0]
    assert run.outcome is None
    edit, delegate = run.actions
    assert edit.arguments == {"path": "/etc/nginx/nginx.conf"} and edit.is_error is True
    assert delegate.result == "subagent: sub-1" and delegate.extra["subagent_trajectory_ref"]


# -- ReAct / Reflexion --------------------------------------------------------------------

def test_react_text_sections_duplicates_and_reflections():
    runs, report = _load(FIX / "react" / "hotpotqa_small.txt")
    # 8 blocks: 4 distinct runs, 1 conflicting label reported, 3 exact copies dropped
    assert len(runs) == 4 and report.deduplicated == 3 and len(report.errors) == 1
    assert "INCORRECT at line 20" in report.errors[0] and "HALTED" in report.errors[0]
    by_label = {}
    for r in runs:
        by_label.setdefault(r.source["label"], []).append(r)
    halted = by_label["HALTED"][0]
    assert halted.outcome.success is False and halted.outcome.ended_by == react_text.HALTED
    assert [c.name for c in halted.actions] == ["Search", "Lookup"] and halted.actions[1].arguments == "sequel"
    rhine = next(r for r in runs if "Rhine" in r.task.instruction)
    assert rhine.outcome.success is True and rhine.task.metadata["gold_answer"] == "Amsterdam"
    assert rhine.actions[0].result.endswith("It passes Basel and Cologne on the way.")  # multi-line observation
    assert _by_type(rhine, "answer")[0].content == "Amsterdam"
    reflected = [r for r in runs if r.task.metadata.get("reflections")]
    assert len(reflected) == 1
    assert reflected[0].task.instruction == "What year did the band that recorded Blue Monday form?"
    assert reflected[0].task.metadata["reflections"] == [
        "I guessed the founding year without checking the New Order page.\nNext time search New Order directly."]
    # the same question with and without reflection is the same task, two runs
    assert len({r.task.id for r in runs if "Blue Monday" in r.task.instruction}) == 1
    assert rhine.source["original"].startswith("Question: Which city")


def test_react_text_without_sections_uses_explicit_answer_verdict(tmp_path):
    log = tmp_path / "plain.log"
    log.write_text("Question: 2+2?\nThought 1: easy\nAction 1: Finish[4]\nObservation 1: Answer is CORRECT\n"
                   "Question: 3+3?\nThought 1: hmm\nAction 1: Search[3+3]\nObservation 1: nothing\n")
    runs, report = _load(log)
    assert [r.outcome.success for r in runs] == [True]
    assert report.missing_outcome == 1  # the second has no verdict at all


# -- outcomes -----------------------------------------------------------------------------

def test_outcome_file_shapes(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"r1": "success", "r2": False, "r3": 0.5, "r4": {"success": True, "score": 0.9}}))
    t = oc.load_outcomes(tmp_path / "a.json")
    assert [(t[k].success, t[k].score) for k in ("r1", "r2", "r3", "r4")] == [
        (True, None), (False, None), (False, 0.5), (True, 0.9)]
    (tmp_path / "b.csv").write_text("run_id,outcome,score\nr1,passed,\nr2,FAILED,0\n\nr3,,1.0\n")
    t = oc.load_outcomes(tmp_path / "b.csv")
    assert [(t[k].success, t[k].score) for k in ("r1", "r2", "r3")] == [(True, None), (False, 0.0), (True, 1.0)]
    (tmp_path / "c.tsv").write_text("id\tsuccess\nr1\ttrue\n")
    assert oc.load_outcomes(tmp_path / "c.tsv")["r1"].success is True
    (tmp_path / "d.json").write_text(json.dumps([{"instance_id": "x", "resolved": True}]))
    assert oc.load_outcomes(tmp_path / "d.json")["x"].success is True
    (tmp_path / "e.json").write_text(json.dumps({"resolved_ids": ["a"], "unresolved_ids": ["b"], "error_ids": ["c"],
                                                 "completed_ids": ["a", "b"], "incomplete_ids": ["d"]}))
    t = oc.load_outcomes(tmp_path / "e.json")
    assert {k: v.success for k, v in t.items()} == {"a": True, "b": False, "c": False}


@pytest.mark.parametrize("text, match", [
    ('{"r1": "maybe"}', "not one of success/failure"),
    ("run_id,outcome\nr1,\n", "no verdict"),
    ("name,outcome\nr1,success\n", "run id column"),
    ('{"run_id": "r1", "outcome": "success"}\n{"run_id": "r1", "outcome": "failure"}\n', "different verdict"),
    ('{"run_id": "r1", "outcome": "success"}\n{"run_id": \n', ":2: not valid JSON"),
    ('{"r1": {"success": true, "score": "high"}}', "not a number"),
])
def test_outcome_file_errors(tmp_path, text, match):
    path = tmp_path / ("o.csv" if text.startswith(("run_id,", "name,")) else "o.json")
    path.write_text(text)
    with pytest.raises(RunError, match=match):
        oc.load_outcomes(path)


def test_outcomes_never_override_a_verdict_from_the_input(tmp_path):
    table = {"astropy__astropy-12907": oc.Verdict(False, None, "x")}
    runs, _ = _load(FIX / "swe_agent" / "astropy__astropy-12907.traj", outcomes=table)
    assert runs[0].outcome.success is True


def test_tally_and_summary():
    runs, report = _load(FIX / "react" / "hotpotqa_small.txt")
    counts = oc.tally(runs)
    assert counts == {"success": 2, "failure": 2} == report.outcomes
    assert oc.summary(counts) == "4 runs: 2 success, 2 failure"
    assert report.summary() == "4 runs: 2 success, 2 failure (3 identical copies dropped; 1 problem)"
    counted, _ = load.count_outcomes([FIX / "react"])
    assert counted == {"success": 2, "failure": 2}


# -- bad input ----------------------------------------------------------------------------

def _one_line_errors(report):
    for e in report.errors:
        assert "\n" not in e and e.split(":", 1)[0], e
    return report.errors


def test_truncated_json_file(tmp_path):
    src = (FIX / "swe_agent" / "astropy__astropy-12907.traj").read_text()
    bad = tmp_path / "cut.traj"
    bad.write_text(src[: len(src) // 2])
    runs, report = _load(bad)
    (err,) = _one_line_errors(report)
    assert runs == [] and err.startswith(f"{bad}:") and "not valid JSON" in err and "truncated" in err


def test_wrong_encodings(tmp_path):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Question: Caf\u00e9?\nThought 1: x\nAction 1: Finish[x]\n".encode("latin-1"))
    utf16 = tmp_path / "wide.jsonl"
    utf16.write_bytes(CLAUDE.read_text().encode("utf-16"))
    bom = tmp_path / "bom.traj"
    bom.write_bytes(b"\xef\xbb\xbf" + (FIX / "swe_agent" / "django__django-11099.traj").read_bytes())
    table = {"django__django-11099": oc.Verdict(True), "latin-q001": oc.Verdict(False),
             "0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90": oc.Verdict(True)}
    runs, report = _load(latin, utf16, bom, fmt=None, outcomes=table)
    assert not report.errors
    by_id = {r.run_id: r for r in runs}
    # not UTF-8: read anyway, the byte that is not UTF-8 replaced and counted for its run
    assert by_id["latin-q001"].task.instruction == "Caf\ufffd?"
    assert by_id["latin-q001"].source["repaired_chars"] == 1 and report.repaired == 1
    # UTF-16 with a byte-order mark is decoded as such
    assert len(by_id["0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90"].actions) == 3
    assert "bom" in by_id  # a UTF-8 BOM is fine; outcome keyed by problem_statement.id


def test_binary_and_other_files_in_an_input_folder(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.traj").write_bytes((FIX / "swe_agent" / "django__django-11099.traj").read_bytes())
    (tmp_path / "runs" / "core.json").write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\x00" * 50)
    (tmp_path / "runs" / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    (tmp_path / "runs" / "NOTES.txt").write_text("just notes\n")
    (tmp_path / "runs" / "empty.jsonl").write_text("")
    runs, report = _load(tmp_path / "runs", outcomes={"a": oc.Verdict(False)})
    errors = _one_line_errors(report)
    assert [r.run_id for r in runs] == ["a"]
    assert any(e.startswith(str(tmp_path / "runs" / "core.json")) and "binary" in e for e in errors)
    assert any(e.startswith(str(tmp_path / "runs" / "empty.jsonl")) and "empty" in e for e in errors)
    assert str(tmp_path / "runs" / "photo.png") in report.ignored
    assert str(tmp_path / "runs" / "NOTES.txt") in report.ignored, report.errors


def test_empty_runs(tmp_path):
    only_summary = tmp_path / "s.jsonl"
    only_summary.write_text('{"type": "summary", "summary": "x", "leafUuid": "u"}\n')
    no_steps = tmp_path / "x.traj"
    no_steps.write_text(json.dumps({"trajectory": [], "history": []}))
    empty_atif = tmp_path / "trajectory.json"
    empty_atif.write_text(json.dumps({"schema_version": "ATIF-v1.4", "session_id": "s", "steps": []}))
    _, report = _load(only_summary, no_steps, empty_atif, fmt=None)
    errors = _one_line_errors(report)
    assert len(errors) == 3 and all("no " in e for e in errors)


def test_duplicate_run_ids(tmp_path):
    a = tmp_path / "a" / "django__django-11099.traj"
    b = tmp_path / "b" / "django__django-11099.traj"
    c = tmp_path / "c" / "django__django-11099.traj"
    for p in (a, b, c):
        p.parent.mkdir()
    a.write_bytes((FIX / "swe_agent" / "django__django-11099.traj").read_bytes())
    b.write_bytes(a.read_bytes())  # an exact copy
    other = json.loads(a.read_text())
    other["trajectory"][0]["observation"] = "something else"
    c.write_text(json.dumps(other))  # same id, different run
    runs, report = _load(a, b, c, outcomes={"django__django-11099": oc.Verdict(False)})
    # a different run of the same task (another experiment's folder) is kept under a qualified id
    assert [r.run_id for r in runs] == ["django__django-11099", "c/django__django-11099"]
    assert {r.task.id for r in runs} == {"django__django-11099"}  # still trials of one task
    assert report.duplicates == 1 and report.deduplicated == 0
    (first,) = _one_line_errors(report)
    assert first.startswith(f"{b}: run_id 'django__django-11099' appears again (an exact copy)")
    assert any(w.startswith(f"{c}: run_id 'django__django-11099' appears again (a different run); kept as "
                            "'c/django__django-11099'") for w in report.warnings)


def test_the_count_before_compiling_tells_copies_from_other_runs_of_one_id(tmp_path):
    """The count an LLM compile announces is the number of runs it compiles: another run under a
    used id (another experiment's folder) counts, a copy of one does not."""
    a, b, c = (tmp_path / d / "django__django-11099.traj" for d in "abc")
    other = json.loads((FIX / "swe_agent" / "django__django-11099.traj").read_text())
    for p in (a, b, c):
        p.parent.mkdir()
        p.write_bytes((FIX / "swe_agent" / "django__django-11099.traj").read_bytes())
    other["trajectory"][0]["observation"] = "something else"
    c.write_text(json.dumps(other))
    table = {"django__django-11099": oc.Verdict(False)}
    counted, _ = load.count_outcomes([a, b, c], outcomes=table, redact=False)
    runs, _ = _load(a, b, c, outcomes=table)
    assert counted == {"failure": 2} and len(runs) == 2


def test_huge_single_turn_is_kept_and_clipping_is_marked(tmp_path, monkeypatch):
    obj = json.loads((FIX / "swe_agent" / "django__django-11099.traj").read_text())
    obj["trajectory"][0]["observation"] = "x" * 1_500_000
    path = tmp_path / "big.traj"
    path.write_text(json.dumps(obj))
    table = {"big": oc.Verdict(True)}
    runs, report = _load(path, outcomes=table)
    assert len(runs[0].actions[0].result) == 1_500_000 and report.clipped == 0  # > 1 MB: kept whole
    monkeypatch.setattr(_common, "MAX_FIELD_CHARS", 1000)
    monkeypatch.setattr(load, "clip_turns", lambda turns: _common.clip_turns(turns, 1000))
    runs, report = _load(path, outcomes=table)
    call = runs[0].actions[0]
    assert report.clipped == 1 and call.extra["clipped"] == {"result": 1_499_000}
    assert call.result.startswith("x" * 1000) and "clipped 1499000 characters" in call.result
    assert len(runs[0].source["original"]["trajectory"][0]["observation"]) == 1_500_000  # original intact


def test_malformed_records_in_openai_chat_and_native(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text("\n".join([
        json.dumps({"task_id": 1, "reward": 1.0, "traj": [{"role": "user", "content": "hi"}]}),
        '{"task_id": 2, "reward": 1.0, "traj": [',
        json.dumps({"task_id": 3, "reward": 1.0, "traj": [{"role": "assistant", "tool_calls": ["oops", 5]}],
                    "info": [1], "instruction": "do"}),
        json.dumps({"task_id": 4, "reward": "NaN", "traj": []}),
        '{"task_id": 5, "reward": 1' + "1" * 5000 + "}",
    ]) + "\n")
    runs, report = _load(chat, fmt="openai-chat")
    errors = _one_line_errors(report)
    assert [r.task.id for r in runs] == ["1", "3"]
    assert [e.split(": ", 1)[0] for e in errors] == [f"{chat}:2", f"{chat}:4", f"{chat}:5"]
    assert runs[0].source["original"]["task_id"] == 1
    native = tmp_path / "native.jsonl"
    native.write_text('{"run_id": "r", "turns": [' + "[" * 5000 + "]" * 5000 + "]}\n")
    runs, report = _load(native, fmt="native")
    assert runs == [] and len(_one_line_errors(report)) == 1


def test_openai_chat_run_keeps_original_and_is_redacted(tmp_path):
    chat = tmp_path / "chat.json"
    rec = {"task_id": 7, "trial": 0, "reward": 0.0, "info": {"task": {"instruction": "book a flight"}},
           "traj": [{"role": "user", "content": "my key is sk-proj-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"},
                    {"role": "assistant", "content": None, "tool_calls": [
                        {"id": "c1", "function": {"name": "login", "arguments": json.dumps({"token": "ghp_" + "a" * 36})}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": "ok"}]}
    chat.write_text(json.dumps([rec]))
    runs, report = _load(chat)
    run = runs[0]
    # the user turn, the task's initial observation and the original; the call and the original
    assert report.redactions == {"openai-key": 3, "github-token": 2}
    assert run.source["redactions"] == {"github-token": 2, "openai-key": 3}
    assert run.actions[0].arguments["token"].startswith("[REDACTED:github-token#")
    assert "sk-proj" not in json.dumps(run.source["original"])
    runs, report = _load(chat, redact=False)
    assert "sk-proj-" in runs[0].turns[0].content and not report.redactions


def test_outcome_warnings_for_conflicts_and_unused_entries(tmp_path):
    out = tmp_path / "outcomes.json"
    out.write_text(json.dumps({"astropy__astropy-12907": "failure", "psf__requests-2317": "success", "typo-id": "success"}))
    runs, report = _load(FIX / "swe_agent", outcomes=out)
    assert {r.run_id: r.outcome.success for r in runs} == {
        "astropy__astropy-12907": True, "django__django-11099": False, "psf__requests-2317": True}
    assert any("says failure for run 'astropy__astropy-12907'" in w and "kept the input's own verdict" in w
               for w in report.warnings)
    assert any("1 of 3 outcome entries matched no run (first: 'typo-id')" in w for w in report.warnings)
    assert not report.errors
