"""Scale benchmark for `wikitrace compile`: the headline figures and their targets, in one run.

Against a loopback OpenAI-compatible server (benchmarks/fake_llm_server.py, its own
process) whose latency is a parameter and which counts calls, it measures:

1. the offline compiler and the LLM path at zero latency: runs/s over ``--overhead`` runs
2. 32 requests in flight at 200 ms: the whole command's runs/s as a fraction of 160 runs/s
3. a build of ``--large`` runs at zero latency (its time and peak memory), its rebuild from
   the response cache into a new folder, and `wikitrace add` of one run (one LLM call for
   the run, and a merge call for each insight group it joined whose merge prompt changed) as
   a fraction of that rebuild
4. the agent tools and a cold `wikitrace prompt` on the large corpus against `python3 -c pass`

Inputs are synthesised from the real tau-bench runs (benchmarks/synth.py; set
WIKITRACE_DATA when the shared data is not beside the checkout) into a scratch folder
and never committed. Prints one table with each figure beside its target; asserts
nothing. Ratios measured in one run are what to compare: absolute times follow the
load of the machine, which the table states.

    python benchmarks/scale.py --quick          # about 2 minutes: 2,000 runs, large = 2,000
    python benchmarks/scale.py                  # the targets' sizes: 2,000 / 2,000 / 10,000 runs
    python benchmarks/scale.py --quick --record # also append the table to docs/performance.md
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from record import load_average  # noqa: E402
from synth import TAU, write_corpus_input  # noqa: E402

RECORD = HERE.parent / "docs" / "performance.md"
IDEAL_200MS = 32 / 0.2  # runs/s with 32 requests of 200 ms always in flight


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

    def env(self, cache: Path) -> dict:
        return {"OPENAI_BASE_URL": self.url, "OPENAI_API_KEY": "sk-bench", "WIKITRACE_MODEL": "bench",
                "WIKITRACE_CACHE_DIR": str(cache)}

    def stats(self) -> dict:
        with urllib.request.urlopen(f"{self.url}/calls") as r:
            return json.loads(r.read())

    def calls(self) -> int:
        return self.stats()["calls"]

    def stop(self) -> None:
        self.proc.kill()
        self.proc.wait()


@dataclass
class Row:
    what: str
    measured: str
    target: str = ""
    met: bool | None = None  # None: no target

    @property
    def verdict(self) -> str:
        return "" if self.met is None else ("yes" if self.met else "NO")


class TreeMemory:
    """Peak of the summed resident memory of a process and all its descendants, sampled.

    ``ru_maxrss`` from ``wait4`` is the largest single process, not the build: the main
    process, the run reader and the page writer are separate interpreters, and the
    machine has to hold them at once. Shared library pages are counted once per process,
    so the figure errs high. Each sample reads every process's stat file, so it is taken four
    times a second, not more: the sampler must not cost the build it measures."""

    PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024

    def __init__(self, root: int, every: float = 0.25):
        self.root, self.every, self.peak_kb = root, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
        tree, todo = [], [self.root]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(children.get(pid, ()))
        return tree

    def _sample(self) -> None:
        while not self._stop.wait(self.every):
            total = 0
            for pid in self._tree():
                try:
                    with open(f"/proc/{pid}/statm", "rb") as fh:
                        total += int(fh.read().split()[1]) * self.PAGE_KB
                except (OSError, IndexError, ValueError):
                    pass
            self.peak_kb = max(self.peak_kb, total)

    def stop(self) -> int:
        """Stop sampling; the peak in MB."""
        self._stop.set()
        self._thread.join()
        return self.peak_kb // 1024


class Bench:
    def __init__(self, settle_seconds: float):
        self.settle_seconds = settle_seconds

    def settle(self) -> None:
        """Let the disk finish what earlier steps left (writeback of thousands of new
        files): it would otherwise be measured as the next step's cost."""
        os.sync()
        time.sleep(self.settle_seconds)

    def cli(self, args: list[str], env_extra: dict) -> tuple[float, int]:
        """Run a `wikitrace` command in a child; return (seconds, peak memory in MB of the command
        and its helper processes together, see TreeMemory). Exits on failure.
        Its CPU time (helper processes included) is kept in ``self.cpu``: on a shared machine
        runs per CPU-second moves less with the load than runs per second."""
        self.settle()
        env = dict(os.environ, **env_extra)
        self.started = time.monotonic()  # the clock the fake server's first/last are read on
        start = time.perf_counter()
        # As the `wikitrace` executable runs it (entry.py: the fast paths, then typer)
        proc = subprocess.Popen([sys.executable, "-m", "wikitrace.entry", *args, "--quiet"], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        memory = TreeMemory(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        self.ended = time.monotonic()
        peak_mb = max(memory.stop(), usage.ru_maxrss // 1024)
        code = os.waitstatus_to_exitcode(status)
        self.cpu = usage.ru_utime + usage.ru_stime
        if code != 0:
            sys.stderr.write(proc.stderr.read().decode()[-2000:])
            raise SystemExit(f"scale.py: `wikitrace {' '.join(args)}` exited with {code}")
        return elapsed, peak_mb

    def compile(self, inputs: Path, out: Path, env_extra: dict, *extra: str) -> tuple[float, int]:
        return self.cli(["compile", str(inputs), "--out", str(out), *extra], env_extra)


def best_of(cmd: list[str], env: dict, n: int) -> float:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return min(times)


def one_more_run(src: Path, dst: Path, run_id: str) -> Path:
    with dst.open("w") as fh, src.open() as src_fh:
        extra = json.loads(src_fh.readline())
        extra["run_id"] = run_id
        extra["info"]["task"]["instruction"] += " (added as it ended)"
        fh.write(json.dumps(extra) + "\n")
    return dst


def measure(args, work: Path) -> list[Row]:
    bench = Bench(settle_seconds=1.0 if args.quick else 3.0)
    rows: list[Row] = []
    n = args.overhead

    # 1. offline and LLM path at zero latency, the same runs
    src = write_corpus_input(work / "overhead.jsonl", n)
    secs, _ = bench.compile(src, work / "c-offline", {}, "--offline")
    rate = n / secs
    rows.append(Row(f"offline compile, {n:,} runs", f"{rate:.0f} runs/s ({secs:.1f} s; {n / bench.cpu:.0f} runs per CPU-s)",
                    ">= 300 runs/s", rate >= 300))
    server = Server(0.0)
    try:
        secs, rss = bench.compile(src, work / "c-llm0", server.env(work / "cache-0"), "--concurrency", "32")
        cpu = bench.cpu
    finally:
        server.stop()
    rate = n / secs
    built = (src, secs, rss, work / "c-llm0", work / "cache-0")  # the large build, when it has this size
    rows.append(Row(f"LLM path at 0 ms, {n:,} runs", f"{rate:.0f} runs/s ({secs:.1f} s; {n / cpu:.0f} runs per CPU-s)",
                    ">= 300 runs/s", rate >= 300))

    # 2. 32 in flight at 200 ms
    runs = args.concurrency_runs
    src = write_corpus_input(work / "conc.jsonl", runs, seed=1)
    server = Server(0.2)
    try:
        secs, _ = bench.compile(src, work / "c-conc", server.env(work / "cache-c"), "--concurrency", "32")
        served = server.stats()
    finally:
        server.stop()
    share = runs / secs / IDEAL_200MS
    rows.append(Row(f"32 in flight at 200 ms, {runs:,} runs", f"{share:.2f} of {IDEAL_200MS:.0f} runs/s "
                    f"({runs / secs:.0f} runs/s, whole command)", ">= 0.85", share >= 0.85))
    if served["busy_seconds"]:
        rows.append(Row("  while calls were flowing", f"{served['calls'] / served['busy_seconds'] / IDEAL_200MS:.2f} "
                        f"(at most {served['max_inflight']} in flight)"))
        # What the whole command loses to its serial start and end, where no call is in flight
        rows.append(Row("  before the first call / after the last answer",
                        f"{served['first'] - bench.started:.2f} s / {bench.ended - served['last']:.2f} s "
                        f"(ideal flow {runs / IDEAL_200MS:.2f} s)"))

    # 3. a large build, its rebuild from cache, one run added
    large = args.large
    server = Server(0.0)
    try:
        if large == n:
            big, secs_full, rss, corpus, cache = built
        else:
            big, corpus, cache = write_corpus_input(work / "large.jsonl", large, seed=2), work / "c-large", work / "cache-l"
            secs_full, rss = bench.compile(big, corpus, server.env(cache), "--concurrency", "32")
        env = server.env(cache)
        per_10k = secs_full * 10000 / large
        rows.append(Row(f"LLM build of {large:,} runs at 0 ms", f"{secs_full:.1f} s"
                        + ("" if large == 10000 else f" (= {per_10k:.0f} s per 10,000)"),
                        "<= 35 s for 10,000", per_10k <= 35))
        rows.append(Row("  its peak memory, all its processes", f"{rss} MB", "<= 500 MB (10,000 runs)", rss <= 500))
        before = server.calls()
        secs_cache, _ = bench.compile(big, work / "c-large-2", env, "--concurrency", "32")
        rows.append(Row("  rebuild from cache (new folder)", f"{secs_cache:.1f} s, {server.calls() - before} LLM calls"))
        one = one_more_run(big, work / "one-more-run.jsonl", "synthetic-added")
        before = server.stats()
        secs_add, _ = bench.cli(["add", str(one), "--corpus", str(corpus)], env)
        after = server.stats()
        merges = after["merges"] - before["merges"]
        run_calls = after["calls"] - before["calls"] - merges
        # The run's call, and a merge for each insight group it joined whose merge prompt changed:
        # a group's offline wording counts its own sources ("450 of the 600 runs here ..."), so
        # joining a group usually changes its prompt. Never more merges than groups joined.
        joined = next(len(r["insights"]) for r in json.loads((corpus / "corpus.json").read_text())["runs"]
                      if r["run_id"] == "synthetic-added")
        ratio = secs_add / secs_cache
        rows.append(Row("`wikitrace add` of 1 run / rebuild from cache",
                        f"{ratio:.3f} ({secs_add:.2f} s, {run_calls} run call + {merges} merge of {joined} groups joined)",
                        "<= 0.05; 1 run call, <= 1 merge per group joined",
                        ratio <= 0.05 and run_calls == 1 and merges <= joined))
    finally:
        server.stop()

    # 4. agent-facing commands on the large corpus
    env = dict(os.environ, WIKITRACE_CORPUS=str(corpus), WIKITRACE_TOOLS_NO_RG="1")
    from wikitrace.tools_install import install  # as an agent gets them: installed, with bytecode

    tools = work / "tools"
    install(tools)
    py = sys.executable
    repeat = 5 if args.quick else 7
    t_pass = best_of([py, "-c", "pass"], env, repeat)
    rows.append(Row("python3 -c pass", f"{t_pass * 1000:.1f} ms"))
    mid = f"step-{large // 2:04d}"
    for label, cmd in [("tools/actions", [py, str(tools / "actions"), mid]),
                       ("tools/turn", [py, str(tools / "turn"), mid, "3", "5"])]:
        t = best_of(cmd, env, repeat)
        rows.append(Row(f"{label} start-up / python3 -c pass", f"{t / t_pass:.2f}x ({t * 1000:.0f} ms)",
                        "<= 1.5x", t / t_pass <= 1.5))
    t = best_of([py, str(tools / "grep"), "reservation", "--layer", "insight", "--max", "20"], env, repeat)
    rows.append(Row("tools/grep --layer insight / python3 -c pass", f"{t / t_pass:.2f}x ({t * 1000:.0f} ms)",
                    "<= 3x", t / t_pass <= 3))
    wikitrace = str(Path(py).with_name("wikitrace"))
    t = best_of([wikitrace, "prompt", "--corpus", str(corpus), "--task", "I want to change my flight to a later date"],
                env, repeat)
    rows.append(Row(f"cold `wikitrace prompt` on {large:,} runs / python3 -c pass",
                    f"{t / t_pass:.2f}x ({t * 1000:.0f} ms)", "<= 10x and <= 300 ms",
                    t / t_pass <= 10 and t <= 0.3))
    return rows


def table(rows: list[Row]) -> list[str]:
    lines = ["| what | measured | target | met |", "| --- | --- | --- | --- |"]
    lines += [f"| {r.what} | {r.measured} | {r.target} | {r.verdict} |" for r in rows]
    return lines


def commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(HERE.parent), "log", "-1", "--format=%h %s"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(HERE.parent), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out[:90] + (" (with uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"


def record(lines: list[str], header: str) -> None:
    """Append this run's table under a dated heading (the file keeps every release's figures)."""
    if not RECORD.exists():
        RECORD.write_text("# Performance\n\nFigures appended by `python benchmarks/scale.py --record`, newest last.\n")
    from record import current_commit  # the stamp every measured region in docs/ carries

    try:
        commit = current_commit()
    except (OSError, subprocess.CalledProcessError):
        commit = "0000000"  # not a git checkout: the header line names what is known
    stamp = f"<!-- measured by benchmarks/scale.py: commit {commit}, date {time.strftime('%Y-%m-%d', time.gmtime())} -->"
    with RECORD.open("a", encoding="utf-8") as fh:
        fh.write("\n" + header + "\n\n" + stamp + "\n" + "\n".join(lines) + "\n<!-- end -->\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true",
                    help="about 2 minutes: 600 runs at 200 ms and a large corpus of 2,000 runs")
    ap.add_argument("--overhead", type=int, default=2000, help="runs for the offline and 0 ms figures")
    ap.add_argument("--concurrency-runs", type=int, default=None,
                    help="runs at 200 ms (default 2,000, the size the targets name = 12.5 s of ideal flow; 600 with --quick)")
    ap.add_argument("--large", type=int, default=None, help="runs of the large build (default 10,000; 2,000 with --quick)")
    ap.add_argument("--record", action="store_true", help=f"append the table to {RECORD.relative_to(HERE.parent)}")
    ap.add_argument("--work", type=Path, default=None,
                    help="where the scratch folder goes (default benchmarks/_work); each run builds in a "
                         "fresh folder there, removed after")
    args = ap.parse_args()
    args.concurrency_runs = args.concurrency_runs or (600 if args.quick else 2000)
    args.large = args.large or (2000 if args.quick else 10000)
    if not TAU.exists():
        print(f"note: {TAU} absent, runs are synthesised from a small generated run", file=sys.stderr)

    # Measured as users run it: with bytecode (a shell with PYTHONDONTWRITEBYTECODE=1 would
    # otherwise make every start-up compile wikitrace from source).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    import compileall

    import wikitrace

    compileall.compile_dir(Path(wikitrace.__file__).parent, quiet=1)

    # Not /tmp: on some machines here it creates files 20x slower than the work disk.
    # Always a fresh folder: a corpus left by an earlier run would be updated in place, not
    # built, and every figure would measure that instead (2,000 runs "compiled" in 0.8 s).
    parent = args.work or HERE / "_work"
    parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="scale-", dir=parent))
    load_before = load_average()
    start = time.perf_counter()
    try:
        rows = measure(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    minutes = (time.perf_counter() - start) / 60
    mode = "quick" if args.quick else "full"
    header = (f"### {_dt.datetime.now(_dt.timezone.utc):%Y-%m-%d %H:%M} UTC, {mode}, {os.cpu_count()} cores, "
              f"load {load_before} before / {load_average()} after, {minutes:.1f} min\n\ncommit {commit()}")
    lines = table(rows)
    print("\n" + header + "\n\n" + "\n".join(lines))
    if args.record:
        record(lines, header)
        print(f"\nappended to {RECORD}")


if __name__ == "__main__":
    main()
