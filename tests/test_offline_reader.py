"""An offline build of a large input compiles every other run in its reader process
(compilers/offline_reader.py): the build's main process compiles only the rest, and the corpus
is byte for byte the one a build reading and compiling everything itself writes, with the
build's --task-type applied alike."""

from __future__ import annotations

import pytest
from helpers import example_runs, tree_bytes, without_build_stamp, write_jsonl

from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus
from wikitrace.compilers import offline


@pytest.fixture
def compiled_here(monkeypatch):
    """The run ids the build's own process compiled."""
    ids = []
    real = offline.compile_offline

    def counted(run):
        ids.append(run.run_id)
        return real(run)

    monkeypatch.setattr(offline, "compile_offline", counted)
    return ids


@pytest.mark.parametrize("task_type", [None, "triage"])
def test_the_reader_compiles_every_other_run_and_the_corpus_is_the_same(tmp_path, monkeypatch, compiled_here,
                                                                        task_type):
    runs = [dict(r, task=dict(r["task"], task_type=None)) if task_type and k % 2 == 0 else r
            for k, r in enumerate(example_runs() * 3)]
    runs = [dict(r, run_id=f"{r['run_id']}-{k}") for k, r in enumerate(runs)]  # 18 distinct runs
    src = write_jsonl(tmp_path / "runs.jsonl", runs)

    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)  # read (and half compiled) beside
    build(BuildOptions(inputs=[src], out=tmp_path / "beside", offline=True, quiet=True, task_type=task_type))
    assert compiled_here == [r["run_id"] for r in runs[1::2]]

    compiled_here.clear()
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 10**12)  # read and compiled here
    build(BuildOptions(inputs=[src], out=tmp_path / "here", offline=True, quiet=True, task_type=task_type))
    assert len(compiled_here) == len(runs)
    assert without_build_stamp(tree_bytes(tmp_path / "beside")) == without_build_stamp(tree_bytes(tmp_path / "here"))
    assert check_corpus(tmp_path / "beside") == []
