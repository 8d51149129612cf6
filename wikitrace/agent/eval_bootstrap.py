"""Gain and Regression by paired bootstrap: tasks resampled within each suite, every method's
rate (and the rerun's floor) recomputed on the same resample, so intervals of differences hold."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .eval_records import AVERAGE, EvalResult, Interval, RateRow, Trial, natural_order


@dataclass
class _Counts:
    """One suite's tallies: per rated method, arrays over the suite's tasks (rows: gain
    successes, gain trials, regression failures, regression trials), and how many tasks
    are eligible for Gain (B_i = 0) and for Regression (B_i = 1)."""

    by_method: dict[str, Any]
    gain_eligible: int
    regression_eligible: int


def count_tables(trials: list[Trial], suites: list[str], reference: str, rated: list[str],
                  warnings: list[str]) -> dict[str, _Counts]:
    import numpy as np

    tables: dict[str, _Counts] = {}
    for suite in suites:
        rows = [t for t in trials if t.suite == suite]
        ref: dict[str, list[bool]] = {}
        for t in rows:
            if t.method == reference:
                ref.setdefault(t.task_id, []).append(t.success)
        skipped = sorted({t.task_id for t in rows} - set(ref), key=natural_order)
        if skipped:
            warnings.append(f"{suite}: {len(skipped)} task(s) without {reference} trials left out of Gain/Regression")
        task_ids = sorted(ref, key=natural_order)
        pos = {tid: i for i, tid in enumerate(task_ids)}
        b = np.array([sum(ref[tid]) * 2 > len(ref[tid]) for tid in task_ids], dtype=bool)
        by_method = {}
        for m in rated:
            arr = np.zeros((4, len(task_ids)))
            for t in rows:
                if t.method != m or t.task_id not in pos:
                    continue
                i = pos[t.task_id]
                if b[i]:
                    arr[3, i] += 1
                    arr[2, i] += not t.success
                else:
                    arr[1, i] += 1
                    arr[0, i] += t.success
            by_method[m] = arr
        tables[suite] = _Counts(by_method, int((~b).sum()), int(b.sum()))
    return tables


def _ratio(num, den):
    import numpy as np

    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


_METRICS = (("gain", (0, 1)), ("regression", (2, 3)))  # metric -> (numerator row, denominator row)


@dataclass
class Bootstrap:
    """Gain and Regression per (suite, method, metric): the point estimate and its value in
    each paired resample of the suite's tasks (the same resample for every method)."""

    suites: list[str]
    rerun: str | None
    resamples: int
    point: dict[tuple[str, str, str], float]
    samples: dict[tuple[str, str, str], Any]

    @classmethod
    def of(cls, tables: dict[str, _Counts], suites: list[str], rated: list[str], rerun: str | None,
           resamples: int, seed: int | None) -> "Bootstrap":
        import numpy as np

        rng = np.random.default_rng(seed)
        point, samples = {}, {}
        for suite in suites:
            n = tables[suite].by_method[rated[0]].shape[1]
            idx = rng.integers(0, n, size=(resamples, n)) if n and resamples else None
            for m in rated:
                arr = tables[suite].by_method[m]
                for metric, (a, d) in _METRICS:
                    point[(suite, m, metric)] = float(_ratio(arr[a].sum(), arr[d].sum()))
                    if idx is not None:
                        samples[(suite, m, metric)] = _ratio(arr[a][idx].sum(axis=1), arr[d][idx].sum(axis=1))
                    else:
                        samples[(suite, m, metric)] = np.full(resamples, np.nan)
        return cls(suites, rerun, resamples, point, samples)

    def _average(self, metric: str, m: str, minus_floor: bool = False):
        import numpy as np

        point, samples, rerun = self.point, self.samples, self.rerun
        live = [s for s in self.suites if not math.isnan(point[(s, m, metric)])
                and (not minus_floor or not math.isnan(point[(s, rerun, metric)]))]
        if not live:
            return None, None
        p = sum(point[(s, m, metric)] - (point[(s, rerun, metric)] if minus_floor else 0) for s in live) / len(live)
        smp = np.mean([samples[(s, m, metric)] - (samples[(s, rerun, metric)] if minus_floor else 0) for s in live], axis=0)
        return p, smp

    def _interval(self, p, smp) -> Interval:
        import numpy as np

        if p is None or (isinstance(p, float) and math.isnan(p)):
            return Interval(None)
        if smp is None or not self.resamples:
            return Interval(p)
        ok = smp[~np.isnan(smp)]
        if not len(ok):
            return Interval(p, dropped=1.0)
        lo, hi = np.percentile(ok, [2.5, 97.5])
        return Interval(p, float(lo), float(hi), dropped=float(1 - len(ok) / len(smp)))

    def _with_floor(self, m: str) -> bool:
        return bool(self.rerun) and m != self.rerun

    def suite_row(self, suite: str, m: str, counts: _Counts) -> RateRow:
        iv, ex = {}, {}
        for metric, _ in _METRICS:
            key = (suite, m, metric)
            iv[metric] = self._interval(self.point[key], self.samples[key])
            if self._with_floor(m):
                floor = (suite, self.rerun, metric)
                ex[metric] = self._interval(self.point[key] - self.point[floor],
                                            self.samples[key] - self.samples[floor])
        row = RateRow(suite, m, iv["gain"], iv["regression"], excess_gain=ex.get("gain"),
                      excess_regression=ex.get("regression"))
        arr = counts.by_method[m]
        row.gain_eligible, row.regression_eligible = counts.gain_eligible, counts.regression_eligible
        row.gain_moved = _moved(arr[0].sum(), arr[1].sum(), row.gain_eligible)
        row.regression_moved = _moved(arr[2].sum(), arr[3].sum(), row.regression_eligible)
        return row

    def average_row(self, m: str, result: EvalResult) -> RateRow:
        """The suites' average (within each resample); counts summed over the suite rows already in ``result``."""
        iv, ex = {}, {}
        for metric, _ in _METRICS:
            iv[metric] = self._interval(*self._average(metric, m))
            if self._with_floor(m):
                ex[metric] = self._interval(*self._average(metric, m, minus_floor=True))
        row = RateRow(AVERAGE, m, iv["gain"], iv["regression"], excess_gain=ex.get("gain"),
                      excess_regression=ex.get("regression"))
        suite_rows = [result.rate(s, m) for s in self.suites]
        row.gain_eligible = sum(r.gain_eligible for r in suite_rows)
        row.regression_eligible = sum(r.regression_eligible for r in suite_rows)
        row.gain_moved = _sum_opt(r.gain_moved for r in suite_rows)
        row.regression_moved = _sum_opt(r.regression_moved for r in suite_rows)
        return row


def _moved(num: float, den: float, eligible: int) -> float | None:
    """Tasks moved per trial: num / (trials per eligible task)."""
    return float(num * eligible / den) if den else None


def _sum_opt(values) -> float | None:
    vals = [v for v in values if v is not None]
    return float(sum(vals)) if vals else None
