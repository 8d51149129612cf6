"""Every command that writes a corpus, killed with SIGKILL at a file replacement, is
finished by running it again: the corpus converges to the bytes of a run never killed.

The kill is exact, not timed: WIKITRACE_KILL_AT=N:COUNTER makes the command (with the
helper processes of its session) SIGKILL itself just before its Nth file replacement
or removal (fsio.py ``before_replace``). A counting run (N = 0 never fires)
tells how many replacement points a command has. The default run kills each command
at its first, a middle and its last point; the ``slow`` variant kills it at every one.
"""

import json
import re
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import EXAMPLES, REPO, example_runs, tree_bytes, write_jsonl

from wikitrace.check import check_corpus

LOCOMO = REPO / "tests" / "fixtures" / "dialogue" / "locomo-mini.json"


def run(args, cwd: Path, kill_at: int | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WIKITRACE_"))}
    if kill_at is not None:
        env["WIKITRACE_KILL_AT"] = f"{kill_at}:{cwd / 'replacements'}"
        (cwd / "replacements").unlink(missing_ok=True)
    return subprocess.run([sys.executable, "-m", "wikitrace.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300, start_new_session=True)  # the kill takes its own session only


def comparable(root: Path) -> dict:
    """Bytes outside .wikitrace/, corpus.json without its build block (when it was built,
    by which command), and the manifests' data and file hashes."""
    files = tree_bytes(root)
    if "corpus.json" in files:
        files["corpus.json"] = files["corpus.json"].split(b'\n "build": ')[0]
    for kind in ("runs", "dialogue"):
        path = root / ".wikitrace" / f"{kind}.json"
        if path.is_file():
            manifest = json.loads(path.read_text())
            files[f"manifest {kind}"] = json.dumps(
                [manifest["data"], {k: v[:2] for k, v in manifest["files"].items() if k != "corpus.json"}],
                sort_keys=True).encode()
    return files


def leftovers(root: Path) -> list[str]:
    state = root / ".wikitrace"
    found = [n for n in ("runs.journal", "runs.pending", "dialogue.journal", "dialogue.pending")
             if (state / n).exists()]
    return found + [f"tmp/{n}" for n in os.listdir(state / "tmp")] if (state / "tmp").is_dir() else found


# --- the commands: (prepare the corpus before the command, the command) ---------------

def _runs_base(work: Path) -> Path:
    runs = example_runs()
    write_jsonl(work / "A.jsonl", runs[:-2])
    write_jsonl(work / "B.jsonl", runs[-2:])
    write_jsonl(work / "all.jsonl", runs[1:])  # one run leaves, two come in
    (work / "answer.txt").write_text('Done.\n```json\n{"R": ["step-0000"], "I": ["insight-0000", "insight-0001"]}\n```\n')
    assert run(["compile", "A.jsonl", "--out", "c", "--offline", "-q"], work).returncode == 0
    return work


def _dialogue_base(work: Path) -> Path:
    """A LoCoMo conversation compiled without its last session (the sample is named after the file)."""
    conv = json.loads(LOCOMO.read_text())
    last = max(int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k))
    early = {k: v for k, v in conv.items() if k not in (f"session_{last}", f"session_{last}_date_time")}
    for folder, data in (("early", early), ("full", conv)):
        (work / folder).mkdir()
        (work / folder / LOCOMO.name).write_text(json.dumps(data))
    (work / "session.json").write_text(json.dumps({f"session_{last}": conv[f"session_{last}"],
                                                   f"session_{last}_date_time": conv[f"session_{last}_date_time"]}))
    assert run(["dialogue", "compile", f"early/{LOCOMO.name}", "--out", "c", "--offline", "-q"], work).returncode == 0
    return work


COMMANDS = {
    "compile": (_runs_base, lambda w: ["compile", "all.jsonl", "--out", "c", "--offline", "-q"]),
    "add": (_runs_base, lambda w: ["add", "B.jsonl", "--corpus", "c", "--offline", "-q"]),
    "forget": (_runs_base, lambda w: ["forget", "step-0001", "--corpus", "c"]),
    "cite record": (_runs_base, lambda w: ["cite", "record", "answer.txt", "--corpus", "c", "--run", "ep-1",
                                           "--outcome", "success"]),
    "dialogue compile": (_dialogue_base, lambda w: ["dialogue", "compile", f"full/{LOCOMO.name}", "--out", "c",
                                                    "--offline", "-q"]),
    "dialogue add": (_dialogue_base, lambda w: ["dialogue", "add", "session.json", "--corpus", "c", "--sample",
                                                LOCOMO.stem, "--offline", "-q"]),
}

_BASES: dict[str, Path] = {}


def _start(name: str, tmp_path: Path, dest: str) -> Path:
    """A copy of the prepared corpus for ``name`` (prepared once per session)."""
    prepare, _ = COMMANDS[name]
    key = prepare.__name__
    if key not in _BASES:
        base = tmp_path.parent / f"base-{key}"
        if not base.exists():
            base.mkdir()
            prepare(base)
        _BASES[key] = base
    work = tmp_path / dest
    shutil.copytree(_BASES[key], work, symlinks=True)
    return work


def _reference(name: str, tmp_path: Path) -> tuple[dict, int]:
    """What the command leaves when never killed, and how many replacement points it has."""
    work = _start(name, tmp_path, "ref")
    args = COMMANDS[name][1](work)
    done = run(args, work, kill_at=0)  # counts, never fires
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    points = (work / "replacements").stat().st_size
    assert check_corpus(work / "c") == [], "the uninterrupted command leaves a whole corpus"
    return comparable(work / "c"), points


def _kill_and_rerun(name: str, tmp_path: Path, point: int, ref: dict) -> None:
    work = _start(name, tmp_path, f"kill-{point}")
    args = COMMANDS[name][1](work)
    killed = run(args, work, kill_at=point)
    assert killed.returncode == -signal.SIGKILL, (point, killed.returncode, killed.stderr)
    if point > 1:  # something was replaced: check names what is left to finish (or says nothing is)
        pending = [p for p in check_corpus(work / "c") if "interrupted" in p]
        assert all("wikitrace" in p for p in pending), pending
    again = run(args, work)
    assert again.returncode in (0, 1) and "Traceback" not in again.stderr, again.stderr
    assert comparable(work / "c") == ref, f"{name}: killed at replacement {point}, the rerun did not converge"
    assert leftovers(work / "c") == [], "the rerun finished everything the kill left"
    assert check_corpus(work / "c") == []


def _points(total: int) -> list[int]:
    return sorted({1, max(1, total // 2), total})


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_killed_at_its_first_middle_and_last_replacement_converges_when_run_again(name, tmp_path):
    ref, total = _reference(name, tmp_path)
    assert total >= 3, f"{name}: only {total} replacement points"
    for point in _points(total):
        _kill_and_rerun(name, tmp_path, point, ref)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_killed_at_every_replacement_converges_when_run_again(name, tmp_path):
    ref, total = _reference(name, tmp_path)
    for point in range(1, total + 1):
        _kill_and_rerun(name, tmp_path, point, ref)


def test_an_add_killed_while_writing_its_indexes_is_finished_by_the_next_add_of_another_run(tmp_path):
    """A corpus filled by a capture hook has no input to compile again: the next add finishes
    the one that was killed, and both runs are in."""
    work = _start("add", tmp_path, "w")
    runs = example_runs()
    write_jsonl(work / "B1.jsonl", runs[-2:-1])
    write_jsonl(work / "B2.jsonl", runs[-1:])
    count = _start("add", tmp_path, "count")
    write_jsonl(count / "B1.jsonl", runs[-2:-1])
    assert run(["add", "B1.jsonl", "--corpus", "c", "--offline", "-q"], count, kill_at=0).returncode == 0
    total = (count / "replacements").stat().st_size
    published = tree_bytes(work / "c")
    killed = run(["add", "B1.jsonl", "--corpus", "c", "--offline", "-q"], work, kill_at=total - 3)
    assert killed.returncode == -signal.SIGKILL
    assert (work / "c" / ".wikitrace" / "runs.pending").is_file(), "the kill should land after the commit record"
    # the record names only what the add changed (the earlier runs' pages come back from the
    # manifest): the recovery below is made from such a record
    record = json.loads((work / "c" / ".wikitrace" / "runs.pending").read_text())
    assert isinstance(record["removed"], list) and record["output"]
    assert not [rel for rel in record["output"] if rel.startswith("raw/step-0000/")]
    problems = check_corpus(work / "c")
    assert any("`wikitrace add` was interrupted" in p and "finishes it" in p for p in problems), problems
    assert tree_bytes(work / "c") != published
    done = run(["add", "B2.jsonl", "--corpus", "c", "--offline", "-q"], work)
    assert done.returncode == 0, done.stderr
    ids = [r["run_id"] for r in json.loads((work / "c" / "corpus.json").read_text())["runs"]]
    assert ids[-2:] == [runs[-2]["run_id"], runs[-1]["run_id"]]
    assert run(["compile", "A.jsonl", "B1.jsonl", "B2.jsonl", "--out", "ref", "--offline", "-q"],
               work).returncode == 0
    assert comparable(work / "c") == comparable(work / "ref")
    assert check_corpus(work / "c") == []


def test_cite_record_killed_half_way_leaves_later_records_updating_pages(tmp_path):
    work = _start("cite record", tmp_path, "w")
    args = COMMANDS["cite record"][1](work)
    assert run(args, work, kill_at=0).returncode == 0
    total = (work / "replacements").stat().st_size
    work = _start("cite record", tmp_path, "w2")
    assert run(args, work, kill_at=total - 1).returncode == -signal.SIGKILL
    (work / "other.txt").write_text('```json\n{"I": ["insight-0001"]}\n```\n')
    done = run(["cite", "record", "other.txt", "--corpus", "c", "--run", "ep-2", "--outcome", "failure"], work)
    assert done.returncode == 0, done.stderr
    assert "interrupted" in done.stderr  # says it finished the earlier one
    page = (work / "c" / "insight" / "insight-0001.md").read_text()
    assert "cited_episodes: 2" in page and "cited_succeeded: 1" in page
    assert check_corpus(work / "c") == []
