"""How much memory the agent is handed, budget by budget, on a real corpus.

Compiles the 200 tau-bench airline runs offline into a temporary folder and, for one
cancellation task, prints per ``--budget``: the estimated tokens, the bytes of what
``wikitrace prompt`` adds (system addition + task message) and of what the MCP ``memory`` tool
returns, how many insights were inlined and left out, and whether the insights of the three
similar runs were kept. ``--record`` writes the table into docs/agent-side.md.

    python benchmarks/prompt_sizes.py [--data ../shared/data] [--record]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import add_record_flag, markdown_table, record  # noqa: E402

from wikitrace.agent.prompt import build_prompt  # noqa: E402
from wikitrace.corpus_access import CorpusAccess  # noqa: E402

TASK = ("You are raj_sanchez_7340. You want to cancel reservation Q69X3R because your plans changed. If the "
        "agent says it cannot be cancelled, ask for a refund to your original payment method.")
BUDGETS = [0, 8000, 4000, 3000, 2000, 1500, 1000]


def measure(corpus: Path) -> list[list[object]]:
    access = CorpusAccess(corpus)
    rows = []
    for budget in BUDGETS:
        parts = build_prompt(corpus, TASK, budget=budget or None, task_type="airline")
        similar = {i["id"] for run in parts.similar_runs for i in run.insights}
        kept = similar & set(parts.insight_ids)
        prompt_kb = len((parts.system + parts.user).encode()) / 1024
        mcp_kb = len(access.memory(TASK, budget).encode()) / 1024
        rows.append([budget or "0 (every insight)", parts.tokens, f"{prompt_kb:.1f} KB", f"{mcp_kb:.1f} KB",
                     len(parts.insight_ids), parts.left_out, f"{len(kept)}/{len(similar)}"])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(os.environ.get("WIKITRACE_DATA") or
                                                          Path(__file__).resolve().parents[2] / "shared" / "data"))
    add_record_flag(parser, "agent-side.md")
    args = parser.parse_args()
    runs = args.data / "runs-dev" / "tau-bench-airline" / "gpt-4o-airline.json"
    if not runs.is_file():
        sys.exit(f"prompt_sizes: no tau-bench runs at {runs}; pass --data")
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus"
        subprocess.run([str(Path(sys.executable).parent / "wikitrace"), "compile", str(runs), "--out", str(corpus), "--offline",
                        "-q"], check=True)
        rows = measure(corpus)
    table = markdown_table(["budget", "tokens", "`prompt` adds", "MCP `memory`", "inlined", "left out",
                            "similar-run insights kept"], rows)
    print(table)
    if args.record:
        record("agent-side.md", "benchmarks/prompt_sizes.py", table)


if __name__ == "__main__":
    main()
