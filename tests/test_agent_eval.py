"""Gain / Regression / floor / excess on hand-computed tables, and the paired bootstrap."""

from __future__ import annotations

import csv
import json
import random

import pytest

pytest.importorskip("numpy")

from wikitrace.agent.eval_report import write_csv  # noqa: E402
from wikitrace.agent.evaluate import AVERAGE, EvalError, evaluate, parse_trials, read_rows  # noqa: E402

# suite -> task -> method -> successes per trial
TABLE = {
    "A": {
        "t1": {"no-memory": [1, 1, 1], "no-memory-rerun": [1, 0, 1], "wikitrace": [1, 1, 1]},  # B=1
        "t2": {"no-memory": [1, 1, 0], "no-memory-rerun": [1, 1, 1], "wikitrace": [1, 0, 1]},  # B=1
        "t3": {"no-memory": [0, 0, 1], "no-memory-rerun": [0, 1, 0], "wikitrace": [1, 1, 1]},  # B=0
        "t4": {"no-memory": [0, 0, 0], "no-memory-rerun": [0, 0, 0], "wikitrace": [0, 1, 0]},  # B=0
    },
    "B": {
        "u1": {"no-memory": [1, 1, 1], "no-memory-rerun": [1, 1, 1], "wikitrace": [0, 0, 1]},  # B=1
        "u2": {"no-memory": [0, 0, 0], "no-memory-rerun": [0, 0, 1], "wikitrace": [0, 0, 0]},  # B=0
    },
}


def rows_of(table, key="success"):
    out = []
    for suite, tasks in table.items():
        for task, methods in tasks.items():
            for method, trials in methods.items():
                for i, v in enumerate(trials):
                    out.append({"suite": suite, "task_id": task, "method": method, "trial": str(i), key: v})
    return out


def test_hand_computed_gain_regression_floor_excess():
    res = evaluate(parse_trials(rows_of(TABLE)), resamples=0)
    a, b, avg = (res.rate(s, "wikitrace") for s in ("A", "B", AVERAGE))
    # suite A: Gain over t3, t4 = (3 + 1) / 6; Regression over t1, t2 = (0 + 1) / 6
    assert a.gain.value == pytest.approx(4 / 6) and a.regression.value == pytest.approx(1 / 6)
    assert (a.gain_eligible, a.regression_eligible) == (2, 2)
    assert a.gain_moved == pytest.approx(4 / 3) and a.regression_moved == pytest.approx(1 / 3)
    # suite B: Gain over u2 = 0 / 3; Regression over u1 = 2 / 3
    assert b.gain.value == 0.0 and b.regression.value == pytest.approx(2 / 3)
    # floor: the rerun trials scored the same way
    fa, fb, favg = (res.rate(s, "no-memory-rerun") for s in ("A", "B", AVERAGE))
    assert fa.gain.value == pytest.approx(1 / 6) and fa.regression.value == pytest.approx(1 / 6)
    assert fb.gain.value == pytest.approx(1 / 3) and fb.regression.value == 0.0
    # excess = rate - floor
    assert a.excess_gain.value == pytest.approx(0.5) and a.excess_regression.value == pytest.approx(0.0)
    assert b.excess_regression.value == pytest.approx(2 / 3)
    # averages over suites
    assert avg.gain.value == pytest.approx(1 / 3) and avg.regression.value == pytest.approx(5 / 12)
    assert favg.gain.value == pytest.approx(1 / 4) and favg.regression.value == pytest.approx(1 / 12)
    assert avg.excess_gain.value == pytest.approx(1 / 12) and avg.excess_regression.value == pytest.approx(1 / 3)
    assert avg.gain_moved == pytest.approx(4 / 3) and avg.gain_eligible == 3
    assert fa.excess_gain is None  # the floor has no excess over itself
    assert res.rate("A", "no-memory") is None  # the reference is not scored against itself


def test_scores_mean_and_std_over_trials():
    res = evaluate(parse_trials(rows_of(TABLE)), resamples=0)
    a, b, avg = (res.score(s, "wikitrace") for s in ("A", "B", AVERAGE))
    assert (a.mean, a.std) == (pytest.approx(75.0), pytest.approx(0.0))
    assert b.mean == pytest.approx(50 / 3) and b.std == pytest.approx((2500 / 3) ** 0.5)  # [0, 0, 50]
    # average: suites averaged within each trial -> [37.5, 37.5, 62.5]
    assert avg.mean == pytest.approx(137.5 / 3) and avg.std == pytest.approx((625 / 3) ** 0.5)
    assert res.score("A", "no-memory").mean == pytest.approx(50.0)
    assert res.score("A", "no-memory-rerun") is None  # the rerun is the floor, not a method
    assert res.methods == ["no-memory", "wikitrace"]


def test_score_column_and_threshold():
    rows = [{"suite": "S", "task_id": "1", "method": m, "trial": "0", "score": s}
            for m, s in (("no-memory", 0.5), ("wikitrace", 1.0))]
    res = evaluate(parse_trials(rows), rerun=None, resamples=0)
    assert res.score("S", "wikitrace").mean == pytest.approx(100.0)
    assert res.rate("S", "wikitrace").gain.value == 1.0
    res = evaluate(parse_trials(rows, success_threshold=0.5), rerun=None, resamples=0)
    assert res.rate("S", "wikitrace").gain.value is None and res.rate("S", "wikitrace").regression.value == 0.0
    assert res.rate("S", "wikitrace").excess_gain is None


def test_majority_tie_counts_as_failure_and_missing_reference_warns():
    rows = rows_of({"S": {"x": {"no-memory": [1, 0], "m": [1, 1]}, "y": {"m": [1]}}})
    res = evaluate(parse_trials(rows), resamples=0)
    assert res.rate("S", "m").gain.value == 1.0 and res.rate("S", "m").gain_eligible == 1
    assert any("without no-memory" in w for w in res.warnings)


def random_table(seed=3, suites=3, tasks=40):
    rng = random.Random(seed)
    table = {}
    for s in range(suites):
        table[f"s{s}"] = {}
        for t in range(tasks):
            p = rng.random()
            table[f"s{s}"][f"t{t}"] = {m: [int(rng.random() < min(1, p + lift)) for _ in range(3)]
                                       for m, lift in (("no-memory", 0), ("no-memory-rerun", 0), ("wikitrace", 0.25),
                                                       ("insights-only", 0.1))}
    return table


def test_bootstrap_is_seeded_and_covers_the_point_estimate():
    trials = parse_trials(rows_of(random_table()))
    r1 = evaluate(trials, resamples=2000, seed=7)
    r2 = evaluate(trials, resamples=2000, seed=7)
    r3 = evaluate(trials, resamples=2000, seed=8)
    assert r1.to_dict() == r2.to_dict()
    assert r1.rate(AVERAGE, "wikitrace").gain.lo != r3.rate(AVERAGE, "wikitrace").gain.lo
    for row in r1.rates:
        for iv in (row.gain, row.regression, row.excess_gain, row.excess_regression):
            if iv is None or iv.value is None:
                continue
            assert iv.lo <= iv.value <= iv.hi, (row.suite, row.method)
            assert iv.hi - iv.lo < 0.6


def test_bootstrap_is_paired():
    # two methods with identical outcomes: every resample gives the same rate, so the
    # interval of their difference collapses to 0 only if the resamples are shared
    table = random_table(seed=5, suites=2, tasks=30)
    for suite in table.values():
        for methods in suite.values():
            methods["no-memory-rerun"] = list(methods["wikitrace"])
    res = evaluate(parse_trials(rows_of(table)), resamples=500, seed=1)
    for s in ("s0", "s1", AVERAGE):
        ex = res.rate(s, "wikitrace").excess_gain
        assert (ex.value, ex.lo, ex.hi) == (0.0, 0.0, 0.0)


def test_identical_tasks_give_a_degenerate_interval_and_drops_are_reported():
    table = {"S": {f"t{i}": {"no-memory": [0, 0, 0], "m": [1, 0, 1]} for i in range(5)}}
    iv = evaluate(parse_trials(rows_of(table)), resamples=300, seed=0).rate("S", "m").gain
    assert iv.value == iv.lo == iv.hi == pytest.approx(2 / 3) and iv.dropped == 0.0
    # suite B above has one gain-eligible task of two: ~1/4 of resamples draw none
    res = evaluate(parse_trials(rows_of(TABLE)), resamples=4000, seed=0)
    assert res.rate("B", "wikitrace").gain.dropped == pytest.approx(0.25, abs=0.03)
    # the average is dropped when either suite draws no eligible task: 1 - (3/4) * (1 - (1/2)**4)
    assert res.rate(AVERAGE, "wikitrace").gain.dropped == pytest.approx(19 / 64, abs=0.03)


def test_bad_rows():
    with pytest.raises(EvalError):
        parse_trials([{"suite": "S", "task_id": "1", "method": "m"}])
    with pytest.raises(EvalError):
        parse_trials([{"suite": "S", "task_id": "1", "method": "m", "trial": "0"}])
    with pytest.raises(EvalError):
        evaluate(parse_trials([{"suite": "S", "task_id": "1", "method": "m", "trial": "0", "success": "yes"}]))


def test_csv_jsonl_cli_and_plot(tmp_path):
    from typer.testing import CliRunner

    from wikitrace.cli import app

    src = tmp_path / "results.csv"
    rows = rows_of(TABLE)
    with src.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    jsonl = tmp_path / "results.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(read_rows(src)) == len(read_rows(jsonl)) == len(rows)

    out_csv = tmp_path / "table.csv"
    r = CliRunner().invoke(app, ["eval", str(jsonl), "--csv", str(out_csv), "--resamples", "200", "--seed", "1"])
    assert r.exit_code == 0, r.output
    assert "Gain" in r.stdout and "wikitrace" in r.stdout
    table = {(row["suite"], row["method"]): row for row in csv.DictReader(out_csv.open())}
    assert float(table[("A", "wikitrace")]["gain"]) == pytest.approx(4 / 6)
    assert float(table[(AVERAGE, "wikitrace")]["excess_regression"]) == pytest.approx(1 / 3)
    assert float(table[(AVERAGE, "no-memory-rerun")]["regression"]) == pytest.approx(1 / 12)

    r = CliRunner().invoke(app, ["eval", str(src), "--json", "--resamples", "0"])
    assert r.exit_code == 0 and json.loads(r.stdout)["reference"] == "no-memory"
    r = CliRunner().invoke(app, ["eval", str(src), "--reference", "nobody"])
    assert r.exit_code == 2

    pytest.importorskip("matplotlib")
    png = tmp_path / "gain.png"
    r = CliRunner().invoke(app, ["eval", str(src), "--plot", str(png), "--resamples", "200"])
    assert r.exit_code == 0, r.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000


def test_write_csv_directly(tmp_path):
    res = evaluate(parse_trials(rows_of(TABLE)), resamples=100, seed=2)
    write_csv(res, tmp_path / "t.csv")
    rows = list(csv.DictReader((tmp_path / "t.csv").open()))
    assert {r["suite"] for r in rows} == {"A", "B", AVERAGE}
    lo = float(next(r for r in rows if r["suite"] == "A" and r["method"] == "wikitrace")["gain_lo"])
    assert lo <= 4 / 6
