"""Text from a run or a model is quoted in the pages, never linked: a relative markdown
link or a backticked mount path inside a run must not make `wikitrace check` reject
the corpus the build just published (and a viewer shows it as the text it is)."""

import json
import subprocess

from test_cli_errors import WIKITRACE

HOSTILE = ("read [g](docs/guide.md) then `/work/corpus/raw/step-0042/solver.full.jsonl`, "
           "`turn step-0000 99` and <b>bold</b> C:\\dir\\[x]")


def _run(i: int, success: bool) -> dict:
    return {
        "run_id": f"hostile-{i}",
        "task": {"id": f"task [{i}](x.md)", "instruction": "Fix it: " + HOSTILE,
                 "task_type": "ops `/work/corpus/nope`", "metadata": {"note": HOSTILE}},
        "outcome": {"success": success, "score": 1.0 if success else 0.0},
        "turns": [
            {"turn": 0, "type": "message", "role": "user", "content": HOSTILE},
            {"turn": 1, "type": "function_call", "role": "assistant", "name": "bash",
             "arguments": {"command": "cat docs/guide.md"}, "reasoning": "I will " + HOSTILE,
             "result": "Error: " + HOSTILE, "is_error": True},
            {"turn": 2, "type": "function_call", "role": "assistant", "name": "bash",
             "arguments": {"command": "ls [a](b.md)"}, "reasoning": HOSTILE, "result": HOSTILE},
            {"turn": 3, "type": "message", "role": "assistant", "content": "Done. " + HOSTILE},
            {"turn": 4, "type": "episode_over"},
        ],
    }


def test_links_and_paths_in_run_text_do_not_fail_check(tmp_path):
    src = tmp_path / "runs.jsonl"
    src.write_text("".join(json.dumps(_run(i, i % 2 == 0)) + "\n" for i in range(4)))
    out = tmp_path / "corpus"
    build = subprocess.run([WIKITRACE, "compile", src, "--out", out, "--offline", "-q"],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    check = subprocess.run([WIKITRACE, "check", out, "--json"], capture_output=True, text=True)
    assert json.loads(check.stdout)["problems"] == [] and check.returncode == 0
    pages = {p: p.read_text() for p in out.rglob("*.md")}
    body = "\n".join(text.split("---", 2)[2] for text in pages.values())
    # the run's text is there, escaped: shown as text, not as a link or a code span
    assert "\\[g\\](docs/guide.md)" in body
    assert "\\`/work/corpus/raw/step-0042/solver.full.jsonl\\`" in body
    assert "\\<b\\>bold\\</b\\>" in body
    import re

    outside_fences = re.sub(r"^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", "", body, flags=re.M | re.S)
    assert "[g](docs/guide.md)" not in outside_fences.replace("\\[g\\](docs/guide.md)", "")
    assert "```text\nread [g](docs/guide.md)" in body  # turns.md quotes it whole, in a fence


def test_check_still_catches_a_broken_template_link(tmp_path):
    """The escape does not blind check: a real broken link is still a problem."""
    src = tmp_path / "runs.jsonl"
    src.write_text(json.dumps(_run(0, True)) + "\n")
    out = tmp_path / "corpus"
    subprocess.run([WIKITRACE, "compile", src, "--out", out, "--offline", "-q"], check=True)
    page = out / "insight" / "insight-0000.md"
    page.chmod(0o644)
    page.write_text(page.read_text() + "\n[lost](../raw/step-0999/metadata.md)\n")
    check = subprocess.run([WIKITRACE, "check", out, "--json"], capture_output=True, text=True)
    assert check.returncode == 1
    assert any("step-0999" in p for p in json.loads(check.stdout)["problems"])
