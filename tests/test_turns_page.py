"""The turns page written without the template engine is the bundled template's page, byte for byte.

A build renders ``raw/step-NNNN/turns.md`` in plain Python (corpus/turns_page.py) unless
``--templates`` overrides ``raw_turns.md.j2``; a user's corpus must not change with that
choice, so both ways are rendered here on runs of the shapes the importers produce.
"""

import json
import math
import shutil

import pytest
from helpers import EXAMPLES, TAU_BENCH

from wikitrace.corpus import documents, turns_page
from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.model import Outcome, Run, Task, Turn
from wikitrace.templates import bundled_dir


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    """A --templates folder holding an unchanged copy of the bundled turns template."""
    folder = tmp_path_factory.mktemp("templates")
    shutil.copy(bundled_dir("corpus_templates") / turns_page.TEMPLATE, folder / turns_page.TEMPLATE)
    return folder


def _both(run: Run, engine_dir, step: str = "step-0007", mount: str = "/work/corpus") -> tuple[str, str]:
    assert turns_page.overridden(engine_dir) and not turns_page.overridden(None)
    return (documents.render_raw_turns(run, step, mount, None),
            documents.render_raw_turns(run, step, mount, engine_dir))


def _awkward_run() -> Run:
    """Turns with what real logs hold: markup in names and text, control and invisible
    characters, nested and empty arguments, numbers JSON spells oddly, an unanswered call,
    fields long enough to be cut, an empty content."""
    long_lines = "\n".join(f"line {i}: {'x' * (i % 7)}" for i in range(80))
    turns = [
        Turn(turn=0, type="message", role="system", content="# Policy\n```json\n{\"a\": 1}\n```\nuse `tool` [x](y)"),
        Turn(turn=1, type="message", role="user", content="refund\x07 order\u200b #12 <b>now</b>\r\n"),
        Turn(turn=2, type="function_call", role="assistant", name="get_[order]`details`",
             arguments={"order_id": "#W1", "items": [], "opts": {}, "nested": {"z": [1, 2.5, {"k": None}], "a": True},
                        "price": 1e21, "tiny": 1.5e-7, "neg": -0.0, "big": 10 ** 30, "text": "q\"uote\\ é 😀 \u2028"},
             reasoning="I will look it up.", result='{"status": "ok", "list": [1, 2]}', is_error=False),
        Turn(turn=3, type="function_call", role="assistant", name="cancel", arguments=["a", ["b", []], {}],
             result="Error: not allowed", is_error=True),
        Turn(turn=4, type="function_call", role="assistant", name="calc", arguments=3.25, result=long_lines),
        Turn(turn=5, type="function_call", role="assistant", name="weird",
             arguments={"nan": math.nan, "inf": math.inf, "minf": -math.inf, "s": "x" * 5000}, result="",
             is_error=True, extra={"unanswered": True}),
        Turn(turn=7, type="message", role="assistant", content=""),
        Turn(turn=8, type="message", role=None, content="no role\ttab"),
        Turn(turn=9, type="answer", content="42"),
        Turn(turn=10, type="episode_over", role="harness", content="step limit"),
    ]
    return Run(run_id="run [7]`x`", task=Task(id="task <1>", instruction="Refund it."), turns=turns,
               outcome=Outcome(success=False, steps=4), source={"format": "openai-chat"})


def test_awkward_turns_same_bytes(engine_dir):
    fast, engine = _both(_awkward_run(), engine_dir)
    assert fast == engine
    assert "\\x07" in fast and "\\u200b" in fast  # shown as escapes, as the engine's finalize does
    assert "… " in fast and "cut — `turn step-0007 4 --full`" in fast  # a long field shows head and tail


def test_no_turns_and_another_mount(engine_dir):
    run = _awkward_run()
    run.turns = []
    fast, engine = _both(run, engine_dir, step="step-12345", mount="/mnt/memory/")
    assert fast == engine


def _runs(path):
    return [r for r in iter_runs([path], None, LoadReport()) if isinstance(r, Run)]


def test_bundled_example_runs_same_bytes(engine_dir):
    runs = _runs(EXAMPLES)
    assert runs
    for run in runs:
        fast, engine = _both(run, engine_dir)
        assert fast == engine, run.run_id


def test_tau_bench_runs_same_bytes(engine_dir):
    if not TAU_BENCH.exists():
        pytest.skip(f"tau-bench runs not present at {TAU_BENCH} (set WIKITRACE_DATA to the shared data folder)")
    runs = _runs(TAU_BENCH)[:60]
    assert runs, f"no run could be read from {TAU_BENCH}"
    for run in runs:
        fast, engine = _both(run, engine_dir)
        assert fast == engine, run.run_id


@pytest.mark.parametrize("value", [
    {}, [], "", 0, -3, 2.0, 1e-300, True, None, "é\n\t\"\\",
    {"b": {"c": [[], [{}]], "a": "x"}, "a": [1, [2, [3]]]},
    [{"k": math.inf}, -math.inf, math.nan],
    ("tuple", 1),
])
def test_indented_json_is_json_dumps(value):
    assert turns_page.indented_json(value) == json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def test_indented_json_leaves_other_values_to_json():
    assert turns_page.indented_json({1: "a", 2: "b"}) == json.dumps({1: "a", 2: "b"}, ensure_ascii=False,
                                                                     indent=2, sort_keys=True)
    with pytest.raises(TypeError):
        turns_page.indented_json({"x": object()})
