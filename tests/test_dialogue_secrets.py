"""Dialogue memory keeps secrets out like agent runs do: a key pasted into a conversation,
or in the input file's name, is a typed placeholder in every file the build writes."""

import json
import os
import subprocess
import sys
from pathlib import Path

from wikitrace.dialogue.build import DialogueOptions, compile_dialogues

TINY = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
KEY = "ghp_" + "Q7wXz" * 7 + "a"  # the shape of a GitHub token, made up here


def _all_text(root: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in sorted(root.rglob("*")) if p.is_file())


def test_a_key_in_a_message_and_in_the_file_name_never_reaches_the_dialogue_memory(tmp_path):
    lines = TINY.read_text().splitlines()
    rec = json.loads(lines[1])
    rec["text"] = f"My token is {KEY} and the build uses it."
    lines[1] = json.dumps(rec)
    src = tmp_path / "in"
    src.mkdir()
    (src / f"chat-{KEY}.jsonl").write_text("\n".join(lines) + "\n")
    out = tmp_path / "corpus"
    summary = compile_dialogues(DialogueOptions(inputs=[src], out=out))
    assert summary["redactions"].get("github-token", 0) >= 2
    text = _all_text(out)
    assert KEY not in text and "[REDACTED:github-token" in text
    proc = subprocess.run([sys.executable, "-m", "wikitrace.dialogue", "query", "what token is used?",
                           "--corpus", str(out), "--json"], capture_output=True, text=True, timeout=120,
                          env={**os.environ})
    assert KEY not in proc.stdout + proc.stderr


def test_a_symlink_leading_out_of_the_dialogue_folder_is_not_followed(tmp_path):
    outside = tmp_path / "outside.jsonl"
    outside.write_text(TINY.read_text())
    src = tmp_path / "in"
    src.mkdir()
    (src / "tiny.jsonl").write_text(TINY.read_text())
    (src / "elsewhere.jsonl").symlink_to(outside)
    summary = compile_dialogues(DialogueOptions(inputs=[src], out=tmp_path / "corpus"))
    assert [s["sample"] for s in summary["samples"]] == ["tiny"]
    assert any("elsewhere.jsonl: symlink leading out of" in line for line in summary["skipped"])
