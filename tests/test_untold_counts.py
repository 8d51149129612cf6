"""The lesson on values never told to the user counts its failed runs by what their pages show: had
the value in a tool's answer, told another figure, or had it nowhere (corpus/untold_counts.py)."""

from __future__ import annotations

import json
import re

from wikitrace.corpus.untold_counts import split


def _run(n: int, task: str, about: list[str] | None, idle: bool = False) -> dict:
    facts = [] if about is None else [{"kind": "untold", **({"about": about} if about else {})}]
    return {"step": f"step-{n:04d}", "task_id": task, "outcome": "failure", "facts": facts,
            "patterns": ["untold", *(["idle|none"] if idle else [])]}


def test_the_runs_are_told_apart_and_working_the_value_out_is_advised_when_most_never_had_it():
    failed = [_run(1, "a", ["held"]), _run(2, "b", ["other"]), _run(3, "c", [], idle=True),
              _run(4, "c", [], idle=True), _run(5, "d", [])]
    entry = {"key": "untold", "guideline": "Tell the user the value as soon as you have it."}
    split(entry, failed)
    said = entry["guideline"]
    assert ("Of the 5 failed runs of 4 tasks of this task type that never told the user a value the task expected, "
            "1 run had it in a tool's answer and never wrote it in a message (step-0001); 1 run told the user another "
            "figure (step-0002); 3 runs of 2 tasks had it in no tool's answer (step-0003, step-0004, step-0005), 2 of "
            "them with no tool call at all.") in said
    assert "work it out from the records looked up" in said
    held = {"key": "untold", "guideline": "G."}  # most had it in hand: the lesson as it stands fits them
    split(held, [_run(1, "a", ["held"]), _run(2, "b", ["held"]), _run(3, "c", [])])
    assert "work it out" not in held["guideline"] and "2 runs had it in a tool's answer" in held["guideline"]
    # a page with no such fact (a model's page may leave it out) is not counted as having had it nowhere
    mixed = {"key": "untold", "guideline": "G."}
    split(mixed, [_run(1, "a", None, idle=True), _run(2, "b", ["held"]), _run(3, "c", None)])
    assert "1 run had it in no tool's answer (step-0001), 1 of them with no tool call at all" not in mixed["guideline"]
    assert ("1 run had it in a tool's answer and never wrote it in a message (step-0002); 2 runs whose page does "
            "not say (step-0001, step-0003)") in mixed["guideline"], mixed["guideline"]
    other = {"key": "missed", "guideline": "G."}  # another lesson, or one run: nothing to split
    split(other, failed)
    one = {"key": "untold", "guideline": "G."}
    split(one, failed[:1])
    assert other["guideline"] == one["guideline"] == "G."


def test_the_dev_tau_bench_counts_add_up_to_the_page_s_own(tau_bench_corpus):
    out = tau_bench_corpus[0]
    data = json.loads((out / "corpus.json").read_text())
    entry = next(i for i in data["insights"] if i["key"] == "untold")
    line = next(c for c in entry.get("counted") or [] if c.startswith("Of the "))
    total = int(re.match(r"Of the (\d+) failed runs", line).group(1))
    assert total == entry["contrast"]["failed_met"]
    parts = [int(n) for n in re.findall(r"(?:,|;) (\d+) runs?(?: of \d+ tasks?)? (?:had|told)", line)]
    assert sum(parts) == total, line
    runs = {r["step"]: r for r in data["runs"]}
    for step in re.findall(r"step-\d{4}", line):
        assert "untold" in runs[step]["patterns"] and runs[step]["outcome"] == "failure"
