"""When two insights teach the same lesson: one key, shared by the prompt and the benchmarks.

Insights are never merged in the corpus (each keeps its id, page and source run); the
prompt shows a lesson once and counts its sources. Two insights are the same lesson
when their guideline and applicability read the same once case and whitespace are
folded; titles may differ in wording and do not count.
"""

from __future__ import annotations

import hashlib


def lesson_key(title: str, guideline: str, applicability: str) -> str:
    text = " ".join(f"{guideline}\n{applicability}".split()).casefold()
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def lesson_groups(insights) -> list[int]:
    """For each insight (in the given order), the position of the first insight of the same
    kind that teaches the same lesson: itself when it is the first or the only one."""
    first: dict[tuple[str, str], int] = {}
    out = []
    for j, ins in enumerate(insights):
        out.append(first.setdefault((ins.kind, lesson_key(ins.title, ins.guideline, ins.applicability)), j))
    return out
