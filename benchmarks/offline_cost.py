"""CPU per run of the offline compiler alone (``compile_offline``), in one process.

Each pass loads the runs afresh and empties every ``lru_cache`` of the package and ``re``'s
pattern cache first, so a pass costs what the same runs cost in a new build: a value's
pattern or an answer's parse is paid once per pass, not once per process. The best of
``--reps`` passes is printed (CPU time, ``time.process_time``), with the median beside it:
on this shared machine, compare versions measured one after another, not across hours.

Any commit can be measured from a ``git archive`` of it on ``PYTHONPATH`` (it uses only
``iter_runs`` and ``compile_offline``):

    python benchmarks/offline_cost.py                      # tau-bench, HotpotQA, 500 synthetic runs
    PYTHONPATH=/tmp/old python benchmarks/offline_cost.py --reps 7 --inputs tau
"""

from __future__ import annotations

import argparse
import gc
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synth import DATA, write_corpus_input  # noqa: E402

from wikitrace.compilers.offline import compile_offline  # noqa: E402
from wikitrace.runs.load import iter_runs  # noqa: E402
from wikitrace.runs.model import Run  # noqa: E402


def clear_caches() -> None:
    """Every memo a build starts without: the package's lru_caches and re's compiled patterns."""
    for name, module in list(sys.modules.items()):
        if name == "wikitrace" or name.startswith("wikitrace."):
            for value in list(vars(module).values()):
                if hasattr(value, "cache_clear") and getattr(value, "__module__", "") == name:
                    value.cache_clear()
    re.purge()


def per_run_ms(paths: list[Path], reps: int) -> tuple[int, float, float]:
    """(runs, best ms a run, median ms a run) over ``reps`` passes."""
    times, count = [], 0
    for _ in range(reps):
        runs = [r for r in iter_runs(paths) if isinstance(r, Run)]
        clear_caches()
        gc.collect()
        start = time.process_time()
        for run in runs:
            compile_offline(run)
        times.append(time.process_time() - start)
        count = len(runs)
    return count, min(times) / count * 1000, statistics.median(times) / count * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5, help="passes per input (the best is printed)")
    ap.add_argument("--inputs", default="tau,hotpot,synth", help="comma-separated: tau, hotpot, synth")
    ap.add_argument("--synth", type=int, default=500, help="synthetic runs (made from the tau-bench runs)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {"tau": [DATA / "runs-dev" / "tau-bench-airline"],
                  "hotpot": [DATA / "runs-dev" / "reflexion-hotpotqa"]}
        for key in args.inputs.split(","):
            if key == "synth":
                inputs["synth"] = [write_corpus_input(Path(tmp) / "synth.jsonl", args.synth)]
            if not all(p.exists() for p in inputs[key]):
                print(f"{key}: skipped, {inputs[key][0]} absent (set WIKITRACE_DATA)")
                continue
            runs, best, median = per_run_ms(inputs[key], args.reps)
            print(f"{key}: {runs} runs, compile_offline {best:.2f} ms a run (best of {args.reps}; median {median:.2f})",
                  flush=True)


if __name__ == "__main__":
    main()
