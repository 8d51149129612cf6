"""Where a prompt's insights come from: the corpus's prompt index when it is current (a cold
prompt reads a few pages of one file), else corpus.json loaded whole; both give build_prompt
the same small view."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .corpusdata import CorpusData, InsightInfo, as_corpus, id_key
from .insight_text import InsightTexts
from .lesson_key import lesson_groups
from .relevance import priority_order
from .similarity import BM25Backend, ScoreBackend, rank_runs

if TYPE_CHECKING:
    from .prompt import SimilarRun


def display_order(insights: list[InsightInfo]) -> list[InsightInfo]:
    """By task type (or app set), then id."""
    return sorted(insights, key=lambda i: (i.kind, id_key(i.id)))


def _display(corpus: CorpusData) -> list[InsightInfo]:
    hit = corpus.cache.get("display-order")
    if hit is None:
        hit = corpus.cache["display-order"] = display_order(corpus.insights)
    return hit


class CorpusSource:
    """build_prompt's view of a loaded corpus.json (numpy BM25, any backend)."""

    def __init__(self, data: CorpusData, backend: ScoreBackend | None):
        self.data, self.backend = data, backend
        self.mount_path = data.mount_path
        self.first_step = data.runs[0].step if data.runs else None
        self.first_insight = data.insights[0].id if data.insights else None
        self.insight_ids = [i.id for i in data.insights]
        self.notes: list[str] = []

    def rank_runs(self, task, **kw):
        if self.backend is not None and not isinstance(self.backend, BM25Backend):
            from ..llm.client import ModelFault

            try:
                return rank_runs(self.data, task, backend=self.backend, **kw)
            except ModelFault as exc:  # an embeddings endpoint that fails must not sink the prompt
                self.notes.append(f"similar runs ranked by BM25: the embeddings backend failed "
                                  f"({type(exc).__name__}: {str(exc)[:120]})")
        return rank_runs(self.data, task, backend=None, **kw)

    def title(self, iid: str) -> str | None:
        ins = self.data.insight_by_id.get(iid)
        return None if ins is None else ins.title

    def display(self) -> list[int]:
        hit = self.data.cache.get("display-positions")
        if hit is None:
            pos = self._positions()
            hit = self.data.cache["display-positions"] = [pos[i.id] for i in _display(self.data)]
        return hit

    def _positions(self) -> dict[str, int]:
        index = self.data.cache.get("insight-index")
        if index is None:
            index = self.data.cache["insight-index"] = {ins.id: j for j, ins in enumerate(self.data.insights)}
        return index

    def priority(self, task, similar: list[SimilarRun], kind):
        pos = self._positions()
        return [pos[i.id] for i in priority_order(self.data, task, similar, kind)]

    def texts(self, show_source, templates):
        return CorpusTexts(InsightTexts(self.data, show_source, templates))

    @property
    def cache(self) -> dict:
        return self.data.cache

    def reps(self) -> list[int]:
        hit = self.data.cache.get("lesson-reps")
        if hit is None:
            hit = self.data.cache["lesson-reps"] = lesson_groups(self.data.insights)
        return hit

    def info(self, j: int) -> InsightInfo:
        return self.data.insights[j]


class CorpusTexts:
    def __init__(self, texts: InsightTexts):
        self.t, self.insights = texts, texts.corpus.insights

    def get(self, j: int) -> str:
        return self.t.get(self.insights[j])

    def all(self) -> None:
        self.t.all()

    def total_chars(self) -> int | None:
        return self.t.total_chars()


class IndexSource:
    """build_prompt's view of a corpus through its prompt index (index_reader.py)."""

    def __init__(self, idx):
        self.idx = idx
        self.mount_path = idx.mount_path
        self.first_step, self.first_insight = idx.first_step, idx.first_insight

    @property
    def insight_ids(self) -> list[str]:
        return self.idx.insight_ids

    def rank_runs(self, task, **kw):
        return self.idx.rank_runs(task, **kw)

    def title(self, iid: str) -> str | None:
        j = self.idx.insight_pos.get(iid)
        return None if j is None else self.idx.insight(j).title

    def display(self) -> list[int]:
        return self.idx.display()

    def priority(self, task, similar: list[SimilarRun], kind):
        return self.idx.priority(task, (i["id"] for r in similar for i in r.insights), kind)

    def texts(self, show_source, templates):
        return self.idx.texts(show_source, templates)

    @property
    def cache(self) -> dict:
        return self.idx.cache

    def reps(self) -> list[int]:
        return self.idx.lesson_reps()

    def info(self, j: int) -> InsightInfo:
        return self.idx.insight(j)


def open_source(corpus, backend):
    if isinstance(corpus, (str, Path)) and (backend is None or isinstance(backend, BM25Backend)):
        from .index_reader import open_index

        idx = open_index(corpus)
        if idx is not None:
            return IndexSource(idx)
    return CorpusSource(as_corpus(corpus), backend)
