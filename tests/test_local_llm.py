"""The LLM compiler against a real llama.cpp server with a tiny model (opt-in).

Run with ``WIKITRACE_LOCAL_LLM=1 pytest tests/test_local_llm.py``. The first run
builds llama-cpp-python from source (about 10 minutes on 2 cores) into
``$WIKITRACE_LOCAL_LLM_VENV`` (default ``~/.cache/wikitrace/local-llm-venv``);
later runs reuse it. ``MODEL`` picks the model as ``start.sh`` does (``smollm2``,
the default; ``qwen-coder-0.5b``; ``qwen-coder-1.5b``, about 8 GB of memory and
minutes per run). ``WIKITRACE_LOCAL_LLM_URL`` uses a server already running
instead of starting one.

The 135M model's JSON is often unusable, so a run may end as ``llm`` or as
``offline-fallback`` with a reason; what must hold is that no compile raises
and every turn ref left in a result exists
in its run. Qwen2.5-Coder-1.5B must produce genuine ``llm`` pages for most runs.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
from pathlib import Path

import pytest

from wikitrace.compilers.llm import LLMCompiler
from wikitrace.llm.config import resolve
from wikitrace.runs.model import Outcome, Run, Task, Turn

pytestmark = pytest.mark.local_llm

REPO = Path(__file__).resolve().parents[1]
LOCAL_LLM = REPO.parent / "shared" / "local-llm"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MODEL = os.environ.get("MODEL", "smollm2")


@pytest.fixture(scope="module")
def local_server():
    if os.environ.get("WIKITRACE_LOCAL_LLM") != "1":
        pytest.skip("opt-in: set WIKITRACE_LOCAL_LLM=1 to run against the real llama.cpp server")
    if os.environ.get("WIKITRACE_LOCAL_LLM_URL"):
        yield os.environ["WIKITRACE_LOCAL_LLM_URL"]
        return
    if not (LOCAL_LLM / "start.sh").is_file():
        pytest.skip(f"{LOCAL_LLM} is absent (the local llama.cpp recipe lives there)")
    venv = Path(os.environ.get("WIKITRACE_LOCAL_LLM_VENV", "~/.cache/wikitrace/local-llm-venv")).expanduser()
    port = _free_port()
    try:
        started = subprocess.run(["bash", str(LOCAL_LLM / "start.sh"), str(venv), str(port)],
                                 capture_output=True, text=True, timeout=3600, env=dict(os.environ, MODEL=MODEL))
        if started.returncode != 0:
            pytest.fail(f"start.sh failed ({started.returncode}): {started.stderr[-2000:]}")
        line = next((ln for ln in started.stdout.splitlines() if ln.startswith("OPENAI_BASE_URL=")), None)
        base_url = line.split("=", 1)[1] if line else f"http://127.0.0.1:{port}/v1"
        yield base_url
    finally:
        subprocess.run(["bash", str(LOCAL_LLM / "stop.sh"), str(port)], capture_output=True, timeout=60)


def _runs() -> list[Run]:
    lookup = Run(
        run_id="local-1",
        task=Task(id="1", instruction="Find the price of the blue kettle.", task_type="shopping"),
        turns=[
            Turn(0, "message", role="user", content="How much is the blue kettle?"),
            Turn(1, "function_call", role="assistant", name="search_products", arguments={"query": "blue kettle"},
                 result='[{"name": "Blue Kettle", "price": 25}]'),
            Turn(2, "message", role="assistant", content="The blue kettle costs 25 dollars."),
            Turn(3, "episode_over", extra={"ended_by": "agent"}),
        ],
        outcome=Outcome(success=True, steps=1, score=1.0, ended_by="agent"),
    )
    wrong = Run(
        run_id="local-2",
        task=Task(id="2", instruction="Cancel order 17 because it arrived late.", task_type="retail"),
        turns=[
            Turn(0, "message", role="user", content="Please cancel order 17."),
            Turn(1, "function_call", role="assistant", name="cancel_order", arguments={"order_id": 17},
                 result="Error: order 17 is delivered; use return_order instead", is_error=True),
            Turn(2, "function_call", role="assistant", name="cancel_order", arguments={"order_id": 17},
                 result="Error: order 17 is delivered; use return_order instead", is_error=True),
            Turn(3, "episode_over", extra={"ended_by": "harness: step limit"}),
        ],
        outcome=Outcome(success=False, steps=2, score=0.0, ended_by="harness: step limit"),
    )
    fixed = Run(
        run_id="local-3",
        task=Task(id="3", instruction="Put the apple in the fridge.", task_type="household"),
        turns=[
            Turn(0, "function_call", role="assistant", name="act", arguments={"command": "go to fridge 1"},
                 result="The fridge 1 is closed."),
            Turn(1, "function_call", role="assistant", name="act", arguments={"command": "open fridge 1"},
                 result="You open the fridge 1. It is empty."),
            Turn(2, "function_call", role="assistant", name="act", arguments={"command": "put apple 1 in fridge 1"},
                 result="You put the apple 1 in the fridge 1."),
            Turn(3, "episode_over", extra={"ended_by": "agent"}),
        ],
        outcome=Outcome(success=True, steps=3, score=1.0, ended_by="agent"),
    )
    return [lookup, wrong, fixed]


def test_real_local_server_compiles_or_falls_back(local_server, tmp_path):
    config = resolve(MODEL, local_server, env={}, max_tokens=900, timeout=900.0)
    compiler = LLMCompiler(config, cache_dir=tmp_path / "cache", max_attempts=2,
                           backoff=0.5, temperature=0.0, concurrency=2, seed=0)
    runs = _runs()

    async def build():
        try:
            return await asyncio.gather(*(compiler.compile(r) for r in runs))
        finally:
            await compiler.aclose()

    comps = asyncio.run(build())
    stats = compiler.stats()
    print(f"\nlocal LLM {MODEL}: mode={compiler.response_mode} stats={stats.as_dict()}")
    for run, comp in zip(runs, comps):
        print(f"  {run.run_id}: {comp.compiler} reason={comp.fallback_reason!r} title={comp.title!r} "
              f"dropped_refs={comp.dropped_refs} dropped_quotes={comp.dropped_quotes} "
              f"dropped_items={comp.dropped_items} dropped_insights={comp.dropped_insights}")
        assert comp.compiler in ("llm", "offline-fallback")
        if comp.compiler == "offline-fallback":
            assert comp.fallback_reason
        else:
            assert comp.model == MODEL and comp.insights
            assert all(item.turns for item in comp.evidence)
        numbers = {t.turn for t in run.turns}
        for item in comp.evidence:
            assert set(item.turns) <= numbers
    assert stats.calls >= 1
    # llama.cpp refuses json_schema; the compiler must have learnt that.
    assert compiler.response_mode in ("json_object", "text")
    if MODEL == "qwen-coder-1.5b":
        assert sum(c.compiler == "llm" for c in comps) >= 2, "the 1.5B model gave schema-valid answers before"
