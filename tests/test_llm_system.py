"""System messages rendered once per variant are the messages rendered for each run."""

from wikitrace.compilers.llm_system import SystemMessages
from wikitrace.compilers.prompt_views import Prompt
from wikitrace.templates import render


def _prompt(solver: str | None, outcome: str = "success", kind: str = "airline") -> Prompt:
    return Prompt(system_ctx={"task_kind": kind, "solver_prompt": solver, "max_insights": 3, "outcome": outcome,
                              "evidence_key": "key_decisions" if outcome == "success" else "failure_causes"},
                  user="the run")


def _rendered(prompt: Prompt, mode: str) -> str:
    name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
    return render(name, None, mode=mode, **prompt.system_ctx)


def test_each_variant_gets_its_own_message():
    systems = SystemMessages(None)
    variants = [_prompt("Policy A: refunds within 24 h"), _prompt("Policy B: no refunds"), _prompt(None),
                _prompt("Policy A: refunds within 24 h", outcome="failure"), _prompt("Policy A: refunds within 24 h",
                                                                                   kind="retail")]
    for _ in range(2):  # the second pass is answered from what the first rendered
        for prompt in variants:
            for mode in ("json_schema", "text"):
                assert systems.system_and_json(prompt, mode)[0] == _rendered(prompt, mode)
    assert len({systems.system_and_json(p, "json_schema")[0] for p in variants}) == len(variants)


def test_more_variants_than_kept_are_still_right():
    systems = SystemMessages(None)
    for i in range(150):
        prompt = _prompt(f"instructions number {i}")
        assert systems.system_and_json(prompt, "json_schema")[0] == _rendered(prompt, "json_schema")
