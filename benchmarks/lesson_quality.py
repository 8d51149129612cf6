"""What the offline compiler *says* about real runs, measured per input.

For each input (a file or folder of runs, read as `wikitrace compile` reads it) every
run is compiled offline, in process, and the pages are checked:

- insights, and distinct lesson texts (title + guideline + applicability, whitespace
  folded, ids, numbers and the run's tool names masked: a lesson that differs from
  another only by such a value is not a distinct lesson) with their ratio; "prompt" is the number of entries `wikitrace prompt` shows
  once the same lesson from several runs is shown once;
- decisions per success page and causes per failure page (mean), failure pages whose
  every cause is an unchecked suspect, and how many pages say that calls were left out;
- harness leaks: decisions, causes or lessons that cite a harness step's turn or name a
  harness call (must be 0);
- calls the pages count as errors, of all agent calls;
- quote-check failures: a decision's quote not found in its turns, a system-prompt rule
  quoted on a page but not in the system prompt, or a quoted span of a lesson (masked
  values split it) that occurs nowhere in the run (its turns, task and the task's recorded
  strings, such as an expected answer).

Tasks are split into two halves by sorted task id (even / odd positions), so a rule
tuned on one half can be measured on the other; each input prints rows for both.

    python benchmarks/lesson_quality.py --data ../shared/data/runs-dev/tau-bench-airline \\
        ../shared/data/runs-dev/reflexion-hotpotqa
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from wikitrace.agent.lesson_key import lesson_key
from wikitrace.compilers.grounding import turn_text
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import is_harness_turn, looks_like_error
from wikitrace.compilers.text import generic
from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.model import Run


@dataclass
class Row:
    input: str
    half: str
    runs: int = 0
    insights: int = 0
    distinct: int = 0
    prompt_entries: int = 0
    decisions_per_success: float = 0.0
    causes_per_failure: float = 0.0
    pages_with_left_out: int = 0
    harness_leaks: int = 0
    error_calls: int = 0
    calls: int = 0
    quote_failures: int = 0
    only_suspects: int = 0  # failure pages whose every cause is an unchecked suspect

    @property
    def ratio(self) -> float:
        return self.distinct / self.insights if self.insights else 1.0


def _norm(text: str) -> str:
    """Whitespace folded, lower case; pages show double quotes inside a quote as single ones."""
    return " ".join(text.split()).lower().replace('"', "'")


def masked(text: str, tools: set[str]) -> str:
    """A lesson as the distinct count sees it: ids and numbers (text.generic) and the run's
    tool names masked, whitespace and case folded."""
    out = generic(text)
    for name in sorted(tools, key=len, reverse=True):
        out = re.sub(r"(?<![\w])" + re.escape(name) + r"(?![\w])", "TOOL", out)
    return _norm(out)


def _quoted_spans(text: str) -> list[str]:
    return [q for q in re.findall(r"\"([^\"]*)\"", text) if len(q) >= 6]  # quotes paired in order, short ones skipped


def _span_found(span: str, haystack: str) -> bool:
    pieces = [p.strip(" ,.;:") for p in span.split("…")]
    return all(_norm(p) in haystack for p in pieces if len(p.strip()) >= 4)


def check_run(run: Run) -> dict:
    comp = compile_offline(run)
    by_turn = {t.turn: t for t in run.turns}
    harness_turns = {t.turn for t in run.turns if is_harness_turn(t)}
    harness_names = {t.name for t in run.turns if t.type == "function_call" and is_harness_turn(t) and t.name}
    recorded = [v for v in (run.task.metadata or {}).values() if isinstance(v, str)]  # a gold answer, say
    everything = _norm("\n".join([turn_text(t) for t in run.turns] + [run.task.instruction or ""] + recorded))
    system = next((t for t in run.turns if t.type == "message" and t.role in ("system", "developer")), None)
    quote_failures, leaks = comp.dropped_quotes, 0
    for item in comp.evidence:
        text = f"{item.decision} {item.support} {item.call or ''}"
        if set(item.turns) & harness_turns or any(n in text for n in harness_names):
            leaks += 1
        if item.quote and not any(_norm(item.quote) in _norm(turn_text(by_turn[n])) for n in item.turns if n in by_turn):
            quote_failures += 1
        for note in item.notes:
            m = re.search(r"system prompt \(turn (\d+)\)[^\"]*\"(.+)\"", note)
            if m and (system is None or _norm(m.group(2)) not in _norm(system.content or "")):
                quote_failures += 1
    for ins in comp.insights:
        text = f"{ins.title} {ins.guideline} {ins.applicability}"
        if any(n in text for n in harness_names):
            leaks += 1
        for span in _quoted_spans(ins.guideline) + _quoted_spans(ins.applicability):
            if not _span_found(span, everything):
                quote_failures += 1
    calls = [t for t in run.turns if t.type == "function_call" and not is_harness_turn(t)]
    tools = {t.name for t in run.turns if t.type == "function_call" and t.name}
    return {
        "task": run.task.id, "success": run.outcome.success, "items": len(comp.evidence),
        "left_out": comp.left_out > 0, "leaks": leaks,
        "only_suspects": not run.outcome.success and bool(comp.evidence)
        and all("This is a suspect, not a proven cause" in e.support for e in comp.evidence), "quote_failures": quote_failures,
        "errors": sum(1 for t in calls if looks_like_error(t)), "calls": len(calls),
        "lessons": [lesson_key(i.title, i.guideline, i.applicability) for i in comp.insights],
        "guidelines": [masked(f"{i.title} {i.guideline} {i.applicability}", tools) for i in comp.insights],
    }


def summarise(name: str, half: str, results: list[dict]) -> Row:
    row = Row(name, half, runs=len(results))
    texts = [g for r in results for g in r["guidelines"]]
    row.insights, row.distinct = len(texts), len(set(texts))
    row.prompt_entries = len({k for r in results for k in r["lessons"]})
    succ = [r["items"] for r in results if r["success"]]
    fail = [r["items"] for r in results if not r["success"]]
    row.decisions_per_success = round(sum(succ) / len(succ), 2) if succ else 0.0
    row.causes_per_failure = round(sum(fail) / len(fail), 2) if fail else 0.0
    row.pages_with_left_out = sum(r["left_out"] for r in results)
    row.harness_leaks = sum(r["leaks"] for r in results)
    row.error_calls = sum(r["errors"] for r in results)
    row.calls = sum(r["calls"] for r in results)
    row.quote_failures = sum(r["quote_failures"] for r in results)
    row.only_suspects = sum(r["only_suspects"] for r in results)
    return row


def measure(path: Path) -> list[Row]:
    report = LoadReport()
    results = [check_run(run) for run in iter_runs([path], report=report) if isinstance(run, Run)]
    tasks = sorted({r["task"] for r in results})
    half_of = {t: "A" if i % 2 == 0 else "B" for i, t in enumerate(tasks)}
    return [summarise(path.name, half, [r for r in results if half == "all" or half_of[r["task"]] == half])
            for half in ("A", "B", "all")]


def table(rows: list[Row]) -> str:
    head = ("| input | half | runs | insights | distinct (ratio) | prompt entries | decisions / success page "
            "| causes / failure page | failure pages with only suspects | pages with left-out note | harness leaks | calls marked error | quote-check failures |")
    lines = [head, "|" + "---|" * 13]
    for r in rows:
        lines.append(f"| {r.input} | {r.half} | {r.runs} | {r.insights} | {r.distinct} ({r.ratio:.3f}) | {r.prompt_entries} "
                     f"| {r.decisions_per_success} | {r.causes_per_failure} | {r.only_suspects} | {r.pages_with_left_out} | {r.harness_leaks} "
                     f"| {r.error_calls} / {r.calls} | {r.quote_failures} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", required=True, type=Path, help="files or folders of runs")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    rows = [row for path in args.data for row in measure(path)]
    if args.json:
        print(json.dumps([{**asdict(r), "ratio": round(r.ratio, 3)} for r in rows], indent=1))
    else:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
