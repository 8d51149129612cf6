"""Does `wikitrace prompt` show a new task the insights it will need? A held-out measure.

For each input (a file or folder of runs, read as `wikitrace compile` reads it) the runs
are split by sorted task id (even positions: half A, odd: half B; every trial of a task
stays on one side). Half A is compiled offline into a corpus (a real build, in process).
For every run of half B a prompt is built from its task text alone, at the shipped CLI
defaults (``--budget 4000``, 3 similar runs, no ``--task-type``), and the insights it
inlines are scored against what that run then actually did, which the ranking never sees:

- **call match**: shown insights that name a state-changing call (a tool some run called
  to change state, as the offline compiler judges it) which the held-out run made, out of
  all shown insights; **generic**: shown insights that name no state-changing call at all;
- **taught**: shown insights whose lesson (its key) the held-out run itself teaches when
  every run is compiled together, out of all shown: the insight is about something this
  very run met;
- **runs hit**: held-out runs that made a state-changing call and were shown at least one
  insight naming one of their state-changing calls;
- **success lesson / both**: prompts showing at least one insight taught mostly by
  successful runs (of those whose corpus has one), and showing both such a lesson and
  one taught mostly by failed runs (of those whose corpus has both);
- **top-3 call match / taught**: the same two shares over the first three insights of the
  budget's ranking (``relevance.priority_order``), which a tighter budget would keep;
- **near-dup**: shown insights whose guideline (ids, numbers, paths, code masked) shares
  word 3-shingles at Jaccard >= 0.7 with an insight shown before it in the same prompt.

Then the halves swap (B compiled, A held out). Prints one row per input and direction.

    python benchmarks/prompt_relevance.py --data ../shared/data/runs-dev/tau-bench-airline \\
        ../shared/data/runs-dev/reflexion-hotpotqa [--budget 4000] [--show 2] [--record]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from lesson_quality import NEAR, masked, shingles  # noqa: E402
from record import add_record_flag, markdown_table, record  # noqa: E402

import wikitrace.build as build_mod  # noqa: E402
from wikitrace.agent.corpusdata import load_corpus  # noqa: E402
from wikitrace.agent.prompt import DEFAULT_BUDGET, build_prompt  # noqa: E402
from wikitrace.agent.relevance import priority_order  # noqa: E402
from wikitrace.build import BuildOptions, build  # noqa: E402
from wikitrace.compilers.reading import is_harness_turn, is_read_only  # noqa: E402
from wikitrace.runs.load import LoadReport, iter_runs  # noqa: E402
from wikitrace.runs.model import Run  # noqa: E402


@dataclass
class Row:
    input: str
    held_out: str
    prompts: int = 0
    shown: int = 0
    call_match: int = 0
    generic: int = 0
    taught: int = 0
    changing_runs: int = 0
    runs_hit: int = 0
    with_success_pool: int = 0
    with_success: int = 0
    with_both_pool: int = 0
    with_both: int = 0
    near_dups: int = 0
    top: int = 0
    top_call: int = 0
    top_taught: int = 0
    examples: list = field(default_factory=list)

    def cells(self) -> list[str]:
        def share(a, b):
            return f"{a / b:.2f}" if b else "-"
        return [self.input, self.held_out, str(self.prompts), f"{self.shown / max(self.prompts, 1):.1f}",
                share(self.call_match, self.shown), share(self.generic, self.shown), share(self.taught, self.shown),
                share(self.runs_hit, self.changing_runs), share(self.with_success, self.with_success_pool),
                share(self.with_both, self.with_both_pool), share(self.near_dups, self.shown),
                share(self.top_call, self.top), share(self.top_taught, self.top)]


TOP = 3  # the head of the ranking scored on its own
HEAD = ["input", "held out", "prompts", "shown/prompt", "call match", "generic", "taught", "runs hit",
        "success lesson", "both", "near-dup", "top-3 call match", "top-3 taught"]


def changing_calls(run: Run) -> set[str]:
    """Names of the agent's state-changing calls in a run (harness steps excluded)."""
    return {t.name for t in run.turns
            if t.type == "function_call" and t.name and not is_harness_turn(t) and not is_read_only(t)}


def _compile(inputs: list[Path], keep: set[str], out: Path) -> None:
    """A real offline build of the runs whose run id is in ``keep``."""
    real = build_mod.iter_runs

    def only_kept(*a, **kw):
        for run in real(*a, **kw):
            if getattr(run, "run_id", None) in keep:
                yield run

    build_mod.iter_runs, saved_reader = only_kept, build_mod._reader
    build_mod._reader = lambda *a, **kw: None  # read in this process, through the filter
    try:
        build(BuildOptions(inputs=inputs, out=out, offline=True, quiet=True))
    finally:
        build_mod.iter_runs, build_mod._reader = real, saved_reader


def _side(ins: dict) -> str:
    c = ins.get("counts") or {}
    s, f = c.get("success", 0), c.get("failure", 0)
    if not c:
        return ins.get("source_outcome") or ""
    return "success" if s > f else "failure" if f > s else "mixed"


def _named(ins: dict, tools: set[str]) -> set[str]:
    words = set(re.findall(r"[A-Za-z_][\w]*", f"{ins.get('title', '')} {ins.get('guideline', '')}"))
    return words & tools


def measure(path: Path, budget: int, show: int) -> list[Row]:
    runs = [r for r in iter_runs([path], None, LoadReport()) if isinstance(r, Run)]
    tasks = sorted({str(r.task.id) for r in runs}, key=lambda t: (len(t), t))
    half = {t: "A" if k % 2 == 0 else "B" for k, t in enumerate(tasks)}
    changing_tools = set().union(*(changing_calls(r) for r in runs))
    rows = []
    with tempfile.TemporaryDirectory(prefix="wt-relevance-") as tmp:
        everything = Path(tmp) / "all"
        _compile([path], {r.run_id for r in runs}, everything)
        taught_keys = {e.get("run_id"): {lsn.get("key") for lsn in e.get("lessons") or []}
                       for e in json.loads((everything / "corpus.json").read_text())["runs"]}
        for held in ("B", "A"):
            train = "A" if held == "B" else "B"
            corpus = Path(tmp) / f"train-{train}"
            _compile([path], {r.run_id for r in runs if half[str(r.task.id)] == train}, corpus)
            entries = {i["id"]: i for i in json.loads((corpus / "corpus.json").read_text())["insights"]}
            sides = {_side(i) for i in entries.values()}
            row = Row(path.name, held)
            for run in runs:
                if half[str(run.task.id)] != held:
                    continue
                parts = build_prompt(corpus, run.task.instruction, budget=budget)
                did = changing_calls(run)
                shown = [entries[i] for i in parts.insight_ids]
                row.prompts += 1
                row.shown += len(shown)
                hit = False
                kept: list[frozenset] = []
                for ins in shown:
                    named = _named(ins, changing_tools)
                    row.generic += not named
                    if named & did:
                        row.call_match += 1
                        hit = True
                    row.taught += ins.get("key") in taught_keys.get(run.run_id, ())
                    sh = shingles(masked(ins.get("guideline", "")))
                    if any(sh | k and len(sh & k) / len(sh | k) >= NEAR for k in kept):
                        row.near_dups += 1
                    kept.append(sh)
                ranked = priority_order(load_corpus(corpus), run.task.instruction, parts.similar_runs, None)
                for ins in ranked[:TOP]:
                    row.top += 1
                    row.top_call += bool(_named(entries[ins.id], changing_tools) & did)
                    row.top_taught += entries[ins.id].get("key") in taught_keys.get(run.run_id, ())
                if did:
                    row.changing_runs += 1
                    row.runs_hit += hit
                shown_sides = {_side(i) for i in shown}
                if "success" in sides:
                    row.with_success_pool += 1
                    row.with_success += "success" in shown_sides
                if {"success", "failure"} <= sides:
                    row.with_both_pool += 1
                    row.with_both += {"success", "failure"} <= shown_sides
                if len(row.examples) < show and did:
                    row.examples.append((run.task.instruction, sorted(did), len(shown),
                                         [f"{i.title} [{_side(entries[i.id])}]" for i in ranked[:6]]))
            rows.append(row)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", nargs="+", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    ap.add_argument("--show", type=int, default=0, help="print this many example prompts per row")
    add_record_flag(ap, "agent-side.md")
    args = ap.parse_args()
    rows = []
    for path in args.data:
        target = path
        if path.is_dir():  # a dataset folder: its run files, not its LICENSE and notes
            files = [p for p in sorted(path.iterdir()) if p.suffix in (".json", ".jsonl", ".txt")
                     and p.name not in ("SOURCE.txt", "LICENSE.txt")]
            target = files[0] if len(files) == 1 else path
        rows += measure(target, args.budget, args.show)
    table = markdown_table(HEAD, [r.cells() for r in rows])
    print(f"budget {args.budget}")
    print(table)
    for r in rows:
        for task, did, n_shown, titles in r.examples:
            print(f"\n[{r.input}, held out {r.held_out}] task: {task[:200]}\n  state-changing calls: {', '.join(did)}"
                  f"\n  {n_shown} shown; the first six of the ranking:")
            for t in titles:
                print(f"  - {t}")
    if args.record:
        record("agent-side.md", "benchmarks/prompt_relevance.py", f"budget {args.budget}\n\n{table}")


if __name__ == "__main__":
    main()
