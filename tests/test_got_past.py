"""An error the run got past is no cause of its failure: a look-up that failed (a file that is
not there, a search the tool refused) after which another look-up went through and a change
followed, or a call a later call of the same tool went through after (a retry with fixed
arguments). Such an error ranks below the run's changes and the test run at its end, its
line says which turn got past it, the In short leaves it out, and the run teaches no lesson
on it. Checked on each format's own log shape: SWE-agent, Claude Code, OpenHands, tau-bench."""

from __future__ import annotations

import json
import re
from pathlib import Path

from coding_corpus import _claude_session
from fixture_runs import relabeled
from tau_messages import agent, tool, user

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load
from wikitrace.runs.model import Run

CORPUS = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus"


def _read(path: Path) -> Run:
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return relabeled(run, False)


def _rank(comp, turn: int) -> int:
    """The place of the cause whose own call is at ``turn`` (the first turn its decision names)."""
    return next(k for k, e in enumerate(comp.evidence) if _own_turn(e) == turn)


def _own_turn(e) -> int | None:
    m = re.match(r"Called .*? at turn (\d+)", e.decision)
    return int(m.group(1)) if m else None


def _changes(comp) -> list[int]:
    """The places of the changes that went through."""
    return [k for k, e in enumerate(comp.evidence) if e.support.startswith("The call went through")]


def _calls(run: Run) -> list[int]:
    return [t.turn for t in run.turns if t.type == "function_call"]


def _check_got_past(comp, err: int, by: int, lesson_word: str) -> None:
    cause = comp.evidence[_rank(comp, err)]
    assert "the run went on without it: " in cause.decision and f"went through at turn {by}," in cause.decision, cause.decision
    changes = _changes(comp)
    assert changes and _rank(comp, err) > max(changes), [e.decision for e in comp.evidence]
    # shown for context: the page heads it "Context", never "Cause" (it decided nothing)
    assert cause.context and not any(comp.evidence[k].context for k in changes)
    assert not any(f"at turn {err} " in f.text or f"at turn {err}," in f.text for f in comp.in_short), comp.in_short
    assert not any(lesson_word in i.key for i in comp.insights), [i.key for i in comp.insights]


def test_swe_agent_cat_of_a_missing_file_then_grep_then_the_edit():
    """The bad median trial: cat of a file that is not there, grep found the function in another file,
    the edit and the submit followed; the tests still failing at the end stay the run's own evidence."""
    comp = compile_offline(_read(CORPUS / "swe-tally-bad" / "acme__tally-7.traj"))
    _check_got_past(comp, 2, 3, "missing-path")
    assert "str_replace_editor made a change at turn 4" in comp.evidence[_rank(comp, 2)].decision
    assert any("still reported failing tests at turn 5" in f.text for f in comp.in_short)


def _cc_run(tmp_path: Path, steps: list) -> Run:
    session = "5b2e8c1a-7d3f-4e90-a6b1-0c9d8e7f6a53"
    path = tmp_path / f"{session}.jsonl"
    lines = _claude_session(session, steps, "The invoice total rounds 2.675 down; it should round half up.",
                            "Changed the rounding in ledger/invoice.py.")
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return _read(path)


_READ_MISSING = ("Read", {"file_path": "/home/dev/tally/ledger/rounding.py"},
                 "<tool_use_error>File does not exist.</tool_use_error>", True)
_EDIT = ("Edit", {"file_path": "/home/dev/tally/ledger/invoice.py", "old_string": "round(total, 2)",
                  "new_string": "quantize_half_up(total)"},
         "The file /home/dev/tally/ledger/invoice.py has been updated.", False)
_TESTS_FAIL = ("Bash", {"command": "python -m pytest tests/test_invoice.py -q", "description": "Run the invoice tests"},
               "F..\nFAILED tests/test_invoice.py::test_half_up - NameError: name 'quantize_half_up' is not defined\n"
               "1 failed, 2 passed in 0.05s", True)


def test_claude_code_read_of_a_missing_file_then_grep_then_edit(tmp_path):
    run = _cc_run(tmp_path, [
        _READ_MISSING,
        ("Grep", {"pattern": "round\\(", "path": "ledger", "output_mode": "content", "-n": True},
         "ledger/invoice.py:31:    return round(total, 2)", False),
        _EDIT, _TESTS_FAIL])
    comp = compile_offline(run)
    read, grep, _edit, tests = _calls(run)
    _check_got_past(comp, read, grep, "missing-path")
    # the test run after the edit is no error got past: it still leads
    assert _rank(comp, tests) < _rank(comp, read)


def test_claude_code_read_of_a_missing_file_then_an_edit_at_once_is_not_got_past(tmp_path):
    """No look-up went through between the error and the change: the run acted without finding
    what the failed read was for, so the error stays a cause, in the In short and among its lessons."""
    run = _cc_run(tmp_path, [_READ_MISSING, _EDIT, _TESTS_FAIL])
    comp = compile_offline(run)
    read = _calls(run)[0]
    cause = comp.evidence[_rank(comp, read)]
    assert "no later Read call went through" in cause.decision
    assert "got past" not in cause.decision
    assert any(f.text.startswith(f"Read failed at turn {read} ") for f in comp.in_short), comp.in_short
    assert "error|missing-path" in [i.key for i in comp.insights]


def _oh_event(n: int, **fields) -> dict:
    return {"id": n, "timestamp": f"2026-04-02T11:00:{n:02d}.000000", **fields}


def _oh_run(n: int, command: str) -> dict:
    return _oh_event(n, source="agent", message="run", action="run",
                     args={"thought": "", "command": command, "is_input": False},
                     tool_call_metadata={"function_name": "execute_bash", "tool_call_id": f"toolu_{n:04d}",
                                         "model_response": {"id": f"chatcmpl-{n}"}, "total_calls_in_response": 1},
                     llm_metrics=None)


def _oh_seen(n: int, cause: int, content: str, code: int) -> dict:
    return _oh_event(n, source="agent", message="run observation", cause=cause, observation="run", content=content,
                     extras={"command": "", "metadata": {"exit_code": code, "pid": -1, "username": "openhands",
                                                         "hostname": "runtime-7f2", "working_dir": "/workspace/repo",
                                                         "py_interpreter_path": "/openhands/poetry/bin/python",
                                                         "prefix": "", "suffix": f"\n[The command completed with exit code {code}.]"},
                             "hidden": False})


def test_openhands_cat_of_a_missing_file_then_grep_then_an_edit(tmp_path):
    events = [
        _oh_event(0, source="agent", message="system", action="system",
                  args={"content": "You are OpenHands agent, a helpful AI assistant that can interact with a computer "
                                   "to solve tasks."}, llm_metrics=None),
        _oh_event(1, source="user", message="message", action="message",
                  args={"content": "Tax on refunds is added instead of taken off; fix calc_tax."}, llm_metrics=None),
        _oh_run(2, "cat billing/refunds.py"),
        _oh_seen(3, 2, "cat: billing/refunds.py: No such file or directory", 1),
        _oh_run(4, "grep -rn 'def calc_tax' billing"),
        _oh_seen(5, 4, "billing/tax.py:12:def calc_tax(amount, refund=False):", 0),
        _oh_run(6, "sed -i 's/amount + tax/amount - tax/' billing/tax.py"),
        _oh_seen(7, 6, "", 0),
        _oh_run(8, "python -m pytest tests/test_tax.py -q"),
        _oh_seen(9, 8, "F.\nFAILED tests/test_tax.py::test_refund - assert 9.0 == 11.0\n1 failed, 1 passed in 0.02s", 1),
        _oh_event(10, source="environment", message="", observation="agent_state_changed", content="",
                  extras={"agent_state": "awaiting_user_input", "reason": ""}),
    ]
    path = tmp_path / "3d9a0b7c1e.json"
    path.write_text(json.dumps(events, indent=1))
    run = _read(path)
    comp = compile_offline(run)
    cat, grep = _calls(run)[:2]
    _check_got_past(comp, cat, grep, "missing-path")


def _tau(tmp_path: Path, traj: list) -> Run:
    record = {"task_id": 7, "reward": 0.0, "trial": 0, "traj": traj,
              "info": {"task": {"user_id": "mara_lind_5521", "outputs": [],
                                "instruction": "You are mara_lind_5521. Cancel reservation K2PX7Q.",
                                "actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": "K2PX7Q"}}]},
                       "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}
    path = tmp_path / "tau.json"
    path.write_text(json.dumps([record]))
    return _read(path)


_POLICY = ("# Airline Agent Policy\n\n- Before taking any actions that update the booking database, you must list "
           "the action details and obtain explicit user confirmation (yes) to proceed.\n")


def test_tau_bench_a_look_up_error_then_another_look_up_and_a_change(tmp_path):
    run = _tau(tmp_path, [
        {"role": "system", "content": _POLICY}, user("Cancel my trip K2PX7Q please, I'm mara_lind_5521."),
        *tool("get_reservation_details", {"reservation_id": "K2PXQ7"}, "Error: reservation not found"),
        *tool("get_user_details", {"user_id": "mara_lind_5521"},
              {"user_id": "mara_lind_5521", "reservations": ["K2PX7Q", "Z8MM2A"]}),
        agent("I will cancel reservation Z8MM2A. Shall I go ahead?"), user("yes"),
        *tool("cancel_reservation", {"reservation_id": "Z8MM2A"}, {"reservation_id": "Z8MM2A", "status": "cancelled"}),
        agent("Done."), user("###STOP###")])
    comp = compile_offline(run)
    error, found = _calls(run)[:2]
    _check_got_past(comp, error, found, "get_reservation_details")


def test_tau_bench_a_change_retried_with_fixed_arguments_ranks_below_the_changes(tmp_path):
    run = _tau(tmp_path, [
        {"role": "system", "content": _POLICY}, user("Cancel my trip K2PX7Q please, I'm mara_lind_5521."),
        agent("I will cancel reservation K2PX7Q. Shall I go ahead?"), user("yes"),
        *tool("cancel_reservation", {"reservation_id": "K2PXQ7"}, "Error: reservation not found"),
        *tool("cancel_reservation", {"reservation_id": "K2PX7Q"}, {"reservation_id": "K2PX7Q", "status": "cancelled"}),
        *tool("book_reservation", {"user_id": "mara_lind_5521", "origin": "JFK", "destination": "SEA"},
              {"reservation_id": "Q0Q0Q0"}),
        agent("Done."), user("###STOP###")])
    comp = compile_offline(run)
    first, retry = _calls(run)[:2]
    cause = comp.evidence[_rank(comp, first)]
    assert f"a later cancel_reservation call went through at turn {retry}" in cause.decision
    assert _rank(comp, first) == len(comp.evidence) - 1, [e.decision for e in comp.evidence]
    assert not any(f"at turn {first} " in f.text for f in comp.in_short)


def test_an_error_every_run_got_past_another_way_gets_no_insight_page(tmp_path):
    """Both sessions read a file that is not there, found the code with Grep and edited it; one
    passed its tests, one did not. Neither teaches the missing file, so no page is about it; a
    third session that never found its way makes the page, counted over all three."""
    grep = ("Grep", {"pattern": "round\\(", "path": "ledger", "output_mode": "content", "-n": True},
            "ledger/invoice.py:31:    return round(total, 2)", False)
    passed = ("Bash", {"command": "python -m pytest tests/test_invoice.py -q", "description": "Run the invoice tests"},
              "...\n3 passed in 0.04s", False)
    sessions = {"1c4d7e2a-0b3f-4a61-9d82-5e6f7a8b9c01": ([_READ_MISSING, grep, _EDIT, passed], "success"),
                "2d5e8f3b-1c4a-4b72-8e93-6f7a8b9c0d12": ([_READ_MISSING, grep, _EDIT, _TESTS_FAIL], "failure"),
                "3e6f9a4c-2d5b-4c83-9fa4-7a8b9c0d1e23": ([_READ_MISSING, _EDIT, _TESTS_FAIL], "failure")}

    def build_of(names: list[str]) -> dict:
        folder = tmp_path / f"in{len(names)}"
        folder.mkdir()
        for name in names:
            steps, _outcome = sessions[name]
            lines = _claude_session(name, steps, "The invoice total rounds 2.675 down; it should round half up.",
                                    "Changed the rounding in ledger/invoice.py.")
            (folder / f"{name}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        (folder / "outcomes.json").write_text(json.dumps({n: sessions[n][1] for n in names}))
        out = tmp_path / f"out{len(names)}"
        build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True, outcomes=folder / "outcomes.json"))
        return json.loads((out / "corpus.json").read_text())

    names = list(sessions)
    assert not [i for i in build_of(names[:2])["insights"] if i["key"] == "error|missing-path"]
    [page] = [i for i in build_of(names)["insights"] if i["key"] == "error|missing-path"]
    assert [s["step"] for s in page["sources"]] == ["step-0002"]
    assert (page["contrast"]["failed_met"], page["contrast"]["success_met"]) == (2, 1)
