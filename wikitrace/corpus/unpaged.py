"""The insight index's line for each generic pattern no insight page is about.

A repeated call or a value from nowhere is taught as a lesson only when a run teaches nothing
more specific, so many runs meet such a pattern with no page of their task type about it. The
insight index still counts it, with the same contrast as a page's (``unpaged``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from .applies import kind_of
from .contrast_words import MET, index_note
from .fisher import verdict as _verdict

GENERIC = ("loop", "unseen")  # patterns a run teaches as a lesson only when it teaches nothing more specific


def unpaged(runs: Iterable[dict], insights: list[dict], tallies: dict | None = None) -> dict[str, list[str]]:
    """The generic patterns (a repeated call, a value from nowhere) that runs met but no insight
    page of their task type is about, counted for the insight index: the fact is kept, with the
    same contrast as a page's, without a page of boilerplate advice. ``tallies``: task type ->
    the gather's pattern_tally.KindTally, whose counts are taken for a type when it counted as
    many runs as the type has (they are those runs' counts), so its runs' patterns are not read."""
    runs = runs if isinstance(runs, list) else list(runs)  # read twice below
    totals: dict[str, Counter] = defaultdict(Counter)
    met: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    kinds = []
    for r in runs:
        kind = kind_of(r)
        kinds.append(kind)
        totals[kind][r["outcome"]] += 1
    counted = {kind: tally for kind, tally in (tallies or {}).items()
               if kind in totals and tally.runs == sum(totals[kind].values())}
    for kind, tally in counted.items():
        for outcome, seen in tally.counted.items():
            for p, n in seen.items():
                if n and p.startswith(GENERIC) and p.split("|", 1)[0] in GENERIC:
                    met[kind][p][outcome] += n
    for r, kind in zip(runs, kinds):
        if kind in counted:
            continue
        for p in r.get("patterns") or []:
            if p.startswith(GENERIC) and p.split("|", 1)[0] in GENERIC:  # the prefix test first: one call, no list
                met[kind][p][r["outcome"]] += 1
    paged = {(kind_of(i), i["key"]) for i in insights}
    out: dict[str, list[str]] = {}
    for kind in sorted(met):
        failed, succeeded = totals[kind]["failure"], totals[kind]["success"]
        for pattern in sorted(met[kind]):
            if (kind, pattern) in paged:
                continue
            seen = met[kind][pattern]
            fields = pattern.split("|")
            what = f"Runs {MET[fields[0]]}" + (f" ({fields[1]})" if len(fields) > 1 else "")
            note = index_note({"contrast": {"pattern": pattern, "failed_met": seen["failure"], "failed": failed,
                                            "success_met": seen["success"], "success": succeeded,
                                            **dict(zip(("verdict", "p"),
                                                       _verdict(seen["failure"], seen["success"], failed, succeeded)))}})
            out.setdefault(kind, []).append(f"{what}: {note}")
    return out
