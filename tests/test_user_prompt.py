"""The LLM compiler's user prompt written without the template engine is the bundled
template's prompt, byte for byte.

The prompt decides the response cache's key: a prompt that changed by one byte would
make every cached answer miss and every build ask the model again. So both ways are
rendered here, on runs of the shapes the importers produce and on awkward ones.
"""

import math
import shutil

import pytest
from helpers import EXAMPLES, TAU_BENCH

from wikitrace.compilers import user_prompt
from wikitrace.compilers.llm_offline import PROMPT_LIMITS
from wikitrace.compilers.prompt_views import build_prompt
from wikitrace.runs.load import LoadReport, iter_runs
from wikitrace.runs.model import Outcome, Run, Task, Turn
from wikitrace.templates import bundled_dir

TIGHT = dict(PROMPT_LIMITS, clip_limit=40, trajectory_budget=300)  # every long field clipped


@pytest.fixture(scope="module")
def engine_dir(tmp_path_factory):
    """A --templates folder holding an unchanged copy of the bundled user prompt."""
    folder = tmp_path_factory.mktemp("templates")
    (folder / "prompts").mkdir()
    shutil.copy(bundled_dir("corpus_templates") / user_prompt.TEMPLATE, folder / user_prompt.TEMPLATE)
    return folder


def _both(run: Run, engine_dir, limits=PROMPT_LIMITS) -> tuple[str, str]:
    assert user_prompt.overridden(engine_dir) and not user_prompt.overridden(None)
    return build_prompt(run, None, **limits).user, build_prompt(run, str(engine_dir), **limits).user


def _awkward_run(**outcome) -> Run:
    """Turns of every kind the prompt shows, with markup, control and invisible characters,
    empty and missing fields, an error, a long observation and an episode end."""
    turns = [
        Turn(turn=0, type="message", role="system", content="# Policy\nnever refund\x07 twice"),
        Turn(turn=1, type="message", role="user", content="refund order\u200b #12 <b>now</b>\r\n"),
        Turn(turn=2, type="function_call", role="assistant", name="get_[order]`details`",
             arguments={"order_id": "#W1", "nested": {"z": [1, 2.5, None]}, "text": "q\"uote é 😀 \u2028"},
             reasoning="I will look it up.", result='{"status": "ok"}', is_error=False),
        Turn(turn=3, type="function_call", role="assistant", name=None, arguments="raw args", result="",
             is_error=True),
        Turn(turn=4, type="function_call", role="assistant", name="calc", arguments=None, result="x" * 5000),
        Turn(turn=5, type="message", role="tool", content="tool said\tthis"),
        Turn(turn=6, type="message", role=None, content=""),
        Turn(turn=7, type="answer", content=None, result="42"),
        Turn(turn=8, type="episode_over", role="harness", content="step limit", extra={"ended_by": "harness_limit"}),
        Turn(turn=9, type="episode_over", content=""),
        Turn(turn=10, type="episode_over", content="user left", extra={"ended_by": "user\x1b[31m"}),
    ]
    return Run(run_id="run [7]", turns=turns, outcome=Outcome(**outcome),
               task=Task(id="t1", instruction="  Refund it.\x00 ", task_type="air_line", apps=["mail", "pay\x07"],
                         initial_observation="screen: <home>\n"))


@pytest.mark.parametrize("outcome", [dict(success=False, steps=3), dict(success=True, steps=0, score=0.0),
                                     dict(success=True, steps=7, score=0.75, ended_by="agent")])
@pytest.mark.parametrize("limits", [PROMPT_LIMITS, TIGHT])
def test_awkward_run_same_bytes(engine_dir, outcome, limits):
    fast, engine = _both(_awkward_run(**outcome), engine_dir, limits)
    assert fast == engine
    assert "\\x07" in fast and "\\u200b" in fast  # shown as escapes, as the engine's finalize does


def test_bare_run_same_bytes(engine_dir):
    """No task type, apps, observation, score or turns: every optional line left out."""
    run = Run(run_id="r", task=Task(id="t", instruction="Do it."), turns=[], outcome=Outcome(success=True, steps=0))
    fast, engine = _both(run, engine_dir)
    assert fast == engine
    assert "0 turns" in fast and "Task type" not in fast and "Score" not in fast


def test_nan_score_same_bytes(engine_dir):
    run = _awkward_run(success=False, steps=1, score=math.nan)
    assert _both(run, engine_dir)[0] == _both(run, engine_dir)[1]


def _runs(path):
    return [r for r in iter_runs([path], None, LoadReport()) if isinstance(r, Run)]


def test_bundled_example_runs_same_bytes(engine_dir):
    runs = _runs(EXAMPLES)
    assert runs
    for run in runs:
        for limits in (PROMPT_LIMITS, TIGHT):
            fast, engine = _both(run, engine_dir, limits)
            assert fast == engine, run.run_id


def test_tau_bench_runs_same_bytes(engine_dir):
    if not TAU_BENCH.exists():
        pytest.skip(f"tau-bench runs not present at {TAU_BENCH} (set WIKITRACE_DATA to the shared data folder)")
    runs = _runs(TAU_BENCH)[:40]
    assert runs, f"no run could be read from {TAU_BENCH}"
    for run in runs:
        fast, engine = _both(run, engine_dir)
        assert fast == engine, run.run_id


def test_an_override_is_rendered_by_the_engine(tmp_path):
    """A --templates folder with its own user prompt gets that prompt, not the built-in one."""
    (tmp_path / "prompts").mkdir()
    (tmp_path / user_prompt.TEMPLATE).write_text("run with {{ turns | length }} turns\n")
    run = _awkward_run(success=True, steps=1)
    assert build_prompt(run, str(tmp_path), **PROMPT_LIMITS).user == "run with 11 turns\n"
