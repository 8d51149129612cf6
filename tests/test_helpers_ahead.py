"""`wikitrace compile` starts the helper processes a large build will ask for (the run reader,
the page writer of a new corpus) as soon as its options are parsed: the build then takes those
processes instead of starting its own, writes the same bytes, and no helper it did not take
outlives the command."""

from __future__ import annotations

import pytest
from helpers import example_runs, tree_bytes, without_build_stamp, write_jsonl

from wikitrace import helper_process
from wikitrace.build import BuildOptions, build
from wikitrace.build_cli import compile_main, helpers_ahead

READER, LLM_READER, PAGES = "wikitrace.runs.read_helper", "wikitrace.compilers.llm_offline", "wikitrace.corpus.pages"


@pytest.fixture
def spawned(monkeypatch):
    """Every helper process started, in order, as (module, process)."""
    started = []
    real = helper_process._spawn

    def counted(module):
        proc = real(module)
        started.append((module, proc))
        return proc

    monkeypatch.setattr(helper_process, "_spawn", counted)
    yield started
    helper_process.drop_ahead()
    for _, proc in started:
        helper_process.stop(proc)


def test_which_helpers_a_build_will_ask_for(tmp_path, monkeypatch):
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    assert helpers_ahead([src], tmp_path / "new", asks_model=True) == []  # small: read in the build's process
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    assert helpers_ahead([src], tmp_path / "new", asks_model=True) == [LLM_READER, PAGES]
    assert helpers_ahead([src], tmp_path / "new", asks_model=False) == [READER, PAGES]
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "corpus.json").write_text("{}")
    assert helpers_ahead([src], tmp_path / "old", asks_model=False) == [READER]  # pages only as needed


def test_the_build_takes_the_helpers_started_ahead_and_writes_the_same_bytes(tmp_path, monkeypatch, spawned):
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    assert compile_main([str(src), "--out", str(tmp_path / "ahead"), "--offline", "--quiet"]) == 0
    assert [module for module, _ in spawned] == [READER, PAGES]  # no second reader or page writer
    assert all(proc.poll() is not None for _, proc in spawned)  # both done, none left waiting
    assert helper_process._ahead == {}

    build(BuildOptions(inputs=[src], out=tmp_path / "plain", offline=True, quiet=True))
    assert without_build_stamp(tree_bytes(tmp_path / "ahead")) == without_build_stamp(tree_bytes(tmp_path / "plain"))


def test_a_helper_started_ahead_and_not_taken_is_ended(tmp_path, monkeypatch, spawned):
    """Rebuilding an unchanged corpus writes no page, so the page writer started ahead (its
    corpus.json was moved away: a guess of a new corpus) is never taken; the command ends it."""
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs())
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)
    monkeypatch.setattr("wikitrace.build_cli.helpers_ahead", lambda *args: [READER, PAGES])
    assert compile_main([str(src), "--out", str(out), "--offline", "--quiet"]) == 0
    assert [module for module, _ in spawned] == [READER, PAGES]
    assert all(proc.poll() is not None for _, proc in spawned)
    assert helper_process._ahead == {}


def test_a_helper_started_ahead_is_handed_out_once(spawned):
    helper_process.start_ahead([READER])
    first = helper_process.start(READER)
    second = helper_process.start(READER)
    assert first is spawned[0][1] and second is spawned[1][1] and first is not second
