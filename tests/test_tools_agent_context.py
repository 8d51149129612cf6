"""The agent tools keep the agent's context small: `turn` caps long fields, `grep` names
turn-log hits by turn, skips the imported originals unless asked, and answers from the
per-layer search files `wikitrace compile` writes exactly as it does from the files."""

import json
import shutil
import subprocess
import sys

import pytest

from helpers import EXAMPLES
from test_cli_errors import WIKITRACE
from test_tools import NO_RG, corpus, run  # noqa: F401  (corpus is a fixture)
from wikitrace.corpus.search_files import write_search_files


def test_turn_caps_a_long_field_and_says_how_to_see_it(corpus):  # noqa: F811
    progress = "\n".join(f"Downloading layer {i}: {i % 100}%" for i in range(3686))
    log = corpus / "raw/step-0002/solver.full.jsonl"
    log.parent.mkdir()
    log.write_text(json.dumps({"turn": 0, "type": "message", "role": "user", "content": "go"}) + "\n"
                   + json.dumps({"turn": 1, "type": "function_call", "name": "bash",
                                 "arguments": {"command": "docker pull x"}, "result": progress}) + "\n")
    capped = run("turn", "step-0002", "1", corpus=corpus)
    assert capped.returncode == 0
    assert len(capped.stdout) < 4000
    assert "Downloading layer 0: 0%" in capped.stdout and "Downloading layer 3685: 85%" in capped.stdout
    assert "… 3646 lines cut — `turn step-0002 1 --full`" in capped.stdout
    full = run("turn", "step-0002", "1", "--full", corpus=corpus)
    assert progress in full.stdout and "cut —" not in full.stdout
    as_json = json.loads(run("turn", "step-0002", "1", "--json", corpus=corpus).stdout)
    assert "lines cut" in as_json[0]["result"] and len(as_json[0]["result"]) < 4000
    one_line = "x" * 50_000  # one huge line (a minified page) is cut by characters
    log.write_text(json.dumps({"turn": 0, "type": "message", "role": "tool", "content": one_line}) + "\n")
    out = run("turn", "step-0002", "0", corpus=corpus).stdout
    assert len(out) < 4500 and "characters cut — `turn step-0002 0 --full`" in out
    short = run("turn", "step-0001", "2", corpus=corpus).stdout
    assert "cut —" not in short  # short fields are untouched


def test_grep_names_turn_log_hits_by_turn(corpus):  # noqa: F811
    proc = run("grep", "departed yesterday", "--layer", "raw", corpus=corpus, env=NO_RG)
    assert proc.stdout.startswith("step-0001 turn 2: ")
    item = json.loads(run("grep", "departed yesterday", "--json", corpus=corpus, env=NO_RG).stdout)[0]
    assert (item["step"], item["turn"], item["line"]) == ("step-0001", 2, 3)
    shown = run("turn", item["step"], str(item["turn"]), corpus=corpus).stdout
    assert "departed yesterday" in shown


def test_grep_skips_originals_unless_asked(corpus):  # noqa: F811
    (corpus / "raw/step-0001/original.json").write_text('{"note": "ZFA04Y original copy"}\n')
    plain = run("grep", "original copy", corpus=corpus, env=NO_RG)
    assert plain.returncode == 1 and plain.stdout == ""
    asked = run("grep", "original copy", "--original", corpus=corpus, env=NO_RG)
    assert asked.stdout == f"{corpus}/raw/step-0001/original.json:1: {{\"note\": \"ZFA04Y original copy\"}}\n"


PATTERNS = [
    ["cancel_reservation"], ["ZFA04Y", "--max", "2"], ["zfa04y", "-i"], ["zfa04y", "-i", "-l"],
    ["^# "], ["economy $"], ["HAT1[0-9]+"], ["dep.rted"], ["\\bgold\\b"], ["(", "-F"], ["a|b", "-F"],
    ["Mia Li", "--json"], ["caf"], ["non-refundable", "--layer", "raw"], ["nothing-matches-this"],
    ["[^a-z]42"], ["flight|membership", "--max", "0"],
]


def test_search_files_answer_exactly_as_the_files(corpus, tmp_path):  # noqa: F811
    indexed = tmp_path / "indexed"
    shutil.copytree(corpus, indexed)
    write_search_files(indexed)
    assert all((indexed / "index/grep/raw" / name).is_file() for name in ("head.txt", "00.txt", "00.map", "00.words"))
    for args in PATTERNS:
        plain = run("grep", *args, corpus=corpus, env=NO_RG)
        fast = run("grep", *args, corpus=indexed, env=NO_RG)
        assert fast.returncode == plain.returncode, args
        assert fast.stdout.replace(str(indexed), str(corpus)) == plain.stdout, args
    # and the search file is what was read: change a page after it was written
    page = indexed / "compilation/step-0001.md"
    page.write_text(page.read_text().replace("departed", "DEPARTED"))
    assert "departed" in run("grep", "departed", corpus=indexed, env=NO_RG).stdout


def test_compile_writes_search_files_that_grep_uses(tmp_path):
    out = tmp_path / "corpus"
    subprocess.run([WIKITRACE, "compile", EXAMPLES, "--out", out, "--offline", "-q"], check=True)
    for layer in ("raw", "compilation", "insight"):
        assert (out / "index/grep" / layer / "00.txt").is_file()
    proc = run("grep", "refund", "--layer", "raw", "--max", "5", corpus=out, env=NO_RG)
    assert proc.returncode == 0
    first = proc.stdout.splitlines()[0]
    if first.startswith("step-"):
        step, _, turn = first.split(":", 1)[0].split(" ")
        assert "refund" in run("turn", step, turn, corpus=out).stdout.lower()
    check = subprocess.run([WIKITRACE, "check", out], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


@pytest.mark.skipif(sys.platform != "linux", reason="mode bits")
def test_search_files_are_read_only(tmp_path):
    out = tmp_path / "corpus"
    subprocess.run([WIKITRACE, "compile", EXAMPLES, "--out", out, "--offline", "-q"], check=True)
    assert (out / "index/grep/raw/00.txt").stat().st_mode & 0o222 == 0
