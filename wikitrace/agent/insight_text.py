"""One insight as the agent reads it: the text agent/_insight.md.j2 makes of it.

The prompt, the prompt index and the lesson groups all show insights through this one
rendering, so an insight reads the same wherever it appears.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .corpusdata import CorpusData, InsightInfo


def _insight_ctx(ins: InsightInfo, also: list[InsightInfo] = (), usage: tuple[int, int] | None = None) -> dict[str, Any]:
    return {"id": ins.id, "title": ins.title, "task_type": ins.task_type, "apps": ins.apps,
            "guideline": ins.guideline, "applicability": ins.applicability,
            "source_step": ins.source_step, "source_outcome": ins.source_outcome,
            "sources": [{"step": st, "outcome": o} for st, o in ins.sources[:5]],
            "more_sources": max(0, len(ins.sources) - 5), "evidence": ins.evidence,
            "also": [{"id": a.id, "source_step": a.source_step, "source_outcome": a.source_outcome} for a in also],
            "usage": {"episodes": usage[0], "succeeded": usage[1]} if usage else None}


_BATCH = ('{% from "agent/_insight.md.j2" import insight %}'
          '{% for i in items %}{{ insight(i, show_source) }}\x00{% endfor %}')


def render_insights(templates: str | Path | None, items: list[InsightInfo], show_source: bool,
                    also: list[list[InsightInfo]] | None = None,
                    usage: list[tuple[int, int] | None] | None = None) -> list[str]:
    """Each insight through agent/_insight.md.j2's macro (in plain Python when no
    ``templates`` folder overrides it: plain_prompt.py), in one template pass; ``also``:
    per item, the other insights that teach the same lesson (shown as its sources);
    ``usage``: per item, (episodes citing the lesson, of which succeeded) or None."""
    if not items:
        return []
    ctx = [_insight_ctx(i, a, u) for i, a, u in zip(items, also or [()] * len(items), usage or [None] * len(items))]
    if templates is None:
        from .plain_prompt import insight

        return [insight(c, show_source) for c in ctx]
    from ..templates import environment

    env = environment(str(templates))
    batch = getattr(env, "_wikitrace_insight_batch", None)
    if batch is None:  # compiled once per environment: insights with counts are rendered one at a time
        batch = env._wikitrace_insight_batch = env.from_string(_BATCH)
    text = batch.render(items=ctx, show_source=show_source)
    return [p.strip("\n") for p in text.split("\x00")[:-1]]


class InsightTexts:
    """Each insight rendered by agent/_insight.md.j2, cached on the loaded corpus.

    ``all()`` renders the whole pool in one pass (the full prompt needs it); ``get()``
    renders one insight on demand, so a budgeted prompt renders only what it considers.
    Both go through the same macro and give the same text.
    """

    def __init__(self, corpus: CorpusData, show_source: bool, templates: str | Path | None):
        self.corpus, self.show_source = corpus, show_source
        key = f"insight-text:{show_source}:{templates}"
        self.texts: dict[str, str] = corpus.cache.setdefault(key, {})
        self.complete_key = key + ":complete"
        self.templates = templates or None

    def _render(self, items: list[InsightInfo]) -> list[str]:
        return render_insights(self.templates, items, self.show_source)

    def get(self, ins: InsightInfo) -> str:
        hit = self.texts.get(ins.id)
        if hit is None:
            hit = self.texts[ins.id] = self._render([ins])[0]
        return hit

    def all(self) -> dict[str, str]:
        if not self.corpus.cache.get(self.complete_key):
            if len(self.texts) < len(self.corpus.insights):
                self.texts.update(zip((i.id for i in self.corpus.insights), self._render(self.corpus.insights)))
            self.corpus.cache[self.complete_key] = sum(len(t) + 1 for t in self.texts.values())
        return self.texts

    def total_chars(self) -> int | None:
        """Characters of all insights with their newlines, once known."""
        return self.corpus.cache.get(self.complete_key)
