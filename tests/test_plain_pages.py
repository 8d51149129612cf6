"""A run's compilation and metadata pages written without the template engine are the bundled
templates' pages, byte for byte.

A build writes ``compilation/step-NNNN.md`` and ``raw/step-NNNN/metadata.md`` in plain Python
(corpus/plain_pages.py) unless ``--templates`` overrides the template; a corpus must not change
with that choice, so both ways are rendered here, on compilations of real runs and on pages
made of every awkward value a run or a model can put there.
"""

import shutil

import pytest
from helpers import EXAMPLES, SHARED_DATA, TAU_BENCH

from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.schema import Compilation, Evidence
from wikitrace.corpus import documents, plain_pages
from wikitrace.corpus.documents import InsightRef
from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.model import Outcome, Run, Task, Turn
from wikitrace.templates import bundled_dir

REFLEXION = SHARED_DATA / "runs-dev" / "reflexion-hotpotqa"


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    """A --templates folder holding unchanged copies of the two bundled templates."""
    folder = tmp_path_factory.mktemp("templates")
    for name in (plain_pages.COMPILATION_TEMPLATE, plain_pages.METADATA_TEMPLATE):
        shutil.copy(bundled_dir("corpus_templates") / name, folder / name)
    return folder


def _refs(ids: list[str]) -> list[InsightRef]:
    return [InsightRef(i, f"Lesson [{i}] `x`\x1b", f"insight/{i}.md") for i in ids]


def _same(run: Run, comp: Compilation, engine_dir, refs=(), step="step-0007", mount="/work/corpus") -> str:
    refs = list(refs)
    assert plain_pages.overridden(engine_dir, plain_pages.COMPILATION_TEMPLATE)
    assert not plain_pages.overridden(None, plain_pages.COMPILATION_TEMPLATE)
    fast = documents.render_compilation(run, comp, step, refs, mount, None)
    assert fast == documents.render_compilation(run, comp, step, refs, mount, engine_dir), run.run_id
    meta = documents.render_raw_metadata(run, step, refs, mount, None)
    assert meta == documents.render_raw_metadata(run, step, refs, mount, engine_dir), run.run_id
    return fast + meta


def _awkward_run(success: bool = False, apps=None, score=None, ended_by=None) -> Run:
    turns = [Turn(turn=0, type="message", role="system", content="policy"),
             Turn(turn=1, type="message", role="user", content="refund\x07 it"),
             Turn(turn=3, type="function_call", role="assistant", name="refund", arguments={"id": "#1"},
                  result="Error: no")]
    task = Task(id="task <1>\u200b", instruction="Refund\n  the [order]\t`now`\x00", task_type=None, apps=apps,
                initial_observation="You see\n a `desk` [1]" if apps else None,
                metadata={"Zeta": [1, {"b": 2}], "alpha": "x\ny", "Beta[1]": None, "gamma": 3.5})
    return Run(run_id="run [7]`x`\x1f", task=task, turns=turns,
               outcome=Outcome(success=success, steps=1 if success else 4, score=score, ended_by=ended_by),
               source={"format": "openai-chat"})


def _awkward_compilation(outcome: str, compiler: str, left_out: int) -> Compilation:
    evidence = [
        Evidence(decision="Called refund [x](y) at turn 3\x0b", support="The `call` went <through>\\[",
                 turns=[1, 3, 9], quote="Error: no\u2028", call="refund({\"id\": \"```#1\"})",
                 notes=["note [a]", "note `b`\x7f"]),
        Evidence(decision="One turn", support="s", turns=[3]),
        Evidence(decision="No turn", support="", turns=[], quote="", call="", notes=[]),
    ]
    return Compilation(title="t", description="The agent [failed]\x1b.", outcome=outcome, evidence=evidence,
                       insights=[], compiler=compiler, fallback_reason="timeout after `3` tries [429]\x07",
                       left_out=left_out)


@pytest.mark.parametrize("outcome", ["success", "failure"])
@pytest.mark.parametrize("compiler", ["offline", "offline-fallback", "llm"])
@pytest.mark.parametrize("left_out", [0, 1, 5])
def test_awkward_pages_same_bytes(engine_dir, outcome, compiler, left_out):
    run = _awkward_run(success=outcome == "success")
    text = _same(run, _awkward_compilation(outcome, compiler, left_out), engine_dir, _refs(["ins-0001", "ins-0002"]))
    assert "\\x07" in run.run_id or "\\x1f" in text  # control characters shown as escapes, as the engine does


@pytest.mark.parametrize("apps,score,ended_by", [
    (["spotify", "venmo[1]"], 0.5, "harness: step limit `50`"),
    (None, 1.0, None),
    (None, 1e-7, "user"),
    (["x"], 0.0, ""),
])
def test_task_and_outcome_shapes_same_bytes(engine_dir, apps, score, ended_by):
    run = _awkward_run(apps=apps, score=score, ended_by=ended_by)
    _same(run, _awkward_compilation("failure", "offline", 2), engine_dir)


def test_no_turns_no_evidence_another_mount(engine_dir):
    run = _awkward_run()
    run.turns = []
    run.task.metadata = {}
    comp = Compilation(title="t", description="d", outcome="failure", evidence=[], insights=[])
    _same(run, comp, engine_dir, step="step-12345", mount="/mnt/memory/")


def _runs(path) -> list[Run]:
    return [r for r in iter_runs([path], None, LoadReport()) if isinstance(r, Run)]


def _compiled_same(runs: list[Run], engine_dir) -> None:
    assert runs
    for k, run in enumerate(runs):
        comp = compile_offline(run)
        _same(run, comp, engine_dir, _refs([f"ins-{k:04d}"][: k % 2]), step=f"step-{k:04d}")


def test_bundled_example_runs_same_bytes(engine_dir):
    _compiled_same(_runs(EXAMPLES), engine_dir)


def test_tau_bench_runs_same_bytes(engine_dir):
    if not TAU_BENCH.exists():
        pytest.skip(f"tau-bench runs not present at {TAU_BENCH} (set WIKITRACE_DATA to the shared data folder)")
    _compiled_same(_runs(TAU_BENCH)[:60], engine_dir)


def test_reflexion_runs_same_bytes(engine_dir):
    if not REFLEXION.exists():
        pytest.skip(f"Reflexion runs not present at {REFLEXION} (set WIKITRACE_DATA to the shared data folder)")
    _compiled_same(_runs(REFLEXION)[:60], engine_dir)


def test_an_override_is_still_rendered(tmp_path):
    """A --templates folder's own compilation or metadata page is what the build writes."""
    (tmp_path / plain_pages.COMPILATION_TEMPLATE).write_text("C {{ comp.outcome }} {{ step }}\n")
    (tmp_path / plain_pages.METADATA_TEMPLATE).write_text("M {{ run_id }}\n")
    run = _awkward_run()
    comp = _awkward_compilation("failure", "offline", 0)
    assert documents.render_compilation(run, comp, "step-0001", [], "/m", tmp_path) == "C failure step-0001\n"
    assert documents.render_raw_metadata(run, "step-0001", [], "/m", tmp_path) == "M run [7]`x`\\x1f\n"
