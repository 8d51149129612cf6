"""What `wikitrace forget` of one run costs on a large corpus, against a rebuild from cache.

Builds an N-run corpus offline (synthetic runs from benchmarks/synth.py), then times
`wikitrace forget` of one run and a no-change `wikitrace compile` of the remaining input,
and prints the ratio. Run: python benchmarks/forget.py [--runs 2000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from synth import write_corpus_input  # noqa: E402

WIKITRACE = shutil.which("wikitrace") or str(Path(sys.executable).parent / "wikitrace")


def timed(*args: str) -> float:
    start = time.perf_counter()
    proc = subprocess.run([WIKITRACE, *args], capture_output=True, text=True)
    took = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"wikitrace {' '.join(args)} failed: {proc.stderr.strip()[-500:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="wikitrace-forget-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    env_cache = work / "cache"
    os.environ["WIKITRACE_CACHE_DIR"] = str(env_cache)
    data = write_corpus_input(work / "runs.jsonl", args.runs)
    out = work / "corpus"
    first = timed("compile", str(data), "--out", str(out), "--offline", "-q")
    rebuild = timed("compile", str(data), "--out", str(out), "--offline", "-q")
    victim = json.loads((out / "corpus.json").read_text())["runs"][args.runs // 2]["run_id"]
    forget = timed("forget", victim, "-c", str(out))
    after = timed("compile", str(data), "--out", str(out), "--offline", "-q")
    check = subprocess.run([WIKITRACE, "check", str(out)], capture_output=True, text=True)
    print(f"runs: {args.runs}")
    print(f"first build: {first:.2f} s; rebuild, nothing changed: {rebuild:.2f} s")
    print(f"forget 1 run: {forget:.2f} s = {forget / rebuild:.3f} of a rebuild")
    print(f"rebuild after forget (skips it): {after:.2f} s; check: {'ok' if check.returncode == 0 else 'PROBLEMS'}")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
