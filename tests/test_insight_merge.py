"""On the LLM path each insight's guideline is one merged text from the model: one call per
insight whose sources changed, answered from the cache otherwise, checked, and a fallback to
the offline wording recorded on the page (faked at the HTTP level). The offline compiler
never calls a model; ``forget`` keeps the merges of the insights it leaves unchanged."""

from __future__ import annotations

import json

import frontmatter
from fake_openai import error, is_merge, reply, valid_answer
from helpers import write_jsonl
from test_insight_layer import swe_run

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.insight_merge import NOT_MERGED_YET, check_guideline
from wikitrace.add import AddOptions, add_runs
from wikitrace.check import check_corpus
from wikitrace.forget import forget


def responder(guideline="When the build tool is missing, check the environment first and fix the code by reading it."):
    def answer(body):
        if is_merge(body):
            return reply(json.dumps({"guideline": guideline}))
        outcome = "success" if "judged a success" in json.dumps(body) or "[success]" in json.dumps(body) else "failure"
        return reply(json.dumps(valid_answer(outcome, turns=[2])))
    return answer


def test_one_merge_call_per_insight_then_only_for_the_group_that_changed(fake_openai, tmp_path):
    fake_openai.respond_with(responder())
    runs = [swe_run(k, success=k % 3 == 0) for k in range(6)]
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=out, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    assert fake_openai.merge_calls == len(data["insights"]) > 1
    for entry in data["insights"]:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        assert page["guideline_by"] == "llm" and page.get("fallback_reason") is None
        assert "check the environment first" in page.content
    assert check_corpus(out) == []

    before = fake_openai.merge_calls
    fresh = build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=tmp_path / "fresh", quiet=True))
    assert fake_openai.merge_calls == before  # unchanged groups: answered from the cache
    answered = sum(r["compiler"] == "llm" for r in data["runs"])  # a run that fell back is asked again
    assert fresh.stats["cache_hits"] == answered + len(data["insights"])

    calls = fake_openai.calls
    add_runs(AddOptions(run_file=write_jsonl(tmp_path / "b.jsonl", [swe_run(40, success=False)]), corpus=out, quiet=True))
    now = json.loads((out / "corpus.json").read_text())
    taught = now["runs"][-1]["insights"]
    # add = one call for the run + one merge for each group the new run is a source of
    assert taught and fake_openai.calls - calls == 1 + len(taught)
    assert fake_openai.merge_calls - before == len(taught)

    # forget sends no call: untouched insights keep their merge, the changed ones say they wait for one
    calls = fake_openai.calls
    forget(out, [now["runs"][-1]["run_id"]])
    assert fake_openai.calls == calls
    after = json.loads((out / "corpus.json").read_text())
    for entry in after["insights"]:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        if entry["id"] in taught:
            assert page["guideline_by"] == "offline-fallback" and page["fallback_reason"] == NOT_MERGED_YET
        else:
            assert page["guideline_by"] == "llm" and "check the environment first" in page.content
    assert check_corpus(out) == []


def test_a_bad_merge_answer_keeps_the_offline_wording_and_says_why(fake_openai, tmp_path):
    fake_openai.respond_with(responder("Run mvn in /repo/src/Module3/P.java after step-0004."))
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [swe_run(k, success=k == 0) for k in range(3)])],
                       out=out, quiet=True))
    for entry in json.loads((out / "corpus.json").read_text())["insights"]:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        assert page["guideline_by"] == "offline-fallback" and "copies values" in page["fallback_reason"]
        assert "/repo/src" not in page.content
    assert check_corpus(out) == []


def test_a_merge_the_server_keeps_failing_falls_back_with_the_fault_named(fake_openai, tmp_path):
    """A 5xx after the transport's retries, or a 400 refusing JSON mode, is a model fault: the
    offline wording stays, the reason is on the page, the build goes on."""
    faults = {"down": error(503, "overloaded"), "format": error(400, "response_format is not supported")}
    for name, fault in faults.items():
        fake_openai.respond_with(lambda body, fault=fault: fault if is_merge(body) else responder()(body))
        out = tmp_path / name
        build(BuildOptions(inputs=[write_jsonl(tmp_path / f"{name}.jsonl", [swe_run(k, success=k == 0) for k in range(3)])],
                           out=out, quiet=True))
        insights = json.loads((out / "corpus.json").read_text())["insights"]
        assert insights
        for entry in insights:
            page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
            assert page["guideline_by"] == "offline-fallback"
            assert ("HTTP 503" if name == "down" else "HTTP 400") in page["fallback_reason"]
        assert check_corpus(out) == []


def test_a_malformed_merge_answer_falls_back_and_is_asked_again_next_build(fake_openai, tmp_path):
    def broken(body):
        return reply("{\"guideline\": \"When mvn") if is_merge(body) else responder()(body)

    fake_openai.respond_with(broken)
    runs = write_jsonl(tmp_path / "a.jsonl", [swe_run(k, success=k == 0) for k in range(3)])
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[runs], out=out, quiet=True))
    insights = json.loads((out / "corpus.json").read_text())["insights"]
    for entry in insights:
        page = frontmatter.load(out / "insight" / f"{entry['id']}.md")
        assert page["guideline_by"] == "offline-fallback" and page["fallback_reason"] == "the answer is not JSON"
    assert check_corpus(out) == []
    merges = fake_openai.merge_calls
    fake_openai.respond_with(responder())  # a malformed answer is never cached: the next build asks again
    build(BuildOptions(inputs=[runs], out=out, quiet=True))
    assert fake_openai.merge_calls == merges + len(insights)
    assert all(frontmatter.load(out / "insight" / f"{e['id']}.md")["guideline_by"] == "llm" for e in insights)


def test_the_offline_compiler_never_calls_a_model(fake_openai, tmp_path):
    fake_openai.respond_with(responder())
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", [swe_run(k, success=k == 0) for k in range(3)])],
                       out=out, offline=True, quiet=True))
    assert fake_openai.calls == 0
    for entry in json.loads((out / "corpus.json").read_text())["insights"]:
        assert "guideline_by" not in frontmatter.load(out / "insight" / f"{entry['id']}.md")


def test_the_check_of_a_merged_guideline():
    offline = "When bash mvn answers \"bash: mvn: command not found\", fix what the message names."
    assert check_guideline('{"guideline": "When mvn is missing, build another way."}', offline)[0]
    assert check_guideline("not json", offline)[1] == "the answer is not JSON"
    assert "narrates" in check_guideline('{"guideline": "This run failed at turn 4."}', offline)[1]
    assert "copies values" in check_guideline('{"guideline": "Use order 4417 first."}', offline)[1]
    assert "at most" in check_guideline(json.dumps({"guideline": "x " * 400}), offline)[1]


def test_a_user_template_folder_rewrites_the_merge_prompt(fake_openai, tmp_path):
    """The merge prompt is a template like every other: a user folder that overrides it changes
    what the model is asked, and the fake still sees the same system message it checks for."""
    fake_openai.respond_with(responder())
    mine = tmp_path / "templates" / "prompts"
    mine.mkdir(parents=True)
    (mine / "insight_merge.user.j2").write_text("Merge these for {{ task_type }}: {{ key }} ({{ notes|length }} runs)\n")
    runs = [swe_run(k, success=k % 3 == 0) for k in range(4)]
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=tmp_path / "corpus", quiet=True,
                       templates=tmp_path / "templates"))
    merges = [b for b in (json.loads(r["body"]) if isinstance(r["body"], str) else r["body"] for r in fake_openai.requests)
              if is_merge(b)]
    assert merges and all(b["messages"][1]["content"].startswith("Merge these for ") for b in merges)
    assert all(b["messages"][1]["content"].endswith("runs)") for b in merges)  # the file's last newline is not sent


def test_a_group_past_its_shown_sources_gains_a_run_without_a_new_merge(fake_openai, tmp_path):
    """The merge prompt shows a group's first sources and no counts: once a group shows all it
    may, a further source changes its page's counts but asks the model nothing."""
    from wikitrace.compilers.insight_merge import SHOWN_SOURCES

    fake_openai.respond_with(responder())
    runs = [swe_run(k, success=False) for k in range(SHOWN_SOURCES + 1)]
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=out, quiet=True))
    before = json.loads((out / "corpus.json").read_text())
    big = [e for e in before["insights"] if len(e["sources"]) > SHOWN_SOURCES]
    assert big  # the missing build tool: every run met it
    merges = fake_openai.merge_calls
    add_runs(AddOptions(run_file=write_jsonl(tmp_path / "b.jsonl", [swe_run(90, success=False)]), corpus=out, quiet=True))
    after = {e["id"]: e for e in json.loads((out / "corpus.json").read_text())["insights"]}
    new_run = json.loads((out / "corpus.json").read_text())["runs"][-1]
    grown = [e["id"] for e in big if e["id"] in new_run["insights"]]
    assert grown and all(after[i]["counts"]["runs"] == len(after[i]["sources"]) for i in grown)
    small = [i for i in new_run["insights"] if i not in grown]
    assert fake_openai.merge_calls - merges == len(small)
    for i in grown:
        assert after[i]["guideline_by"] == "llm"  # the merged text still stands, from the cache
