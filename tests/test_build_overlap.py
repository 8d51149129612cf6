"""What a build overlaps to finish sooner must change nothing a user sees: a large input's
pages are written by the page writer from the first run (the same bytes as written here,
and no helper left behind when the build stops before its first run), and the model's
insight merges go out on the runs' own HTTP client before the build waits for the page
writer (the same pages and answers)."""

from __future__ import annotations

import json
import threading

import pytest
from fake_openai import is_merge, reply, valid_answer
from helpers import example_runs, tree_bytes, without_build_stamp, write_jsonl
from test_insight_layer import swe_run

from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus
from wikitrace.corpus import pages
from wikitrace.corpus.update import RunWriter


@pytest.fixture
def spawned(monkeypatch):
    """The page writer processes started, and the runs whose pages this process rendered."""
    started, here = [], []

    class Counted(pages.HelperSink):
        def __init__(self, *args):
            super().__init__(*args)
            started.append(self)

    real_run = pages.PageSink.run

    def counted_run(self, run, comp, step, refs):
        here.append(step)
        return real_run(self, run, comp, step, refs)

    monkeypatch.setattr(pages, "HelperSink", Counted)
    monkeypatch.setattr(pages.PageSink, "run", counted_run)
    return started, here


def test_a_large_input_goes_to_the_page_writer_from_its_first_run(tmp_path, monkeypatch, spawned):
    started, here = spawned
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)  # every input counts as large
    build(BuildOptions(inputs=[src], out=tmp_path / "beside", offline=True, quiet=True))
    assert len(started) == 1 and here == []  # no page rendered in the build's own process
    assert check_corpus(tmp_path / "beside") == []

    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 10**12)  # read and written here
    build(BuildOptions(inputs=[src], out=tmp_path / "here", offline=True, quiet=True))
    assert len(started) == 1 and here
    assert without_build_stamp(tree_bytes(tmp_path / "beside")) == without_build_stamp(tree_bytes(tmp_path / "here"))


def test_a_corpus_holding_runs_starts_no_page_writer_before_one_is_needed(tmp_path, monkeypatch, spawned):
    """Rebuilding an unchanged corpus writes no page: no process is started for it."""
    started, _ = spawned
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    result = build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    assert result.runs == len(example_runs()) and started == []


def test_a_build_stopped_before_its_first_run_leaves_no_page_writer(tmp_path, monkeypatch, spawned):
    started, _ = spawned
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)

    def broken(*args, **kwargs):
        raise RuntimeError("no compiler today")

    monkeypatch.setattr("wikitrace.build.make_compiler", broken)
    with pytest.raises(RuntimeError, match="no compiler today"):
        build(BuildOptions(inputs=[src], out=tmp_path / "corpus", offline=True, quiet=True))
    assert len(started) == 1 and started[0].proc.poll() is not None  # stopped, not orphaned
    assert not (tmp_path / "corpus" / "corpus.json").exists()


def test_the_merges_go_out_before_the_build_waits_for_the_page_writer(tmp_path, monkeypatch, fake_openai):
    """Forced order: the page writer cannot finish until every merge request has reached
    the server, so the build completes only if the merges are sent first. One HTTP client
    serves the runs and the merges."""
    from wikitrace.llm.transport import ChatTransport

    runs = [swe_run(k, success=k % 3 == 0) for k in range(6)]
    merges_seen = threading.Event()
    expected: list[int] = []

    def answer(body):
        if is_merge(body):
            if fake_openai.merge_calls + 1 >= expected[0]:
                merges_seen.set()
            return reply(json.dumps({"guideline": "Read the failing test before changing the code it checks."}))
        text = json.dumps(body)
        return reply(json.dumps(valid_answer("success" if "[success]" in text or "judged a success" in text
                                             else "failure", turns=[2])))

    # how many insights these runs give: a build in which nothing waits
    fake_openai.respond_with(answer)
    expected.append(10**9)
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=tmp_path / "first", quiet=True,
                       cache_dir=tmp_path / "cache-1"))
    expected[0] = fake_openai.merge_calls
    assert expected[0] > 1
    fake_openai.reset()
    fake_openai.respond_with(answer)

    real_close, closed_after_merges = RunWriter.close, []

    def close_after_the_merges(self, ok=True):
        if ok:
            closed_after_merges.append(merges_seen.wait(timeout=30))
        return real_close(self, ok)

    made = []
    real_parts = ChatTransport._client_parts

    def counted_parts(self):
        made.append(1)
        return real_parts(self)

    monkeypatch.setattr(RunWriter, "close", close_after_the_merges)
    monkeypatch.setattr(ChatTransport, "_client_parts", counted_parts)
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "a.jsonl", runs)], out=out, quiet=True,
                       cache_dir=tmp_path / "cache-2"))
    assert closed_after_merges == [True]
    assert fake_openai.merge_calls == expected[0] and len(made) == 1
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(tree_bytes(tmp_path / "first"))
    assert check_corpus(out) == []


def test_the_indexes_laid_out_before_the_wait_are_the_ones_made_after_it(tmp_path, monkeypatch):
    """corpus.json and the prompt index laid out while the page writer still writes are the
    bytes made once it is done; laid out for other entries than the ones published (a run
    fewer), they are made again, never published short."""
    import wikitrace.build as build_module
    from wikitrace.corpus.corpus_json import corpus_region

    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    build(BuildOptions(inputs=[src], out=tmp_path / "early", offline=True, quiet=True))
    real = build_module.lay_out_indexes

    monkeypatch.setattr(build_module, "lay_out_indexes", lambda writer, compiler, ok: None)
    build(BuildOptions(inputs=[src], out=tmp_path / "late", offline=True, quiet=True))

    def a_run_short(writer, compiler, ok):
        laid = real(writer, compiler, ok)
        fewer = laid.runs[:-1]
        return build_module.LaidOut(fewer, laid.insights, corpus_region(fewer, laid.insights), laid.prompt)

    monkeypatch.setattr(build_module, "lay_out_indexes", a_run_short)
    build(BuildOptions(inputs=[src], out=tmp_path / "stale", offline=True, quiet=True))
    early = without_build_stamp(tree_bytes(tmp_path / "early"))
    assert early == without_build_stamp(tree_bytes(tmp_path / "late"))
    assert early == without_build_stamp(tree_bytes(tmp_path / "stale"))
    assert len(json.loads((tmp_path / "stale" / "corpus.json").read_text())["runs"]) == len(example_runs())
