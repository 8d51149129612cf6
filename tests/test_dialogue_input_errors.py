"""Bad LoCoMo / JSONL dialogue input: one error naming the file and what to fix, never a
traceback; text that cannot be encoded is repaired and counted instead of failing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wikitrace.dialogue.load import DialogueInputError, load_file


def _conv(**over):
    conv = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a puppy."},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely."}],
            "qa": [{"question": "What did Ana adopt?", "answer": "a puppy", "evidence": ["D1:1"], "category": 4}]}
    conv.update(over)
    return conv


def _write(tmp_path, obj, name="conv-9.json"):
    path = tmp_path / name
    path.write_text(json.dumps(obj))
    return path


@pytest.mark.parametrize("change, expected", [
    ({"session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "a"}, {"speaker": "Ben", "dia_id": "D1:1", "text": "b"}]},
     "session_1[1]: dia_id 'D1:1' is used again (first at session_1[0])"),
    ({"session_1": ["just a string"]}, "session_1[0]: a turn must be an object"),
    ({"speaker_a": {"name": "Ana"}}, "field 'speaker_a': a speaker must be a name (text), got dict"),
    ({"session_1_date_time": "1:56 pm on 31 February, 2023"},
     "field 'session_1_date_time': '1:56 pm on 31 February, 2023' is not a valid date (day is out of range for month)"),
])
def test_locomo_faults_name_the_file(tmp_path, change, expected):
    path = _write(tmp_path, _conv(**change))
    with pytest.raises(DialogueInputError) as err:
        load_file(path)
    assert str(err.value).startswith(f"{path}: ") and expected in str(err.value)


def test_duplicate_dia_id_across_sessions_is_rejected(tmp_path):
    conv = _conv(session_2_date_time="9 May 2023", session_2=[{"speaker": "Ben", "dia_id": "D1:2", "text": "again"}])
    with pytest.raises(DialogueInputError, match=r"session_2\[0\]: dia_id 'D1:2' is used again"):
        load_file(_write(tmp_path, conv))


def test_locomo10_list_names_the_entry(tmp_path):
    path = _write(tmp_path, [{"sample_id": "conv-1", "conversation": _conv(session_1=[7])}], "locomo10.json")
    with pytest.raises(DialogueInputError, match=r"locomo10\.json\[0\]: session_1\[0\]: a turn must be an object"):
        load_file(path)


def test_invalid_utf8_and_utf16_are_read(tmp_path):
    raw = json.dumps(_conv()).encode().replace(b"puppy", b"pup\xffpy", 1)
    bad = tmp_path / "bad.json"
    bad.write_bytes(raw)
    d, = load_file(bad)
    assert d.messages[0].text == "I adopted a pup\ufffdpy." and d.repaired == 1
    wide = tmp_path / "wide.json"
    wide.write_bytes(json.dumps(_conv()).encode("utf-16"))
    d, = load_file(wide)
    assert d.messages[0].text == "I adopted a puppy." and d.repaired == 0


def test_jsonl_bad_timestamp_and_speaker_name_the_line(tmp_path):
    path = tmp_path / "chat.jsonl"
    path.write_text(json.dumps({"id": "M1", "speaker": "Ana", "text": "hi", "timestamp": "30 February 2024"}) + "\n")
    with pytest.raises(DialogueInputError, match=r"chat\.jsonl: sample chat, message 1: field 'timestamp'"):
        load_file(path)
    path.write_text(json.dumps({"id": "M1", "speaker": ["Ana"], "text": "hi"}) + "\n")
    with pytest.raises(DialogueInputError, match=r"chat\.jsonl:1: field 'speaker'"):
        load_file(path)


def test_cli_bad_date_is_one_line_without_traceback(tmp_path):
    path = _write(tmp_path, _conv(session_1_date_time="1:56 pm on 31 February, 2023"))
    exe = shutil.which("wikitrace")
    cmd = [exe] if exe else [sys.executable, "-m", "wikitrace.cli"]
    done = subprocess.run(cmd + ["dialogue", "compile", str(path), "--out", str(tmp_path / "out"), "--offline"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ, COLUMNS="400"))
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert str(path) in done.stderr and "day is out of range for month" in done.stderr
