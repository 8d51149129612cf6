"""The one-sided Fisher exact test every contrast of the insight layer uses (a lesson's pattern
between failed and successful runs, a choice among the runs that could make it, a cue word
between a lesson's tasks and the others)."""

from __future__ import annotations

import math

ALPHA = 0.05  # the conventional significance level of the one-sided test


def fisher_tails(a: int, b: int, failed: int, succeeded: int) -> tuple[float, float]:
    """One-sided p-values of the 2x2 table (met: a failed, b successful; not met: the rest):
    P(at least a of the met runs failed) and P(at most a), under the hypergeometric law.

    Exact: the tables' weights comb(failed, x) * comb(succeeded, met - x) are integers, each
    the next one's neighbour times a small factor, divided exactly by another (one pass of
    a big number by a machine-sized one, not a product of two big ones), summed from the
    end of the range nearer to ``a``; each tail is one correctly rounded division of
    integers by their total, comb(n, met). (A binomial computed afresh for every x cost
    seconds per task type of 10,000 runs.)"""
    n, met = failed + succeeded, a + b
    total = math.comb(n, met)
    lo, hi = max(0, met - succeeded), min(met, failed)
    if a - lo <= hi - a or a > hi:  # (a count past its margin: stepped up as ever, to a weight of 0)
        t, below = math.comb(failed, lo) * math.comb(succeeded, met - lo), 0  # the weights of x < a
        for x in range(lo, a):
            below += t
            t = t * ((failed - x) * (met - x)) // ((x + 1) * (succeeded - met + x + 1))
        at = t  # the weight of x = a
    else:
        t, above = math.comb(failed, hi) * math.comb(succeeded, met - hi), 0  # the weights of x > a
        for x in range(hi, a, -1):
            above += t
            t = t * (x * (succeeded - met + x)) // ((failed - x + 1) * (met - x + 1))
        at = t
        below = total - above - at
    return min(1.0, (total - below) / total), min(1.0, (below + at) / total)


def verdict(a: int, b: int, failed: int, succeeded: int) -> tuple[str, float | None]:
    if not succeeded:
        return "no-success", None
    if not failed:
        return "no-failure", None
    up, down = fisher_tails(a, b, failed, succeeded)
    if up < ALPHA:
        return "failure", float(f"{up:.2g}")
    if down < ALPHA:
        return "success", float(f"{down:.2g}")
    return "none", float(f"{min(up, down):.2g}")
