"""An insight page's list of sources, written without the template engine, is the bundled
template's page byte for byte; and `wikitrace add` renders only the insight pages it changes.

A build writes the sources list in plain Python (corpus/documents.py) unless ``--templates``
overrides ``insight.md.j2``; the pages must not depend on that choice, so both ways are
rendered here from corpus.json entries of real compiles and from an entry with awkward text.
"""

import json
import os
import shutil

import pytest
from helpers import example_runs, make_writable_copy, write_jsonl

from wikitrace.add import add_run
from wikitrace.build import BuildOptions, build
from wikitrace.corpus import documents, insights, layout
from wikitrace.templates import bundled_dir


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    """A --templates folder holding an unchanged copy of the bundled insight template."""
    folder = tmp_path_factory.mktemp("templates")
    shutil.copy(bundled_dir("corpus_templates") / documents.INSIGHT_TEMPLATE, folder / documents.INSIGHT_TEMPLATE)
    return folder


def _same_both_ways(entry: dict, engine_dir, mount: str = "/work/corpus", usage=(0, 0), titles=None) -> str:
    titles = titles or {entry["id"]: entry["title"]}
    by_hand = documents.render_insight(entry, mount, None, usage, titles)
    engine = documents.render_insight(entry, mount, engine_dir, usage, titles)
    assert by_hand == engine, entry["id"]
    return by_hand


def test_every_insight_of_the_tau_bench_corpus_renders_the_same(tau_bench_corpus, engine_dir):
    corpus, _result = tau_bench_corpus
    insights = json.loads((corpus / "corpus.json").read_text())["insights"]
    titles = {i["id"]: i["title"] for i in insights}
    assert len(insights) > 20 and sum(len(i["sources"]) for i in insights) > 200
    for entry in insights:  # and what the build wrote is that page
        text = _same_both_ways(entry, engine_dir, titles=titles)
        assert text.encode() == (corpus / layout.insight_doc(entry["id"])).read_bytes()


def test_awkward_sources_render_the_same(tmp_path, engine_dir):
    entry = {
        "id": "insight-0003", "key": "error|get_order|Error: no", "title": "Check the [order] id `first`",
        "guideline": "Look it up <first>.", "applicability": "Orders\u200b with ids.", "task_type": None,
        "apps": ["mail", "cal"], "compiler": "offline", "source_step": "step-0001", "source_outcome": "failure",
        "counts": {"runs": 4, "success": 1, "failure": 3}, "contrast": None, "same_task": None, "separating": [],
        "sources": [
            {"step": "step-0001", "outcome": "failure", "detail": "said [see](x.md) and `rm -rf` \\* here"},
            {"step": "step-0002", "outcome": "failure", "detail": ""},
            {"step": "step-0010", "outcome": "success", "detail": None},
            {"step": "step-0011", "outcome": "failure", "detail": "a bell \x07 and an escape \x1b[0m, émigré"},
        ],
    }
    _same_both_ways(entry, engine_dir)
    _same_both_ways(entry, engine_dir, mount="/mnt/ünï\tcode/", usage=(3, 2))
    _same_both_ways({**entry, "sources": entry["sources"][:1]}, engine_dir, mount="/")


def _stamps(corpus) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in (corpus / "insight").glob("insight-*.md")}


def test_add_renders_only_the_insight_pages_it_changes(tmp_path, monkeypatch):
    runs = example_runs()
    a = write_jsonl(tmp_path / "A.jsonl", runs[:-1])
    b = write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    corpus = tmp_path / "corpus"
    build(BuildOptions(inputs=[a], out=corpus, quiet=True, offline=True))
    before_entries = {i["id"]: i for i in json.loads((corpus / "corpus.json").read_text())["insights"]}
    before_bytes = {p.name: p.read_bytes() for p in (corpus / "insight").glob("insight-*.md")}
    stamps = _stamps(corpus)
    rendered = []
    real = documents.render_insight
    monkeypatch.setattr(documents, "render_insight", lambda entry, *a, **kw: rendered.append(entry["id"]) or
                        real(entry, *a, **kw))
    gathered_kinds = set()
    real_gather = insights.gather
    monkeypatch.setattr(insights, "gather", lambda runs, *a, **kw: gathered_kinds.update(map(insights.kind_of, runs))
                        or real_gather(runs, *a, **kw))
    added = add_run(b, corpus, offline=True).added
    # the examples hold three task types; only the added run's is gathered again
    assert gathered_kinds == {"account"}
    assert len({insights.kind_of(i) for i in before_entries.values()}) == 3
    assert added and added[0]["insights"]
    after = {p.name: p.read_bytes() for p in (corpus / "insight").glob("insight-*.md")}
    changed = {name for name in after if before_bytes.get(name) != after[name]}
    # the run's own groups change; a page whose bytes did not change was not written again ...
    assert {layout.insight_doc(i).split("/")[1] for i in added[0]["insights"]} <= changed
    assert {name: stamps[name] for name in stamps if name not in changed} == \
        {name: _stamps(corpus)[name] for name in stamps if name not in changed}
    # ... nor rendered: only pages of insights the run is a source of, or whose shown figures moved
    assert set(rendered) < set(before_entries) | set(added[0]["insights"]), "every insight page was rendered again"
    assert set(added[0]["insights"]) <= set(rendered)
    # and the corpus is still what compiling both writes
    together = tmp_path / "together"
    build(BuildOptions(inputs=[a, b], out=together, quiet=True, offline=True))
    for name in after:
        assert after[name] == (together / "insight" / name).read_bytes(), name
    assert (corpus / "insight" / "_index.md").read_bytes() == (together / "insight" / "_index.md").read_bytes()


def test_an_insight_the_model_has_not_merged_yet_is_asked_again_by_add_whatever_its_task_type(fake_openai, tmp_path):
    from fake_openai import is_merge, reply
    from test_add import _answer_for

    runs = example_runs()
    a = write_jsonl(tmp_path / "A.jsonl", runs[:-1])
    b = write_jsonl(tmp_path / "B.jsonl", runs[-1:])
    corpus = tmp_path / "corpus"
    fake_openai.respond_with(lambda body: reply("{\"guideline\": \"When") if is_merge(body) else _answer_for(body))
    build(BuildOptions(inputs=[a], out=corpus, quiet=True))
    before = json.loads((corpus / "corpus.json").read_text())["insights"]
    assert before and all(i["guideline_by"] == "offline-fallback" for i in before)
    fake_openai.respond_with(_answer_for)
    add_run(b, corpus)
    after = json.loads((corpus / "corpus.json").read_text())["insights"]
    assert {insights.kind_of(i) for i in after} == {"refund", "inventory", "account"}
    assert all(i["guideline_by"] == "llm" for i in after), "a fallback of another task type was not asked again"


def test_a_link_to_a_lesson_is_worded_as_the_lesson_is_titled(tau_bench_corpus):
    """A page naming another lesson by its title names it as that page is titled: a title rewritten
    after the link was worded (an error's advice, a change's argument) left the link text stale."""
    import re

    import frontmatter

    out, _result = tau_bench_corpus
    titles = {p.stem: frontmatter.load(p)["title"] for p in (out / "insight").glob("insight-*.md")}
    link = re.compile(r"\[((?:[^\[\]\\]|\\.)+)\]\((insight-\d+)\.md\)")
    checked = 0
    for page in (out / "insight").glob("insight-*.md"):
        for text, target in link.findall(page.read_text()):
            if target == text:  # linked by its id, not its title
                continue
            plain = re.sub(r"\\(.)", r"\1", text)
            assert plain == titles[target], (page.name, plain, titles[target])
            checked += 1
    assert checked


def test_a_lesson_s_contrast_counts_every_run_that_taught_it(tau_bench_corpus):
    """The Evidence line counts the runs of the task type that met the lesson's pattern; a lesson
    taught by runs that pattern leaves out (successes that only asked, then handed off unasked)
    counted another group than its own (tau rater). A rule's lesson is taught by the runs that
    kept it too, and counts those that broke it: the one exception."""
    import json

    from wikitrace.corpus.insights import contrast_pattern

    out, _result = tau_bench_corpus
    data = json.loads((out / "corpus.json").read_text())
    patterns = {r["step"]: set(r["patterns"]) for r in data["runs"]}
    checked = 0
    for entry in data["insights"]:
        pattern = contrast_pattern(entry["key"])
        if pattern is None or entry["key"].startswith("rule|"):
            continue
        left = [s["step"] for s in entry["sources"] if pattern not in patterns[s["step"]]]
        assert not left, (entry["id"], entry["key"], pattern, left)
        checked += 1
    assert checked > 20


def test_a_rule_page_lists_the_trials_differences_without_advising_on_them(engine_dir):
    """A rule's page advises what the rule asks; what else the successful trials did is listed under
    More evidence, never said as advice beside it (raters read it as another lesson tacked on)."""
    difference = {"text": "had no change_trip call go through, where the failed run had one", "runs": 2,
                  "steps": ["step-0001", "step-0002"], "tasks": 2}
    entry = {
        "id": "insight-0004", "key": "rule|change_trip|Ask first.", "title": "Keep the rule: Ask first.",
        "guideline": "Before each call this rule covers, do what it asks: \"Ask first.\"", "applicability": "In trips.",
        "task_type": "trips", "apps": None, "compiler": "offline", "source_step": "step-0001",
        "source_outcome": "failure", "counts": {"runs": 2, "success": 0, "failure": 2}, "contrast": None,
        "same_task": {"side": "failure", "members": 2, "compared": 2, "compared_steps": ["step-0001", "step-0002"],
                      "differences": [difference]}, "separating": [],
        "sources": [{"step": "step-0001", "outcome": "failure", "detail": "changed it unasked"},
                    {"step": "step-0002", "outcome": "failure", "detail": "changed it unasked"}]}
    page = _same_both_ways(entry, engine_dir)
    assert "had no change_trip call go through" in page.split("## More evidence", 1)[1]
    assert "In a run like these" not in page
    # the same differences on another kind of lesson are advice
    page = _same_both_ways({**entry, "key": "went-through|change_trip"}, engine_dir)
    assert "In a run like these, make sure the request calls for a change with change_trip at all" in page
