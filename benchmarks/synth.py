"""Synthetic run corpora for benchmarks, made from the real tau-bench runs when present.

Each synthetic run is a real run with its ids and a few words varied, so sizes,
turn shapes and text lengths stay realistic. Nothing generated here is committed.

    python benchmarks/synth.py OUT.jsonl [--runs 2000] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Beside the main checkout; a worktree elsewhere points at it with WIKITRACE_DATA.
DATA = Path(os.environ.get("WIKITRACE_DATA") or HERE.parent.parent / "shared" / "data")
TAU = DATA / "runs-dev" / "tau-bench-airline" / "gpt-4o-airline.json"
WORDS = ["urgent", "please", "today", "kindly", "asap", "thanks", "again", "now", "soon", "later"]


def _base_runs() -> list[dict]:
    if TAU.exists():
        return json.loads(TAU.read_text())
    sys.stderr.write(f"note: {TAU} absent; using a generated base run\n")
    traj = [{"role": "system", "content": "# Shop Agent Policy\nHelp customers."},
            {"role": "user", "content": "Please refund my order."}]
    for k in range(8):
        traj.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "get_order" if k % 2 else "refund_order",
                                                             "arguments": json.dumps({"order_id": str(k)})}}]})
        traj.append({"role": "tool", "tool_call_id": f"c{k}", "content": "Error: no" if k == 3 else '{"ok": true}'})
    return [{"task_id": i, "trial": 0, "reward": float(i % 2), "info": {"task": {"instruction": "Refund an order."}},
             "traj": traj} for i in range(10)]


def write_corpus_input(path: Path, n: int, seed: int = 0) -> Path:
    """Write ``n`` runs as one OpenAI-chat JSONL file (streamable, one run per line)."""
    rng = random.Random(seed)
    base = _base_runs()
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            src = base[i % len(base)]
            run = {
                "run_id": f"synthetic-{i:06d}",
                "task_id": f"{src['task_id']}-{i // len(base)}",
                "trial": src.get("trial", 0),
                "reward": src["reward"],
                # A per-run tag keeps every prompt distinct, so no answer comes from the cache.
                "info": {"task": {"instruction": f"{src['info']['task']['instruction']} {rng.choice(WORDS)} (case {i})"}},
                "traj": src["traj"],
            }
            fh.write(json.dumps(run) + "\n")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Write synthetic runs (one OpenAI-chat run a line) for the benchmarks.")
    ap.add_argument("out", type=Path, help="the JSONL file to write")
    ap.add_argument("--runs", type=int, default=2000, help="how many runs (default 2000)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the word choices (default 0)")
    args = ap.parse_args(argv)
    # A name like '-h' after '--' is almost surely a mistyped option, not a file anyone wants.
    if str(args.out).startswith("-"):
        ap.error(f"refusing to write to {str(args.out)!r}: an output path may not start with '-'")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    print(write_corpus_input(args.out, args.runs, seed=args.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
