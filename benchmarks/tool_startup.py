"""Start-up cost of the agent-side tools (tools/actions, tools/turn, tools/grep).

Builds a synthetic corpus of ``--runs`` runs (about 20 turns each) in a temporary
folder, then times each command as a subprocess (wall time, best of ``--repeat``)
next to a bare ``python -c pass`` with the same interpreter, and prints a table
with the ratio to that baseline (targets: <= 1.5x for actions and turn, <= 3x for
grep without ripgrep on a 10,000-run corpus). No assertions: this reports, it does
not gate.

grep is timed on the sharded search files and trigram tables ``wikitrace compile``
writes (index/grep/, wikitrace.corpus.search_files) and, for comparison, on a copy of
the corpus without them (the per-file scan an older corpus gets). A rare or absent
word is the hard case: only the trigram tables keep it from reading every byte.

Two copies of the tools are timed: "installed" (``wikitrace.tools_install.install``,
which byte-compiles the shared modules, as an agent sees them) and "source only"
(the files alone with PYTHONDONTWRITEBYTECODE=1, i.e. a read-only folder whose
modules Python must compile on every call).

    python benchmarks/tool_startup.py [--runs 10000] [--repeat 15] [--python PATH] [--record]
    python benchmarks/tool_startup.py --against OLD_TOOLS_DIR [--runs 2000] [--repeat 40]

``--against DIR`` compares two copies of the tools instead (DIR, e.g. a checkout's
tools/ before a change, and ``--tools``): every command of both, interleaved round by
round, with the CPU time each call used (user + system, from ``wait4``) beside its wall
time. CPU time barely moves when other jobs load the machine, where wall time can
double; so this is the measure for "did start-up get slower", and it checks that both
copies print the same bytes.

``--record`` writes the table into docs/tools.md (either mode, each into its own region).

``--update-runs N`` measures instead what keeping the search files costs a build:
``wikitrace compile --offline`` of N synthetic runs (benchmarks/synth.py, from the
real tau-bench runs when present), then of the same plus one run published in place,
with the time spent writing index/grep/ in each (run it with PYTHONPATH pointing at
another checkout to compare versions).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, load_average, markdown_table, record  # noqa: E402

TOOLS = Path(__file__).resolve().parent.parent / "tools"
TOOL_NAMES = ("actions", "turn", "grep")

_WORDS = ("flight reservation cabin economy business baggage refund cancel user "
          "payment certificate gift card membership gold silver upgrade seat "
          "origin destination date passenger insurance status delayed").split()


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def build_corpus(root: Path, runs: int, turns: int = 20, seed: int = 7) -> None:
    rng = random.Random(seed)
    raw, comp, ins = root / "raw", root / "compilation", root / "insight"
    for folder in (raw, comp, ins):
        folder.mkdir(parents=True)
    index = ["# Runs", ""]
    insight_id = 0
    for n in range(runs):
        step = f"step-{n:04d}"
        outcome = "success" if rng.random() < 0.4 else "failure"
        records = [{"turn": 0, "type": "message", "role": "user",
                    "content": "Please help: " + _text(rng, 30)}]
        for t in range(1, turns - 1):
            if t % 4 == 0:
                records.append({"turn": t, "type": "message", "role": "assistant",
                                "content": _text(rng, 25)})
                continue
            error = rng.random() < 0.15
            records.append({
                "turn": t, "type": "function_call",
                "name": rng.choice(("get_user_details", "get_reservation_details",
                                    "search_direct_flight", "cancel_reservation",
                                    "update_reservation_flights")),
                "arguments": {"user_id": f"user_{rng.randrange(10_000)}",
                              "reservation_id": f"R{rng.randrange(10**6):06d}"},
                "reasoning": _text(rng, 40),
                "result": ("Error: " if error else "") + json.dumps(
                    {"detail": _text(rng, rng.randrange(20, 150))}),
                "is_error": error,
                "tool_call_id": f"call_{n}_{t}",
            })
        records.append({"turn": turns - 1, "type": "episode_over", "ended_by": "agent"})
        run_dir = raw / step
        run_dir.mkdir()
        (run_dir / "solver.full.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in records), "utf-8")
        (run_dir / "metadata.md").write_text(
            f"---\ntype: raw-run\nstep_id: {step}\noutcome: {outcome}\n---\n{_text(rng, 20)}\n")
        (comp / f"{step}.md").write_text(
            f"---\ntype: trajectory-compilation\nstep_id: {step}\n---\n# [{outcome}] "
            f"{_text(rng, 8)}\n\n{_text(rng, 200)}\n")
        for _ in range(rng.randrange(0, 3)):
            (ins / f"insight-{insight_id:04d}.md").write_text(
                f"---\ntype: insight\nsource_step: {step}\n---\n## Insight\n{_text(rng, 40)}\n")
            insight_id += 1
        index.append(f"- [{step}]({step}/metadata.md) {outcome}")
    (raw / "_index.md").write_text("\n".join(index) + "\n")
    (comp / "_index.md").write_text("# Compilations\n")
    (ins / "_index.md").write_text("# Insights\n")


def best_times(cases: list[tuple[list[str], dict[str, str]]], repeat: int) -> list[tuple[float, int]]:
    """Best wall time and exit code of each command. Rounds are interleaved, so a burst
    of load on the machine hits every command alike instead of skewing one ratio."""
    for cmd, env in cases:  # warm the page cache
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    best = [(float("inf"), 0)] * len(cases)
    for _ in range(repeat):
        for i, (cmd, env) in enumerate(cases):
            start = time.perf_counter()
            proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
            elapsed = time.perf_counter() - start
            if elapsed < best[i][0]:
                best[i] = (elapsed, proc.returncode)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--python", default=sys.executable,
                        help="interpreter to time (default: the one running this script)")
    parser.add_argument("--tools", type=Path, default=TOOLS,
                        help="the tools to copy and time (default: the repo's tools/)")
    parser.add_argument("--against", type=Path, default=None,
                        help="another copy of the tools to compare with, call by call (see above)")
    parser.add_argument("--update-runs", type=int, default=0,
                        help="time a build of N runs and one added run instead (see above)")
    add_record_flag(parser, "tools.md")
    args = parser.parse_args()
    if args.update_runs:
        rows = measure_update(args.update_runs)
        if args.record:
            record("tools.md", "benchmarks/tool_startup.py --update-runs",
                   markdown_table([f"{args.update_runs:,} runs, offline", "whole build", "writing `index/grep/`",
                                   "`index/grep/` on disk"], rows))
        return

    with tempfile.TemporaryDirectory(prefix="wikitrace-bench-") as tmp:
        corpus = Path(tmp) / "corpus"
        started = time.perf_counter()
        build_corpus(corpus, args.runs, args.turns)
        built = time.perf_counter() - started
        scan_env = dict(os.environ, WIKITRACE_CORPUS=str(corpus), WIKITRACE_TOOLS_NO_RG="1")
        indexed = Path(tmp) / "indexed"
        _with_search_files(corpus, indexed)
        env = dict(os.environ, WIKITRACE_CORPUS=str(indexed), WIKITRACE_TOOLS_NO_RG="1")
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        bare_env = dict(env, PYTHONDONTWRITEBYTECODE="1")
        installed, bare = Path(tmp) / "installed", Path(tmp) / "bare"
        _install(args.tools, installed)
        bare.mkdir()
        for source in args.tools.iterdir():
            if source.is_file() and source.suffix != ".pyc":
                shutil.copy2(source, bare / source.name)

        mid = f"step-{args.runs // 2:04d}"
        unknown = f"step-{args.runs + 50:04d}"
        if args.against:
            compare(args, Path(tmp), env, bare_env, mid)
            return

        def tool(folder: Path, name: str, *rest: str) -> list[str]:
            return [args.python, str(folder / name), *rest]

        cases = [  # label, command, environment, timed against the 1.5x target
            ("python -c pass", [args.python, "-c", "pass"], env, False),
            (f"actions {mid}", tool(installed, "actions", mid), env, True),
            (f"actions {mid} --json", tool(installed, "actions", mid, "--json"), env, False),
            (f"turn {mid} 3 5", tool(installed, "turn", mid, "3", "5"), env, True),
            ("actions <unknown step> (exit 2)", tool(installed, "actions", unknown), env, False),
            (f"source only: actions {mid}", tool(bare, "actions", mid), bare_env, True),
            (f"source only: turn {mid} 3 5", tool(bare, "turn", mid, "3", "5"), bare_env, True),
            ("grep, search files, all layers", tool(installed, "grep", "insurance upgrade",
                                                    "--max", "50"), env, "3x"),
            ("grep, search files, --layer insight", tool(installed, "grep", "insurance upgrade",
                                                         "--layer", "insight"), env, "3x"),
            ("grep, search files, rare word", tool(installed, "grep", "R000042"), env, "3x"),
            ("grep, search files, rare word -i", tool(installed, "grep", "r000042", "-i"), env, "3x"),
            ("grep, search files, absent word", tool(installed, "grep", "wheelchair"), env, "3x"),
            ("grep, search files, rare id in raw", tool(installed, "grep", f"call_{args.runs // 3}_7",
                                                        "--layer", "raw"), env, "3x"),
            ("grep, per-file scan, all layers", tool(installed, "grep", "insurance upgrade",
                                                     "--max", "50"), scan_env, False),
            ("grep, per-file scan, rare word", tool(installed, "grep", "R000042"), scan_env, False),
        ]
        print(f"corpus: {args.runs} runs x {args.turns} turns, built in {built:.1f}s; "
              f"python: {args.python}; best of {args.repeat}")
        print(f"{'command':<36} {'best ms':>8} {'x pass':>7}  {'exit':>4}  target")
        timings = best_times([(cmd, case_env) for _, cmd, case_env, _ in cases], args.repeat)
        baseline = timings[0][0]
        rows = []
        for (label, _, _, targeted), (seconds, code) in zip(cases, timings):
            ratio = seconds / baseline
            target = f"<= {targeted}" if isinstance(targeted, str) else ("<= 1.5x" if targeted else "")
            print(f"{label:<36} {seconds * 1000:>8.1f} {ratio:>6.2f}x  {code:>4}  {target}")
            rows.append([f"`{label}`", f"{seconds * 1000:.0f}", f"{ratio:.2f}", code, target])
    if args.record:
        load = load_average()
        record("tools.md", "benchmarks/tool_startup.py",
               f"{args.runs:,} runs of {args.turns} turns, no ripgrep, best wall time of {args.repeat}; "
               f"load average {load} at the end:\n\n"
               + markdown_table(["command", "best ms", "x `python -c pass`", "exit", "target"], rows))


def compare(args, tmp: Path, env: dict, bare_env: dict, mid: str) -> None:
    """CPU and wall time of each call with the tools in ``args.against`` and in ``args.tools``."""
    import statistics

    copies = {}
    for label, source in (("against", args.against), ("tools", args.tools)):
        installed, bare = tmp / f"{label}-installed", tmp / f"{label}-bare"
        _install(source, installed)
        bare.mkdir()
        for path in source.iterdir():
            if path.is_file() and path.suffix != ".pyc":
                shutil.copy2(path, bare / path.name)
        copies[label] = (installed, bare)
    calls = [("actions", [mid]), ("turn", [mid, "3", "5"]), ("grep", ["insurance upgrade", "--max", "50"]),
             ("grep", ["R000042"])]
    cases = [("python -c pass", lambda folder: [args.python, "-c", "pass"], False)]
    for bare in (False, True):
        for name, rest in calls:
            label = ("source only: " if bare else "") + " ".join([name, *rest])
            cases.append((label, lambda folder, name=name, rest=rest: [args.python, str(folder / name), *rest], bare))
    cpu = {(label, c): [] for label, _, _ in cases for c in copies}
    wall = {(label, c): [] for label, _, _ in cases for c in copies}
    printed = {}
    for _ in range(args.repeat):
        for label, command, bare in cases:
            for copy, (installed, bare_dir) in copies.items():
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                proc = subprocess.Popen(command(bare_dir if bare else installed), env=bare_env if bare else env,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                out, err = proc.communicate()
                wall[(label, copy)].append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)  # only this call's child ended since
                cpu[(label, copy)].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
                printed.setdefault((label, copy), (proc.returncode, out, err))
    heading = (f"{args.runs:,} runs of {args.turns} turns, no ripgrep; CPU ms per call, median of {args.repeat} "
               f"interleaved rounds (wall best ms); load average {os.getloadavg()[0]:.1f}")
    print(heading + f"; {args.against} vs {args.tools}")
    print(f"{'command':<44} {'against':>16} {'tools':>16} {'ratio':>6}  same output")
    rows = []
    for label, _, _ in cases:
        medians = []
        for copy in copies:
            medians.append((statistics.median(cpu[(label, copy)]) * 1000, min(wall[(label, copy)]) * 1000))
        same = printed[(label, "against")] == printed[(label, "tools")]
        ratio = medians[1][0] / medians[0][0]
        print(f"{label:<44} {medians[0][0]:>7.2f} ({medians[0][1]:>5.1f}) {medians[1][0]:>7.2f} ({medians[1][1]:>5.1f}) "
              f"{ratio:>6.3f}  {same}")
        rows.append([f"`{label}`", f"{medians[0][0]:.2f} ({medians[0][1]:.1f})",
                     f"{medians[1][0]:.2f} ({medians[1][1]:.1f})", f"{ratio:.3f}", "yes" if same else "NO"])
    if args.record:
        record("tools.md", "benchmarks/tool_startup.py --against",
               heading + ":\n\n" + markdown_table(["command", "against: CPU (wall)", "tools: CPU (wall)",
                                                     "ratio of CPU", "same output"], rows))


def measure_update(runs: int) -> list[list[str]]:
    """A build of ``runs`` runs, then one more run in place: wall time and search-file time."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import wikitrace
    from synth import write_corpus_input
    from wikitrace.build import BuildOptions, build
    from wikitrace.corpus import search_files

    spent = []
    for name in ("update_search_files", "write_search_files_to"):  # the one this version calls
        original = getattr(search_files, name, None)
        if original is not None:
            def timed(*a, _original=original, **kw):
                started = time.perf_counter()
                try:
                    return _original(*a, **kw)
                finally:
                    spent.append(time.perf_counter() - started)
            setattr(search_files, name, timed)
            break
    rows = []
    with tempfile.TemporaryDirectory(prefix="wikitrace-bench-") as tmp:
        out = Path(tmp) / "corpus"
        print(f"wikitrace from {Path(wikitrace.__file__).parent}; {runs} runs, then 1 more, offline")
        for label, count in ((f"build of {runs} runs", runs), ("one run added, in place", runs + 1)):
            source = write_corpus_input(Path(tmp) / f"runs-{count}.jsonl", count)
            spent.clear()
            started = time.perf_counter()
            build(BuildOptions(inputs=[source], out=out, offline=True, quiet=True))
            total = time.perf_counter() - started
            size = sum(p.stat().st_size for p in (out / "index/grep").rglob("*") if p.is_file())
            print(f"{label:<28} {total:7.2f} s   index/grep/ written in {sum(spent):6.3f} s"
                  f"   ({size / 1e6:.1f} MB on disk)")
            rows.append([label, f"{total:.2f} s", f"{sum(spent):.2f} s", f"{size / 1e6:.1f} MB"])
    return rows


def _with_search_files(corpus: Path, dest: Path) -> None:
    """A hard-linked copy of ``corpus`` plus the search files a compile writes."""
    from wikitrace.corpus.search_files import write_search_files

    shutil.copytree(corpus, dest, copy_function=os.link)
    write_search_files(dest)


def _install(source: Path, dest: Path) -> None:
    """Install as users do; without wikitrace importable, copy and byte-compile by hand."""
    try:
        from wikitrace.tools_install import install
    except ImportError:
        install = None
    if install is not None and source.resolve() == TOOLS:
        install(dest)
        return
    import py_compile

    dest.mkdir()
    for path in source.iterdir():
        if path.is_file() and path.suffix != ".pyc":
            shutil.copy2(path, dest / path.name)
            if path.suffix == ".py":
                py_compile.compile(str(dest / path.name))

if __name__ == "__main__":
    main()
