"""A failure page's causes set against the successful runs of its task type.

A run compiled alone ranks an error no later call got past as a likely cause. Whether it
decided anything shows only across runs: an error that the successful runs of the same
task type met at least as often as the failed ones (a program the machine lacks, a search
every run fumbles) did not set this run apart. Once every run's entry is known, such a
cause is moved below the run's own state changes and says so, with the counts (the same
pattern keys the insight layer contrasts: compilers/run_patterns.py). The page writer
(corpus/pages.py) applies this to the compilation pages it holds; a page no cause of which
is affected is written as rendered.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from .insights import kind_of

_HEAD = "\n## Failure Causes\n"
_BLOCK = "\n### Cause "
_RANKED = "> They are ranked:"
MOVED_NOTE = ("> An error that the successful runs of this task type met at least as often as the failed ones comes "
              "after the run's own changes: it did not set this run apart.\n")


def notes(runs: Iterable[dict], steps: set[str]) -> dict[str, dict]:
    """step -> {"met": [[cause index, successes met, successes, failures met, failures]],
    "causes": the entry's causes} for each failed run of ``steps`` with a cause so met."""
    runs = list(runs)
    total: dict[str, Counter] = defaultdict(Counter)
    met: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for r in runs:
        kind, outcome = kind_of(r), r.get("outcome")
        total[kind][outcome] += 1
        for p in set(r.get("patterns") or ()):
            met[kind, p][outcome] += 1
    out: dict[str, dict] = {}
    for r in runs:
        causes = (r.get("decisive") or {}).get("causes")
        if r["step"] not in steps or r.get("outcome") != "failure" or not causes:
            continue
        kind = kind_of(r)
        won, lost = total[kind]["success"], total[kind]["failure"]
        hits = []
        for i, keys in enumerate(causes):
            if not isinstance(keys, list):
                continue
            for key in keys:
                s, f = met[kind, key]["success"], met[kind, key]["failure"]
                if s and f and s * lost >= f * won:  # as often among the successes as among the failures
                    hits.append([i, s, won, f, lost])
                    break
        if hits:
            out[r["step"]] = {"met": hits, "causes": causes}
    return out


def _sentence(s: int, won: int, f: int, lost: int) -> str:
    return (f" This error was also met in {s} of {won} successful run{'s' if won != 1 else ''} of this task type"
            f" (and in {f} of {lost} failed run{'s' if lost != 1 else ''}): it did not decide this run.")


def set_causes(page: str, note: dict | None) -> str:
    """The page with each cause of ``note`` (``notes``) saying it was met by the successes, and
    moved below the last state change ranked under it; the page as it was without a note or
    when its causes are not the ones the note counts."""
    if not note:
        return page
    start = page.find(_HEAD)
    if start < 0:
        return page
    body_at = start + len(_HEAD)
    ends = [e for e in (page.find("\nLeft out: ", body_at), page.find("\n## ", body_at)) if e >= 0]
    end = min(ends) if ends else len(page)
    parts = page[body_at:end].split(_BLOCK)
    lead, blocks = parts[0], parts[1:]
    causes = note["causes"]
    if len(blocks) != len(causes) or not all(b.startswith(f"{n}\n") for n, b in enumerate(blocks, 1)):
        return page
    bodies = [b.split("\n", 1)[1] for b in blocks]
    for i, s, won, f, lost in note["met"]:
        head, sep, rest = bodies[i].partition("**Support**: ")
        if not sep:
            return page
        line, nl, tail = rest.partition("\n")
        stop = "" if line.rstrip().endswith((".", "!", "?")) else "."  # a quoted error may end bare
        bodies[i] = head + sep + line + stop + _sentence(s, won, f, lost) + nl + tail
    met = {i for i, *_ in note["met"]}
    changes = [i for i, c in enumerate(causes) if c == "change"]
    last = max(changes) if changes else -1
    # above the last change: the other causes keep their order, the ones the successes met follow
    order = ([i for i in range(last + 1) if i not in met] + [i for i in range(last + 1) if i in met]
             + list(range(last + 1, len(bodies))))
    text = lead + "".join(f"{_BLOCK}{n}\n{bodies[i]}" for n, i in enumerate(order, 1))
    page = page[:body_at] + text + page[end:]
    if order != sorted(order):
        at = page.find(_RANKED)
        line_end = page.find("\n", at) + 1 if at >= 0 else -1
        if line_end > 0:
            page = page[:line_end] + MOVED_NOTE + page[line_end:]
    return page
