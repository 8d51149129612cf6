"""Text that cannot be encoded never stops a build: every importer and the dialogue loader
repair it when reading (U+FFFD, counted), the offline build publishes and ``check`` passes.

Random text mixes lone UTF-16 surrogates (valid JSON escapes, common in cut logs),
control characters, terminal colour codes and non-characters; the files also carry
raw bytes that are not UTF-8. Each example drives the installed CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wikitrace.dialogue.load import load_file
from wikitrace.runs.load import LoadReport, iter_runs

RAW = "@@RAW@@"  # replaced by bytes that are not UTF-8 after the file is encoded
BAD_BYTES = b"\xff\xc3(\x80\xed\xa0\x80"
NASTY = ["\ud83d", "\udfff", "\x00", "\x07", "\x1b[31mred\x1b[0m", "\x85", "\u2028", "\ufffe", "\x7f", RAW]

_char = st.characters(codec=None, blacklist_categories=())  # every code point, surrogates included
nasty_text = st.builds(lambda a, b, c: a + b + c, st.text(_char, max_size=12), st.sampled_from(NASTY),
                       st.text(_char, max_size=12))
SETTINGS = dict(max_examples=3, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def _cli() -> list[str]:
    exe = shutil.which("wikitrace")
    return [exe] if exe else [sys.executable, "-m", "wikitrace.cli"]


def _write(path: Path, text: str) -> Path:
    data = text.encode("utf-8", errors="surrogatepass").replace(RAW.encode(), BAD_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _dump(obj) -> str:
    return json.dumps(obj)  # ASCII escapes: lone surrogates stay valid JSON ("\ud83d")


def write_runs(folder: Path, t: list[str]) -> dict[str, str]:
    """One input per importer, text fields filled from ``t``; returns the outcomes to pass."""
    _write(folder / "swe" / "acme__w-1.traj", _dump({
        "trajectory": [{"thought": t[0], "action": f"open {t[1]}", "observation": t[2]},
                       {"thought": "x", "action": "exit_cost", "observation": "Exited"}],
        "history": [{"role": "user", "content": "fix " + t[3]}], "info": {"exit_status": "exit_cost"},
        "replay_config": _dump({"problem_statement": {"text": "fix " + t[3], "id": "acme__w-1"}})}))
    _write(folder / "mini" / "acme__w-2.traj.json", _dump({
        "trajectory_format": "mini-swe-agent-1", "info": {"exit_status": "Submitted", "submission": t[4]},
        "messages": [{"role": "user", "content": "task " + t[5]},
                     {"role": "assistant", "content": f"THOUGHT {t[6]}\n```bash\nls\n```"},
                     {"role": "user", "content": f"<returncode>0</returncode>\n{t[7]}"}]}))
    lines = [{"type": "user", "sessionId": "sess-1", "uuid": "u1", "message": {"role": "user", "content": "do " + t[8]}},
             {"type": "assistant", "sessionId": "sess-1", "uuid": "u2", "message": {"role": "assistant", "content": [
                 {"type": "text", "text": t[9]}, {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": t[10]}}]}},
             {"type": "user", "sessionId": "sess-1", "uuid": "u3", "message": {"role": "user", "content": [
                 {"type": "tool_result", "tool_use_id": "tu1", "content": t[11]}]}}]
    _write(folder / "claude" / "sess-1.jsonl", "".join(_dump(x) + "\n" for x in lines))
    _write(folder / "atif" / "trajectory.json", _dump({
        "schema_version": "ATIF-v1.4", "session_id": "atif-1",
        "steps": [{"step_id": 1, "source": "user", "message": "go " + t[12]},
                  {"step_id": 2, "source": "agent", "message": t[13], "tool_calls": [
                      {"tool_call_id": "c1", "function_name": "bash", "arguments": {"cmd": t[14]}}],
                   "observation": {"results": [{"source_call_id": "c1", "content": t[15]}]}}]}))
    _write(folder / "tau.json", _dump([{"task_id": 1, "trial": 0, "reward": 1.0,
                                        "info": {"task": {"instruction": "book " + t[16]}},
                                        "traj": [{"role": "user", "content": t[17]},
                                                 {"role": "assistant", "content": t[18]}]}]))
    _write(folder / "reflexion.txt", "BEGIN TRIAL 1\n------------- BEGIN CORRECT AGENTS -------------\n\n"
           f"Question: Where {t[19]}?\nThought 1: {t[20]}\nAction 1: Finish[{t[21]}]\n"
           "Observation 1: Answer is CORRECT\nCorrect answer: x\n")
    _write(folder / "fever.txt", f"12 Claim: {t[22]}\nThought 1: {t[23]}\nAction 1: Finish[SUPPORTS]\n"
           "Observation 1: Episode finished, reward = 1\n\n\n{'steps': 1, 'answer': 'SUPPORTS', "
           "'gt_answer': 'SUPPORTS', 'question_idx': 12, 'reward': 1}\n\n1 1 1.0 1.0\n-----------\n")
    _write(folder / "native.jsonl", _dump({
        "run_id": "native-" + t[24], "task": {"id": "t1", "instruction": "solve " + t[25]},
        "outcome": {"success": False},
        "turns": [{"turn": 0, "type": "message", "role": "user", "content": t[26]},
                  {"turn": 1, "type": "function_call", "name": "search", "arguments": {"q": t[27]}, "result": t[28]},
                  {"turn": 2, "type": "episode_over"}]}) + "\n")
    return {"acme__w-1": "failure", "acme__w-2": "success", "sess-1": "success", "atif-1": "failure"}


EXPECTED_RUNS = 8


def _run(args, **kw):
    env = dict(os.environ, NO_COLOR="1", OPENAI_API_KEY="", WIKITRACE_MODEL="", COLUMNS="400")
    return subprocess.run(_cli() + args, capture_output=True, text=True, env=env, timeout=300, **kw)


@settings(**SETTINGS)
@given(st.lists(nasty_text, min_size=29, max_size=29))
def test_every_importer_repairs_and_the_build_publishes(tmp_path_factory, texts):
    root = tmp_path_factory.mktemp("nasty")
    inputs = root / "inputs"
    outcomes = write_runs(inputs, texts)
    (root / "outcomes.json").write_text(json.dumps(outcomes))
    report = LoadReport()
    runs = list(iter_runs([inputs], None, report, outcomes=root / "outcomes.json"))
    assert len(runs) == EXPECTED_RUNS, report.errors
    assert report.repaired > 0 and report.repaired_runs == sum(1 for r in runs if r.source.get("repaired_chars"))
    for run in runs:  # nothing left that UTF-8 cannot encode
        json.dumps(run.source.get("original"), ensure_ascii=False).encode("utf-8")
        for turn in run.turns:
            json.dumps(turn.to_record(), ensure_ascii=False).encode("utf-8")
    out = root / "corpus"
    built = _run(["compile", str(inputs), "--out", str(out), "--offline", "--outcomes", str(root / "outcomes.json")])
    assert built.returncode == 0, built.stderr[-3000:]
    assert "Traceback" not in built.stderr
    corpus = json.loads((out / "corpus.json").read_text(encoding="utf-8"))
    assert len(corpus["runs"]) == EXPECTED_RUNS
    checked = _run(["check", str(out)])
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]


def _locomo(t: list[str]) -> dict:
    return {"speaker_a": "Ana" + t[0], "speaker_b": "Ben",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana" + t[0], "dia_id": "D1:1", "text": t[1] + " I adopted a puppy."},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "Nice! " + t[2],
                           "blip_caption": t[3]}],
            "session_2_date_time": "10:00 am on 9 May, 2023",
            "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "I started piano " + t[4]}],
            "qa": [{"question": "What did Ana adopt?" + t[5], "answer": "a puppy", "evidence": ["D1:1"], "category": 4}]}


@settings(**SETTINGS)
@given(st.lists(nasty_text, min_size=8, max_size=8))
def test_dialogue_loader_repairs_and_the_build_publishes(tmp_path_factory, texts):
    root = tmp_path_factory.mktemp("nasty-dialogue")
    conv = _write(root / "conv-1.json", _dump(_locomo(texts)))
    rows = [{"id": f"M{i}", "speaker": "Ana" if i % 2 else "Ben", "text": texts[i] + " hello", "session": 1,
             "timestamp": "2024-03-02"} for i in range(6, 8)]
    jsonl = _write(root / "chat.jsonl", "".join(_dump(r) + "\n" for r in rows))
    dialogues = load_file(conv) + load_file(jsonl)
    assert sum(d.repaired for d in dialogues) > 0
    for d in dialogues:
        for m in d.messages:
            m.text.encode("utf-8")
            m.speaker.encode("utf-8")
    out = root / "corpus"
    built = _run(["dialogue", "compile", str(conv), str(jsonl), "--out", str(out), "--offline"])
    assert built.returncode == 0, built.stderr[-3000:]
    assert "Traceback" not in built.stderr
    checked = _run(["check", str(out)])
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]


def test_one_lone_surrogate_in_tau_bench_builds(tmp_path):
    """The report's case: one "\\ud83d" in a tau-bench run no longer aborts the build."""
    src = tmp_path / "tau.json"
    src.write_text('[{"task_id": 3, "trial": 0, "reward": 0.0, "info": {"task": {"instruction": "Hi \\ud83d"}},'
                   ' "traj": [{"role": "user", "content": "cut emoji \\ud83d"}]}]')
    built = _run(["compile", str(src), "--out", str(tmp_path / "c"), "--offline"])
    assert built.returncode == 0 and "Traceback" not in built.stderr, built.stderr[-2000:]
    assert "characters that could not be encoded replaced in 1 runs" in built.stderr
    assert _run(["check", str(tmp_path / "c")]).returncode == 0


def _tau_line(result: str) -> str:
    """One tau-bench run as an OpenAI-chat JSONL record (json.dumps escapes its control characters)."""
    return json.dumps({
        "run_id": "tau-7", "task_id": 7, "trial": 0, "reward": 0.0,
        "info": {"task": {"instruction": "Cancel reservation 8JX2QH for Mia Li."}},
        "traj": [{"role": "system", "content": "# Airline Agent Policy\nAct for the airline."},
                 {"role": "user", "content": "I want to cancel 8JX2QH."},
                 {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function",
                  "function": {"name": "get_reservation_details", "arguments": "{\"reservation_id\": \"8JX2QH\"}"}}]},
                 {"role": "tool", "tool_call_id": "call_1", "name": "get_reservation_details", "content": result},
                 {"role": "assistant", "content": "Your reservation is cancelled."}]}) + "\n"


@pytest.mark.parametrize("char", [chr(c) for c in range(0x20) if chr(c) not in "\t\n\r"])
def test_every_control_character_json_escapes_is_repaired(tmp_path, char):
    """json.dumps writes backspace and form feed as \\b and \\f, the others as \\u00XX: a
    record whose only defect is one of them is repaired all the same."""
    path = tmp_path / "runs.jsonl"
    path.write_text(_tau_line(f"loading{char}{char} done; grep -P '\\bconfirmed\\b' matched 1 line"))
    report = LoadReport()
    (run,) = iter_runs([path], None, report)
    assert report.repaired == 2 and run.source["repaired_chars"] == 2
    assert not any(char in str(t.result) + str(t.content) for t in run.turns)
    assert any("'\\bconfirmed\\b'" in str(t.result) for t in run.turns)  # a logged backslash stays text



_HARD = st.sampled_from(["\x00", "\x08", "\x0c", "\x1b", "\x7f", "\x85", "\ud83d", "\udc00", "\ufffe", "\uffff",
                         "\t", "\n", "\\", "\\b", "\\u0000", "é", "😀", "a", " ", '"'])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_HARD, st.text(max_size=4)), max_size=8).map("".join), st.booleans())
def test_a_clean_line_is_a_clean_record(text, upper):
    """``clean_json`` of a line as read never passes a record ``_clean`` (the dump's look) would
    not: it only spares the dump."""
    import re

    from wikitrace.runs.repair import _clean, clean_json

    for raw in (json.dumps({"a": text, text: [text, 1]}), json.dumps([text], ensure_ascii=False)):
        if upper:  # a file's own spelling of an escape: \\u00E9, \\uD83D
            raw = re.sub(r"\\u[0-9a-f]{4}", lambda m: m.group().upper().replace("\\U", "\\u"), raw)
        if clean_json(raw) or clean_json(raw.encode("utf-8", "surrogatepass")):
            assert _clean(json.loads(raw))
