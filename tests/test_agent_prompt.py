"""Prompt rendering (issue 3): golden prompts, the insights-only control, similarity, budget.

Golden files live in tests/fixtures/agent/golden/. After an intended template change,
regenerate them with:  WIKITRACE_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_agent_prompt.py
and review the diff.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

FIX = Path(__file__).parent / "fixtures" / "agent"
sys.path.insert(0, str(FIX))

import agent_corpus  # noqa: E402

from wikitrace.agent.corpusdata import corpus_from_dict, load_corpus  # noqa: E402
from wikitrace.agent.prompt import build_prompt, estimate_tokens  # noqa: E402
from wikitrace.agent.relevance import priority_order  # noqa: E402
from wikitrace.agent.similarity import BM25, rank_runs, tokenize  # noqa: E402

TASK = ("You are in the middle of a room. You see a cabinet 1, a countertop 1 and a sidetable 1.\n"
        "Your task is to: put a mug in the cabinet.")


@pytest.fixture()
def corpus_dir(tmp_path):
    return agent_corpus.write_corpus(tmp_path / "corpus")


def golden(name: str, text: str) -> None:
    path = FIX / "golden" / name
    if os.environ.get("WIKITRACE_REGEN_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden {path}; run with WIKITRACE_REGEN_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; regenerate if intended"


def insight_elements(block: str) -> list[str]:
    return re.findall(r'<insight id="[^"]+">.*?</insight>', block, re.S)


# --- golden prompts --------------------------------------------------------------------

def test_golden_wikitrace(corpus_dir):
    parts = build_prompt(corpus_dir, TASK, task_type="pick_and_place")
    golden("wikitrace.txt", parts.to_text())


def test_golden_insights_only(corpus_dir):
    parts = build_prompt(corpus_dir, TASK, variant="insights-only", task_type="pick_and_place")
    golden("insights_only.txt", parts.to_text())


def test_golden_budget(corpus_dir):
    parts = build_prompt(corpus_dir, TASK, budget=1200, task_type="pick_and_place", mount_path="/mnt/memory")
    golden("wikitrace_budget1200.txt", parts.to_text())


# --- what the WikiTrace prompt must carry ------------------------------------------------

def test_wikitrace_prompt_carries_the_papers_facts(corpus_dir):
    p = build_prompt(corpus_dir, TASK, task_type="pick_and_place")
    s = p.system
    for needle in ("/work/corpus/raw/step-NNNN/", "metadata.md", "solver.full.jsonl",
                   "/work/corpus/compilation/step-NNNN.md", "_index.md", "raw turn logs are the only part you can fully trust",
                   "frequently mistaken", "comes from a run that failed", "conflicts with another insight",
                   "your first environment action", "an action you took has just failed",
                   "Do not repeat a practice run", "what not to do",
                   "/work/tools/actions step-0000", "/work/tools/turn step-0000 7 9",
                   "/work/tools/grep PATTERN --layer", "grep -rl"):
        assert needle in s, needle
    # every insight, each with its source run and outcome
    elems = insight_elements(p.memory_block)
    assert len(elems) == len(agent_corpus.INSIGHTS) and p.left_out == 0
    assert "- **Source:** step-0001 (failure)" in p.memory_block
    assert "<left_out" not in p.memory_block
    # task between the two blocks
    assert p.user.index("</memory_documents>") < p.user.index(TASK) < p.user.index("<similar_past_runs>")
    # three similar runs, most similar first, each with its insight ids and titles
    assert [r.step for r in p.similar_runs][0] == "step-0000"
    assert len(p.similar_runs) == 3
    assert "### step-0000 (success)" in p.similar_block
    assert "- insight-0000: Open closed receptacles first" in p.similar_block
    assert '"R"' in p.citation and '"C"' in p.citation and '"I"' in p.citation


def test_insights_ordered_by_task_type_then_id(corpus_dir):
    p = build_prompt(corpus_dir, TASK)
    ids = re.findall(r'<insight id="([^"]+)">', p.memory_block)
    # heat_then_place < look_in_light < pick_and_place
    assert ids == ["insight-0003", "insight-0004", "insight-0005", "insight-0006",
                   "insight-0000", "insight-0001", "insight-0002"]
    # numeric id order past 9999, apps used when there is no task type
    data = agent_corpus.corpus_dict()
    base = data["insights"][0]  # copies with their own wording: the same lesson would be shown once
    data["insights"] += [
        dict(base, id="insight-10000", task_type="pick_and_place", guideline=base["guideline"] + " (a)"),
        dict(base, id="insight-9999", task_type="pick_and_place", guideline=base["guideline"] + " (b)"),
        dict(base, id="insight-0500", task_type=None, apps=["spotify", "venmo"]),
    ]
    p = build_prompt(corpus_from_dict(data), TASK)
    ids = re.findall(r'<insight id="([^"]+)">', p.memory_block)
    # "spotify, venmo" sorts after "pick_and_place"
    assert ids[-4:] == ["insight-0002", "insight-9999", "insight-10000", "insight-0500"]
    assert "- **Apps:** spotify, venmo" in p.memory_block


def test_mount_and_tools_paths(corpus_dir):
    p = build_prompt(corpus_dir, TASK, mount_path="/mnt/mem/", tools_path="/opt/t")
    assert "/mnt/mem/raw/step-NNNN/" in p.system and "/work/corpus" not in p.system
    assert "/opt/t/actions" in p.system and p.mount_path == "/mnt/mem"


# --- insights-only differs only where the paper says ------------------------------------

def test_insights_only_differs_only_in_sources_mount_and_descent(corpus_dir):
    wt = build_prompt(corpus_dir, TASK, task_type="pick_and_place")
    io = build_prompt(corpus_dir, TASK, variant="insights-only", task_type="pick_and_place")
    strip_source = [re.sub(r"\n- \*\*Source:\*\* [^\n]*", "", e) for e in insight_elements(wt.memory_block)]
    assert strip_source == insight_elements(io.memory_block)            # same insights, same text
    assert all("**Source:**" in e for e in insight_elements(wt.memory_block))
    assert "**Source:**" not in io.memory_block                          # no source runs
    assert io.similar_block == wt.similar_block                          # same similar-runs block
    assert io.insight_ids == wt.insight_ids and io.task == wt.task
    for absent in ("/work/corpus", "/work/tools", "raw/", "compilation", "descend", "Descend", "wiki", "grep"):
        assert absent not in io.system and absent not in io.memory_block, absent
    assert io.mount_path is None and wt.mount_path == "/work/corpus"
    assert '"I"' in io.citation and '"R"' not in io.citation and '"C"' not in io.citation
    # the task message is the same apart from the source lines
    assert re.sub(r"\n- \*\*Source:\*\* [^\n]*", "", wt.user) == io.user


# --- similarity -------------------------------------------------------------------------

def test_bm25_matches_hand_computation():
    import math
    docs = ["mug cabinet", "mug mug", "book"]
    bm = BM25(docs)
    avgdl = 5 / 3
    idf_mug = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    tf_part = lambda tf, dl: tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * dl / avgdl))  # noqa: E731
    s = bm.scores("a mug")
    assert s[0] == pytest.approx(idf_mug * tf_part(1, 2))
    assert s[1] == pytest.approx(idf_mug * tf_part(2, 2))
    assert s[2] == 0.0
    assert tokenize("The Mug, in the CABINET-1!") == ["mug", "cabinet", "1"]


def test_similar_runs_ties_break_by_step_and_type_boost_applies(corpus_dir):
    data = load_corpus(corpus_dir)
    # step-0001 and step-0005 have the same instruction: tie, lower step first
    ranked = rank_runs(data, "put a book on the sidetable", k=2)
    assert [r.step for r, _ in ranked] == ["step-0001", "step-0005"]
    assert ranked[0][1] == ranked[1][1]
    # "mug" + "cabinet": step-0000 and step-0003 both match; the type boost decides
    plain = [r.step for r, _ in rank_runs(data, "heat mug cabinet", k=2)]
    boosted = [r.step for r, _ in rank_runs(data, "mug cabinet", k=2, task_type="heat_then_place", boost=1.0)]
    assert plain[0] == "step-0003" and boosted[0] == "step-0003"
    assert [r.step for r, _ in rank_runs(data, "mug cabinet", k=1, task_type="pick_and_place")] == ["step-0000"]
    # a same-type run with no word in common is still a candidate; unrelated ones are not
    only = rank_runs(data, "zzz", k=5, task_type="look_in_light")
    assert [r.step for r, _ in only] == ["step-0004"]
    assert rank_runs(data, "zzz", k=5) == []


def test_prompt_is_deterministic(corpus_dir):
    a = build_prompt(corpus_dir, TASK, budget=700).to_dict()
    load_corpus.__globals__["_CACHE"].clear()
    b = build_prompt(corpus_dir, TASK, budget=700).to_dict()
    assert a == b


# --- budget -----------------------------------------------------------------------------

def test_budget_keeps_most_relevant_prefix_and_fits(corpus_dir):
    full = build_prompt(corpus_dir, TASK, task_type="pick_and_place")
    assert full.left_out == 0
    data = load_corpus(corpus_dir)
    order = [i.id for i in priority_order(data, TASK, full.similar_runs, "pick_and_place")]
    # every insight once (which comes first: tests/test_prompt_relevance.py)
    assert sorted(order) == sorted(i.id for i in data.insights)
    previous: set[str] = set()
    for budget in range(600, full.tokens + 200, 50):
        p = build_prompt(corpus_dir, TASK, budget=budget, task_type="pick_and_place")
        kept = set(p.insight_ids)
        assert p.tokens == estimate_tokens(p.system + p.memory_block + p.similar_block)
        if kept:
            assert p.tokens <= budget
        assert len(kept) + p.left_out == len(agent_corpus.INSIGHTS)
        assert kept == set(order[: len(kept)])           # a prefix of the priority order
        assert previous <= kept                          # more budget never drops an insight
        previous = kept
        if p.left_out:
            assert f'<left_out count="{p.left_out}">' in p.memory_block
            assert "/work/tools/grep PATTERN --layer insight" in p.memory_block
        else:
            assert "<left_out" not in p.memory_block
    assert previous == set(order)


def test_budget_too_small_for_fixed_text(corpus_dir):
    p = build_prompt(corpus_dir, TASK, budget=10)
    assert p.insight_ids == [] and p.left_out == len(agent_corpus.INSIGHTS) and p.notes
    io = build_prompt(corpus_dir, TASK, budget=10, variant="insights-only")
    assert "left out for length" in io.memory_block and "grep" not in io.memory_block


def test_estimate_tokens():
    assert estimate_tokens("") == 0 and estimate_tokens("abcd") == 1 and estimate_tokens("abcde") == 2


# --- CLI ---------------------------------------------------------------------------------

def test_cli_prompt_text_and_json(corpus_dir, tmp_path):
    from typer.testing import CliRunner

    from wikitrace.cli import app

    runner = CliRunner()
    task_file = tmp_path / "task.txt"
    task_file.write_text(TASK)
    r = runner.invoke(app, ["prompt", "--corpus", str(corpus_dir), "--task-file", str(task_file), "--json",
                            "--variant", "insights-only", "--budget", "400"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["variant"] == "insights-only" and data["left_out"] > 0 and data["mount_path"] is None
    r = runner.invoke(app, ["prompt", "--corpus", str(corpus_dir), "--task", TASK, "--mount-path", "/m"])
    assert r.exit_code == 0 and "=== system" in r.stdout and "/m/compilation/step-NNNN.md" in r.stdout
    r = runner.invoke(app, ["prompt", "--corpus", str(corpus_dir)])
    assert r.exit_code == 2
    r = runner.invoke(app, ["prompt", "--corpus", str(tmp_path), "--task", "x"])
    assert r.exit_code == 2
