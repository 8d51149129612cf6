"""``wikitrace eval``'s output: the tables on the terminal, the CSV, the plot.

Apart from ``evaluate`` so that the statistics import nothing that shows them.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

from .eval_records import AVERAGE, EvalResult, Interval
from .evaluate import EvalError, evaluate, parse_trials, read_results
from .plot import plot_gain_regression


def _pct(iv: Interval | None, signed: bool = False) -> str:
    if iv is None or iv.value is None:
        return "-"
    fmt = "{:+.1f}" if signed else "{:.1f}"
    s = fmt.format(100 * iv.value)
    if iv.lo is not None:
        s += f" [{fmt.format(100 * iv.lo)}, {fmt.format(100 * iv.hi)}]"
    return s


def print_result(result: EvalResult, console=None) -> None:
    from rich.console import Console
    from rich.table import Table

    import sys

    console = console or (Console() if sys.stdout.isatty() else Console(width=200))
    cols = result.suites + ([AVERAGE] if len(result.suites) > 1 else [])
    t = Table(title="Score (mean ± std over trials)")
    t.add_column("method")
    for s in cols:
        t.add_column(s, justify="right")
    for m in result.methods:
        cells = []
        for s in cols:
            r = result.score(s, m)
            cells.append(f"{r.mean:.1f} ± {r.std:.1f}" if r else "-")
        t.add_row(m, *cells)
    console.print(t)
    if not result.rates:
        return
    t = Table(title=f"Gain and Regression vs B_i = majority of {result.reference} (%, 95% paired bootstrap, "
                    f"{result.resamples} resamples, seed {result.seed})")
    for c in ("suite", "method", "Gain ↑", "moved/elig.", "Regression ↓", "moved/elig.", "excess Gain", "excess Reg."):
        t.add_column(c, justify="left" if c in ("suite", "method") else "right")
    for s in ([AVERAGE] if len(result.suites) > 1 else []) + result.suites:
        for m in result.methods[1:] + ([result.rerun] if result.rerun else []):
            r = result.rate(s, m)
            if r is None:
                continue
            name = f"{m} (floor)" if m == result.rerun else m
            mv = lambda x, e: "-" if x is None else f"{x:.1f}/{e}"  # noqa: E731
            t.add_row(s, name, _pct(r.gain), mv(r.gain_moved, r.gain_eligible), _pct(r.regression),
                      mv(r.regression_moved, r.regression_eligible), _pct(r.excess_gain, True),
                      _pct(r.excess_regression, True))
    console.print(t)
    for w in result.warnings:
        console.print(f"[yellow]warning:[/yellow] {w}")


CSV_FIELDS = ["suite", "method", "trials", "tasks", "score_mean", "score_std",
              "gain", "gain_lo", "gain_hi", "gain_moved", "gain_eligible",
              "regression", "regression_lo", "regression_hi", "regression_moved", "regression_eligible",
              "excess_gain", "excess_gain_lo", "excess_gain_hi",
              "excess_regression", "excess_regression_lo", "excess_regression_hi"]


def write_csv(result: EvalResult, path: str | Path) -> None:
    def put(row: dict, prefix: str, iv: Interval | None) -> None:
        if iv is not None:
            row[prefix], row[prefix + "_lo"], row[prefix + "_hi"] = iv.value, iv.lo, iv.hi

    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS)
        w.writeheader()
        for s in result.suites + [AVERAGE]:
            for m in result.methods + ([result.rerun] if result.rerun else []):
                sc, rt = result.score(s, m), result.rate(s, m)
                if sc is None and rt is None:
                    continue
                row: dict[str, Any] = {"suite": s, "method": m}
                if sc:
                    row.update(trials=sc.trials, tasks=sc.tasks, score_mean=round(sc.mean, 6), score_std=round(sc.std, 6))
                if rt:
                    put(row, "gain", rt.gain)
                    put(row, "regression", rt.regression)
                    put(row, "excess_gain", rt.excess_gain)
                    put(row, "excess_regression", rt.excess_regression)
                    row.update(gain_moved=rt.gain_moved, gain_eligible=rt.gain_eligible,
                               regression_moved=rt.regression_moved, regression_eligible=rt.regression_eligible)
                w.writerow({k: ("" if v is None else v) for k, v in row.items()})


def eval_command(results: Path, csv_out: Path | None, plot_out: Path | None, seed: int, resamples: int,
                 reference: str, rerun: str, success_threshold: float, as_json: bool) -> int:
    try:
        trials = parse_trials(read_results(results), success_threshold)
    except EvalError as exc:
        raise exc if exc.where is not None else EvalError(exc.what, exc.fix, where=results) from None
    try:
        result = evaluate(trials, reference=reference, rerun=rerun or None, resamples=resamples, seed=seed)
    except EvalError as exc:
        raise EvalError(exc.what, exc.fix, where=results) from None
    if as_json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print_result(result)
    if csv_out:
        write_csv(result, csv_out)
    if plot_out:
        plot_gain_regression(result, plot_out)
    return 0
