"""Descent / Stay labels over agent transcripts (paper §5.1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikitrace.agent.descents import analyse_file, analyse_turns
from wikitrace.runs.model import Turn
from wikitrace.runs.turnlog import dumps_turns

TAU = Path("/work/shared/data/runs-dev/tau-bench-airline/gpt-4o-airline.json")


def call(n, command=None, name="bash", error=False, **args):
    arguments = {"command": command} if command is not None else args
    return Turn(turn=n, type="function_call", role="assistant", name=name, arguments=arguments,
                result="ok" if not error else "Error: nothing happens", is_error=error)


def msg(n, text="thinking"):
    return Turn(turn=n, type="message", role="assistant", content=text)


def test_descent_opens_a_compilation_and_groups_consecutive_memory_calls():
    turns = [
        Turn(turn=0, type="message", role="user", content="Your task is to: put a mug in the cabinet."),
        call(1, "cat /work/corpus/insight/_index.md"),
        msg(2),
        call(3, "cat /work/corpus/compilation/step-0003.md"),
        call(4, name="act", command="go to cabinet 1"),
        call(5, name="act", command="open cabinet 1", error=True),
        call(6, "/work/tools/turn step-0003 7 9"),
        call(7, "/work/tools/actions step-0004"),
        call(8, name="act", command="open cabinet 1"),
    ]
    rep = analyse_turns(turns)
    assert rep.label == "Descent" and rep.memory_calls == 4 and rep.environment_actions == 3
    d0, d1 = rep.descents
    assert (d0.first_turn, d0.last_turn, d0.calls, d0.next_action_turn) == (1, 3, 2, 4)
    assert d0.opened_compilations == ["step-0003"] and d0.opened_raw == [] and not d0.after_failed_action
    assert (d1.first_turn, d1.last_turn, d1.calls) == (6, 7, 2)
    assert d1.opened_raw == ["step-0003", "step-0004"] and d1.after_failed_action and d1.opened


def test_reading_only_indexes_insights_and_grepping_is_stay():
    turns = [
        call(0, "ls /work/corpus/raw/"),
        call(1, name="read", path="/work/corpus/insight/insight-0004.md"),
        call(2, "grep -rl 'mug' /work/corpus/compilation /work/corpus/raw | head -n 20"),
        call(3, "/work/tools/grep mug --layer raw"),
        call(4, name="act", command="look"),
        call(5, name="act", command="cat is not memory: /work/corpusX/compilation/step-0001.md"),
    ]
    rep = analyse_turns(turns)
    assert rep.label == "Stay" and len(rep.descents) == 1 and rep.memory_calls == 4
    d = rep.descents[0]
    assert not d.opened and d.opened_insights == ["insight-0004"]
    assert set(d.searched) == {"raw", "compilation"}


def test_reads_in_many_forms_count_as_opening():
    forms = {
        "for s in 0002 0017; do cat /work/corpus/compilation/step-$s.md; done": ("C", ["step-0002", "step-0017"]),
        "cd /work/corpus && sed -n 1,40p compilation/step-0009.md": ("C", ["step-0009"]),
        "head -c 2000 /work/corpus/raw/step-0005/solver.full.jsonl": ("R", ["step-0005"]),
        "grep -n book_reservation /work/corpus/raw/step-0006/solver.full.jsonl": ("R", ["step-0006"]),
        "cat /work/corpus/raw/step-0007/metadata.md | head": ("R", ["step-0007"]),
    }
    for command, (layer, steps) in forms.items():
        d = analyse_turns([call(0, command)]).descents[0]
        got = d.opened_compilations if layer == "C" else d.opened_raw
        assert got == steps, command
    d = analyse_turns([call(0, name="read_file", path="/work/corpus/raw/step-0001/solver.full.jsonl")]).descents[0]
    assert d.opened_raw == ["step-0001"]


def test_mount_path_option():
    turns = [call(0, "cat /mnt/mem/compilation/step-0001.md"), call(1, "cat /work/corpus/compilation/step-0002.md")]
    rep = analyse_turns(turns, mount_path="/mnt/mem")
    assert rep.label == "Descent" and rep.memory_calls == 1 and rep.environment_actions == 1
    assert rep.descents[0].opened_compilations == ["step-0001"]
    assert analyse_turns(turns[:1]).label == "Stay"


def openai_messages(commands):
    msgs = [{"role": "system", "content": "You are an agent."}, {"role": "user", "content": "Do the task."}]
    for i, (name, args) in enumerate(commands):
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"call_{i}", "content": "ok"})
    msgs.append({"role": "assistant", "content": "Done."})
    return msgs


def test_openai_chat_json_and_jsonl(tmp_path):
    msgs = openai_messages([("bash", {"command": "cat /work/corpus/compilation/step-0001.md"}),
                            ("act", {"command": "look"}),
                            ("bash", {"command": "/work/tools/turn step-0002 0 3"})])
    (tmp_path / "a.json").write_text(json.dumps(msgs))
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(m) + "\n" for m in msgs))
    (tmp_path / "b.json").write_text(json.dumps({"messages": msgs}))
    for name in ("a.json", "a.jsonl", "b.json"):
        (rep,) = analyse_file(tmp_path / name)
        assert rep.label == "Descent" and len(rep.descents) == 2, name
        assert rep.descents[1].opened_raw == ["step-0002"] and rep.descents[1].next_action_turn is None


@pytest.fixture(scope="module")
def tau_runs():
    if not TAU.exists():
        pytest.skip("tau-bench runs (/work/shared/data) not available")
    runs = [r for r in json.loads(TAU.read_text()) if any(m.get("role") == "tool" for m in r["traj"])]
    return runs[:12]


MEMORY_READS = [
    {"command": "cat /work/corpus/insight/_index.md"},
    {"command": "cat /work/corpus/compilation/step-0031.md"},
    {"command": "/work/tools/turn step-0031 4 6"},
]


def with_memory_reads(rec: dict, reads: list[dict]) -> dict:
    """Insert the reads as bash tool calls right after the agent's first environment action."""
    traj = list(rec["traj"])
    first = next(i for i, m in enumerate(traj) if m.get("role") == "tool")
    inserted = []
    for j, args in enumerate(reads):
        inserted.append({"role": "assistant", "content": "Let me check my memory.", "tool_calls": [
            {"id": f"mem_{j}", "type": "function", "function": {"name": "bash", "arguments": json.dumps(args)}}]})
        inserted.append({"role": "tool", "tool_call_id": f"mem_{j}", "name": "bash", "content": "..."})
    return dict(rec, traj=traj[: first + 1] + inserted + traj[first + 1:])


def test_tau_bench_transcripts(tau_runs, tmp_path):
    recs = []
    for i, rec in enumerate(tau_runs):
        if i % 3 == 0:
            rec = with_memory_reads(rec, MEMORY_READS)            # descends: opens C and R
        elif i % 3 == 1:
            rec = with_memory_reads(rec, MEMORY_READS[:1])        # reads the insight index only
        recs.append(rec)
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(recs))
    reports = analyse_file(path)
    assert [r.name for r in reports][:2] == [f"task-{tau_runs[0]['task_id']}-trial-{tau_runs[0]['trial']}",
                                             f"task-{tau_runs[1]['task_id']}-trial-{tau_runs[1]['trial']}"]
    for i, rep in enumerate(reports):
        expected = {0: "Descent", 1: "Stay", 2: "Stay"}[i % 3]
        assert rep.label == expected, (i, rep)
        assert rep.environment_actions > 0
        if i % 3 == 0:
            (d,) = rep.descents
            assert d.calls == 3 and d.opened_compilations == ["step-0031"] and d.opened_raw == ["step-0031"]
            assert d.next_action_turn is not None or rep.environment_actions == 1
        elif i % 3 == 1:
            assert len(rep.descents) == 1 and not rep.descents[0].opened
        else:
            assert rep.descents == [] and rep.memory_calls == 0


def test_tau_bench_turn_log_and_cli(tau_runs, tmp_path):
    from typer.testing import CliRunner

    from wikitrace.cli import app
    from wikitrace.runs.chat_messages import messages_to_turns

    rec = with_memory_reads(tau_runs[0], MEMORY_READS)
    turns = messages_to_turns(rec["traj"], "tau")
    log = tmp_path / "solver.full.jsonl"
    log.write_text(dumps_turns(turns))
    (rep,) = analyse_file(log)
    assert rep.label == "Descent" and rep.descents[0].opened_compilations == ["step-0031"]
    r = CliRunner().invoke(app, ["descents", str(log), "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data[0]["label"] == "Descent" and data[0]["descents"][0]["opened"] is True
    # with the corpus mounted elsewhere, the cat of /work/corpus/... is an environment action;
    # the /work/tools/turn call still opens the raw run
    r = CliRunner().invoke(app, ["descents", str(log), "--mount-path", "/elsewhere", "--json"])
    assert r.exit_code == 0
    (rep2,) = json.loads(r.stdout)
    assert rep2["label"] == "Descent" and rep2["memory_calls"] == 1
    assert rep2["descents"][0]["opened_compilations"] == [] and rep2["descents"][0]["opened_raw"] == ["step-0031"]
    r = CliRunner().invoke(app, ["descents", str(log)])
    assert r.exit_code == 0 and "1 Descent, 0 Stay" in r.stdout
