"""The same lesson drawn from several runs is shown once in the agent's prompt, with its
sources counted, whether the prompt is built from corpus.json or from the prompt index.
The corpus itself keeps every insight as its own document with its own id."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "agent"))

import agent_corpus  # noqa: E402

from wikitrace.agent.corpusdata import corpus_from_dict  # noqa: E402
from wikitrace.agent.index import write_prompt_index  # noqa: E402
from wikitrace.agent.index_reader import index_status  # noqa: E402
from wikitrace.agent.prompt import build_prompt  # noqa: E402
from wikitrace.corpus.corpus_json import dumps  # noqa: E402

TASK = "Your task is to: put a mug in the cabinet."


def with_repeats() -> dict:
    """insight-0000's lesson learned again by two more runs (one failed), worded with other
    whitespace and case; a third copy of another task type stays a lesson of its own."""
    data = agent_corpus.corpus_dict()
    base = data["insights"][0]
    again = [
        dict(base, id="insight-0007", source_step="step-0001", source_outcome="failure", title="Open it first",
             guideline=base["guideline"].upper().replace(" ", "  ")),
        dict(base, id="insight-0008", source_step="step-0005", source_outcome="success"),
        dict(base, id="insight-0009", source_step="step-0002", task_type="heat_then_place"),
    ]
    data["insights"] += again
    for ins in again:
        run = next(r for r in data["runs"] if r["step"] == ins["source_step"])
        run["insights"] = run["insights"] + [ins["id"]]
    return data


def elements(block: str) -> dict[str, str]:
    return dict(re.findall(r'<insight id="([^"]+)">\n(.*?)</insight>', block, re.S))


def test_a_lesson_from_three_runs_is_shown_once_with_its_sources():
    p = build_prompt(corpus_from_dict(with_repeats()), TASK)
    shown = elements(p.memory_block)
    assert "insight-0007" not in shown and "insight-0008" not in shown
    assert "insight-0009" in shown  # same words, another task type: its own lesson
    text = shown["insight-0000"]
    assert "- **Learned from:** 3 runs (insight-0000, insight-0007, insight-0008)" in text
    assert "- **Source:** step-0000 (success), step-0001 (failure), step-0005 (success)" in text
    assert p.same_lesson == {"insight-0000": ["insight-0007", "insight-0008"]}
    assert p.left_out == 0 and p.left_out_ids == []
    assert len(shown) == 8  # 10 insights, 8 lessons


def test_insights_only_counts_the_sources_without_naming_runs():
    wt = build_prompt(corpus_from_dict(with_repeats()), TASK)
    io = build_prompt(corpus_from_dict(with_repeats()), TASK, variant="insights-only")
    text = elements(io.memory_block)["insight-0000"]
    assert "- **Learned from:** 3 runs (insight-0000, insight-0007, insight-0008)" in text
    assert "step-0001" not in text and "**Source:**" not in text
    assert re.sub(r"\n- \*\*Source:\*\* [^\n]*", "", wt.user) == io.user


def test_the_prompt_index_gives_the_same_prompt(tmp_path):
    data = with_repeats()
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "corpus.json").write_text(dumps(data)[0], encoding="utf-8")
    write_prompt_index(root, data["runs"], data["insights"])
    assert index_status(root)[1] == "ok"  # the prompt below is read through the index
    for variant in ("wikitrace", "insights-only"):
        assert build_prompt(root, TASK, variant=variant).to_dict() == \
            build_prompt(corpus_from_dict(copy.deepcopy(data)), TASK, variant=variant).to_dict()


def test_budget_counts_a_lesson_once_and_leaves_out_whole_groups():
    data = with_repeats()
    full = build_prompt(corpus_from_dict(data), TASK)
    tight = build_prompt(corpus_from_dict(data), TASK, budget=full.tokens - 200)
    assert 0 < len(tight.insight_ids) < len(full.insight_ids)
    shown = set(tight.insight_ids) | {i for ids in tight.same_lesson.values() for i in ids}
    every = {i["id"] for i in data["insights"]}
    assert shown | set(tight.left_out_ids) == every and not shown & set(tight.left_out_ids)
    assert tight.tokens <= full.tokens - 200
