"""The prompt's blocks written without the template engine are the bundled templates' text,
byte for byte.

``wikitrace prompt`` renders the agent templates in plain Python (agent/plain_prompt.py)
unless ``--templates`` names a folder; an agent must get the same prompt either way, so
both ways are rendered here on awkward values and on a real corpus.
"""

import json
import sys

import pytest
from helpers import TAU_BENCH

from wikitrace.agent import plain_prompt
from wikitrace.agent.corpusdata import InsightInfo
from wikitrace.agent.insight_text import render_insights
from wikitrace.agent.prompt import build_prompt, citation_prompt
from wikitrace.templates import bundled_dir, render

ENGINE = str(bundled_dir("corpus_templates"))  # the bundled templates given as a folder: jinja2 renders them
ODD = "a [link](x) `tick` <b>\x1b[31mred\u202e\\x00 tab\there\nnext line  é"


def _insight(k: int, **over) -> InsightInfo:
    fields = dict(id=f"insight-{k:04d}", title=f"Title {k} {ODD}", task_type="airline", apps=[],
                  source_step=f"step-{k:04d}", source_outcome="failure", guideline=f"Do {ODD}\n\nthen stop",
                  applicability=f"When {ODD}", sources=[(f"step-{k:04d}", "failure")], evidence=f"Seen {ODD}")
    fields.update(over)
    return InsightInfo(**fields)


CASES = [
    _insight(1),
    _insight(2, task_type=None, apps=["shop", 7, "mail\x07"]),
    _insight(3, task_type=None, apps=[], evidence="", sources=[]),
    _insight(4, sources=[(f"step-{n:04d}", "success" if n % 2 else "failure") for n in range(9)]),
    _insight(5, source_step=None, source_outcome=None, sources=[], title="", guideline="", applicability=""),
]


@pytest.mark.parametrize("show_source", [True, False])
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("extra", ["alone", "same-lesson", "cited-once", "cited-twice"])
def test_an_insight_reads_the_same(case, show_source, extra):
    also = [[CASES[(case + 1) % len(CASES)], CASES[(case + 2) % len(CASES)]]] if extra == "same-lesson" else None
    usage = {"cited-once": [(1, 0)], "cited-twice": [(2, 1)]}.get(extra)
    items = [CASES[case]]
    assert render_insights(None, items, show_source, also, usage) == render_insights(ENGINE, items, show_source,
                                                                                     also, usage)


@pytest.mark.parametrize("left_out", [0, 1, 2])
@pytest.mark.parametrize("show_source", [True, False])
def test_the_memory_block_reads_the_same(left_out, show_source):
    kw = dict(insights=["<insight id=\"i\">\n- x\n</insight>", ODD, ""], show_source=show_source,
              left_out=left_out, mount="/m n\x1b/", tools=f"/t{ODD}")
    assert plain_prompt.render("agent/memory_documents.md.j2", **kw) == render("agent/memory_documents.md.j2", **kw)
    kw["insights"] = []
    assert plain_prompt.render("agent/memory_documents.md.j2", **kw) == render("agent/memory_documents.md.j2", **kw)


def test_the_similar_runs_block_reads_the_same():
    runs = [{"step": "step-0001", "outcome": "success", "instruction": ODD,
             "insights": [{"id": "insight-0001", "title": ODD}, {"id": "insight-0002", "title": ""}]},
            {"step": "step-0002\x1b", "outcome": "failure", "instruction": "", "insights": []},
            {"step": "step-0003", "outcome": "failure", "instruction": "x", "insights": [{"id": "i", "title": "t"}]}]
    for some in (runs, runs[:1], runs[1:2], []):
        assert plain_prompt.render("agent/similar_past_runs.md.j2", runs=some) == \
            render("agent/similar_past_runs.md.j2", runs=some)


@pytest.mark.parametrize("name", ["agent/system_wikitrace.md.j2", "agent/system_insights_only.md.j2",
                                  "agent/cite_wikitrace.md.j2", "agent/cite_insights_only.md.j2"])
def test_the_fixed_texts_read_the_same(name):
    kw = dict(mount=f"/mnt/{ODD}", tools="/t", example_step="step-0003\u202e", example_insight=ODD)
    assert plain_prompt.fill_in(name, kw) is not None  # written out, not handed to jinja2
    assert plain_prompt.render(name, **kw) == render(name, **kw)


def test_a_template_with_logic_is_not_filled_in_as_text():
    assert plain_prompt.fill_in("agent/memory_documents.md.j2", {}) is None
    assert plain_prompt.fill_in("raw_index.md.j2", {}) is None


@pytest.mark.skipif(not TAU_BENCH.exists(), reason="tau-bench runs not present (set WIKITRACE_DATA)")
@pytest.mark.parametrize("variant", ["wikitrace", "insights-only"])
@pytest.mark.parametrize("budget", [None, 4000, 30])
def test_a_real_corpus_gives_the_same_prompt(tau_bench_corpus, variant, budget):
    corpus, _ = tau_bench_corpus
    task = "I want to cancel my reservation and get a refund [urgent]\x1b"
    plain = build_prompt(corpus, task, variant, budget)  # through the prompt index, its texts rendered in plain Python
    loaded = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))
    engine = build_prompt(loaded, task, variant, budget, templates=ENGINE)  # every insight rendered by jinja2
    assert plain.to_dict() == engine.to_dict()
    assert plain.similar_runs and (plain.left_out if budget else plain.insight_ids)
    assert citation_prompt(corpus, variant) == citation_prompt(corpus, variant, templates=ENGINE)


def test_an_indexed_prompt_never_imports_jinja2(tau_bench_corpus, tmp_path):
    import subprocess

    corpus, _ = tau_bench_corpus
    code = ("import sys\nfrom wikitrace.entry import fast_path\n"
            f"fast_path(['prompt', '--corpus', {str(corpus)!r}, '--task', 'change my flight'])\n"
            "print('jinja2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "False"
