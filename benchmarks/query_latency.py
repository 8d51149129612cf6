"""Query latency of ``wikitrace query`` internals on a compiled LoCoMo conversation (offline).

Compiles one conversation into a temporary corpus, then times, for each of its questions,
(a) retrieval with the index already loaded and (b) index load + retrieval (what one CLI
call does, minus interpreter start-up). Prints p50/p90 in milliseconds. Target: p50 <= 50 ms.

    python benchmarks/query_latency.py --data ../shared/data/locomo-dev/conv-26.json [--budget 2000] [--record]

``--record`` writes the table into docs/dialogue.md.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.fsio import make_writable  # noqa: E402
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402
from wikitrace.dialogue.retrieve import load_index, retrieve  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, markdown_table, record  # noqa: E402


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="one LoCoMo conversation file")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--limit", type=int, default=200, help="questions to time")
    ap.add_argument("--cli", type=int, default=0, metavar="N",
                    help="also time N whole processes: `wikitrace query --json` and `python -m wikitrace.dialogue query --json`")
    add_record_flag(ap, "dialogue.md")
    args = ap.parse_args(argv)
    (d,) = load_inputs([args.data])[:1]
    questions = [q["question"] for q in d.qa][: args.limit]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "corpus"
        t0 = time.perf_counter()
        compile_dialogues(DialogueOptions(inputs=[args.data], out=out))
        compile_s = time.perf_counter() - t0
        index = out / "dialogue" / d.sample_id / "index.json"
        li = load_index(index)
        warm, cold = [], []
        for q in questions:
            t = time.perf_counter()
            retrieve(li, q, budget=args.budget)
            warm.append((time.perf_counter() - t) * 1000)
        for q in questions[:30]:
            t = time.perf_counter()
            retrieve(load_index(index), q, budget=args.budget)
            cold.append((time.perf_counter() - t) * 1000)
        size_kb = sum(p.stat().st_size for p in index.parent.iterdir() if p.suffix in (".json", ".bin", ".f32")
                      and p.name != "memory.json") / 1024
        procs = {}
        exe = Path(sys.executable)
        for label, cmd in (("wikitrace query --json", [str(exe.parent / "wikitrace"), "query"]),
                           ("python -m wikitrace.dialogue query --json", [str(exe), "-m", "wikitrace.dialogue", "query"])):
            times = []
            for qn in questions[: args.cli]:
                t = time.perf_counter()
                subprocess.run(cmd + ["--corpus", str(out), "--sample", d.sample_id, "--json", "--budget",
                                      str(args.budget), qn], check=True, capture_output=True)
                times.append((time.perf_counter() - t) * 1000)
            if times:
                procs[label] = times
        make_writable(out)
    print(f"{d.sample_id}: {len(d.messages)} messages, index {size_kb:.0f} KB, compile {compile_s:.1f} s")
    print(f"retrieve (index loaded)   p50 {pct(warm, .5):6.1f} ms  p90 {pct(warm, .9):6.1f} ms  n={len(warm)}")
    print(f"load index + retrieve     p50 {pct(cold, .5):6.1f} ms  p90 {pct(cold, .9):6.1f} ms  n={len(cold)}")
    for label, times in procs.items():
        print(f"process: {label:<42} p50 {pct(times, .5):6.1f} ms  p90 {pct(times, .9):6.1f} ms  n={len(times)}")
    if args.record:
        import os

        rows = [["retrieve, index loaded", f"{pct(warm, .5):.1f}", f"{pct(warm, .9):.1f}", len(warm)],
                ["load index + retrieve", f"{pct(cold, .5):.1f}", f"{pct(cold, .9):.1f}", len(cold)]]
        rows += [[f"process: `{label}`", f"{pct(t, .5):.1f}", f"{pct(t, .9):.1f}", len(t)] for label, t in procs.items()]
        load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
        record("dialogue.md", "benchmarks/query_latency.py",
               f"{d.sample_id} ({len(d.messages)} messages, index {size_kb:.0f} KB), `--budget {args.budget}`; "
               f"load average {load} at the end:\n\n" + markdown_table(["what", "p50 ms", "p90 ms", "n"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
