"""Time prompt building on a 10,000-run synthetic corpus (target: <= 300 ms per prompt).

Usage:  python benchmarks/prompt_build.py [--runs 10000] [--out DIR] [--keep]

The corpus (corpus.json + one insight file per insight, per docs/corpus-layout.md) is
synthesised from the tau-bench airline runs when /work/shared/data is present (their
instructions, with names, dates and codes varied), else from generated instructions.
Prints timings; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

TAU = Path("/work/shared/data/runs-dev/tau-bench-airline/gpt-4o-airline.json")
NAMES = ["mia", "noah", "olivia", "liam", "emma", "ava", "lucas", "sofia", "yusuf", "chen", "raj", "amelia"]
CITIES = ["New York", "Seattle", "Boston", "Denver", "Miami", "Chicago", "Dallas", "Atlanta", "Phoenix", "Detroit"]
TOOLS = ["book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages",
         "search_direct_flight", "search_onestop_flight", "get_reservation_details", "send_certificate"]
TYPES = ["airline", "retail", "telecom", "banking"]


def base_instructions() -> tuple[list[str], str]:
    if TAU.exists():
        recs = json.loads(TAU.read_text())
        return sorted({r["info"]["task"]["instruction"] for r in recs}), "tau-bench airline instructions"
    rng = random.Random(0)
    out = []
    for _ in range(200):
        a, b = rng.sample(CITIES, 2)
        out.append(f"You are {rng.choice(NAMES)}. You want to {rng.choice(['book', 'change', 'cancel'])} a flight "
                   f"from {a} to {b} and pay with your {rng.choice(['card', 'certificate', 'gift card'])}.")
    return out, "generated instructions"


def vary(text: str, rng: random.Random) -> str:
    text = re.sub(r"\b[a-z]+_[a-z]+_\d{4}\b", lambda m: f"{rng.choice(NAMES)}_{rng.choice(NAMES)}_{rng.randrange(10000):04d}", text)
    text = re.sub(r"\bMay \d+\b", lambda m: f"May {rng.randrange(1, 31)}", text)
    text = re.sub(r"\b[A-Z0-9]{6}\b", lambda m: "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6)), text)
    for city in CITIES:
        if city in text and rng.random() < 0.5:
            text = text.replace(city, rng.choice(CITIES))
    return text


def synthesise(root: Path, n_runs: int) -> tuple[int, str]:
    rng = random.Random(42)
    bases, source = base_instructions()
    runs, insights = [], []
    for i in range(n_runs):
        step = f"step-{i:04d}"
        outcome = "success" if rng.random() < 0.42 else "failure"
        task_type = TYPES[i % len(TYPES)]
        ids = []
        for _ in range(rng.randint(0, 3)):
            iid = f"insight-{len(insights):04d}"
            tool = rng.choice(TOOLS)
            insights.append({
                "id": iid, "title": f"Check the arguments before {tool}", "task_type": task_type, "apps": None,
                "source_step": step, "source_outcome": outcome,
                "guideline": f"Before calling {tool}, compare each argument with what the user asked and what the "
                             f"look-ups returned; run {i} {'did' if outcome == 'success' else 'did not'} and {outcome}ed.",
                "applicability": f"Applies to {task_type} tasks that end in {tool}; not to questions alone.",
            })
            ids.append(iid)
        instruction = vary(rng.choice(bases), rng)
        runs.append({"step": step, "run_id": f"run-{i}", "task_id": str(i % 500), "task_type": task_type, "apps": None,
                     "outcome": outcome, "steps": rng.randint(3, 30), "instruction": instruction,
                     "title": f"[{outcome}] {instruction[:60]}", "compiler": "offline",
                     "content_hash": f"sha256:{i:064x}", "insights": ids})
    data = {"format": "wikitrace-corpus/1", "wikitrace_version": "0.1.0", "mount_path": "/work/corpus",
            "compiler": {"name": "offline", "model": None},
            "counts": {"runs": n_runs, "success": sum(r["outcome"] == "success" for r in runs),
                       "failure": sum(r["outcome"] == "failure" for r in runs), "insights": len(insights), "fallbacks": 0},
            "runs": runs, "insights": insights, "retired": {"steps": [], "insights": []},
            "build": {"built_at": "2026-01-01T00:00:00Z", "stats": {}, "skipped": []}}
    (root / "insight").mkdir(parents=True, exist_ok=True)
    for ins in insights:
        (root / "insight" / f"{ins['id']}.md").write_text(
            f"---\ntype: insight\nid: {ins['id']}\ntitle: {ins['title']}\ntask_type: {ins['task_type']}\n"
            f"source_step: {ins['source_step']}\nsource_outcome: {ins['source_outcome']}\ncompiler: offline\n---\n"
            f"# {ins['title']}\n\n## Insight\n{ins['guideline']}\n\n## Applicability\n{ins['applicability']}\n\n"
            f"## Source episode\n{ins['source_step']} ({ins['source_outcome']})\n")
    (root / "corpus.json").write_text(json.dumps(data, indent=1))
    return len(insights), source


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from wikitrace.agent.corpusdata import load_corpus
    from wikitrace.agent.prompt import build_prompt

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="wikitrace-bench-"))
    t0 = time.perf_counter()
    n_ins, source = synthesise(root, args.runs)
    print(f"corpus: {args.runs} runs, {n_ins} insights from {source}; written in {time.perf_counter() - t0:.1f} s "
          f"({(root / 'corpus.json').stat().st_size / 1e6:.1f} MB corpus.json)")
    tasks = [r.instruction for r in load_corpus(root).runs[:: max(1, args.runs // 20)]][:20]
    tasks = [t.replace("May", "June") for t in tasks]

    from wikitrace.agent import corpusdata

    def cold(**kw) -> tuple[float, float]:
        corpusdata._CACHE.clear()
        t = time.perf_counter()
        fresh = load_corpus(root)
        t_load = time.perf_counter() - t
        t = time.perf_counter()
        build_prompt(fresh, tasks[0], task_type="airline", **kw)
        return t_load, time.perf_counter() - t

    for label, kw in (("full prompt", {}), ("--budget 8000", {"budget": 8000}),
                      ("--budget 8000, insights-only", {"budget": 8000, "variant": "insights-only"})):
        t_load, t_build = cold(**kw)
        print(f"cold (one CLI call), {label}: load corpus.json {t_load * 1000:.0f} ms + first prompt "
              f"(builds the BM25 indexes, renders insights) {t_build * 1000:.0f} ms")
    data = load_corpus(root)
    build_prompt(data, tasks[0], task_type="airline", variant="insights-only")

    for label, kw in (("full prompt (all insights inlined)", {}),
                      ("--budget 8000", {"budget": 8000}),
                      ("--budget 8000, insights-only", {"budget": 8000, "variant": "insights-only"})):
        times = []
        for task in tasks:
            t = time.perf_counter()
            p = build_prompt(data, task, task_type="airline", **kw)
            times.append(time.perf_counter() - t)
        print(f"warm, {label}: median {statistics.median(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms "
              f"over {len(tasks)} tasks; {len(p.insight_ids)} insights inlined, ~{p.tokens} tokens "
              f"(target <= 300 ms)")
    if not args.keep and not args.out:
        shutil.rmtree(root)
    else:
        print(f"corpus kept at {root}")


if __name__ == "__main__":
    main()
