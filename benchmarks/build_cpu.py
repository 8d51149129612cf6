"""Where a large build's CPU goes, process by process: the figure to compare two commits by.

scale.py times the 10,000-run build as a whole. On this shared 2-core machine its wall time
follows the load of the other users, so a slower figure does not say whether the code got
slower, nor where. This script runs the same build (the synthetic runs of
scale.py's large build, the loopback model at 0 ms, 32 in flight) as `wikitrace compile` and
reports the CPU seconds of each of the build's processes (the main process, the run reader
with its offline lessons and prompts, the page writer), read from /proc while they live.
CPU seconds move far less with the load than wall time; run it for two commits one after the
other (or at once: both then share the same load) and compare the columns.

    python benchmarks/build_cpu.py --runs 10000 --work /dev/shm/me/cpu
    PYTHONPATH=/dev/shm/me/base python benchmarks/build_cpu.py --runs 10000 --work /dev/shm/me/cpu-base

``--rebuild`` also rebuilds into a new folder from the model's cached answers, as scale.py does.
Linux only (/proc). Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from record import load_average  # noqa: E402
from scale import Server  # noqa: E402
from synth import write_corpus_input  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
# a process's role, by the module its command line runs (the helpers are `python -P -m <module>`)
ROLES = (("wikitrace.compilers.llm_offline", "reader"), ("wikitrace.compilers.offline_reader", "reader"),
         ("wikitrace.runs.read_helper", "reader"),
         ("wikitrace.corpus.pages", "page writer"), ("wikitrace.entry", "main"))


def _cpu(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime + stime


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _role(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            args = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "other"
    return next((role for module, role in ROLES if module in args), "other")


class CpuByProcess:
    """The last CPU seconds read of every process under ``root`` (the root included), sampled
    four times a second through each process's children list (no scan of all of /proc, so the
    sampler costs next to nothing). A process's last quarter second before it exits is missed."""

    def __init__(self, root: int, every: float = 0.25):
        self.root, self.every = root, every
        self.seen: dict[int, float] = {}
        self.roles: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        todo = [self.root]
        while todo:
            pid = todo.pop()
            cpu = _cpu(pid)
            if cpu is None:
                continue
            self.seen[pid] = max(self.seen.get(pid, 0.0), cpu)
            if pid not in self.roles:
                self.roles[pid] = _role(pid)
            todo += _children(pid)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def stop(self) -> dict[str, float]:
        """CPU seconds by role."""
        self._stop.set()
        self._thread.join()
        out: dict[str, float] = {}
        for pid, cpu in self.seen.items():
            role = self.roles.get(pid, "other")
            out[role] = out.get(role, 0.0) + cpu
        return out


def measure(inputs: Path, out: Path, env: dict, offline: bool = False) -> tuple[float, float, dict[str, float]]:
    """(wall seconds, CPU seconds of the whole command, CPU seconds by role) of one compile."""
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    mode = ["--offline"] if offline else ["--concurrency", "32"]
    proc = subprocess.Popen([sys.executable, "-m", "wikitrace.entry", "compile", str(inputs), "--out", str(out),
                             *mode, "--quiet"], env=env, stdout=subprocess.DEVNULL)
    sampler = CpuByProcess(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    roles = sampler.stop()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"build_cpu.py: the compile into {out} failed")
    # ru_*time of wait4 holds the command and every helper it waited for: the exact total
    return wall, usage.ru_utime + usage.ru_stime, roles


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10000)
    ap.add_argument("--work", type=Path, required=True, help="scratch folder (input, corpus, cache; removed after)")
    ap.add_argument("--rebuild", action="store_true", help="also rebuild into a new folder from the cached answers")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--offline", action="store_true", help="compile offline (no model) instead")
    args = ap.parse_args()
    import wikitrace

    args.work.mkdir(parents=True, exist_ok=True)
    inputs = write_corpus_input(args.work / "runs.jsonl", args.runs, seed=2)  # scale.py's large build
    server = Server(0.0)
    rows = []
    load = load_average()
    try:
        env = dict(os.environ, **server.env(args.work / "cache"))
        rows.append(("offline build" if args.offline else "build",
                     *measure(inputs, args.work / "corpus", env, args.offline)))
        if args.rebuild and not args.offline:
            rows.append(("rebuild from cache", *measure(inputs, args.work / "corpus-2", env)))
    finally:
        server.stop()
        if not args.keep:
            shutil.rmtree(args.work, ignore_errors=True)
    print(f"wikitrace from {Path(wikitrace.__file__).parent}; {args.runs:,} runs; "
          f"load {load} before / {load_average()} after")
    print("| what | wall s | CPU s | main | reader | page writer | other | runs per CPU-s |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for what, wall, cpu, roles in rows:
        print(f"| {what} | {wall:.1f} | {cpu:.1f} | " + " | ".join(f"{roles.get(r, 0.0):.1f}" for r in
                                                                    ("main", "reader", "page writer", "other"))
              + f" | {args.runs / cpu:.0f} |")


if __name__ == "__main__":
    main()
