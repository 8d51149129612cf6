"""On the LLM path each insight's guideline is one merged text from the model: one call per
insight whose sources changed, answered from the cache otherwise, checked, and a fallback to
the offline wording recorded on the page (faked at the HTTP level)."""

from __future__ import annotations

import json

import frontmatter
from fake_openai import reply, valid_answer
from helpers import write_jsonl
from test_insight_layer import swe_run

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.insight_merge import INSTRUCTIONS, check_guideline
from wikitrace.add import AddOptions, add_runs
from wikitrace.check import check_corpus


def is_merge(body: dict) -> bool:
    return body["messages"][0]["content"] == INSTRUCTIONS


def responder(guideline="When the build tool is missing, check the environment first and fix the code by reading it."):
    def answer(body):
        if is_merge(body):
            return reply(json.dumps({"guideline": guideline}))
        outcome = "success" if "judged a success" in json.dumps(body) or "[success]" in json.dumps(body) else "failure"
        return reply(json.dumps(valid_answer(outcome, turns=[2])))
    return answer


def merges(fake) -> int:
    return sum(is_merge(b) for b in fake.bodies)


def test_one_merge_call_per_insight_then_only_for_the_group_that_changed(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKITRACE_MERGE_INSIGHTS", "1")
    fake_openai.respond_with(responder())
    runs = [swe_run(k, success=k % 3 == 0) for k in range(6)]
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=out, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    assert merges(fake_openai) == len(data["insights"]) > 1
    for entry in data["insights"]:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        assert page["guideline_by"] == "llm" and page.get("fallback_reason") is None
        assert "check the environment first" in page.content
    assert check_corpus(out) == []

    before = merges(fake_openai)
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=out, quiet=True))
    assert merges(fake_openai) == before  # unchanged groups: answered from the cache

    add_runs(AddOptions(run_file=write_jsonl(tmp_path / "b.jsonl", [swe_run(40, success=False)]), corpus=out, quiet=True))
    now = json.loads((out / "corpus.json").read_text())
    taught = now["runs"][-1]["insights"]
    assert merges(fake_openai) - before == len(taught)  # only the groups the new run is a source of


def test_a_bad_merge_answer_keeps_the_offline_wording_and_says_why(fake_openai, tmp_path, monkeypatch):
    monkeypatch.setenv("WIKITRACE_MERGE_INSIGHTS", "1")
    fake_openai.respond_with(responder("Run mvn in /repo/src/Module3/P.java after step-0004."))
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [swe_run(k, success=k == 0) for k in range(3)])],
                       out=out, quiet=True))
    for entry in json.loads((out / "corpus.json").read_text())["insights"]:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        assert page["guideline_by"] == "offline-fallback" and "copies values" in page["fallback_reason"]
        assert "/repo/src" not in page.content
    assert check_corpus(out) == []


def test_without_the_setting_no_merge_is_asked(fake_openai, tmp_path):
    fake_openai.respond_with(responder())
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [swe_run(k, success=k == 0) for k in range(3)])],
                       out=tmp_path / "corpus", quiet=True))
    assert fake_openai.calls >= 3 and merges(fake_openai) == 0


def test_the_check_of_a_merged_guideline():
    offline = "When bash mvn answers \"bash: mvn: command not found\", fix what the message names."
    assert check_guideline('{"guideline": "When mvn is missing, build another way."}', offline)[0]
    assert check_guideline("not json", offline)[1] == "the answer is not JSON"
    assert "narrates" in check_guideline('{"guideline": "This run failed at turn 4."}', offline)[1]
    assert "copies values" in check_guideline('{"guideline": "Use order 4417 first."}', offline)[1]
    assert "at most" in check_guideline(json.dumps({"guideline": "x " * 400}), offline)[1]
