"""Advice that fits few of a lesson's own failed runs does not stay in What to do.

A rewrite that adds a sentence of advice may say which of the lesson's failed runs it fits
(``register``): the runs where doing what it says would have changed something. After every
rewrite, ``weigh`` keeps a sentence that fits at least half of the failed runs, and moves one
that fits fewer to the page's Evidence (``set_aside``), with its count and
why the others do not fit. A sentence no rewrite registered is left as it is.
"""

from __future__ import annotations

from . import run_counts


def register(entry: dict, sentence: str, fits: list[dict], why_not: str = "") -> None:
    """Records that ``sentence`` (as it stands in the guideline) fits the failed runs ``fits``;
    ``why_not``: what the other failed runs show instead, said if the sentence moves."""
    entry.setdefault("_fits", []).append((sentence, fits, why_not))


def weigh(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """Moves each registered sentence that fits fewer than half of the failed runs out of the
    guideline, to Evidence with its count (of runs and of their tasks)."""
    registered = entry.pop("_fits", [])
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    if not failed:
        return
    for sentence, fits, why_not in registered:
        fitting = [e for e in failed if e["step"] in {f["step"] for f in fits}]
        if 2 * len(fitting) >= len(failed):
            continue
        if sentence not in entry["guideline"]:
            continue
        entry["guideline"] = " ".join(entry["guideline"].replace(sentence, "").split())
        entry["set_aside"] = entry.get("set_aside", []) + [
            f"Not advised here, as it fits at most {run_counts.part_of(fitting, failed)}"
            + (f"; {why_not}" if why_not else "") + f": {sentence}"]
