"""The coding corpus (tests/coding_corpus.py, committed under tests/fixtures/importers/coding_corpus)
read as a user reads it: every run of every experiment folder compiled, trials of one task
grouped, and the missing JDK that successes and failures both met named as no cause."""

from __future__ import annotations

import json
from pathlib import Path

from coding_corpus import write_corpus

from wikitrace.build import BuildOptions, build

CORPUS = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus"


def test_the_committed_corpus_is_what_the_generator_writes(tmp_path):
    fresh = write_corpus(tmp_path / "c")
    made = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(CORPUS) for p in CORPUS.rglob("*") if p.is_file())
    for rel in made:
        assert (fresh / rel).read_bytes() == (CORPUS / rel).read_bytes(), rel


def test_every_run_of_every_experiment_is_compiled_as_a_trial_of_its_task(tmp_path):
    out = tmp_path / "out"
    result = build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                                outcomes=CORPUS / "claude-code" / "outcomes.json"))
    assert result.runs == 12 and not result.skipped
    data = json.loads((out / "corpus.json").read_text())
    by_task: dict[str, list[str]] = {}
    for r in data["runs"]:
        by_task.setdefault(r["task_id"], []).append(r["outcome"])
    assert sorted(by_task["acme__jsonkit-101"]) == ["failure", "failure", "success"]
    assert sorted(by_task["acme__jsonkit-103"]) == ["success", "success"]
    missing = next(i for i in data["insights"] if i["key"] == "error|missing-program")
    page = (out / "insight" / f"{missing['id']}.md").read_text()
    # met by 4 of the 5 failed and 4 of the 5 successful coding runs: no cause, and what the successes did
    assert "so it is not named a cause (successful runs met it too)" in page
    assert "What successful runs that met it did" in page
    step = {r["run_id"]: r["step"] for r in data["runs"]}
    llama = (out / "compilation" / f"{step['swe-llama/acme__jsonkit-101']}.md").read_text()
    # the failed trial edited the test file, the successful one the parser: said so, never "the same calls"
    assert "made the change edit of NumberParser.java at its turn 3; this run made edit of NumberParserTest.java" in llama
