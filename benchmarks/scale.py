"""Scale benchmarks for `wikitrace compile` (issue 6), measured side by side in one run.

Against a loopback OpenAI-compatible server (benchmarks/fake_llm_server.py, its
own process) whose latency is a parameter and which counts calls:

1. pipeline overhead: N runs at zero latency -> runs/s (target >= 300 on 2 cores)
2. concurrency efficiency: 200 ms latency, concurrency 32 -> achieved / (32 / 0.2 s) (target >= 0.85)
3. incremental: a large corpus plus one run, published in place -> LLM calls (must be 1) and
   wall time / full rebuild from cache into a new folder (<= 0.10); then one more run with
   `wikitrace add` (reads only that run's file) -> LLM calls (must be 1), ratio (<= 0.05)
4. peak memory of the large compile (target <= 500 MB)
5. tools (actions, turn, grep) and `wikitrace prompt` on the large corpus against `python3 -c pass`

Inputs are synthesised from the real tau-bench runs (benchmarks/synth.py) into a
scratch folder and never committed. Prints a table; asserts nothing.

    python benchmarks/scale.py                  # 2,000 / 1,600 / 10,000 runs
    python benchmarks/scale.py --large 2000     # quicker
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from synth import write_corpus_input  # noqa: E402



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, latency: float):
        self.port = free_port()
        self.proc = subprocess.Popen([sys.executable, str(HERE / "fake_llm_server.py"), str(self.port), str(latency)],
                                     stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "ready"
        self.url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/calls") as r:
            return json.loads(r.read())

    def calls(self) -> int:
        return self.stats()["calls"]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


def settle() -> None:
    """Let the disk finish what earlier steps left (writeback of tens of thousands of
    new files): it would otherwise be measured as the next step's cost."""
    os.sync()
    time.sleep(3)


def compile_cli(inputs: Path, out: Path, env_extra: dict, *extra: str) -> tuple[float, int, int]:
    """Run `wikitrace compile` in a child; return (seconds, exit code, peak RSS in MB)."""
    return wikitrace_cli(["compile", str(inputs), "--out", str(out), *extra], env_extra)


def wikitrace_cli(args: list[str], env_extra: dict) -> tuple[float, int, int]:
    """Run a `wikitrace` command in a child; return (seconds, exit code, peak RSS in MB)."""
    settle()
    env = dict(os.environ, **env_extra)
    cmd = [sys.executable, "-m", "wikitrace.cli", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.stderr.write(proc.stderr.read().decode()[-2000:])
    return elapsed, code, usage.ru_maxrss // 1024


def best_of(cmd: list[str], env: dict, n: int = 7) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--overhead", type=int, default=2000)
    ap.add_argument("--concurrency-runs", type=int, default=1600,
                    help="runs at 200 ms (1,600 = 10 s of ideal flow, so start-up is a small part)")
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--work", type=Path, default=None,
                    help="scratch folder (default: a fresh folder under benchmarks/_work, removed after)")
    args = ap.parse_args()

    # Not /tmp: on some machines here it creates files 20x slower than the work disk.
    (HERE / "_work").mkdir(exist_ok=True)
    work = args.work or Path(tempfile.mkdtemp(prefix="scale-", dir=HERE / "_work"))
    work.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, str]] = []
    try:
        # 1. pipeline overhead at zero latency
        server = Server(0.0)
        base = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bench", "WIKITRACE_MODEL": "bench"}
        src = write_corpus_input(work / "overhead.jsonl", args.overhead)
        secs, code, rss = compile_cli(src, work / "c-overhead", dict(base, WIKITRACE_CACHE_DIR=str(work / "cache-o")),
                                      "--concurrency", "32")
        rate = args.overhead / secs
        rows.append(("pipeline overhead (LLM path, 0 ms)", f"{args.overhead} runs in {secs:.1f} s = {rate:.0f} runs/s",
                     f"{rate / 300:.2f}x of 300 runs/s target"))
        secs_off, _, _ = compile_cli(src, work / "c-overhead-off", {}, "--offline")
        rows.append(("  same runs, offline compiler", f"{args.overhead / secs_off:.0f} runs/s", ""))
        server.stop()

        # 2. concurrency efficiency at 200 ms
        server = Server(0.2)
        base = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bench", "WIKITRACE_MODEL": "bench"}
        src = write_corpus_input(work / "conc.jsonl", args.concurrency_runs, seed=1)
        secs, code, _ = compile_cli(src, work / "c-conc", dict(base, WIKITRACE_CACHE_DIR=str(work / "cache-c")),
                                    "--concurrency", "32")
        ideal = 32 / 0.2
        achieved = args.concurrency_runs / secs
        served = server.stats()
        during = served["calls"] / served["busy_seconds"] if served["busy_seconds"] else 0.0
        rows.append(("concurrency 32 at 200 ms", f"{achieved:.0f} runs/s of ideal {ideal:.0f} (whole command)",
                     f"efficiency {achieved / ideal:.2f} (target >= 0.85)"))
        rows.append(("  while calls were flowing", f"{during:.0f} calls/s, at most {served['max_inflight']} in flight",
                     f"efficiency {during / ideal:.2f} (start-up excluded)"))
        server.stop()

        # 3 + 4. large corpus: full build, rebuild from cache, one more run
        server = Server(0.0)
        cache = str(work / "cache-l")
        base = {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-bench", "WIKITRACE_MODEL": "bench",
                "WIKITRACE_CACHE_DIR": cache}
        big = write_corpus_input(work / "large.jsonl", args.large, seed=2)
        secs_full, code, rss = compile_cli(big, work / "c-large", base, "--concurrency", "32")
        calls_full = server.calls()
        rows.append((f"full build, {args.large} runs", f"{secs_full:.1f} s, {calls_full} LLM calls",
                     f"peak RSS {rss} MB (target <= 500)"))
        secs_cache, _, rss_cache = compile_cli(big, work / "c-large-2", base, "--concurrency", "32")
        rows.append(("full rebuild from cache (new folder)", f"{secs_cache:.1f} s, {server.calls() - calls_full} LLM calls",
                     f"peak RSS {rss_cache} MB"))
        plus = work / "large-plus-one.jsonl"
        shutil.copy(big, plus)
        with plus.open("a") as fh, (work / "large.jsonl").open() as src_fh:
            extra = json.loads(src_fh.readline())
            extra["run_id"] = "synthetic-extra"
            extra["info"]["task"]["instruction"] += " (one more run)"
            fh.write(json.dumps(extra) + "\n")
        before = server.calls()
        secs_inc, _, _ = compile_cli(plus, work / "c-large", base, "--concurrency", "32")
        rows.append(("add 1 run to the published corpus", f"{secs_inc:.1f} s, {server.calls() - before} LLM call(s)",
                     f"{secs_inc / secs_cache:.3f} of rebuild from cache (target <= 0.10)"))
        one = work / "one-more-run.jsonl"  # `wikitrace add`: only this file is read
        with one.open("w") as fh, (work / "large.jsonl").open() as src_fh:
            src_fh.readline()
            extra = json.loads(src_fh.readline())
            extra["run_id"] = "synthetic-added"
            extra["info"]["task"]["instruction"] += " (added as it ended)"
            fh.write(json.dumps(extra) + "\n")
        before = server.calls()
        secs_add, code, _ = wikitrace_cli(["add", str(one), "--corpus", str(work / "c-large")], base)
        rows.append(("add 1 run with `wikitrace add`", f"{secs_add:.1f} s, {server.calls() - before} LLM call(s)"
                     + ("" if code == 0 else f", exit {code}"),
                     f"{secs_add / secs_cache:.3f} of rebuild from cache (target <= 0.05)"))
        server.stop()

        # 5. agent-facing commands on the large corpus
        corpus = work / "c-large"
        env = dict(os.environ, WIKITRACE_CORPUS=str(corpus))
        py = sys.executable
        from wikitrace.tools_install import install  # as an agent gets them: installed, with bytecode

        tools = work / "tools"
        install(tools)
        t_pass = best_of([py, "-c", "pass"], env)
        rows.append(("python -c pass", f"{t_pass * 1000:.1f} ms", "1.00x"))
        mid = f"step-{args.large // 2:04d}"
        for label, cmd in [
            ("tools/actions", [py, str(tools / "actions"), mid]),
            ("tools/turn", [py, str(tools / "turn"), mid, "3", "5"]),
            ("tools/grep --layer insight", [py, str(tools / "grep"), "reservation", "--layer", "insight", "--max", "20"]),
            ("wikitrace prompt (cold CLI)", [str(Path(sys.executable).with_name("wikitrace")), "prompt", "--corpus", str(corpus),
                                              "--task", "I want to change my flight to a later date"]),
        ]:
            t = best_of(cmd, dict(env, WIKITRACE_TOOLS_NO_RG="1"), n=5)
            rows.append((label, f"{t * 1000:.1f} ms", f"{t / t_pass:.2f}x of python -c pass"))
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print(f"\nwikitrace scale benchmark ({os.cpu_count()} cores)\n")
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:<45}  {note}")


if __name__ == "__main__":
    main()
