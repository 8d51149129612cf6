"""Advice that fits few of a lesson's own failed runs is not written.

A rewrite that adds a sentence of advice may say which of the lesson's failed runs it fits
(``register``): the runs where doing what it says would have changed something. After every
rewrite, ``weigh`` keeps a sentence that fits at least half of the failed runs and drops one
that fits fewer: kept anywhere on the page, quoted advice a reader should not follow reads as
advice all the same (the page's own lead says what the rest did). A sentence no rewrite
registered is left as it is.
"""

from __future__ import annotations


def register(entry: dict, sentence: str, fits: list[dict], why_not: str = "") -> None:
    """Records that ``sentence`` (as it stands in the guideline) fits the failed runs ``fits``;
    ``why_not``: what the other failed runs show instead (kept for a reader of the entry)."""
    entry.setdefault("_fits", []).append((sentence, fits, why_not))


def weigh(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """Drops each registered sentence that fits fewer than half of the failed runs from the guideline."""
    registered = entry.pop("_fits", [])
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    if not failed:
        return
    for sentence, fits, _why_not in registered:
        fitting = [e for e in failed if e["step"] in {f["step"] for f in fits}]
        if 2 * len(fitting) >= len(failed):
            continue
        if sentence not in entry["guideline"]:
            continue
        entry["guideline"] = " ".join(entry["guideline"].replace(sentence, "").split())
