"""When two insights teach the same lesson: one key, shared by the prompt and the benchmarks,
and the prompt's view of the insight texts with each lesson shown once.

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


class LessonTexts:
    """Insight texts with each lesson shown once: the first insight of a group of the same
    lesson (lesson_key.py) is rendered with the others as its sources; the others are
    never shown on their own."""

    def __init__(self, texts, reps, info, show_source: bool, templates, cache: dict, usage: dict | None = None):
        self.t, self.info, self.show_source, self.templates = texts, info, show_source, templates
        # lesson position -> (episodes, succeeded) from the usage ledger: those lessons are
        # rendered here with their counts (per prompt: the ledger changes between prompts)
        self.usage, self.counted = usage or {}, {}
        key = f"lesson-groups:{show_source}:{templates}"  # kept on the loaded corpus / index, like the texts
        if key not in cache:
            members: dict[int, list[int]] = {}
            for j, r in enumerate(reps):
                if r != j:
                    members.setdefault(r, []).append(j)
            cache[key] = (members, {})
        self.members, self.grouped = cache[key]

    def get(self, j: int) -> str:
        if j in self.usage:
            if j not in self.counted:
                from .insight_text import render_insights

                self.counted[j] = render_insights(self.templates or None, [self.info(j)], self.show_source,
                                                  [[self.info(k) for k in self.members.get(j, ())]],
                                                  [self.usage[j]])[0]
            return self.counted[j]
        if j not in self.members:
            return self.t.get(j)
        if j not in self.grouped:  # one group at a time: a budgeted prompt shows only a few
            from .insight_text import render_insights

            self.grouped[j] = render_insights(self.templates or None, [self.info(j)], self.show_source,
                                              [[self.info(k) for k in self.members[j]]])[0]
        return self.grouped[j]

    def all(self) -> None:
        self.t.all()

    def total_chars(self) -> int | None:
        return None if self.members or self.usage else self.t.total_chars()


def unique(positions):
    """Positions in their first order, each once (lazily: a budget walk stops early)."""
    seen: set[int] = set()
    for j in positions:
        if j not in seen:
            seen.add(j)
            yield j
