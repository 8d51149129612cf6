"""End to end: compile runs with wikitrace.build (offline), then render prompts, check
citations and descents against the real corpus."""

from __future__ import annotations

import json
import re

import pytest

build_mod = pytest.importorskip("wikitrace.build")

from wikitrace.agent import analyse_turns, build_prompt, parse_and_check  # noqa: E402
from wikitrace.runs.model import Turn  # noqa: E402

TASKS = [
    ("retail", True, "Return the blue kettle from order #W100 to the original card.",
     [("find_user_id_by_email", {"email": "a@example.com"}), ("get_order_details", {"order_id": "#W100"}),
      ("return_delivered_order_items", {"order_id": "#W100", "item_ids": ["k1"], "payment_method_id": "card_1"})]),
    ("retail", False, "Exchange the red mug in order #W200 for a green one.",
     [("get_order_details", {"order_id": "#W200"}),
      ("exchange_delivered_order_items", {"order_id": "#W200", "item_ids": ["m1"], "new_item_ids": ["m9"]})]),
    ("airline", True, "Cancel reservation ABC123 for user mia_li and refund to the gift card.",
     [("get_reservation_details", {"reservation_id": "ABC123"}), ("cancel_reservation", {"reservation_id": "ABC123"})]),
    ("airline", False, "Book a one way flight from JFK to SEA on May 20 in economy.",
     [("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}),
      ("book_reservation", {"origin": "JFK", "destination": "SEA"})]),
    ("airline", True, "Add one checked bag to reservation XYZ789.",
     [("get_reservation_details", {"reservation_id": "XYZ789"}), ("update_reservation_baggages", {"reservation_id": "XYZ789"})]),
]


def record(i, task_type, success, instruction, calls):
    msgs = [{"role": "system", "content": "You are a customer service agent."},
            {"role": "user", "content": instruction}]
    for j, (name, args) in enumerate(calls):
        failed = (not success) and j == len(calls) - 1
        msgs.append({"role": "assistant", "content": f"I will call {name}.", "tool_calls": [
            {"id": f"c{j}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]})
        msgs.append({"role": "tool", "tool_call_id": f"c{j}",
                     "content": "Error: not allowed" if failed else json.dumps({"ok": True})})
    msgs.append({"role": "assistant", "content": "Done."})
    return {"run_id": f"run-{i}", "task": {"id": str(i), "instruction": instruction, "task_type": task_type},
            "success": success, "messages": msgs}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    from wikitrace.build import BuildOptions, build

    tmp = tmp_path_factory.mktemp("e2e")
    src = tmp / "runs.jsonl"
    src.write_text("".join(json.dumps(record(i, *t)) + "\n" for i, t in enumerate(TASKS)))
    out = tmp / "corpus"
    build(BuildOptions(inputs=[src], out=out, offline=True, quiet=True))
    return out


def test_prompt_from_a_compiled_corpus(compiled):
    data = json.loads((compiled / "corpus.json").read_text())
    task = "Cancel reservation QQQ111 for user noah and refund it."
    p = build_prompt(compiled, task, task_type="airline")
    # every insight of the corpus is inlined, with its real source run and outcome
    assert sorted(p.insight_ids) == sorted(i["id"] for i in data["insights"]) and p.left_out == 0
    for ins in data["insights"]:
        assert f'<insight id="{ins["id"]}">' in p.memory_block
        assert f'- **Source:** {ins["source_step"]} ({ins["source_outcome"]})' in p.memory_block
        assert (compiled / "insight" / f'{ins["id"]}.md').is_file()
    # the most similar run is the cancellation, and every path the agent is pointed to exists
    run_by_step = {r["step"]: r for r in data["runs"]}
    assert "Cancel reservation" in run_by_step[p.similar_runs[0].step]["instruction"]
    for s in p.similar_runs:
        assert (compiled / "compilation" / f"{s.step}.md").is_file()
        assert (compiled / "raw" / s.step / "solver.full.jsonl").is_file()
        assert [i["id"] for i in s.insights] == run_by_step[s.step]["insights"]
    for layer in ("raw", "compilation", "insight"):
        assert (compiled / layer / "_index.md").is_file()
    assert p.mount_path == data["mount_path"]
    step = re.search(r"/work/tools/actions (step-\d+)", p.system).group(1)
    assert step in run_by_step


def test_citation_and_descent_against_the_compiled_corpus(compiled):
    data = json.loads((compiled / "corpus.json").read_text())
    step, ins = data["runs"][2]["step"], data["insights"][0]["id"]
    cit = parse_and_check(f'Here: ```json\n{{"R": ["{step}"], "C": ["{step}", "step-9999"], "I": ["{ins}"]}}\n```',
                          compiled)
    assert cit.R == [step] and cit.C == [step] and cit.I == [ins]
    assert cit.unknown == [{"key": "C", "id": "step-9999", "reason": "not in the corpus"}]
    turns = [Turn(turn=0, type="function_call", name="bash",
                  arguments={"command": f"cat /work/corpus/compilation/{step}.md"}, result="..."),
             Turn(turn=1, type="function_call", name="cancel_reservation", arguments={"reservation_id": "QQQ111"},
                  result="ok")]
    rep = analyse_turns(turns)
    assert rep.label == "Descent" and rep.descents[0].opened_compilations == [step]
    assert (compiled / "compilation" / f"{step}.md").is_file()
