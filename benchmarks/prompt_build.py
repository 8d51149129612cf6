"""Time prompt building on a 10,000-run synthetic corpus (target: <= 300 ms per prompt).

Usage:  python benchmarks/prompt_build.py [--runs 10000] [--repeat 7] [--out DIR] [--keep] [--no-fallback] [--record]

The corpus (corpus.json written as wikitrace.build writes it, one file per insight, and
the prompt index written by ``write_prompt_index`` as build() does) is synthesised from
the tau-bench airline runs when /work/shared/data is present (their instructions, with
names, dates and codes varied), else from generated instructions.

Measured, side by side, for a full prompt and for --budget 8000 (both variants):

* cold CLI: ``wikitrace prompt --corpus DIR --task ...`` in a fresh process (subprocess
  wall time, best and median of --repeat; bytecode cached as in an installed wheel,
  one untimed warm-up run), with the index, and with the index hidden (corpus.json path);
* cold without the CLI framework: the same call through ``cli_glue.prompt_main`` (argparse),
  as a fast path in ``cli.main()`` would run it;
* warm in-process: ``build_prompt(DIR, ...)`` through the index, and
  ``build_prompt(loaded_corpus, ...)`` on a loaded corpus.json, median over 20 tasks.

Prints timings and the ratio to the 300 ms target; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, load_average, markdown_table, record  # noqa: E402

TARGET_MS = 300.0

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


def synthesise(root: Path, n_runs: int) -> tuple[int, str, dict]:
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
    # laid out as the build lays it out: the prompt index hashes the runs/insights region as written
    from wikitrace.corpus.corpus_json import dumps

    (root / "corpus.json").write_text(dumps(data)[0], encoding="utf-8")
    return len(insights), source, data


def _cli_command() -> list[str]:
    script = Path(sys.executable).with_name("wikitrace")
    return [str(script)] if script.exists() else [sys.executable, "-m", "wikitrace.cli"]


# what cli.main() would run with a fast path for `prompt` (cli_glue.prompt_main: argparse, no typer)
_FAST = "import sys; from wikitrace.agent.cli_glue import prompt_main; sys.exit(prompt_main(sys.argv[1:]))"


def time_subprocesses(cmds: list[list[str]], env: dict, repeat: int) -> list[dict]:
    """For each command: best and median wall seconds, and median CPU seconds (user + sys,
    steadier than wall time on a loaded machine), over ``repeat`` runs after one untimed
    warm-up. The commands take turns, so load changes hit them alike."""
    import resource

    def one(cmd):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

    for cmd in cmds:
        one(cmd)
    samples: list[list[tuple[float, float]]] = [[] for _ in cmds]
    for _ in range(repeat):
        for k, cmd in enumerate(cmds):
            samples[k].append(one(cmd))
    return [{"best": min(w for w, _ in s), "median": statistics.median(w for w, _ in s),
             "cpu": statistics.median(c for _, c in s)} for s in samples]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from wikitrace.agent import corpusdata, index, index_reader
    from wikitrace.agent.corpusdata import load_corpus
    from wikitrace.agent.prompt import build_prompt

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=7, help="timed cold runs per case (after one warm-up)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-fallback", action="store_true", help="skip the slow cold runs without the index")
    add_record_flag(ap, "agent-side.md")
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="wikitrace-bench-"))
    t0 = time.perf_counter()
    n_ins, source, data = synthesise(root, args.runs)
    print(f"corpus: {args.runs} runs, {n_ins} insights from {source}; written in {time.perf_counter() - t0:.1f} s "
          f"({(root / 'corpus.json').stat().st_size / 1e6:.1f} MB corpus.json)")
    t0 = time.perf_counter()
    index.write_prompt_index(root, data["runs"], data["insights"])
    t_write = time.perf_counter() - t0
    idx_path = root / index.INDEX_PATH
    t0 = time.perf_counter()
    idx, status = index_reader.index_status(root)
    t_open = time.perf_counter() - t0
    print(f"prompt index: {idx_path.stat().st_size / 1e6:.1f} MB written in {t_write:.1f} s "
          f"(at compile time); open + stamp check {t_open * 1000:.0f} ms; status {status}")
    del data

    tasks = [r.instruction for r in load_corpus(root).runs[:: max(1, args.runs // 20)]][:20]
    tasks = [t.replace("May", "June") for t in tasks]
    cases = (("full prompt", "wikitrace", None), ("--budget 8000", "wikitrace", 8000),
             ("--budget 8000, insights-only", "insights-only", 8000))

    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(Path(tempfile.gettempdir()) / "wikitrace-bench-pycache")
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent)]
                                        + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cli = _cli_command()
    print(f"cold = fresh process per call ({' '.join(Path(c).name for c in cli)} prompt ...): wall best / median "
          f"of {args.repeat} and median CPU (user+sys); warm = in-process median over {len(tasks)} tasks; "
          f"target {TARGET_MS:.0f} ms")
    print(f"{'case':30} {'cold CLI best':>13} {'median':>7} {'x target':>8} {'cpu':>7} {'no typer':>9} {'cpu':>7} "
          f"{'warm index':>10} {'warm loaded':>11} {'cold, no index':>14}")
    loaded = load_corpus(root)
    rows = []
    for label, variant, budget in cases:
        argv = ["prompt", "--corpus", str(root), "--task", tasks[0], "--variant", variant]
        if budget is not None:
            argv += ["--budget", str(budget)]
        cold, fast = time_subprocesses([cli + argv, [sys.executable, "-c", _FAST] + argv[1:]], env, args.repeat)
        warm = {}
        for name, target in (("index", root), ("loaded", loaded)):
            build_prompt(target, tasks[0], variant=variant, budget=budget)
            times = []
            for task in tasks:
                t = time.perf_counter()
                build_prompt(target, task, variant=variant, budget=budget)
                times.append(time.perf_counter() - t)
            warm[name] = statistics.median(times)
        fallback = "-"
        if not args.no_fallback:
            hidden = idx_path.with_name(idx_path.name + ".hidden")
            idx_path.rename(hidden)
            try:
                fallback = _ms(time_subprocesses([cli + argv], env, 2)[0]["median"]).strip()
            finally:
                hidden.rename(idx_path)
        print(f"{label:30} {_ms(cold['best']):>13} {_ms(cold['median']):>7} "
              f"{cold['median'] * 1000 / TARGET_MS:7.2f}x {_ms(cold['cpu']):>7} {_ms(fast['median']):>9} "
              f"{_ms(fast['cpu']):>7} {_ms(warm['index']):>10} {_ms(warm['loaded']):>11} {fallback:>14}")
        rows.append([label, f"{cold['best'] * 1000:.0f} / {_ms(cold['median'])} "
                            f"({cold['median'] * 1000 / TARGET_MS:.2f}x)", _ms(cold["cpu"]), _ms(fast["median"]),
                     _ms(warm["index"]), _ms(warm["loaded"]), fallback])
    p = build_prompt(root, tasks[0])
    q = build_prompt(root, tasks[0], budget=8000)
    print(f"full prompt: {len(p.insight_ids)} insights, ~{p.tokens} tokens; --budget 8000: "
          f"{len(q.insight_ids)} insights, ~{q.tokens} tokens")
    print("'no typer' = median of the same call through cli_glue.prompt_main (argparse) in a fresh process; "
          "the difference is typer's start-up and option parsing")
    if args.record:
        load = load_average()
        record("agent-side.md", "benchmarks/prompt_build.py",
               f"{args.runs:,} synthetic runs, {n_ins:,} insights; the full prompt inlines {len(p.insight_ids):,} "
               f"(~{p.tokens:,} tokens), `--budget 8000` {len(q.insight_ids)}; cold = a fresh process, best / "
               f"median of {args.repeat} wall times and median CPU; load average {load} at the end:\n\n"
               + markdown_table(["case", "cold CLI best / median (x target)", "CPU", "cold, `prompt_main` (no typer)",
                                 "warm, index", "warm, loaded corpus.json", "cold CLI, no index"], rows))
    corpusdata._CACHE.clear()
    if not args.keep and not args.out:
        shutil.rmtree(root)
    else:
        print(f"corpus kept at {root}")


if __name__ == "__main__":
    main()
