"""A failure page heads what it shows for context "Context", not "Cause": a change the run made
exactly as the task expected, and a note the agent wrote to itself (a think tool), did not make
the run fail. Blind raters read such items under "Cause N" as the page blaming a correct call."""

from __future__ import annotations

import json
import re

from tau_messages import agent, tool, user
from test_user_given_values import BUSINESS, POLICY, PROFILE, _downgrade

from wikitrace.build import BuildOptions, build


def _headings(page: str) -> list[tuple[str, str]]:
    section = page.split("\n## Failure Causes\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"\n### (Cause|Context) \d+\n\*\*Decision\*\*: Called (\w+)", section)


def test_a_change_made_as_expected_and_a_note_to_self_are_context_on_a_failure_page(tmp_path):
    traj = [user("Hi, I'm ravi_okafor_5120. Downgrade M3KD7Q to economy."),
            *tool("get_user_details", {"user_id": "ravi_okafor_5120"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "M3KD7Q"}, BUSINESS),
            *tool("think", {"thought": "The user wants a downgrade first; I will do the cancel after."}, ""),
            agent("I'll move M3KD7Q to economy on HAT402, refund to your Visa. Shall I proceed?"),
            user("Yes, go ahead."),
            *tool("update_reservation_flights", _downgrade(), dict(BUSINESS, cabin="economy")),
            *tool("book_reservation", {"user_id": "ravi_okafor_5120", "origin": "DTW", "destination": "BOS"},
                  "Error: missing arguments"),
            agent("Done with the downgrade."), user("Thanks. ###STOP###")]
    actions = [{"name": "update_reservation_flights", "kwargs": _downgrade()}]  # the run made it as expected
    task = {"user_id": "ravi_okafor_5120", "outputs": [], "actions": actions,
            "instruction": "You are ravi_okafor_5120. Downgrade M3KD7Q."}
    record = {"task_id": 4, "reward": 0.0, "trial": 0, "traj": [{"role": "system", "content": POLICY}, *traj],
              "info": {"task": task, "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}}
    path = tmp_path / "airline.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    page = (out / "compilation" / "step-0000.md").read_text()
    heads = dict((name, word) for word, name in _headings(page))
    assert heads.get("update_reservation_flights") == "Context", page
    assert heads.get("think") == "Context", page
    assert heads.get("book_reservation") == "Cause", page  # the error no later call got past stays a cause
