"""Which insights a new task needs first: the lessons taught by the past runs most like it.

A task text says what the user wants, not which call will settle it: "change my flight"
shares more words with a booking lesson than with the one about changing flights. The
runs whose task texts read most like the new one, and what those runs taught, say which
calls the task will need. So an insight is scored by the runs that taught it:

* the ``NEIGHBOURS`` past tasks most like the new one (BM25 of the task against run
  instructions, as for the similar-runs block; ties by step) each vote ``score / best
  score`` for every insight their runs taught (every run on the insight's source list,
  not only its three links). Trials of one task (runs with the same instruction) share
  one vote, so five trials of the nearest task do not crowd out the next four tasks;
* a vote weighs ``ln(runs / sources)``: a lesson taught by a few runs is about their kind
  of task; one taught by most runs (a hand-off, a rule quoted everywhere) says little about
  this one, and one every run taught says nothing (it keeps its place in the fallback order);
* the best lesson of the side the first one is not on (taught mostly by successful runs,
  or mostly by failed ones) moves up to second place, so even a small budget shows what
  worked beside what failed;
* insights no neighbour taught follow in the order given (prompt.priority_order's tiers);
* before all of these, the insights whose cue the task's words hold (``applies_to``): the
  word of its tool's action that the first messages of its tasks said more often than the
  other tasks of the type (corpus/applies.py: "cancel" for a lesson on cancel_reservation),
  in the order above. The insight's page says when it applies in that word, and the corpus
  showed that requests saying it led to the lesson, whatever the nearest past tasks taught.

``relevance_order`` is plain Python on lists: the prompt index stores what it reads
(``taught_tables``, written by agent/index.py), so a cold prompt imports nothing more.
``priority_order`` and ``tier_order`` are the same ranking on a loaded corpus.json.
"""

from __future__ import annotations

import heapq
import math
import re
from typing import TYPE_CHECKING, Callable, Iterable, Iterator, Sequence

if TYPE_CHECKING:
    from .corpusdata import CorpusData

NEIGHBOURS = 5
FAILURE, SUCCESS, MIXED = 0, 1, 2


def side_of(outcomes: Sequence[str]) -> int:
    """SUCCESS or FAILURE when most of an insight's source runs had that outcome, else MIXED."""
    wins = sum(o == "success" for o in outcomes)
    losses = sum(o == "failure" for o in outcomes)
    return SUCCESS if wins > losses else FAILURE if losses > wins else MIXED


def trial_groups(instructions: Sequence[str]) -> list[int]:
    """Per run, the position of the first run with the same instruction (its task's first trial)."""
    first: dict[str, int] = {}
    return [first.setdefault(text, k) for k, text in enumerate(instructions)]


def source_steps(ins) -> list[tuple[str, str]]:
    """(step, outcome) of every run that taught an insight (its first source when the entry lists none)."""
    if ins.sources:
        return list(ins.sources)
    return [(ins.source_step, ins.source_outcome or "")] if ins.source_step else []


def _nearest_tasks(run_scores: Sequence[float], task_of: Sequence[int]) -> list[int]:
    """The first runs of the ``NEIGHBOURS`` best-scoring tasks (score > 0), best first, ties
    by step. Trials of a task score alike, so a few times NEIGHBOURS top runs usually hold
    them; the whole list is sorted only when they do not."""
    n_runs = len(run_scores)
    by_score = run_scores.__getitem__
    top = heapq.nlargest(min(n_runs, 8 * NEIGHBOURS), range(n_runs), key=by_score)  # stable: ties by step
    for attempt in (top, None):
        if attempt is None:
            attempt = sorted(range(n_runs), key=by_score, reverse=True)
        near = list(dict.fromkeys(task_of[r] for r in attempt if run_scores[r] > 0))[:NEIGHBOURS]
        if len(near) == NEIGHBOURS or len(attempt) == n_runs or run_scores[attempt[-1]] <= 0:
            return near
    return near


def insight_cues(insights) -> list[str]:
    """Per insight, its cue word ("" for none)."""
    return [ins.cue for ins in insights]


def applies_to(task: str, cues: Sequence[str]) -> list[int]:
    """The insight positions whose cue word the task's words hold, as it is or in a longer form
    ("cancel" in "cancellation")."""
    from ..compilers.cue_words import same_word

    said = set(re.findall(r"[a-z]+", task.lower()))
    named = {w for w in dict.fromkeys(cues) if w and any(same_word(w, x) for x in said)}
    return [j for j, w in enumerate(cues) if w in named]


def relevance_order(run_scores: Sequence[float], task_of: Sequence[int], taught: Callable[[int], Sequence[int]],
                    n_sources: Sequence[int], sides: Sequence[int], rest: Iterable[int],
                    first: Sequence[int] = ()) -> Iterator[int]:
    """Insight positions, most needed first (see the module text), lazily.

    ``run_scores``: BM25 of the task per run; ``task_of``: per run, the first run with the
    same instruction (``trial_groups``); ``taught(r)``: the insights run ``r`` taught;
    ``n_sources`` and ``sides``: per insight; ``rest``: every insight position in the order
    to fall back on (each is yielded once in all); ``first``: the insights whose cue the task
    holds (``applies_to``), which lead in that same order."""
    n_runs = len(run_scores)
    best = max(run_scores, default=0.0)
    score: dict[int, float] = {}
    if best > 0:
        near = _nearest_tasks(run_scores, task_of)
        trials: dict[int, list[int]] = {t: [] for t in near}  # each task's runs (same instruction)
        for r in range(n_runs):
            if task_of[r] in trials:
                trials[task_of[r]].append(r)
        for t in near:
            weight = run_scores[t] / best / len(trials[t])  # a task's trials share one vote
            for r in trials[t]:
                for j in taught(r):
                    score[j] = score.get(j, 0.0) + weight * math.log(n_runs / min(max(n_sources[j], 1), n_runs))
    ranked = sorted((j for j in score if score[j] > 0), key=lambda j: (-score[j], j))
    if first:  # the lessons whose cue the task says lead, by the same votes
        lead = set(first)
        ranked = sorted(lead, key=lambda j: (-score.get(j, 0.0), j)) + [j for j in ranked if j not in lead]
    yielded: set[int] = set()

    def walk() -> Iterator[int]:
        for j in ranked:
            yielded.add(j)
            yield j
        for j in rest:
            if j not in yielded:
                yielded.add(j)
                yield j

    order = walk()
    first = next(order, None)
    if first is None:
        return
    yield first
    wanted = {SUCCESS: FAILURE, FAILURE: SUCCESS}.get(sides[first])
    if wanted is None:  # a mixed lesson first: the other sides come as they rank
        yield from order
        return
    held: list[int] = []
    for j in order:  # the best of the other side next; the ones it passed keep their order
        if sides[j] == wanted:
            yield j
            break
        held.append(j)
    yield from held
    yield from order


# --- the ranking on a loaded corpus.json (the prompt index has its own: index_reader.py) ---

def priority_order(corpus: CorpusData, task: str, similar, kind: str | None) -> list:
    """Which insights to keep first when the budget cannot hold them all: those the runs
    most like the task taught (``relevance_order``), then ``tier_order``."""
    from .similarity import _run_index

    taught, n_sources, sides, task_of = _taught(corpus)
    rest = tier_order(corpus, task, similar, kind)
    cues = corpus.cache.get("insight-cues")
    if cues is None:
        cues = corpus.cache["insight-cues"] = insight_cues(corpus.insights)
    order = relevance_order(_run_index(corpus).scores(task), task_of, taught.__getitem__, n_sources, sides, rest,
                            applies_to(task, cues))
    return [corpus.insights[j] for j in order]


def _taught(corpus: CorpusData) -> tuple[list[list[int]], list[int], list[int], list[int]]:
    hit = corpus.cache.get("taught")
    if hit is None:
        hit = corpus.cache["taught"] = taught_tables(corpus.runs, corpus.insights)
    return hit


def taught_tables(runs, insights) -> tuple[list[list[int]], list[int], list[int], list[int]]:
    """What the ranking reads, from runs and insights in id order: per run the insight
    positions it taught; per insight its source count and side; per run its task's first
    trial. The prompt index stores exactly these (index.py)."""
    at = {r.step: k for k, r in enumerate(runs)}
    taught: list[list[int]] = [[] for _ in runs]
    n_sources, sides = [], []
    for j, ins in enumerate(insights):
        sources = source_steps(ins)
        for step in dict.fromkeys(st for st, _ in sources):
            if step in at:
                taught[at[step]].append(j)
        n_sources.append(len(sources))
        sides.append(side_of([o for _, o in sources]))
    return taught, n_sources, sides, trial_groups([r.instruction or r.title for r in runs])


def tier_order(corpus: CorpusData, task: str, similar, kind: str | None) -> list[int]:
    """The fallback order (insight positions): the similar runs' insights (in similarity
    order), then the task kind's, then the rest; within a group by BM25 of the task
    against the insight text, then by id."""
    import numpy as np

    from .similarity import _kinds, insight_score_array

    n = len(corpus.insights)
    if not n:
        return []
    tier = np.where(_kinds(corpus, "insights") == kind, 1, 2) if kind else np.full(n, 2)
    pos = np.zeros(n, dtype=np.int64)
    index = corpus.cache.get("insight-index")
    if index is None:
        index = corpus.cache["insight-index"] = {ins.id: j for j, ins in enumerate(corpus.insights)}
    seen = 0
    for run in similar:
        for item in run.insights:
            j = index.get(item["id"])
            if j is not None and tier[j] != 0:
                tier[j], pos[j] = 0, seen
                seen += 1
    score = insight_score_array(corpus, task).copy()
    score[tier == 0] = 0.0
    # corpus.insights is in id order, so the position breaks the last ties by id
    return np.lexsort((np.arange(n), -score, pos, tier)).tolist()


__all__ = ["FAILURE", "MIXED", "NEIGHBOURS", "SUCCESS", "applies_to", "insight_cues", "priority_order", "relevance_order", "side_of", "source_steps",
           "taught_tables", "tier_order", "trial_groups"]
