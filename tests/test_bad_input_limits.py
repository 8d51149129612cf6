"""Bad input is read with limits and named right: a pipe or a device is refused by type (never
read, never blocking), a long first record is still a run, dialogue structure is never repaired
in silence, a score must be a number, a corrupt memory is a problem `check` reports, a full disk
leaves no trace, and every input error exits 2 with the fix."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import example_runs, run_cli, write_jsonl

LOCOMO = {"speaker_a": "Ana", "speaker_b": "Ben",
          "session_1_date_time": "10:00 am on 3 March, 2024",
          "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy named Biscuit."},
                        {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! I started learning the cello."}],
          "session_2_date_time": "4:30 pm on 20 April, 2024",
          "session_2": [{"speaker": "Ben", "dia_id": "D2:1", "text": "I moved from Norway to Toronto in 2019."},
                        {"speaker": "Ana", "dia_id": "D2:2", "text": "I now have 3 cats.", "blip_caption": "three cats"}],
          "qa": [{"question": "Where did Ben move from?", "answer": "Norway", "evidence": ["D2:1"], "category": 1}]}


def _wikitrace(*args: str) -> subprocess.CompletedProcess:
    """In a child process: a command that blocked on its input would end the test, not hang it."""
    return subprocess.run([sys.executable, "-m", "wikitrace.cli", *args], capture_output=True, text=True, timeout=60)


def _one_error(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.startswith("wikitrace: error: ")]
    assert len(lines) == 1 and "internal error" not in lines[0] and "Traceback" not in stderr, stderr
    return lines[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_or_a_device_is_refused_by_type_without_blocking(tmp_path):
    fifo, zero = tmp_path / "runs.jsonl", tmp_path / "zero.jsonl"
    os.mkfifo(fifo)
    zero.symlink_to("/dev/zero")
    write_jsonl(tmp_path / "good.jsonl", example_runs()[:2])
    ok = run_cli("compile", str(tmp_path / "good.jsonl"), "-o", str(tmp_path / "corpus"), "--offline", "-q")
    assert ok[0] == 0, ok[2]
    for args in (("compile", str(fifo), "-o", str(tmp_path / "c1"), "--offline"),
                 ("compile", str(zero), "-o", str(tmp_path / "c2"), "--offline"),
                 ("add", str(fifo), "--corpus", str(tmp_path / "corpus"), "--offline"),
                 ("dialogue", "compile", str(fifo), "-o", str(tmp_path / "d1"), "--offline"),
                 ("dialogue", "compile", str(zero), "-o", str(tmp_path / "d2"), "--offline")):
        done = _wikitrace(*args)
        line = _one_error(done.stderr)
        assert done.returncode == 2, (args, done.stderr)
        target = "runs.jsonl" if str(fifo) in args else "zero.jsonl"
        assert target in line and ("is a named pipe (FIFO)" if target == "runs.jsonl" else "is a device") in line
        assert "is a folder" not in line and "no such file" not in line
        assert "save what it holds to a regular file" in line


def test_a_run_whose_first_record_is_longer_than_the_detection_window_is_still_a_run(tmp_path):
    run = example_runs()[0]
    run["turns"][1]["content"] = "the customer wrote at length. " * 600_000  # 18 MB on the first line
    write_jsonl(tmp_path / "long.jsonl", [run] + example_runs()[1:2])
    code, _, err = run_cli("compile", str(tmp_path / "long.jsonl"), "-o", str(tmp_path / "corpus"), "--offline", "-q",
                           "--json")
    assert code == 0, err
    assert "cannot tell the format" not in err
    data = json.loads((tmp_path / "corpus" / "corpus.json").read_text())
    assert {r["run_id"] for r in data["runs"]} == {run["run_id"], example_runs()[1]["run_id"]}


@pytest.mark.parametrize("change, expected", [
    (lambda d: d.__setitem__("session_2", {"speaker": "Ben"}), "field 'session_2' is dict, not a list of turns"),
    (lambda d: d["session_1"][1].__setitem__("text", None), "session_1[1]: field 'text' is null"),
    (lambda d: d["session_1"][1].__setitem__("text", 42), "field 'text' must be a string, got int"),
    (lambda d: d["session_1"][0].pop("speaker"), "session_1[0]: field 'speaker' is missing or empty"),
    (lambda d: d.__setitem__("session_2_date_time", "sometime last spring"), "holds no date wikitrace reads"),
    (lambda d: d.__setitem__("session_2_date_time", "4:30 pm on 31 April, 2024"), "is not a valid date"),
])
def test_dialogue_structure_is_refused_not_repaired(tmp_path, change, expected):
    data = json.loads(json.dumps(LOCOMO))
    change(data)
    src = tmp_path / "conv-1.json"
    src.write_text(json.dumps(data))
    code, _, err = run_cli("dialogue", "compile", str(src), "-o", str(tmp_path / "corpus"), "--offline", "-q")
    line = _one_error(err)
    assert code == 2 and "conv-1.json" in line and expected in line and " — " in line, err
    assert not (tmp_path / "corpus" / "dialogue").exists()


def test_nan_and_infinity_are_not_numbers(tmp_path):
    src = tmp_path / "conv-1.json"
    src.write_text(json.dumps(LOCOMO).replace('"category": 1', '"category": NaN'))
    code, _, err = run_cli("dialogue", "compile", str(src), "-o", str(tmp_path / "d"), "--offline", "-q")
    assert code == 2 and "NaN is not a JSON number" in _one_error(err)
    runs = example_runs()[:3]
    runs[0]["outcome"]["score"] = float("nan")
    runs[1]["outcome"]["score"] = float("inf")
    (tmp_path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in runs))  # json writes NaN/Infinity
    code, _, err = run_cli("compile", str(tmp_path / "runs.jsonl"), "-o", str(tmp_path / "c"), "--offline")
    assert code == 0, err
    data = json.loads((tmp_path / "c" / "corpus.json").read_text())  # still strict JSON
    assert [r["run_id"] for r in data["runs"]] == [runs[2]["run_id"]]
    assert "score nan is not a finite number" in err and "score inf is not a finite number" in err


def test_a_huge_dialogue_message_is_cut_and_the_cut_is_listed(tmp_path):
    from wikitrace.dialogue.load import MAX_MESSAGE_CHARS

    data = json.loads(json.dumps(LOCOMO))
    data["session_1"][1]["text"] = "I practise scales every evening and " * (3 * MAX_MESSAGE_CHARS // 36)
    data["session_1"].append({"speaker": "Ben", "dia_id": "D1:3", "text": ""})
    src = tmp_path / "conv-1.json"
    src.write_text(json.dumps(data))
    code, out, err = run_cli("dialogue", "compile", str(src), "-o", str(tmp_path / "corpus"), "--offline", "--json")
    assert code == 0, err
    skipped = json.loads(out)["skipped"]
    assert any(f"1 message(s) longer than {MAX_MESSAGE_CHARS} characters cut there" in s for s in skipped)
    assert any("1 empty messages skipped" in s for s in skipped)
    memory = json.loads(next((tmp_path / "corpus" / "dialogue").glob("*/memory.json")).read_text())
    longest = max(len(m["text"]) for m in memory["messages"])
    assert MAX_MESSAGE_CHARS <= longest < MAX_MESSAGE_CHARS + 100


@pytest.mark.parametrize("content", ['{"messages": [', "[]", '{"messages": 5}', '{"messages": [{"id": 1}]}', "null"])
def test_check_reports_a_corrupt_dialogue_memory_instead_of_crashing(tmp_path, content):
    from wikitrace.fsio import make_writable

    src = tmp_path / "conv-1.json"
    src.write_text(json.dumps(LOCOMO))
    assert run_cli("dialogue", "compile", str(src), "-o", str(tmp_path / "corpus"), "--offline", "-q")[0] == 0
    make_writable(tmp_path / "corpus")
    memory = next((tmp_path / "corpus" / "dialogue").glob("*/memory.json"))
    memory.write_text(content)
    code, out, err = run_cli("check", str(tmp_path / "corpus"))
    assert code == 1 and "internal error" not in err + out
    assert "memory.json" in out + err and "compile the conversation again" in out + err


def test_cite_record_on_a_full_disk_leaves_no_empty_usage_folder(tmp_path, monkeypatch):
    from wikitrace import fsio

    write_jsonl(tmp_path / "runs.jsonl", example_runs()[:2])
    assert run_cli("compile", str(tmp_path / "runs.jsonl"), "-o", str(tmp_path / "c"), "--offline", "-q")[0] == 0

    def full(path, text, mode=None):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    monkeypatch.setattr(fsio, "write_atomic", full)
    code, _, err = run_cli("cite", "record", "-", "--corpus", str(tmp_path / "c"), "--run", "ep-1",
                           "--outcome", "success", stdin='{"R": ["step-0000"], "I": []}')
    assert code == 1 and "no space left on the device — free some space and run again" in _one_error(err)
    assert not (tmp_path / "c" / "usage").exists()


def test_input_errors_exit_2_and_say_what_to_do(tmp_path):
    missing = tmp_path / "nope.jsonl"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.md").write_text("mine\n")  # a folder of other files is no corpus
    write_jsonl(tmp_path / "runs.jsonl", example_runs()[:1])
    for args in (("compile", str(missing), "-o", str(tmp_path / "c"), "--offline"),
                 ("add", str(tmp_path / "runs.jsonl"), "--corpus", str(tmp_path / "notes"), "--offline"),
                 ("dialogue", "compile", str(missing), "-o", str(tmp_path / "d"), "--offline")):
        code, _, err = run_cli(*args)
        line = _one_error(err)
        assert code == 2 and " — " in line, (args, err)
