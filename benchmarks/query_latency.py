"""Latency of ``wikitrace query`` on a compiled LoCoMo conversation (offline), in process and as
whole processes measured against Python's own start-up in the same run.

Compiles one conversation into a temporary corpus, then times, for each of its questions,
(a) retrieval with the index already loaded, (b) index load + retrieval (one CLI call minus the
interpreter and its imports), and (c) whole processes, in turn per question so that a machine
getting busier slows all of them alike: ``python -c pass``, ``python -c 'import json'``,
``wikitrace query`` (markdown packet) and ``wikitrace query --json``. Prints p50/p90 of wall and
CPU (user + system) milliseconds, and each command's p50 against ``python -c pass``.

Targets: CLI p50 <= 100 ms wall; better, CLI CPU p50 <= 1.5 x (``import json`` + load + retrieve).
A wheel install ships compiled bytecode; the first call of each command here runs with bytecode
writing allowed (this environment may set PYTHONDONTWRITEBYTECODE), so the package is not
recompiled on every counted call.

    python benchmarks/query_latency.py --data ../shared/data/locomo-dev/conv-26.json [--cli 20] [--record]

``--record`` writes the table into docs/dialogue.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.fsio import make_writable  # noqa: E402
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402
from wikitrace.dialogue.loaded_index import load_index  # noqa: E402
from wikitrace.dialogue.retrieve import retrieve  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, markdown_table, record  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def timed(cmd: list[str], env: dict) -> tuple[float, float]:
    """Wall and CPU (user + system, from the kernel's accounting of the child) milliseconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall * 1000, cpu * 1000


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="one LoCoMo conversation file")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--limit", type=int, default=200, help="questions to time in process")
    ap.add_argument("--cli", type=int, default=20, metavar="N",
                    help="questions to time as whole processes (each: four commands in turn); 0: none")
    add_record_flag(ap, "dialogue.md")
    args = ap.parse_args(argv)
    (d,) = load_inputs([args.data])[:1]
    questions = [q["question"] for q in d.qa][: args.limit]
    exe = Path(sys.executable)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "WIKITRACE_CORPUS")}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "corpus"
        t0 = time.perf_counter()
        compile_dialogues(DialogueOptions(inputs=[args.data], out=out))
        compile_s = time.perf_counter() - t0
        index = out / "dialogue" / d.sample_id / "index.json"
        li = load_index(index)
        warm, cold, cold_cpu = [], [], []
        for q in questions:
            t = time.perf_counter()
            retrieve(li, q, budget=args.budget)
            warm.append((time.perf_counter() - t) * 1000)
        for q in questions[:30]:
            t, c = time.perf_counter(), time.process_time()
            retrieve(load_index(index), q, budget=args.budget)
            cold.append((time.perf_counter() - t) * 1000)
            cold_cpu.append((time.process_time() - c) * 1000)
        size_kb = sum(p.stat().st_size for p in index.parent.iterdir() if p.suffix in (".json", ".bin", ".f32")
                      and p.name != "memory.json") / 1024
        query = [str(exe.parent / "wikitrace"), "query", "--corpus", str(out), "--budget", str(args.budget)]
        commands = {"python -c pass": lambda q: [str(exe), "-c", "pass"],
                    "python -c 'import json'": lambda q: [str(exe), "-c", "import json"],
                    "wikitrace query": lambda q: query + [q],
                    "wikitrace query --json": lambda q: query + ["--json", q]}
        procs: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in commands}
        if args.cli:
            for make in commands.values():      # warm-up, not counted: writes bytecode, fills the page cache
                timed(make(questions[0]), env)
            for qn in questions[: args.cli]:
                for label, make in commands.items():
                    wall, cpu = timed(make(qn), env)
                    procs[label][0].append(wall)
                    procs[label][1].append(cpu)
        make_writable(out)
    load = os.getloadavg()
    print(f"{d.sample_id}: {len(d.messages)} messages, index {size_kb:.0f} KB, compile {compile_s:.1f} s; "
          f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}")
    print(f"retrieve (index loaded)   p50 {pct(warm, .5):6.1f} ms  p90 {pct(warm, .9):6.1f} ms  n={len(warm)}")
    print(f"load index + retrieve     p50 {pct(cold, .5):6.1f} ms  p90 {pct(cold, .9):6.1f} ms  "
          f"(cpu p50 {pct(cold_cpu, .5):.1f} ms)  n={len(cold)}")
    rows = [["retrieve, index loaded (in process)", f"{pct(warm, .5):.1f}", f"{pct(warm, .9):.1f}", "", "", "",
             len(warm)],
            ["load index + retrieve (in process)", f"{pct(cold, .5):.1f}", f"{pct(cold, .9):.1f}",
             f"{pct(cold_cpu, .5):.1f}", f"{pct(cold_cpu, .9):.1f}", "", len(cold)]]
    if args.cli:
        base_wall, base_cpu = pct(procs["python -c pass"][0], .5), pct(procs["python -c pass"][1], .5)
        print(f"whole processes, {args.cli} questions, the four commands in turn for each:")
        for label, (walls, cpus) in procs.items():
            ratio = f"{pct(walls, .5) / base_wall:.1f}x / {pct(cpus, .5) / base_cpu:.1f}x"
            print(f"  {label:<26} wall p50 {pct(walls, .5):6.1f} p90 {pct(walls, .9):6.1f} ms   "
                  f"cpu p50 {pct(cpus, .5):6.1f} p90 {pct(cpus, .9):6.1f} ms   vs -c pass (wall / cpu) {ratio}")
            rows.append([f"process: `{label}`", f"{pct(walls, .5):.1f}", f"{pct(walls, .9):.1f}",
                         f"{pct(cpus, .5):.1f}", f"{pct(cpus, .9):.1f}", ratio, len(walls)])
        goal = 1.5 * (pct(procs["python -c 'import json'"][1], .5) + pct(cold_cpu, .5))
        for label in ("wikitrace query", "wikitrace query --json"):
            walls, cpus = procs[label]
            print(f"target {label}: wall p50 {pct(walls, .5):.1f} ms (<= 100: {'yes' if pct(walls, .5) <= 100 else 'no'}); "
                  f"cpu p50 {pct(cpus, .5):.1f} ms vs 1.5 x (import json + load + retrieve) = {goal:.1f} ms "
                  f"({'yes' if pct(cpus, .5) <= goal else 'no'})")
    if args.record:
        record("dialogue.md", "benchmarks/query_latency.py",
               f"{d.sample_id} ({len(d.messages)} messages, index {size_kb:.0f} KB), `--budget {args.budget}`, "
               f"{args.cli} questions as whole processes, the four commands in turn; load average "
               f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end:\n\n"
               + markdown_table(["what", "wall p50 ms", "wall p90 ms", "cpu p50 ms", "cpu p90 ms",
                                 "p50 vs `-c pass` (wall / cpu)", "n"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
