"""The recall benchmark's fold bookkeeping: held-out reads pooled by questions, and a fold grid
that compiles a conversation once per continuity setting, not once per routing setting."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import locomo_retrieval as bench  # noqa: E402


def _result(cat1: float, cat2: float | None, n1: int, n2: int) -> dict:
    row = {"cat1": cat1, "cat2": cat2, "cat3": None, "cat4": None, "overall": None}
    return {"questions": {"multi-hop": n1, "temporal": n2, "open-domain": 0, "single-hop": 0},
            "methods": {m: {str(b): dict(row) for b in bench.BUDGETS} for m in ("hier", "hier-off", "bm25-msg")}}


def test_held_out_reads_pool_each_category_by_its_questions():
    res = {"folds": [{"result": _result(1.0, 0.5, 1, 2)}, {"result": _result(0.0, None, 3, 0)}]}
    pooled = bench.pool_folds(res)["hier"]["1000"]
    assert pooled["cat1"] == 0.25                       # (1 x 1.0 + 3 x 0.0) / 4, not the mean of 1.0 and 0.0
    assert pooled["cat2"] == 0.5                        # the fold without temporal questions does not count
    assert pooled["cat3"] is None
    assert pooled["overall"] == round((1.0 + 2 * 0.5) / 6, 4)


def test_a_routing_setting_reuses_the_compiled_memory_a_continuity_setting_does_not(monkeypatch):
    from wikitrace.dialogue import retrieve, trajectories

    base = bench._compile_key("conv-x")
    monkeypatch.setattr(retrieve, "ROUTING", "off")
    monkeypatch.setattr(retrieve, "W_KIND", 0.0)
    assert bench._compile_key("conv-x") == base
    monkeypatch.setattr(trajectories, "DELTA_CLAIM", 0.25)
    assert bench._compile_key("conv-x") != base
