"""``wikitrace eval RESULTS --labels LABELS``: the memory method's score lead over the
control by descent trigger, target and effect, with each label's share of descents
(the paper's Figures 8-9).

LABELS is what ``wikitrace descents TRANSCRIPTS --judge --json`` wrote. A labelled run
is joined to the results table by its name: ``task-<task_id>-trial-<trial>`` (the name
``descents`` gives runs of a tau-bench-style file), ``task-<task_id>``, or a ``run``
column equal to the name. For every labelled descent the lead is the method's score
minus the control's on the same (suite, task, trial), in points (x100 for 0-1 scores;
success counts as 1/0 where no score is given); a label's lead is the mean over its
descents, so a run with two descents of one label counts twice, as descents do in the
paper. Two groups follow each axis, as the paper reads them: descents after a problem
(setback, insight doubt, failed precedent) against descents with nothing gone wrong,
and opened runs that changed the plan (revise, refine, new fact) against the rest.

Where the results hold the reference method (``no-memory``), each label also gets the
method's Gain and Regression over its descents, with B_i as ``eval`` computes it: the
share of descents on tasks the reference mostly failed (B_i = 0) whose run succeeded, and
the share on tasks it mostly solved (B_i = 1) whose run failed.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .descent_rules import AXES
from .evaluate import EvalError, Trial, parse_trials, read_rows

GROUPS = {
    "trigger": ("after a problem", ("setback", "insight doubt", "failed precedent")),
    "effect": ("changed the plan", ("revise insight", "refine insight", "new fact")),
}
_NAME = re.compile(r"^task-(.+?)(?:-trial-(.+))?$")


@dataclass
class LabelRow:
    axis: str
    code: str
    descents: int
    share: float            # of all labelled descents
    joined: int             # descents with both methods' scores
    lead: float | None      # mean (method - control), in points
    gain: float | None = None        # method success over descents whose task B_i = 0
    regression: float | None = None  # method failure over descents whose task B_i = 1


def _score(t: Trial) -> float:
    return t.score if t.score is not None else float(t.success)


def breakdown(trials: list[Trial], labels: dict[str, Any], method: str = "wikitrace",
              control: str = "insights-only", run_column: dict[str, tuple[str, str, str]] | None = None,
              reference: str = "no-memory") -> dict:
    from .evaluate import _find_method

    # As `eval` does: case, spaces and dashes ignored ("Insights Only" is insights-only).
    names = sorted({t.method for t in trials})
    method, control, reference = (_find_method(n, names) or n for n in (method, control, reference))
    scores = {(t.suite, t.task_id, t.method, t.trial): _score(t) for t in trials}
    success = {(t.suite, t.task_id, t.method, t.trial): t.success for t in trials}
    ref: dict[tuple[str, str], list[bool]] = {}
    for t in trials:
        if t.method == reference:
            ref.setdefault((t.suite, t.task_id), []).append(t.success)
    solved = {k: sum(v) * 2 > len(v) for k, v in ref.items()}  # B_i, as eval computes it
    scale = 100.0 if all(0.0 <= v <= 1.0 for v in scores.values()) else 1.0
    by_task: dict[tuple[str, str | None], list[tuple[str, str]]] = {}
    for t in trials:
        if t.method == method:
            by_task.setdefault((t.task_id, t.trial), []).append((t.suite, t.trial))
            by_task.setdefault((t.task_id, None), []).append((t.suite, t.trial))
    if not any(t.method == method for t in trials):
        raise EvalError(f"no rows for method {method!r}; name the memory method with --method")
    if not any(t.method == control for t in trials):
        raise EvalError(f"no rows for method {control!r}; name the control with --control")

    items: list[tuple[dict[str, str | None], float | None, tuple[bool, bool] | None]] = []
    unmatched: list[str] = []
    for run in labels.get("runs", []):
        name = str(run.get("name"))
        if run_column and name in run_column:
            suite, task, trial = run_column[name]
            places = [(suite, trial)]
        else:
            m = _NAME.match(name)
            task, trial = (m.group(1), m.group(2)) if m else (name, None)
            places = by_task.get((task, trial), [])
        suites = sorted({s for s, _ in places})
        if len(suites) > 1:
            raise EvalError(f"labelled run {name} matches task {task} in suites {', '.join(suites)}; "
                            "give the results of one suite")
        for d in run.get("descents", []):
            lab = d.get("labels")
            if not lab:
                continue
            codes = {axis: (lab.get(axis) or {}).get("code") for axis in AXES}
            lead = moved = None
            if len(places) == 1:
                suite, trial = places[0]
                a, b = scores.get((suite, task, method, trial)), scores.get((suite, task, control, trial))
                if a is not None and b is not None:
                    lead = scale * (a - b)
                if (suite, task) in solved and (suite, task, method, trial) in success:
                    moved = (solved[(suite, task)], success[(suite, task, method, trial)])
            if lead is None:
                unmatched.append(name)
            items.append((codes, lead, moved))

    total = len(items)
    rows: list[LabelRow] = []
    for axis, codes in AXES.items():
        groups = [(c, lambda x, c=c: x == c) for c in codes]
        if axis in GROUPS:
            title, members = GROUPS[axis]
            other = "nothing gone wrong" if axis == "trigger" else "confirmed or unused"
            groups += [(title, lambda x, m=members: x in m), (other, lambda x, m=members: x is not None and x not in m)]
        for code, test in groups:
            chosen = [(lead, moved) for codes_, lead, moved in items if test(codes_[axis])]
            joined = [v for v, _ in chosen if v is not None]
            gains = [m[1] for _, m in chosen if m is not None and not m[0]]   # (B_i, method success)
            regs = [not m[1] for _, m in chosen if m is not None and m[0]]
            rows.append(LabelRow(axis, code, len(chosen), round(len(chosen) / total, 4) if total else 0.0,
                                 len(joined), round(sum(joined) / len(joined), 2) if joined else None,
                                 round(sum(gains) / len(gains), 4) if gains else None,
                                 round(sum(regs) / len(regs), 4) if regs else None))
    return {"method": method, "control": control, "descents": total, "unmatched_runs": sorted(set(unmatched)),
            "judge": labels.get("judge"), "rows": [asdict(r) for r in rows]}


def plot_breakdown(data: dict, out: str | Path) -> Path:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the install
        from ..errors import UsageError

        raise UsageError("the plot needs matplotlib", "pip install matplotlib (the plot extra)", where="--plot") from None
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, axis in zip(axes, AXES):
        rows = [r for r in data["rows"] if r["axis"] == axis and r["code"] in AXES[axis]]
        ys = list(range(len(rows)))[::-1]
        vals = [r["lead"] or 0.0 for r in rows]
        ax.barh(ys, vals, color=["#4C72B0" if v >= 0 else "#C44E52" for v in vals], alpha=0.85)
        ax.set_yticks(ys)
        ax.set_yticklabels([f"{r['code']}\n{100 * r['share']:.0f}% of descents (n={r['descents']})" for r in rows],
                           fontsize=7)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_title(f"{axis}: lead over {data['control']} (points)", fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(f"{data['method']} vs {data['control']} by descent label; share of {data['descents']} descents under each label",
                 fontsize=10)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return out


def by_label_command(results: Path, labels_path: Path, method: str, control: str, success_threshold: float,
                     as_json: bool, plot_out: Path | None, reference: str = "no-memory") -> int:
    from .evaluate import method_key

    raw_rows = read_rows(results)
    try:
        trials = parse_trials(raw_rows, success_threshold)
    except EvalError as exc:  # "row N: ...": of the results table
        raise EvalError(exc.what, exc.fix, where=results) from None
    run_column = {str(r["run"]): (str(r["suite"]), str(r["task_id"]), str(r["trial"]))
                  for r in raw_rows if r.get("run") and method_key(str(r.get("method"))) == method_key(method)}
    wrote = "give the file `wikitrace descents --judge --json` wrote"
    try:
        labels = json.loads(Path(labels_path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise EvalError(f"not valid JSON ({exc.msg})", wrote, where=labels_path, line=exc.lineno) from None
    except UnicodeDecodeError:
        raise EvalError("not UTF-8 text", wrote, where=labels_path) from None
    if not isinstance(labels, dict) or "runs" not in labels:
        raise EvalError("not the output of `wikitrace descents --judge --json`", wrote, where=labels_path)
    data = breakdown(trials, labels, method, control, run_column, reference)
    if as_json:
        print(json.dumps(data, indent=2))
    else:
        from rich.console import Console
        from rich.table import Table

        console = Console()
        for axis in AXES:
            t = Table(title=f"{method} lead over {control} by {axis} (judge: {data['judge']})")
            for col in (axis, "descents", "share", "lead (points)", "gain", "regression"):
                t.add_column(col, justify="left" if col == axis else "right")
            for r in data["rows"]:
                if r["axis"] == axis:
                    lead = "-" if r["lead"] is None else f"{r['lead']:+.1f}"
                    rates = ["-" if r[k] is None else f"{100 * r[k]:.1f}%" for k in ("gain", "regression")]
                    t.add_row(r["code"], str(r["descents"]), f"{100 * r['share']:.1f}%", lead, *rates)
            console.print(t)
        if data["unmatched_runs"]:
            console.print(f"{len(data['unmatched_runs'])} labelled runs have no paired {method}/{control} scores: "
                          + ", ".join(data["unmatched_runs"][:5]))
    if plot_out:
        plot_breakdown(data, plot_out)
    return 0
