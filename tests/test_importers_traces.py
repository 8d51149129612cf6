"""Tracing and evaluation formats: OTLP (GenAI semconv, OpenInference), Langfuse, Inspect AI,
OpenHands, OpenAI Agents SDK — on fixtures written in their real shapes.

What users depend on: calls paired with their results by tool-call id, errors from the
records' own status, the framework's steps (retries, guardrails, handoffs) kept apart
from the agent's calls, outcomes only from a score or report the source holds (else a
refusal that says what to pass), credentials never reaching a corpus, and the same
export compiled again adding nothing.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from wikitrace.runs import agents_sdk, inspect_ai, langfuse, openhands, otlp, spans, trace_files
from wikitrace.runs.load import LoadReport, detect, iter_runs
from wikitrace.runs.model import Run, RunError
from wikitrace.runs.outcomes import Verdict

from test_importers_truth import _check_contract

FIX = Path(__file__).parent / "fixtures" / "importers"
OTLP_JSONL = FIX / "otlp" / "collector-export.jsonl"
PHOENIX = FIX / "otlp" / "phoenix-export.json"
INSPECT_EVAL = next((FIX / "inspect_ai").glob("*.eval"))
INSPECT_JSON = FIX / "inspect_ai" / "gsm_tools.json"
SDK = FIX / "agents_sdk" / "agents-trace-export.json"
LANGFUSE = FIX / "langfuse" / "langfuse-traces.json"
OH_OUTPUT = FIX / "openhands" / "swe_run" / "output.jsonl"
OH_TRAJ = FIX / "openhands" / "7c1e9d4a2b.json"
TRACING = [FIX / d for d in ("otlp", "inspect_ai", "agents_sdk", "langfuse", "openhands")]
# Runs whose source holds no verdict, and what a user would pass for them.
OUTCOMES = {"8e6a9f0b2c4d4e1f9a7b3c5d1e2f4a6b": "success", "gsm_tools-17-epoch2-Lm3QzR8wNc5vKp2TyB7dXe": "failure",
            "trace_6f1c2a9e0b8d4f3aa1c2d3e4f5a6b7c8": "failure", "trace_0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a": "success",
            "c2f8d1ef-1111-4b6c-8d2e-000000000003": "failure", "7c1e9d4a2b": "success"}
# Credentials planted in the fixtures: header values, config keys, keys inside JSON text, tool output.
PLANTED = ["7f3c9a1e55d04b2c8e6a0f9d3b7c1e42", "sk-proj-T3stOnlyKey0000aaaaBBBBccccDDDDeeee1234",
           "sk-proj-InvocationParamKey999999999999999", "sk-leaked0000000000000000000000000000",
           "ghp_R4nd0mT0kenF0rTest1ngOnly0000000000", "9d8c7b6a5f4e3d2c1b0a99887766554433",
           "live_4f3e2d1c0b9a8877665544332211ffee", "lf_9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d",
           "sk-ant-api03-FakeKeyForTestsOnly000000000000000000000000", "AKIAIOSFODNN7EXAMPLQ",
           "q8Vt2LmN4pRz7XwYb3Kc9HdJ6fGs1AeU0oIyTrEw"]


def _load(*paths, **kw):
    report = LoadReport()
    runs = list(iter_runs([Path(p) for p in paths], kw.pop("fmt", None), report, **kw))
    return runs, report


def _table(mapping):
    return {k: Verdict(v == "success", None, "test") for k, v in mapping.items()}


def _read(module, path):
    items = list(module.read(path))
    return {i.run_id: i for i in items if isinstance(i, Run)}, [i for i in items if isinstance(i, RunError)]


# -- detection ------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, fmt", [
    (OTLP_JSONL, "otlp"), (PHOENIX, "otlp"), (INSPECT_EVAL, "inspect-ai"), (INSPECT_JSON, "inspect-ai"),
    (SDK, "agents-sdk"), (LANGFUSE, "langfuse"), (OH_OUTPUT, "openhands"), (OH_TRAJ, "openhands"),
])
def test_detected_by_content_not_by_name(tmp_path, path, fmt):
    assert detect(path) == fmt
    renamed = tmp_path / ("export" + (".jsonl" if path.suffix == ".jsonl" else ".json"))
    renamed.write_bytes(path.read_bytes())
    assert detect(renamed) == fmt


def test_a_folder_mixing_every_format_compiles_in_one_read(tmp_path):
    mixed = tmp_path / "mixed"
    for folder in TRACING + [FIX / "claude_code", FIX / "swe_agent"]:
        shutil.copytree(folder, mixed / folder.name)
    runs, report = _load(mixed, outcomes=_table(OUTCOMES))
    formats = {r.source["format"] for r in runs}
    assert formats >= {"otlp", "inspect-ai", "agents-sdk", "langfuse", "openhands", "swe-agent"}
    assert set(report.detected.values()) >= {"otlp", "inspect-ai", "agents-sdk", "langfuse", "openhands"}
    assert not any("cannot tell the format" in e for e in report.errors), report.errors
    assert len([r for r in runs if r.source["format"] not in ("swe-agent", "claude-code")]) == 15


# -- pairing and errors ---------------------------------------------------------------------------

def _pairing(runs):
    calls = [t for r in runs for t in r.actions]
    missing = [t for t in calls if t.extra.get("unanswered")]
    return len(calls), len(missing)


def test_every_call_with_a_logged_result_is_paired(tmp_path):
    """Across all fixtures: each call gets its result, except the ones planted without any."""
    runs, _ = _load(*TRACING, outcomes=_table(OUTCOMES))
    calls, missing = _pairing(runs)
    # planted missing results: notify_customer (OTLP), refund_order (SDK), send_page (Langfuse),
    # warm_cache (OpenHands), chmod (Inspect: the message limit stopped the run first)
    assert missing == 5 and calls == 41
    for run in runs:
        assert run.source["pairing"]["calls"] == len(run.actions)
        _check_contract(run)


def test_otlp_genai_semconv_trace():
    runs, errors = _read(otlp, OTLP_JSONL)
    assert not errors
    run = runs["5b8efff798038103d269b633813fc60c"]  # one trace across two file-exporter lines
    assert [(c.name, c.extra.get("tool_call_id"), c.is_error) for c in run.actions] == [
        ("lookup_order", "call_Qx1", False), ("issue_refund", "call_Rf2", True), ("notify_customer", "call_Nt3", True)]
    assert run.actions[0].reasoning == "Let me look the order up." and run.actions[0].arguments == {"order_id": "88412"}
    assert run.actions[1].result.startswith("RefundLimitExceeded: refunds above 100.00")  # exception event
    assert run.actions[2].extra["unanswered"] is True
    retry = [t for t in run.turns if t.role == "harness" and t.type == "message"]
    assert [t.extra["harness"] for t in retry] == ["retry"] and "429" in retry[0].content
    assert run.turns[0].role == "system" and run.task.instruction.startswith("Order 88412 arrived broken")
    assert run.outcome.success is False and run.outcome.score == 0.0  # gen_ai.evaluation.result label "fail"
    assert run.task.metadata["scores"] == {"refund_issued": "fail"}


def test_otlp_conversation_over_two_traces_with_a_handoff():
    runs, _ = _read(otlp, OTLP_JSONL)
    run = runs["conv_7731"]
    assert run.task.metadata["trace_ids"] == ["0af7651916cd43dd8448eb211c80319c", "1bf7651916cd43dd8448eb211c80319d"]
    assert run.source["outcome_keys"] == run.task.metadata["trace_ids"]
    transfer, invoice = run.actions
    assert transfer.name == "transfer_to_billing" and transfer.result.startswith("handoff:") and transfer.is_error is False
    assert any(t.role == "harness" and t.extra["harness"] == "handoff" for t in run.turns)
    assert invoice.result.startswith('{"invoice_id": "INV-2207"')  # from the gen_ai.tool.message event, as logged
    assert [t.content for t in run.turns if t.role == "user"] == [
        "Why was I charged twice for invoice INV-2207?", "Thanks. Can you confirm the reversal?"]  # resent input not repeated
    assert run.outcome.success is True and run.outcome.score == 1.0


def test_openinference_spans_truncated_attribute_and_guardrail():
    runs, _ = _read(otlp, PHOENIX)
    run = runs["8e6a9f0b2c4d4e1f9a7b3c5d1e2f4a6b"]
    search, read_file = run.actions
    assert search.extra["tool_call_id"] == "call_s1" and search.arguments == {"query": "requests<2.31", "path": "requirements*.txt"}
    assert search.result.endswith('"repo": "web-fr') and search.is_error is False  # cut short, kept as text
    assert any("search_code is not valid JSON" in p for p in run.source["unreadable_attributes"])
    assert read_file.is_error is True and "No such file or directory" in read_file.result
    assert run.turns[0].role == "harness" and run.turns[0].extra["harness"] == "guardrail"
    assert run.turns[-2].content == "Two repos: billing-api and etl-jobs."  # message_content parts
    assert run.outcome is None


def test_inspect_eval_archive_and_json_log():
    runs, errors = _read(inspect_ai, INSPECT_EVAL)
    assert not errors
    flag = runs["ctf_linux-find-flag-epoch1-Hq4XbD7nRt2kLm9PzW3aYc"]
    assert flag.outcome.success is True and flag.outcome.score == 1.0  # "C"
    assert flag.turns[0].role == "harness" and flag.turns[0].extra["harness"] == "retry"  # error_retries
    assert flag.actions[0].result.startswith("total 24") and "junk039.log" in flag.actions[0].result  # attachment://
    assert flag.actions[0].reasoning == "Hidden files first.\n\nListing the home folder, hidden files included."
    assert flag.actions[1].is_error is True  # the tool message's error (permission)
    perm = runs["ctf_linux-perm-fix-epoch1-Hq4XbD7nRt2kLm9PzW3aYc"]
    assert perm.outcome.success is False and perm.outcome.ended_by == "harness: message limit reached (12)"
    assert perm.actions[1].is_error is True and perm.actions[1].result.startswith("timeout:")
    runs, errors = _read(inspect_ai, INSPECT_JSON)
    both = runs["gsm_tools-17-epoch1-Lm3QzR8wNc5vKp2TyB7dXe"]
    assert both.outcome.success is True and both.task.id == "gsm_tools/17"  # two scorers that agree


def test_agents_sdk_functions_handoffs_and_max_turns():
    runs, errors = _read(agents_sdk, SDK)
    assert not errors
    run = runs["trace_6f1c2a9e0b8d4f3aa1c2d3e4f5a6b7c8"]
    names = [(c.name, c.is_error) for c in run.actions]
    assert names == [("transfer_to_refunds_agent", False), ("get_order", False), ("get_order", True), ("refund_order", True)]
    assert run.actions[1].arguments == {"order_id": "5521"} and run.actions[2].extra["tool_call_id"] == "call_L2"
    assert "OrderNotFound" in run.actions[2].result
    kinds = [t.extra["harness"] for t in run.turns if t.role == "harness" and t.type == "message"]
    assert kinds == ["guardrail", "handoff", "retry"]
    assert run.source["pairing"]["by_name"] == 2  # function spans carry no call id
    stopped = runs["trace_0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"]
    assert stopped.outcome is None and stopped.source["ended_by"] == "harness: the agent run stopped (Max turns exceeded)"


def test_langfuse_session_scores_and_errors():
    runs, _ = _read(langfuse, LANGFUSE)
    session = runs["sess-91"]
    assert session.task.metadata["trace_ids"] == ["b1e7c0de-0000-4a5b-9c1d-000000000001", "b1e7c0de-0000-4a5b-9c1d-000000000002"]
    assert session.outcome.success is True  # the trace-level BOOLEAN score; the observation-level one is not the verdict
    assert [c.extra["tool_call_id"] for c in session.actions] == ["call_cal1", "call_swap"]
    assert session.source["pairing"]["by_id"] == 2
    incident = runs["c2f8d1ef-1111-4b6c-8d2e-000000000003"]
    lookup, page = incident.actions
    assert lookup.is_error is True and lookup.result == "CalendarError: rota 'payments' does not exist"
    assert page.extra.get("unanswered") is True  # a handoff to a differently named agent does not answer it
    assert [t.extra["harness"] for t in incident.turns if t.role == "harness" and t.type == "message"] == ["retry", "handoff"]


def test_openhands_output_with_report_beside_it():
    runs, errors = _read(openhands, OH_OUTPUT)
    assert not errors
    good, stuck, v1 = runs["acme__ledger-412"], runs["acme__ledger-415"], runs["acme__ledger-420"]
    assert good.outcome.success is True and "report.json" in good.source["outcome_from"]
    assert [c.is_error for c in good.actions] == [False, False, True, False, False]  # exit code 1 on the failing test
    assert good.actions[0].reasoning == "Find where dates are formatted."
    assert [t.type for t in good.turns[-3:]] == ["answer", "answer", "episode_over"]  # finish, then the patch
    assert stuck.outcome.success is False and stuck.outcome.ended_by.startswith("harness: the run stopped with an error")
    assert stuck.actions[1].is_error is True  # exit code -1: timed out
    assert stuck.actions[-1].extra["unanswered"] is True
    assert {t.extra["harness"] for t in stuck.turns if t.role == "harness" and t.type == "message"} == {"condensation", "error", "agent state"}
    assert [c.name for c in v1.actions] == ["execute_bash", "file_editor", "file_editor"]
    assert [c.is_error for c in v1.actions] == [False, True, False]  # AgentErrorEvent
    assert v1.outcome.success is False


# -- outcomes: only from the log ------------------------------------------------------------------

@pytest.mark.parametrize("path, run_id, says", [
    (PHOENIX, "8e6a9f0b2c4d4e1f9a7b3c5d1e2f4a6b", "no span holds a gen_ai.evaluation.result event; key an --outcomes "
     "entry by trace id 8e6a9f0b2c4d4e1f9a7b3c5d1e2f4a6b"),
    (INSPECT_JSON, "gsm_tools-17-epoch2-Lm3QzR8wNc5vKp2TyB7dXe", "the sample holds no score; key an --outcomes entry by "
     "gsm_tools-17-epoch2-Lm3QzR8wNc5vKp2TyB7dXe or 17-epoch2"),
    (SDK, "trace_0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a", "the Agents SDK logs no verdict; key an --outcomes entry by trace id "
     "trace_0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a"),
    (LANGFUSE, "c2f8d1ef-1111-4b6c-8d2e-000000000003", "the trace holds no trace-level score; key an --outcomes entry by "
     "trace id c2f8d1ef-1111-4b6c-8d2e-000000000003"),
    (OH_TRAJ, "7c1e9d4a2b", "no SWE-bench results.json or report.json beside it and no 'resolved' in the record; key an "
     "--outcomes entry by 7c1e9d4a2b"),
])
def test_a_run_without_a_score_is_refused_with_what_to_pass(path, run_id, says):
    runs, report = _load(path)
    assert run_id not in {r.run_id for r in runs}
    line = next(e for e in report.errors if f"no outcome for run {run_id!r}" in e)
    assert line == f"{path}: no outcome for run {run_id!r} ({says}); skipped (pass --outcomes FILE to include it)"
    runs, report = _load(path, outcomes=_table({run_id: "success"}))
    assert {r.run_id: r.outcome.success for r in runs}[run_id] is True


def test_a_final_message_is_never_taken_for_a_verdict(tmp_path):
    """A confident last message and no score: still refused."""
    log = json.loads(INSPECT_JSON.read_text())
    log["samples"] = [log["samples"][1]]
    log["samples"][0]["messages"][-1]["content"] = "ANSWER: 205. I am certain this is correct and the task is solved."
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    runs, report = _load(path)
    assert runs == [] and report.missing_outcome == 1


@pytest.mark.parametrize("scores, expected", [
    ([("a", "C"), ("b", 1.0)], ((True, 1.0), None)),
    ([("a", True)], ((True, 1.0), None)),
    ([("a", 0.5)], ((False, 0.5), None)),
    ([("a", "pass", 0.9)], ((True, 0.9), None)),
    ([("a", {"x": 1})], (None, "its scores (a={'x': 1}) give no success or failure")),
    ([("a", 1.0), ("b", False)], (None, "its scores disagree (a: success, b: failure)")),
    ([], (None, None)),
])
def test_several_scores_must_agree(scores, expected):
    scores = [(s[0], inspect_ai._value(s[1]), *s[2:]) for s in scores]
    assert spans.verdict_of(scores) == expected


# -- secrets -------------------------------------------------------------------------------------

def test_credentials_in_attributes_never_reach_the_runs():
    runs, report = _load(*TRACING, outcomes=_table(OUTCOMES))
    text = json.dumps([[r.task.__dict__, [t.to_record() for t in r.turns], r.source] for r in runs], default=str)
    for secret in PLANTED:
        assert secret not in text, secret
    assert trace_files.MASK in text  # header and config values masked by their key
    assert report.redactions  # keys inside JSON text and tool output caught by the redactor


@pytest.mark.parametrize("key, is_credential", [
    ("http.request.header.authorization", True), ("x-api-key", True), ("OPENAI_API_KEY", True), ("cookie", True),
    ("client_secret", True), ("gen_ai.usage.input_tokens", False), ("llm.token_count.prompt", False),
    ("max_tokens", False), ("session.id", False), ("tool_call.id", False),
])
def test_credential_keys(key, is_credential):
    assert trace_files.is_credential_key(key) is is_credential


# -- bad input -----------------------------------------------------------------------------------

def test_bad_lines_and_broken_archives_are_one_line_errors(tmp_path):
    lines = OTLP_JSONL.read_text().splitlines()
    bad = tmp_path / "otel.jsonl"
    bad.write_text(lines[0] + "\n" + lines[1][: len(lines[1]) // 2] + "\n" + lines[2] + "\n")
    runs, errors = _read(otlp, bad)
    assert f"{bad}:2: not valid JSON" in str(errors[0]) and "conv_7731" in runs
    broken = tmp_path / "cut.eval"
    broken.write_bytes(INSPECT_EVAL.read_bytes()[:300])
    _, report = _load(broken, fmt="inspect-ai")
    assert len(report.errors) == 1 and str(broken) in report.errors[0] and "\n" not in report.errors[0]
    no_samples = tmp_path / "empty.eval"
    with zipfile.ZipFile(no_samples, "w") as zf:
        zf.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t", "eval_id": "e"}}))
    assert detect(no_samples) == "inspect-ai"
    _, report = _load(no_samples)
    assert report.errors == [f"{no_samples}: no samples in the archive (the evaluation logged none)"]


# -- idempotent re-import ------------------------------------------------------------------------

def _compile(inputs, out, outcomes):
    from typer.testing import CliRunner

    from wikitrace.cli import app

    result = CliRunner().invoke(app, ["compile", *map(str, inputs), "-o", str(out), "--offline", "-q",
                                      "--outcomes", str(outcomes)])
    assert result.exit_code == 0, result.output
    check = CliRunner().invoke(app, ["check", str(out)])
    assert check.exit_code == 0, check.output
    return json.loads((out / "corpus.json").read_text())


def test_compiling_the_same_export_twice_adds_nothing_and_an_update_replaces_its_run(tmp_path):
    from helpers import tree_bytes, without_build_stamp

    inputs = tmp_path / "in"
    for folder in TRACING:
        shutil.copytree(folder, inputs / folder.name)
    outcomes = tmp_path / "outcomes.json"
    outcomes.write_text(json.dumps(OUTCOMES))
    out = tmp_path / "corpus"
    first = _compile([inputs], out, outcomes)
    before = tree_bytes(out)
    corpus_text = b"".join(before.values()).decode("utf-8", "replace")
    assert not [secret for secret in PLANTED if secret in corpus_text]  # headers, keys, tokens: none reached it
    second = _compile([inputs], out, outcomes)
    assert len(first["runs"]) == len(second["runs"]) == 15
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(before)
    # the same sample exported again with one more message: its run is replaced, nothing is added
    log = json.loads(INSPECT_JSON.read_text())
    log["samples"][0]["messages"].append({"role": "assistant", "content": "Double-checked: 205 minutes."})
    (inputs / "inspect_ai" / "gsm_tools.json").write_text(json.dumps(log))
    third = _compile([inputs], out, outcomes)
    steps = {r["run_id"]: r["step"] for r in first["runs"]}
    assert {r["run_id"]: r["step"] for r in third["runs"]} == steps
    updated = steps["gsm_tools-17-epoch1-Lm3QzR8wNc5vKp2TyB7dXe"]
    assert sorted(p.name for p in (out / "raw").iterdir() if p.is_dir()) == sorted(steps.values())
    assert "Double-checked" in "".join(p.read_text() for p in (out / "raw" / updated).rglob("*") if p.is_file())


def test_a_trace_recorded_without_message_content_keeps_its_calls(tmp_path):
    """GenAI instrumentations capture no message content by default: spans carry only names and ids."""
    doc = json.loads(OTLP_JSONL.read_text().splitlines()[0])
    for span in doc["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        span["attributes"] = [a for a in span["attributes"] if a["key"] not in (
            "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
            "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")]
    path = tmp_path / "no-content.jsonl"
    path.write_text(json.dumps(doc) + "\n")
    runs, errors = _read(otlp, path)
    run = runs["5b8efff798038103d269b633813fc60c"]
    assert not errors and run.task.instruction == "invoke_agent refunds (the trace records no message content)"
    assert [(c.name, c.extra["tool_call_id"]) for c in run.actions] == [("lookup_order", "call_Qx1")]
    assert run.actions[0].extra["unanswered"] is True  # its result was not recorded either


def test_a_re_export_appended_to_the_same_file_adds_nothing(tmp_path):
    """Collectors and exporters retry: the same spans (or traces) twice in a file count once."""
    twice = tmp_path / "twice.jsonl"
    twice.write_text(OTLP_JSONL.read_text() * 2)
    assert {k: len(r.turns) for k, r in _read(otlp, twice)[0].items()} == \
        {k: len(r.turns) for k, r in _read(otlp, OTLP_JSONL)[0].items()}
    for module, path in ((agents_sdk, SDK), (langfuse, LANGFUSE)):
        doc = json.loads(path.read_text())
        items = doc["data"] if isinstance(doc, dict) else doc
        doubled = tmp_path / path.name
        doubled.write_text(json.dumps({"data": items + items} if isinstance(doc, dict) else items + items))
        assert {k: [t.to_record() for t in r.turns] for k, r in _read(module, doubled)[0].items()} == \
            {k: [t.to_record() for t in r.turns] for k, r in _read(module, path)[0].items()}


def test_langfuse_trace_list_shapes(tmp_path):
    """The list endpoint gives observation ids only: said so. A trace without generations: its input and output."""
    trace = json.loads(LANGFUSE.read_text())[0]
    ids_only = dict(trace, observations=["o-11", "o-12"])
    bare = dict(trace, id="t-bare", sessionId=None, observations=[], output={"role": "assistant", "content": "Priya N."},
                scores=[{"name": "ok", "value": "correct", "dataType": "CATEGORICAL", "observationId": None}])
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"data": [ids_only, bare], "meta": {"page": 1}}))
    runs, errors = _read(langfuse, path)
    assert "lists only observation ids" in str(errors[0]) and "GET /api/public/traces/<id>" in str(errors[0])
    run = runs["t-bare"]
    assert [(t.role, t.content) for t in run.turns[:2]] == [("user", "Who is on call this Saturday?"), ("assistant", "Priya N.")]
    assert run.outcome.success is True  # CATEGORICAL "correct"


def test_a_langfuse_trace_with_an_empty_id_is_an_error_that_names_it_and_the_rest_still_import(tmp_path):
    """A run is told apart by its trace id: one that is empty (and no session to group it by) would
    give a run with no id, so it is refused, by its place in the file, and the others are read."""
    trace = json.loads(LANGFUSE.read_text())[0]
    nameless = dict(trace, id=" ", sessionId=None)
    path = tmp_path / "list.json"
    path.write_text(json.dumps({"data": [trace, nameless], "meta": {"page": 1}}))
    runs, errors = _read(langfuse, path)
    assert [str(e) for e in errors] == [f"{path}: data[1]: a Langfuse trace with an empty 'id'; export it with its trace id"]
    assert runs and all(r.run_id for r in runs.values())


def test_results_paired_by_id_are_the_ones_logged_for_that_id():
    """Read the tool records' results straight from the files, by call id, and compare."""
    from wikitrace.runs.otlp_spans import attributes

    logged = {}
    for line in OTLP_JSONL.read_text().splitlines() + [PHOENIX.read_text()]:
        for rs in json.loads(line)["resourceSpans"]:
            for span in rs["scopeSpans"][0]["spans"]:
                a = attributes(span["attributes"])
                call_id = a.get("gen_ai.tool.call.id") or a.get("tool_call.id")
                result = a.get("gen_ai.tool.call.result") or a.get("output.value")
                if call_id and result:
                    logged[call_id] = result
    for trace in json.loads(LANGFUSE.read_text()):
        for o in trace["observations"]:
            if o["type"] == "TOOL" and o["output"] is not None:
                out = o["output"]
                logged[o["metadata"]["tool_call_id"]] = out if isinstance(out, str) else json.dumps(out, sort_keys=True)
    runs, _ = _load(OTLP_JSONL, PHOENIX, LANGFUSE, outcomes=_table(OUTCOMES))
    paired = {c.extra["tool_call_id"]: c.result for r in runs for c in r.actions if c.extra.get("tool_call_id") in logged}
    assert len(logged) == 4 and paired == logged  # the failed calls log an exception instead of a result


def test_agents_sdk_blank_trace_ids_are_skipped_with_a_reason(tmp_path):
    """An exporter that writes "" for an id must not produce a run named "" (it would have no
    folder of its own); the span is reported and the rest of the export still imports."""
    data = json.loads(SDK.read_text(encoding="utf-8"))["data"]
    data += [{"object": "trace", "id": " ", "workflow_name": "Blank"},
             {"object": "trace.span", "id": "span_blank", "trace_id": "", "parent_id": None,
              "started_at": "2026-02-03T15:00:00.000000+00:00", "ended_at": "2026-02-03T15:00:01.000000+00:00",
              "span_data": {"type": "function", "name": "get_order", "input": "{}", "output": "ok"}, "error": None}]
    export = tmp_path / "export.json"
    export.write_text(json.dumps({"data": data}), encoding="utf-8")
    runs, errors = _read(agents_sdk, export)
    assert all(rid.strip() for rid in runs) and "trace_6f1c2a9e0b8d4f3aa1c2d3e4f5a6b7c8" in runs
    assert any("span_blank" in str(e) and "no trace_id" in str(e) for e in errors)
