"""A model's compilation page opens with the same checked "In short" facts as the offline page,
labelled as the compiler's checks of the log (not the model's words); a page that fell back to
the offline compiler keeps them too. The model is the loopback fake (tests/fake_openai.py); the
runs are our own, in tau-bench's result-file shape."""

from __future__ import annotations

import json

import frontmatter

from fake_openai import merge_reply, reply, valid_answer
from test_in_short import POLICY, TRIP, _agent, _tool, _user
from wikitrace.build import BuildOptions, build

CLAIM = "Since your reservation was made within the last 24 hours, it can be cancelled for a full refund."
FACT = "of the record get_reservation_details returned at turn 4, that it was made within the last 24 hours"
LABEL = "Facts the compiler checked against the turn log, not the model's words."


def _record(task_id: int, user_words: str) -> dict:
    traj = [{"role": "system", "content": POLICY}, _user(user_words),
            _agent("Of course. What is your user id and reservation id?"),
            _user("lena_vogt_3017, reservation Q4WZ8N."),
            *_tool("get_reservation_details", {"reservation_id": "Q4WZ8N"}, TRIP),
            _agent(CLAIM + " Shall I cancel it?"), _user("Yes, cancel it."),
            *_tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, {**TRIP, "status": "cancelled"}),
            _agent("It is cancelled."), _user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": "You are lena_vogt_3017. Cancel your trip.",
            "actions": [{"name": "get_reservation_details", "kwargs": {"reservation_id": "Q4WZ8N"}}]}
    return {"task_id": task_id, "reward": 0.0, "trial": 0, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}


def test_model_pages_and_fallback_pages_carry_the_checked_facts(fake_openai, tmp_path):
    def respond(body):
        merged = merge_reply(body)
        if merged is not None:
            return merged
        if any("Boston trip, urgent" in m["content"] for m in body["messages"]):
            return reply("{never valid json")  # this run falls back to the offline page
        return reply(json.dumps(valid_answer("failure", turns=[2])))

    fake_openai.respond_with(respond)
    src = tmp_path / "runs" / "airline-results.json"
    src.parent.mkdir()
    src.write_text(json.dumps([_record(3, "Hi, I need help with my Boston trip."),
                               _record(4, "Hi, I need help with my Boston trip, urgent.")]), encoding="utf-8")
    out = tmp_path / "wiki"
    build(BuildOptions(inputs=[src.parent], out=out, quiet=True))
    pages = {p["compiler"]: p for p in map(frontmatter.load, sorted((out / "compilation").glob("step-*.md")))}
    assert set(pages) == {"llm", "offline-fallback"}
    for compiler, page in pages.items():
        short = page.content.split("## In short", 1)[1].split("\n## ", 1)[0]
        assert FACT in short, compiler
        assert (LABEL in short) == (compiler == "llm")
    # a model's page says nothing in place of facts the log does not establish
    model = pages["llm"].content.split("## In short", 1)[1].split("\n## ", 1)[0]
    assert "The log records nothing" not in model
