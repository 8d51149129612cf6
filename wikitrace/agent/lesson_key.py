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
