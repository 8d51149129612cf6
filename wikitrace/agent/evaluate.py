"""Score, Gain and Regression of memory methods against a No-Memory reference (paper §4.3, App. C).

Input rows (CSV with a header, or JSONL): ``suite, task_id, method, trial`` and ``score``
and/or ``success``; a corpus's usage ledger (``wikitrace cite record``) is such a table. ``success`` wins when given; otherwise a trial succeeds when its
score reaches ``success_threshold`` (default 1.0, full marks on a 0-1 scale).

- **Score**: per suite and method, the mean score over tasks within each trial, then mean
  ± sample standard deviation over trials. The average row averages the suites within
  each trial first. Scores in [0, 1] (or success alone) are shown as percentages.
- **B_i**: 1 when a strict majority of the reference method's trials (``no-memory``)
  solve task i, else 0.
- **Gain**: over tasks with B_i = 0, the share of a method's (task, trial) pairs that
  succeed. **Regression**: over tasks with B_i = 1, the share that fail. "moved" is the
  number of such tasks per trial (Table 6's counts).
- **Floor**: the rerun No-Memory trials (``no-memory-rerun``) scored against the same B_i
  exactly as a method. **Excess** = rate - floor.
- **Intervals**: paired bootstrap. Within each suite, tasks are resampled with
  replacement; a resampled task keeps all its trials of every method (reference and
  rerun included, and its B_i), so every rate, floor and excess is recomputed on the same
  resample. The suite average is taken within each resample; the interval spans its 2.5th
  to 97.5th percentiles. Resamples in which a suite that has eligible tasks draws none
  are dropped for that rate (the share dropped is reported).
"""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from .eval_bootstrap import Bootstrap, count_tables
from .eval_records import AVERAGE, EvalResult, ScoreRow, Trial, natural_order


class EvalError(InputError):
    pass


def _truthy(value: Any) -> bool | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return bool(value)
    s = str(value).strip().lower()
    if s in ("1", "true", "yes", "y", "t", "success", "pass"):
        return True
    if s in ("0", "false", "no", "n", "f", "failure", "fail"):
        return False
    raise EvalError(f"cannot read {value!r} as success (use true/false or 1/0)")


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise EvalError("not UTF-8 text", "save the results table as UTF-8 CSV or JSONL", where=path) from None
    first = text.lstrip()[:1]
    try:
        if first == "[":
            rows = json.loads(text)
        elif first == "{":
            rows = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise EvalError(f"not a JSON object ({exc.msg})", "one JSON object per line",
                                        where=path, line=n) from None
        else:
            rows = list(csv.DictReader(text.splitlines()))
    except json.JSONDecodeError as exc:
        raise EvalError(f"not valid JSON ({exc.msg})", "fix the JSON or give a CSV with a header",
                        where=path, line=exc.lineno) from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise EvalError("expected rows of suite, task_id, method, trial, score|success",
                        "give a CSV with a header, a JSON list of objects or JSONL", where=path)
    return rows


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """``read_rows``, or a usage ledger (a corpus folder, or its ``usage/ledger.jsonl``) read
    as a results table: one row per episode, the last line of an episode winning."""
    path = Path(path)
    if path.is_dir():
        from ..corpus.ledger import LEDGER

        if not (path / LEDGER).is_file():
            raise EvalError(f"no {LEDGER} in this folder", "record episodes with `wikitrace cite record`, or give "
                            "a CSV or JSONL results table", where=path)
        path = path / LEDGER
    rows = read_rows(path)
    if rows and all("episode" in r and "I" in r for r in rows):  # ledger lines
        rows = list({str(r["episode"]): r for r in rows}.values())
    return rows


def method_key(name: str) -> str:
    """A method name as compared: case, spaces, dashes and underscores ignored, so the
    paper's "No Memory" is the CLI's ``no-memory``."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _find_method(name: str | None, methods: list[str]) -> str | None:
    if name is None:
        return None
    if name in methods:
        return name
    matches = [m for m in methods if method_key(m) == method_key(name)]
    return matches[0] if len(matches) == 1 else None


def parse_trials(rows: Iterable[dict[str, Any]], success_threshold: float = 1.0) -> list[Trial]:
    out = []
    for n, row in enumerate(rows, start=1):
        row = {str(k).strip().lower(): v for k, v in row.items()}
        missing = [k for k in ("suite", "task_id", "method", "trial") if row.get(k) in (None, "")]
        if missing:
            raise EvalError(f"row {n}: missing {', '.join(missing)}")
        score = row.get("score")
        try:
            score = None if score in (None, "") else float(score)
        except (TypeError, ValueError):
            raise EvalError(f"row {n}: score {score!r} is not a number", "write the score as a number") from None
        success = _truthy(row.get("success"))
        if success is None:
            if score is None:
                raise EvalError(f"row {n}: give a score or a success value")
            success = score >= success_threshold
        out.append(Trial(str(row["suite"]), str(row["task_id"]), str(row["method"]), str(row["trial"]), score, success))
    return out


def _mean_std(values: list[float]) -> tuple[float, float]:
    m = sum(values) / len(values)
    if len(values) < 2:
        return m, 0.0
    return m, math.sqrt(sum((v - m) ** 2 for v in values) / (len(values) - 1))


def _scores(trials: list[Trial], suites: list[str], methods: list[str]) -> list[ScoreRow]:
    scale = 100.0 if all(t.score is None or 0.0 <= t.score <= 1.0 for t in trials) else 1.0
    per: dict[tuple[str, str, str], list[float]] = {}
    tasks: dict[tuple[str, str], set[str]] = {}
    for t in trials:
        value = (t.score if t.score is not None else float(t.success)) * scale
        per.setdefault((t.suite, t.method, t.trial), []).append(value)
        tasks.setdefault((t.suite, t.method), set()).add(t.task_id)
    rows = []
    for method in methods:
        suite_means: dict[str, dict[str, float]] = {}
        for suite in suites:
            means = {tr: sum(v) / len(v) for (s, m, tr), v in per.items() if s == suite and m == method}
            if not means:
                continue
            suite_means[suite] = means
            mean, std = _mean_std([means[k] for k in sorted(means, key=natural_order)])
            rows.append(ScoreRow(suite, method, mean, std, len(means), len(tasks[(suite, method)])))
        if not suite_means:
            continue
        common = set.intersection(*(set(v) for v in suite_means.values()))
        full = [sum(sm[tr] for sm in suite_means.values()) / len(suite_means) for tr in sorted(common, key=natural_order)]
        if full:
            mean, std = _mean_std(full)
            rows.append(ScoreRow(AVERAGE, method, mean, std, len(full), sum(len(tasks[(s, method)]) for s in suite_means)))
    return rows


def evaluate(
    trials: list[Trial],
    reference: str = "no-memory",
    rerun: str | None = "no-memory-rerun",
    resamples: int = 10_000,
    seed: int | None = 0,
) -> EvalResult:
    """Scores, Gain / Regression with paired-bootstrap 95% intervals, floor and excess."""
    if not trials:
        raise EvalError("no rows to evaluate")
    suites = sorted({t.suite for t in trials})
    all_methods = sorted({t.method for t in trials})
    found = _find_method(reference, all_methods)
    if found is None:
        raise EvalError(f"no trials of the reference method {reference!r}; methods are {', '.join(all_methods)}",
                        "name the no-memory baseline with --reference")
    reference, rerun = found, _find_method(rerun, all_methods)
    methods = [reference] + [m for m in all_methods if m not in (reference, rerun)]
    scored = [m for m in methods if m != reference]
    result = EvalResult(suites=suites, methods=methods, reference=reference, rerun=rerun,
                        resamples=resamples, seed=seed)
    result.scores = _scores([t for t in trials if t.method != rerun], suites, methods)
    rated = scored + ([rerun] if rerun else [])
    if not rated:
        return result
    tables = count_tables(trials, suites, reference, rated, result.warnings)
    boot = Bootstrap.of(tables, suites, rated, rerun, resamples, seed)
    for m in rated:
        for suite in suites:
            result.rates.append(boot.suite_row(suite, m, tables[suite]))
        result.rates.append(boot.average_row(m, result))
    return result
