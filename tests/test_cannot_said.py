"""A chat run that made no tool call and told the user it could not see or do something leads
its page with that claim, its words and turn, before the change it never made
(compilers/cannot_said.py): its tools were never tried. A run that looked something up first is
not said to have made no call, and an agent that never claimed it could not gets no such line."""

from __future__ import annotations

import json
from pathlib import Path

from wikitrace.build import BuildOptions, build

POLICY = ("# Ferry Desk Policy\n\nThe current time is 2031-03-04 10:00:00 UTC.\n\n"
          "- Before voiding a booking, read it back to the traveller and get a clear yes.\n")
VOID = {"name": "void_booking", "kwargs": {"booking_id": "FB007Q"}}


def _tool(name: str, args: dict, answer) -> list[dict]:
    call = {"id": f"call_{name}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
    return [{"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"call_{name}", "name": name, "content": json.dumps(answer)}]


def _record(trial: int, said: str, looked: bool, summed: bool = False) -> dict:
    traj = [{"role": "system", "content": POLICY},
            {"role": "user", "content": "Hi, can you tell me what my booking FB007Q cost? Then void it."}]
    if looked:
        traj += _tool("get_booking", {"booking_id": "FB007Q"}, {"booking_id": "FB007Q", "price": 40})
    traj += [{"role": "assistant", "content": said}]
    if summed:  # a sum worked out after the claim: no look-up of the booking
        traj += [{"role": "user", "content": "It was two legs of 20 each, I think."},
                 *_tool("calculate", {"expression": "20 + 20"}, 40.0)]
    traj += [{"role": "user", "content": "Alright then. ###STOP###"}]
    return {"task_id": 7, "reward": 0.0, "trial": trial, "traj": traj,
            "info": {"task": {"user_id": "otto_vale_0007", "actions": [VOID], "outputs": [],
                              "instruction": "You are otto_vale_0007; you want booking FB007Q voided."},
                     "source": "user", "reward_info": {"reward": 0.0, "actions": [VOID]}}}


def _in_short(tmp_path: Path, records: list[dict]) -> list[str]:
    path = tmp_path / "ferry-results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    pages = sorted((out / "compilation").glob("step-*.md"))
    return [p.read_text().split("## In short\n", 1)[1].split("\n## ", 1)[0] for p in pages]


def test_a_run_that_made_no_call_and_said_it_could_not_leads_with_that_claim(tmp_path):
    claim = "I'm sorry, I am unable to see what your booking cost. Please check your email receipt."
    pages = _in_short(tmp_path, [_record(0, claim, looked=False), _record(1, claim, looked=True),
                                 _record(2, "Please check your email receipt for the price.", looked=False)])
    first = pages[0].splitlines()[0]
    assert first.startswith("- At turn 2, with no tool called (the run made no call at all), the agent told the user "
                            "it could not: \"I'm sorry, I am unable to see what your booking cost.\" The task "
                            "expected void_booking(booking_id=\"FB007Q\")"), first
    assert "made no call at all" not in pages[1]  # it looked the booking up first
    assert "could not" not in pages[2] and "The task expected void_booking" in pages[2]  # no claim to quote


def test_a_run_whose_only_call_after_the_claim_was_a_sum_leads_with_the_claim_too(tmp_path):
    """A calculator's sum after "I am unable to see" is no look-up of the booking: the claim still
    stands as what the run did instead of trying a tool, with the call it did make named."""
    claim = "I'm sorry, I am unable to see what your booking cost. Please check your email receipt."
    first = _in_short(tmp_path, [_record(0, claim, looked=False, summed=True)])[0].splitlines()[0]
    assert first.startswith("- At turn 2, with no tool called (the run looked nothing up: its only call was calculate at "
                            "turn 4), the agent told the user it could not: \"I'm sorry, I am unable to see what your "
                            "booking cost.\" The task expected void_booking(booking_id=\"FB007Q\")"), first
