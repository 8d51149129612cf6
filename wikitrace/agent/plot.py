"""Figure-5-style plot: Gain and Regression per method, averaged over suites, with 95%
intervals, and the No-Memory rerun floor as a dashed line with its interval as a band.

Needs matplotlib, an optional extra: ``pip install matplotlib (the plot extra)``.
"""

from __future__ import annotations

from pathlib import Path

from .eval_records import AVERAGE, EvalResult


def plot_gain_regression(result: EvalResult, out: str | Path, suite: str | None = None) -> Path:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the install
        from ..errors import UsageError

        raise UsageError("the plot needs matplotlib", "pip install matplotlib (the plot extra)", where="--plot") from None

    suite = suite or (AVERAGE if len(result.suites) > 1 else result.suites[0])
    methods = [m for m in result.methods if m != result.reference]
    floor = result.rate(suite, result.rerun) if result.rerun else None
    fig, axes = plt.subplots(1, 2, figsize=(4 + 1.1 * len(methods), 3.6))
    for ax, metric, title in ((axes[0], "gain", "Gain (%) ↑"), (axes[1], "regression", "Regression (%) ↓")):
        vals, los, his = [], [], []
        for m in methods:
            iv = getattr(result.rate(suite, m), metric)
            v = 100 * (iv.value or 0.0)
            vals.append(v)
            los.append(v - 100 * iv.lo if iv.lo is not None else 0.0)
            his.append(100 * iv.hi - v if iv.hi is not None else 0.0)
        xs = list(range(len(methods)))
        ax.bar(xs, vals, color="#4C72B0" if metric == "gain" else "#C44E52", alpha=0.85,
               yerr=[los, his], capsize=4, ecolor="black")
        fl = getattr(floor, metric) if floor else None
        top = max([v + h for v, h in zip(vals, his)] + [100 * (fl.hi if fl and fl.hi is not None else 0.0)] + [1.0])
        ax.set_ylim(0, top * 1.3)
        if fl is not None and fl.value is not None:
            ax.axhline(100 * fl.value, color="gray", linestyle="--", linewidth=1.2, label="No Memory rerun")
            if fl.lo is not None:
                ax.axhspan(100 * fl.lo, 100 * fl.hi, color="gray", alpha=0.15)
            ax.legend(fontsize=7, loc="upper center", framealpha=0.9)
        ax.set_xticks(xs)
        ax.set_xticklabels(methods, rotation=30, ha="right", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    where = "averaged over suites" if suite == AVERAGE else suite
    fig.suptitle(f"Gain and Regression vs {result.reference}, {where} (95% intervals)", fontsize=10)
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=150)
    plt.close(fig)
    return out
