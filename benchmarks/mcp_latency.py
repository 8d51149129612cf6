"""Tool-call latency of a running ``wikitrace mcp`` server on a 10,000-run corpus (target: p50 <= 50 ms).

Usage:  python benchmarks/mcp_latency.py [--runs 10000] [--calls 40] [--out DIR] [--keep] [--record]

Agents call the memory tools on every step, so what counts is the round trip of one
``tools/call`` through a server that is already up: the SDK's stdio client talks to
``wikitrace mcp --corpus DIR`` in a subprocess, exactly as Claude Code or Cursor would.
The corpus is synthetic (raw runs and compilations as in tool_startup.py, corpus.json,
insights and prompt index as in prompt_build.py, from the tau-bench instructions when
/work/shared/data is present). Each tool is called --calls times with varied arguments
after one untimed warm-up call; p50, p90 and the ratio of p50 to the target are printed.
Asserts nothing. ``--record`` writes the table into docs/mcp.md.
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from record import add_record_flag, load_average, markdown_table, record  # noqa: E402

TARGET_MS = 50.0


def build(root: Path, runs: int) -> None:
    import prompt_build
    import tool_startup

    from wikitrace.agent import index
    from wikitrace.corpus import corpus_json

    tool_startup.build_corpus(root, runs)
    _, _, data = prompt_build.synthesise(root, runs)  # replaces the insights
    # corpus.json laid out as the build writes it, or the prompt index reads as stale
    text, region = corpus_json.dumps(data)
    (root / "corpus.json").write_text(text, encoding="utf-8")
    index.write_prompt_index(root, data["runs"], data["insights"], region=region)


async def measure(root: Path, runs: int, calls: int) -> list[tuple[str, list[float]]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    exe = shutil.which("wikitrace")
    cmd = [exe] if exe else [sys.executable, "-m", "wikitrace.cli"]
    params = StdioServerParameters(command=cmd[0], args=[*cmd[1:], "mcp", "--corpus", str(root)])
    rng = random.Random(3)
    tasks = ["Cancel reservation R12345 for user mia_li_3668 and refund it to the original card.",
             "Change the flight of reservation ABC123 to the next day, economy class.",
             "Add one checked bag to my booking and pay with the gift card.",
             "Book a round trip from JFK to SFO for two passengers next Friday."]
    cases = {
        "actions": lambda: {"step": f"step-{rng.randrange(runs):04d}"},
        "turn": lambda: {"step": f"step-{rng.randrange(runs):04d}", "start": 3, "end": 5},
        "read": lambda: {"path": f"compilation/step-{rng.randrange(runs):04d}.md"},
        "cite": lambda: {"answer": '{"R": ["step-%04d"], "C": [], "I": ["insight-0001"]}' % rng.randrange(runs)},
        "memory": lambda: {"task": rng.choice(tasks), "budget": 8000},
        "search-c": lambda: {"pattern": f"step-{rng.randrange(runs):04d}\\b", "layers": ["compilation"]},
        "search": lambda: {"pattern": f"user_{rng.randrange(10_000)}\\b", "layers": ["raw"]},
    }
    out = []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for name, args in cases.items():
                tool = name.split("-")[0]
                await session.call_tool(tool, args())  # warm-up: imports, page cache
                times = []
                for _ in range(calls if tool != "search" else max(3, calls // 8)):
                    start = time.perf_counter()
                    result = await session.call_tool(tool, args())
                    times.append((time.perf_counter() - start) * 1000)
                    if result.is_error:
                        raise SystemExit(f"{name} failed: {result.content[0].text}")
                out.append((name, times))
            for name, call in (("resources/list", lambda: session.list_resources()),  # the first page
                               ("resources/read", lambda: session.read_resource(
                                   f"wikitrace://insight/insight-{rng.randrange(runs):04d}"))):
                await call()
                times = []
                for _ in range(calls if name.endswith("read") else max(3, calls // 8)):
                    start = time.perf_counter()
                    await call()
                    times.append((time.perf_counter() - start) * 1000)
                out.append((name, times))
    return out


def main() -> None:
    import anyio

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10_000)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--keep", action="store_true")
    add_record_flag(ap, "mcp.md")
    args = ap.parse_args()
    root = args.out or Path(tempfile.mkdtemp(prefix="wikitrace-mcp-bench-")) / "corpus"
    try:
        if not (root / "corpus.json").exists():
            t0 = time.perf_counter()
            build(root, args.runs)
            print(f"synthetic corpus: {args.runs} runs in {root} ({time.perf_counter() - t0:.1f} s)")
        rows = anyio.run(measure, root, args.runs, args.calls)
        print(f"{'tool':<14} {'calls':>5} {'p50 ms':>8} {'p90 ms':>8} {'p50/target':>10}")
        table = []
        for name, times in rows:
            times.sort()
            p50 = statistics.median(times)
            p90 = times[min(len(times) - 1, int(len(times) * 0.9))]
            print(f"{name:<14} {len(times):>5} {p50:>8.1f} {p90:>8.1f} {p50 / TARGET_MS:>10.2f}")
            table.append([f"`{name}`", len(times), f"{p50:.1f}", f"{p90:.1f}", f"{p50 / TARGET_MS:.2f}"])
        if args.record:
            load = load_average()
            record("mcp.md", "benchmarks/mcp_latency.py",
                   f"Round trip of one call through a running `wikitrace mcp` (stdio) on a synthetic corpus of "
                   f"{args.runs:,} runs; `search` scans a whole layer as the shell `grep` does (search-c: "
                   f"compilation/, search: raw/); target p50 <= {TARGET_MS:.0f} ms; load average {load} at the "
                   f"end:\n\n" + markdown_table(["tool", "calls", "p50 ms", "p90 ms", "p50 / target"], table))
        print(f"target: p50 <= {TARGET_MS:.0f} ms per tool call (search scans a whole layer, as the shell grep does; search-c: compilation/, search: raw/)")
    finally:
        if not args.keep and args.out is None:
            shutil.rmtree(root.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
