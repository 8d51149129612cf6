"""Build the memory additions to an agent's prompt (paper §3.4, Figures 27 and 28).

``build_prompt`` returns a :class:`PromptParts`: a system addition (what the memory is,
where it is mounted, when to descend, the memory rules, the tools) and a user message
made of ``<memory_documents>`` (every insight, by task type then id), the task text,
and ``<similar_past_runs>`` (the runs most like the task, with their insights).

Variant ``insights-only`` is the paper's control: the same insights and the same
similar-runs block, but no source line on the insights, no wiki, no descent text, and a
citation prompt that asks for insight ids only.

With ``budget`` (tokens, estimated as ``ceil(characters / 4)`` over everything added:
system addition + memory block + similar-runs block, not the task text) only the most
relevant insights are inlined, in relevance.py's order: first the lessons the past tasks
most like this one taught (specific ones before those most runs taught, with a success
lesson moved up beside the first failure one, or the reverse), then those drawn from the
similar runs, those of the task's type and the rest. The kept set is the longest prefix of that order that fits; it is
shown in the usual order, and the agent is told how many were left out and how to
search for them.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .plain_prompt import render
from .prompt_source import open_source
from .corpusdata import CorpusData, task_kind
from .lesson_key import LessonTexts, unique
from .similarity import ScoreBackend

VARIANTS = ("wikitrace", "insights-only")
DEFAULT_TOOLS = "/work/tools"
CHARS_PER_TOKEN = 4
# The CLI's default budget: the additions stay a small part of an 8k-token context
# window (and a sliver of a 32k-128k one); `--budget 0` inlines every insight as the
# paper does. The library's own default stays "no budget".
DEFAULT_BUDGET = 4000


def estimate_tokens(text: str) -> int:
    """The budget's token estimator: one token per 4 characters, rounded up."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass
class SimilarRun:
    step: str
    outcome: str
    score: float
    instruction: str
    insights: list[dict[str, str]]  # [{"id", "title"}]


@dataclass
class PromptParts:
    variant: str
    system: str              # append to the agent's own system prompt
    user: str                # memory block + task + similar runs: the whole task message
    memory_block: str        # <memory_documents> ... </memory_documents>
    similar_block: str       # <similar_past_runs> ... </similar_past_runs> ('' when none)
    task: str
    citation: str            # the post-episode citation prompt
    insight_ids: list[str]   # inlined insights, in the order shown
    left_out: int            # insights not inlined because of the budget
    left_out_ids: list[str]
    similar_runs: list[SimilarRun]
    mount_path: str | None   # None for insights-only (nothing is mounted)
    budget: int | None
    tokens: int              # estimate_tokens(system + memory_block + similar_block)
    notes: list[str] = field(default_factory=list)
    # the same lesson drawn from several runs is shown once: shown id -> the other ids it stands for
    same_lesson: dict[str, list[str]] = field(default_factory=dict)
    # inlined insights an episode in the usage ledger cited: shown id -> {"episodes", "succeeded"}
    usage: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_text(self) -> str:
        parts = ["=== system (append to the agent's system prompt) ===", self.system.rstrip("\n"), "",
                 "=== user (the task message) ===", self.user.rstrip("\n"), "",
                 "=== citation (after the episode) ===", self.citation.rstrip("\n")]
        return "\n".join(parts + [""])  # one copy of a possibly huge text, not two


def _memory_block(texts: list[str], *, show_source, left_out, mount, tools, templates) -> str:
    return render("agent/memory_documents.md.j2", templates, insights=texts,
                  show_source=show_source, left_out=left_out, mount=mount, tools=tools)


def build_prompt(
    corpus: "CorpusData | str | Path | dict",
    task: str,
    variant: str = "wikitrace",
    budget: int | None = None,
    *,
    task_type: str | None = None,
    apps: list[str] | None = None,
    k: int = 3,
    boost: float = 0.25,
    mount_path: str | None = None,
    tools_path: str = DEFAULT_TOOLS,
    templates: str | Path | None = None,
    backend: ScoreBackend | None = None,
    prefer_helpful: bool = False,
) -> PromptParts:
    """Render the memory additions for ``task`` from a compiled corpus (folder, dict or loaded).

    A folder with a current prompt index (``index/prompt.bin``, see index.py) is read
    through it; otherwise, or with a non-BM25 backend, corpus.json is loaded. Both give
    the same prompt.

    Insights that episodes in the corpus's usage ledger cited show their counts (an
    insight shown for others that teach the same lesson counts theirs too). With
    ``prefer_helpful`` a budget keeps insights cited mostly in failed episodes last
    (``helped_first``); insights never cited keep their place.
    """
    if variant not in VARIANTS:
        raise _unknown_variant(variant)
    if budget is not None and budget < 0:
        raise ValueError("budget must be a non-negative number of tokens")
    src = open_source(corpus, backend)
    wiki = variant == "wikitrace"
    mount = (mount_path or src.mount_path).rstrip("/") or "/"
    tools = tools_path.rstrip("/")
    example_step = src.first_step or "step-0000"
    example_insight = src.first_insight or "insight-0000"
    notes: list[str] = []

    ranked = src.rank_runs(task, task_type=task_type, apps=apps, k=k, boost=boost)
    notes.extend(getattr(src, "notes", ()))  # e.g. an embeddings fallback
    similar = [_similar_run(src, r, s) for r, s in ranked]
    kind = task_kind(task_type, apps) or (ranked[0][0].kind if ranked else None)

    system = render(f"agent/system_{variant.replace('-', '_')}.md.j2", templates, mount=mount, tools=tools,
                    example_step=example_step)
    similar_block = render("agent/similar_past_runs.md.j2", templates,
                           runs=[asdict(s) for s in similar])
    citation = render(f"agent/cite_{variant.replace('-', '_')}.md.j2", templates,
                      example_step=example_step, example_insight=example_insight)
    block_kw = dict(show_source=wiki, mount=mount, tools=tools, templates=templates)

    reps = src.reps()
    usage = _lesson_usage(corpus, src.insight_ids, reps)
    texts = LessonTexts(src.texts(wiki, templates), reps, src.info, wiki, templates, src.cache, usage)
    # insight positions (id order) in display order, one per lesson
    everything = [j for j in src.display() if reps[j] == j] if texts.members else src.display()
    kept = everything
    if budget is not None:
        def ranked_order() -> list[int]:
            order = unique(reps[j] for j in src.priority(task, similar, kind))
            return helped_first(order, usage) if prefer_helpful and usage else order

        kept, note = _within_budget(budget, everything, ranked_order, texts, system + similar_block, block_kw)
        notes.extend([note] if note else [])
    if kept is everything:
        texts.all()

    ids = src.insight_ids
    kept_set = set(kept)
    left_out_ids = [i for j, i in enumerate(ids) if reps[j] not in kept_set] if len(kept) < len(everything) else []
    same_lesson = {ids[j]: [ids[k] for k in texts.members[j]] for j in kept if j in texts.members}
    memory_block = _memory_block([texts.get(j) for j in kept], left_out=len(left_out_ids), **block_kw)
    # joined once: with every insight inlined the block is megabytes, and each copy costs
    user = "".join([memory_block, "\n", task.rstrip("\n"), "\n", "\n" if similar_block else "", similar_block])
    return PromptParts(
        variant=variant, system=system, user=user, memory_block=memory_block, similar_block=similar_block,
        task=task, citation=citation, insight_ids=[ids[j] for j in kept], left_out=len(left_out_ids),
        left_out_ids=left_out_ids, similar_runs=similar, mount_path=mount if wiki else None, budget=budget,
        tokens=math.ceil((len(system) + len(memory_block) + len(similar_block)) / CHARS_PER_TOKEN), notes=notes,
        same_lesson=same_lesson,
        usage={ids[j]: {"episodes": usage[j][0], "succeeded": usage[j][1]} for j in kept if j in usage},
    )


def _similar_run(src, run, score: float) -> SimilarRun:
    titles = [(i, src.title(i)) for i in run.insights]
    return SimilarRun(step=run.step, outcome=run.outcome, score=round(score, 6), instruction=run.instruction,
                      insights=[{"id": i, "title": t} for i, t in titles if t is not None])


def _within_budget(budget: int, everything: list[int], ranked_order, texts, fixed: str,
                   block_kw: dict) -> tuple[list[int], str | None]:
    """The insights (in display order) a prompt of ``budget`` tokens keeps beside the
    ``fixed`` text (system prompt and similar runs), and a note when not even the frame fits.

    ``everything`` itself when all fit. Otherwise insights are taken in ``ranked_order()``
    until the next one does not fit (when the first does not, the best-ranked one that does); the estimate is per piece, so the real block is then
    rendered and trimmed until it fits. When the pool's size is not known yet the priority
    order is walked instead of rendering every insight.
    """
    total = texts.total_chars()
    if total is not None and math.ceil(
            (len(fixed) + total + len(_memory_block([], left_out=0, **block_kw))) / CHARS_PER_TOKEN) <= budget:
        return everything, None
    frame = _memory_block([], left_out=len(everything), **block_kw)
    room = budget * CHARS_PER_TOKEN - len(fixed) - len(frame)
    chosen: list[int] = []
    for j in ranked_order():
        cost = len(texts.get(j)) + 1
        if cost > room:
            break
        room -= cost
        chosen.append(j)
    if not chosen:  # the first ranked is too long: the best-ranked one that fits, not an empty block
        chosen = next(([j] for j in ranked_order() if len(texts.get(j)) + 1 <= room), [])
    if len(chosen) >= len(everything):
        return everything, None
    while True:  # the estimate is per piece; confirm on the real render
        picked = set(chosen)
        block = _memory_block([texts.get(j) for j in everything if j in picked],
                              left_out=len(everything) - len(chosen), **block_kw)
        if not chosen or estimate_tokens(fixed + block) <= budget:
            break
        chosen.pop()
    picked = set(chosen)
    tokens = estimate_tokens(fixed + block)
    note = f"budget {budget} is below the fixed text ({tokens} tokens); no insight inlined" if tokens > budget else None
    return [j for j in everything if j in picked], note


def _lesson_usage(corpus, insight_ids: list[str], reps: list[int]) -> dict[int, tuple[int, int]]:
    """Lesson position -> (episodes citing any insight of the lesson, of which succeeded),
    from the usage ledger of a corpus folder; {} when there is none (one stat)."""
    if not isinstance(corpus, (str, Path)):
        return {}
    from ..corpus import ledger

    if not (Path(corpus) / ledger.LEDGER).is_file():
        return {}
    pos = {iid: j for j, iid in enumerate(insight_ids)}
    try:  # `wikitrace check` reports lines that cannot be read
        if any(r != j for j, r in enumerate(reps)):  # lessons of several insights: count episodes once
            return ledger.quick_tally(Path(corpus), group=lambda iid: reps[pos[iid]] if iid in pos else None)
        return {pos[i]: c for i, c in ledger.quick_tally(Path(corpus)).items() if i in pos}
    except ledger.LedgerError:
        return {}


def mostly_failed(counts: tuple[int, int]) -> bool:
    """Cited in more failed episodes than successful ones."""
    episodes, succeeded = counts
    return episodes - succeeded > succeeded


def helped_first(order, usage: dict[int, tuple[int, int]]):
    """``order`` with the insights cited mostly in failed episodes moved to the end (in
    their order). Every other insight, never-cited ones included, keeps its order and only
    moves forward, so a budget that kept it without this still keeps it."""
    pushed = []
    for j in order:
        if j in usage and mostly_failed(usage[j]):
            pushed.append(j)
        else:
            yield j
    yield from pushed


def _unknown_variant(variant: str) -> Exception:
    from ..errors import UsageError

    return UsageError(f"unknown variant {variant!r}", f"use one of {', '.join(VARIANTS)}", where="--variant")


def citation_prompt(corpus: "CorpusData | str | Path | dict | None" = None, variant: str = "wikitrace",
                    templates: str | Path | None = None) -> str:
    """The post-episode citation prompt alone (examples use the corpus's first ids)."""
    if variant not in VARIANTS:
        raise _unknown_variant(variant)
    src = open_source(corpus, None) if corpus is not None else None
    step = (src.first_step if src else None) or "step-0023"
    ins = (src.first_insight if src else None) or "insight-0040"
    return render(f"agent/cite_{variant.replace('-', '_')}.md.j2", templates, example_step=step, example_insight=ins)
