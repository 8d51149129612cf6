"""``wikitrace descents --judge``: the labelled descents, and the label shares as the
paper's Figures 8-9 report them (share of descents per trigger, target and effect)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .descent_judge import judge_file, judge_json


def judge_command(path: Path, mount_path: str, tools_path: str, as_json: bool, judges: int, offline: bool,
                  model: str | None, base_url: str | None, cache_dir: Path | None) -> int:
    """CLI body of ``descents --judge``: one line for settings that cannot work."""
    import sys

    from .descent_judge import make_judge

    try:
        judge = make_judge(model, base_url, offline, cache_dir, judges)
    except ValueError as exc:  # an LLM setting that cannot work
        sys.stderr.write(f"wikitrace: error: descents: {exc}\n")
        return 2
    return print_judged(path, judge, mount_path, tools_path, as_json)


def print_judged(path: Path, judge: Any, mount_path: str, tools_path: str, as_json: bool) -> int:
    import sys

    try:
        judged = judge_file(path, judge, mount_path, tools_path)
    except (OSError, ValueError) as exc:  # unreadable file, JSON or run format
        what = str(getattr(exc, "strerror", None) or exc)
        what = what if str(path) in what else f"{path}: {what}"
        sys.stderr.write(f"wikitrace: error: descents: {what} — give a turn log, chat messages or a file of runs\n")
        return 2
    data = judge_json(judged, judge)
    if as_json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"Descents in {path.name} (judge: {data['judge']})")
    for col in ("run", "burst", "turns", "opened", "trigger", "target", "effect"):
        table.add_column(col)
    for report, bursts in judged:
        for b in bursts:
            cells = []
            for axis in ("trigger", "target", "effect"):
                lab = b.labels[axis]
                text = lab.code or "no majority"
                if lab.votes and len(lab.votes) > 1:
                    text += f" ({', '.join(c or '?' for c in lab.votes)})"
                if lab.judge == "offline" and judge.client is not None:
                    text += " [offline]"
                cells.append(text)
            table.add_row(report.name, str(b.number), f"{b.start_turn}-{b.descent.last_turn}",
                          ", ".join(b.opened), *cells)
    console.print(table)
    dist = data["distributions"]
    for axis in ("trigger", "target", "effect"):
        t = Table(title=f"{axis} (share of {dist['bursts']} descents that opened a run)")
        t.add_column(axis)
        t.add_column("descents", justify="right")
        t.add_column("share", justify="right")
        for row in dist[axis]:
            t.add_row(row["code"], str(row["count"]), f"{100 * row['share']:.1f}%")
        console.print(t)
    n = sum(r.label == "Descent" for r, _ in judged)
    console.print(f"{n} Descent, {len(judged) - n} Stay; the opened run changed the plan in "
                  f"{dist['changed_plan']} of {dist['bursts']} descents")
    if data.get("judge_reason"):
        console.print(f"judge: offline ({data['judge_reason']}): rule-based labels, see docs/agent-side.md")
    elif data.get("offline_labels"):
        console.print(f"{data['offline_labels']} labels fell back to the offline rules (reasons in --json)")
    return 0
