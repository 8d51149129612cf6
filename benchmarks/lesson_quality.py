"""What the offline compiler *teaches* from real runs: the lessons themselves, measured per input.

Every run of an input (a file or folder, read as `wikitrace compile` reads it) is
compiled offline in process, and the insight layer is gathered from the runs exactly
as a corpus publishes it (corpus/insights.py). Then, per insight:

- the lesson is the advice its page shows under What to do (``advice``, or the whole guideline
  when the insight has none) — not the title, not the applicability line (which quotes a
  task), not the evidence nor the counted sentences moved there — with ids, numbers, paths and quoted code
  (backtick spans) masked, whitespace and case folded; an error message or a rule quoted
  in double quotes stays, its ids and numbers masked: which message or rule a lesson is
  about is what tells two lessons apart;
- exact-distinct ratio: distinct masked lessons / insights;
- near-duplicate-distinct ratio: lessons left once those whose word 3-shingles overlap
  an earlier kept one with Jaccard >= 0.7 count as the same lesson, / insights;
- insights per run: the insight links of a run (at most three), averaged; and pages
  per run (insight pages / runs);
- share of insights that cite a successful run among their sources;
- count check: insights whose stated counts differ from their listed sources (must be 0);
- text count check (text_counts.py): every count of runs the page's text states, rendered as
  the corpus writes it: mismatches (a count that differs from the runs its clause links, or from
  the Sources it says it counts; must be 0) and unlinked counts (no link shows which runs);
- harness leaks and quote-check failures of the compilation pages (must be 0).

Runs are split into two halves by sorted task id (even / odd positions), each half
gathered on its own, so a rule tuned on one half can be read on the other.

    python benchmarks/lesson_quality.py --data ../shared/data/runs-dev/tau-bench-airline \\
        ../shared/data/runs-dev/reflexion-hotpotqa [--record]

``--record`` writes the table into docs/insights.md.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, record  # noqa: E402
import text_counts  # noqa: E402

from wikitrace.compilers.grounding import turn_text
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import is_harness_turn, looks_like_error
from wikitrace.compilers.text import generic
from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.model import Run

NEAR = 0.7  # word 3-shingle Jaccard at or above which two lessons are the same lesson


@dataclass
class Row:
    input: str
    half: str
    runs: int = 0
    insights: int = 0
    exact_distinct: int = 0
    near_distinct: int = 0
    links_per_run: float = 0.0
    pages_per_run: float = 0.0
    citing_success: int = 0
    count_mismatches: int = 0
    text_counts: int = 0
    text_mismatches: int = 0
    text_unlinked: int = 0
    text_hidden: int = 0  # counts of runs that add up only with an "and K more" left unnamed (text_counts.py)
    harness_leaks: int = 0
    quote_failures: int = 0
    error_calls: int = 0
    calls: int = 0

    @property
    def exact_ratio(self) -> float:
        return self.exact_distinct / self.insights if self.insights else 1.0

    @property
    def near_ratio(self) -> float:
        return self.near_distinct / self.insights if self.insights else 1.0


_CODE = re.compile(r"`[^`]*`")
_PATH = re.compile(r"(?:[\w.~-]*/)+[\w.-]+|\b[\w-]+\.(?:[a-z]{1,5})\b")


# A pointer to another insight's page (corpus/peers.py: the lesson the failed runs that ended the
# same way teach, or the one most successful runs that met it teach) quotes that page's title:
# another lesson's words, not this one's, so the distinct counts leave it out.
_POINTER = re.compile(r' [^."]*"[^"]*" \(counts under Evidence\)\.')


def masked(text: str) -> str:
    """A lesson as the distinct counts see it: pointers to other insights left out, quoted code,
    paths, ids and numbers masked."""
    out = _CODE.sub("Q", _POINTER.sub("", text))
    out = _PATH.sub("P", out)
    return " ".join(generic(out).lower().split())


def shingles(text: str) -> frozenset:
    words = re.findall(r"\w+|…", text)
    return frozenset(zip(words, words[1:], words[2:])) if len(words) >= 3 else frozenset([tuple(words)])


def near_distinct(texts: list[str]) -> int:
    """Lessons kept when each is dropped that is as near as NEAR to one kept before it."""
    kept: list[frozenset] = []
    for t in texts:
        s = shingles(t)
        if not any(len(s & k) / len(s | k) >= NEAR for k in kept if s | k):
            kept.append(s)
    return len(kept)


def _norm(text: str) -> str:
    return " ".join(text.split()).lower().replace('"', "'")


def _quoted_spans(text: str) -> list[str]:
    return [q for q in re.findall(r"\"([^\"]*)\"", text) if len(q) >= 6]


def _span_found(span: str, haystack: str) -> bool:
    pieces = [p.strip(" ,.;:") for p in span.split("…")]
    return all(_norm(p) in haystack for p in pieces if len(p.strip()) >= 4)


def check_run(run: Run, k: int) -> dict:
    """One run compiled: its corpus.json-like entry (with the lessons the insight layer
    gathers) and the page checks."""
    from wikitrace.corpus.insights import run_entry_fields

    comp = compile_offline(run)
    by_turn = {t.turn: t for t in run.turns}
    harness_turns = {t.turn for t in run.turns if is_harness_turn(t)}
    harness_names = {t.name for t in run.turns if t.type == "function_call" and is_harness_turn(t) and t.name}
    recorded = [v for v in (run.task.metadata or {}).values() if isinstance(v, str)]
    everything = _norm("\n".join([turn_text(t) for t in run.turns] + [run.task.instruction or ""] + recorded))
    quote_failures, leaks = comp.dropped_quotes, 0
    for item in comp.evidence:
        text = f"{item.decision} {item.support} {item.call or ''}"
        if set(item.turns) & harness_turns or any(n in text for n in harness_names):
            leaks += 1
        if item.quote and not any(_norm(item.quote) in _norm(turn_text(by_turn[n])) for n in item.turns if n in by_turn):
            quote_failures += 1
    for ins in comp.insights:
        if any(n in f"{ins.title} {ins.guideline}" for n in harness_names):
            leaks += 1
        for span in _quoted_spans(ins.guideline):
            if not _span_found(span, everything):
                quote_failures += 1
    calls = [t for t in run.turns if t.type == "function_call" and not is_harness_turn(t)]
    from wikitrace.corpus.trial_contrast import entry_field

    # the fields of corpus.json's run entry the insight layer reads: the task (trials of one task
    # are compared), its first message, what the run did last
    entry = {"step": f"step-{k:04d}", "run_id": run.run_id, "task_id": run.task.id,
             "task_type": run.task.task_type or "unspecified", "apps": None, "outcome": run.outcome.label,
             "instruction": run.task.instruction or "", "title": comp.title, **run_entry_fields(comp),
             **entry_field(comp)}
    return {"task": run.task.id, "entry": entry, "leaks": leaks, "quote_failures": quote_failures,
            "errors": sum(1 for t in calls if looks_like_error(t)), "calls": len(calls)}


def lesson_text(insight: dict) -> str:
    """What the page tells the agent to do: the advice What to do shows (corpus/advice_cut.py)."""
    return insight.get("advice") or insight["guideline"]


def summarise(name: str, half: str, results: list[dict]) -> Row:
    from wikitrace.corpus.insights import gather

    row = Row(name, half, runs=len(results))
    entries = [r["entry"] for r in results]
    insights = gather(entries, {})
    lessons = [masked(lesson_text(i)) for i in insights]
    row.insights, row.exact_distinct, row.near_distinct = len(insights), len(set(lessons)), near_distinct(lessons)
    row.links_per_run = round(sum(len(e["lessons"]) for e in entries) / len(entries), 2) if entries else 0.0
    row.pages_per_run = round(len(insights) / len(entries), 3) if entries else 0.0
    row.citing_success = sum(any(s["outcome"] == "success" for s in i["sources"]) for i in insights)
    row.count_mismatches = sum(
        (i["counts"]["runs"], i["counts"]["success"], i["counts"]["failure"])
        != (len(i["sources"]), sum(s["outcome"] == "success" for s in i["sources"]),
            sum(s["outcome"] == "failure" for s in i["sources"])) for i in insights)
    text = page_counts(insights)
    row.text_counts, row.text_mismatches, row.text_unlinked = text.counts, text.mismatches, text.unlinked
    row.text_hidden = text.hidden
    row.harness_leaks = sum(r["leaks"] for r in results)
    row.quote_failures = sum(r["quote_failures"] for r in results)
    row.error_calls = sum(r["errors"] for r in results)
    row.calls = sum(r["calls"] for r in results)
    return row


def page_counts(insights: list[dict]) -> text_counts.Tally:
    """The counts of runs the insight pages' text states, each page rendered as the corpus writes it."""
    from wikitrace.corpus.documents import render_insight

    titles = {i["id"]: i["title"] for i in insights}
    runs_of = {i["id"]: len(i["sources"]) for i in insights}
    tally = text_counts.Tally()
    for i in insights:
        tally.add(text_counts.check(render_insight(i, "/work/corpus", None, titles=titles), i["sources"], runs_of))
    return tally


def measure(path: Path, outcomes: Path | None = None) -> list[Row]:
    report = LoadReport()
    runs = iter_runs([path], report=report, outcomes=outcomes)
    results = [check_run(run, k) for k, run in enumerate(r for r in runs if isinstance(r, Run))]
    tasks = sorted({str(r["task"]) for r in results})
    half_of = {t: "A" if i % 2 == 0 else "B" for i, t in enumerate(tasks)}
    return [summarise(path.name, half, [r for r in results if half == "all" or half_of[str(r["task"])] == half])
            for half in ("A", "B", "all")]


def table(rows: list[Row]) -> str:
    head = ("| input | half | runs | insights | exact-distinct (ratio) | near-distinct (ratio) | links / run "
            "| pages / run | citing a success | count mismatches | text counts: mismatched / unlinked / stated "
            "| harness leaks | quote-check failures | calls marked error |")
    lines = [head, "|" + "---|" * 14]
    for r in rows:
        lines.append(f"| {r.input} | {r.half} | {r.runs} | {r.insights} | {r.exact_distinct} ({r.exact_ratio:.3f}) "
                     f"| {r.near_distinct} ({r.near_ratio:.3f}) | {r.links_per_run} | {r.pages_per_run} "
                     f"| {r.citing_success} | {r.count_mismatches} "
                     f"| {r.text_mismatches} / {r.text_unlinked} / {r.text_counts} | {r.harness_leaks} | {r.quote_failures} "
                     f"| {r.error_calls} / {r.calls} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", nargs="+", required=True, type=Path, help="files or folders of runs")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    ap.add_argument("--outcomes", type=Path, help="verdicts for runs whose log has none (as `wikitrace compile`)")
    add_record_flag(ap, "insights.md")
    args = ap.parse_args(argv)
    rows = [row for path in args.data for row in measure(path, args.outcomes)]
    if args.json:
        print(json.dumps([{**asdict(r), "exact_ratio": round(r.exact_ratio, 3), "near_ratio": round(r.near_ratio, 3)}
                          for r in rows], indent=1))
    else:
        print(table(rows))
        print("text counts left partly unnamed (\"and K more\"): "
              + ", ".join(f"{r.input}/{r.half} {r.text_hidden}" for r in rows))
    if args.record:
        record("insights.md", "benchmarks/lesson_quality.py", table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
