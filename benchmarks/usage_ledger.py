"""What the usage ledger costs: ``wikitrace prompt`` with a ledger of N episodes against
the same prompt with none, and one ``wikitrace cite record`` on top of N episodes.

Usage:  python benchmarks/usage_ledger.py [--episodes 10000] [--repeat 5] [--corpus DIR] [--record]

Without --corpus the bundled examples are compiled (offline) into a temp folder; with it,
a copy of that compiled corpus is used (its insights are the ones cited). The synthetic
ledger cites 1-3 random insights per episode, two thirds of them successful. Cold CLI wall
times (best and median of --repeat, one untimed warm-up) and their ratios are printed;
nothing is asserted. ``--record`` writes the table into docs/agent-side.md.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
WIKITRACE = str(Path(sys.executable).parent / "wikitrace")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, load_average, markdown_table, record  # noqa: E402


def _time(args: list[str], repeat: int) -> tuple[float, float]:
    subprocess.run(args, capture_output=True, check=True)  # warm-up: bytecode, page cache
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def _ledger(corpus: Path, episodes: int) -> None:
    data = json.loads((corpus / "corpus.json").read_text())
    ids = [i["id"] for i in data["insights"]]
    rng = random.Random(0)
    (corpus / "usage").mkdir(exist_ok=True)
    with open(corpus / "usage" / "ledger.jsonl", "w") as fh:
        for n in range(episodes):
            ok = rng.random() < 2 / 3
            fh.write(json.dumps({
                "episode": f"sha256:{n:032x}", "run": f"bench-{n}", "suite": "default", "task_id": str(n % 500),
                "method": "wikitrace", "trial": str(n // 500), "outcome": "success" if ok else "failure",
                "success": ok, "score": None, "R": [], "C": [],
                "I": sorted(rng.sample(ids, min(len(ids), rng.randint(1, 3))))}) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--episodes", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpus", type=Path)
    add_record_flag(ap, "agent-side.md")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "corpus"
        if args.corpus:
            shutil.copytree(args.corpus, base, symlinks=True)
        else:
            subprocess.run([WIKITRACE, "compile", str(REPO / "examples" / "runs.jsonl"), "--out", str(base), "-q"],
                           check=True)
        with_ledger = Path(tmp) / "with-ledger"
        shutil.copytree(base, with_ledger, symlinks=True)
        (with_ledger / "usage").mkdir(exist_ok=True)
        _ledger(with_ledger, args.episodes)
        size = (with_ledger / "usage" / "ledger.jsonl").stat().st_size
        print(f"ledger: {args.episodes} episodes, {size / 1e6:.1f} MB")
        for label, extra in (("prompt", []), ("prompt --budget 0", ["--budget", "0"])):
            call = [WIKITRACE, "prompt", "--task", "Refund order 12 for a damaged book", *extra, "--corpus"]
            best0, med0 = _time(call + [str(base)], args.repeat)
            best1, med1 = _time(call + [str(with_ledger)], args.repeat)
            print(f"{label}: no ledger {best0 * 1000:.0f}/{med0 * 1000:.0f} ms, with ledger "
                  f"{best1 * 1000:.0f}/{med1 * 1000:.0f} ms (best/median), ratio {med1 / med0:.2f}")
            rows.append([f"`{label}`", f"{best0 * 1000:.0f} / {med0 * 1000:.0f} ms",
                         f"{best1 * 1000:.0f} / {med1 * 1000:.0f} ms", f"{med1 / med0:.2f}"])
        answer = Path(tmp) / "answer.txt"
        ins = json.loads((base / "corpus.json").read_text())["insights"][0]["id"]
        answer.write_text(json.dumps({"I": [ins]}))
        times = []
        for n in range(args.repeat):
            t = time.perf_counter()
            subprocess.run([WIKITRACE, "cite", "record", str(answer), "--corpus", str(with_ledger), "--run",
                            f"timed-{n}", "--outcome", "success"], capture_output=True, check=True)
            times.append(time.perf_counter() - t)
        print(f"cite record on {args.episodes} episodes: best {min(times) * 1000:.0f} ms, "
              f"median {statistics.median(times) * 1000:.0f} ms")
        rows.append(["`cite record` (one episode more)", "-",
                     f"{min(times) * 1000:.0f} / {statistics.median(times) * 1000:.0f} ms", "-"])
    if args.record:
        load = load_average()
        record("agent-side.md", "benchmarks/usage_ledger.py",
               f"A ledger of {args.episodes:,} episodes ({size / 1e6:.1f} MB) on "
               f"{'the example corpus' if not args.corpus else 'a copy of ' + args.corpus.name}; cold CLI wall "
               f"time, best / median of {args.repeat}; load average {load} at the end:\n\n"
               + markdown_table(["call", "no ledger", "with the ledger", "ratio of medians"], rows))


if __name__ == "__main__":
    main()
