"""A compilation or raw metadata page links each insight of its run. The insight's title is
merged over every run that taught it and changes as runs are added, so a page never shows a run's
own lesson as if it were the linked page's title: the link reads as the insight's id, and the
run's lesson, when shown, is said to be the run's."""

from __future__ import annotations

import json
import re

from test_insight_layer import compile_runs
from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _turns

_LABELLED = re.compile(r"- (?:Insight: )?\[(insight-\d+)\]\(([^)]+)\):? ([^(`\"]+?) \(`")


def _look_up_run(i: int, with_profile: bool) -> dict:
    rid = f"AB{i}XYZ"
    reservation = json.dumps({"reservation_id": rid, "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA",
                              "cabin": "economy", "insurance": "no",
                              "flights": [{"flight_number": "HAT001", "date": "2024-05-20"}]})
    profile = [_call("get_user_details", {"user_id": "mia_li_3668"},
                     json.dumps({"user_id": "mia_li_3668", "membership": "gold", "reservations": [rid]}))]
    turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", f"Is my reservation {rid} insured? I'm mia_li_3668."),
                   *(profile if with_profile else []),
                   _call("get_reservation_details", {"reservation_id": rid}, reservation),
                   _msg("assistant", "Your reservation has no travel insurance."), _msg("user", "ok thanks ###STOP###"))
    return _record(f"insured-{i}", "airline", "Ask whether the reservation is insured.", turns, True)


def test_a_link_is_never_labelled_with_another_title_than_its_pages(tmp_path):
    # one run also read the profile: its own lesson names both tools, the merged insight one
    out = compile_runs(tmp_path, [_look_up_run(0, True), _look_up_run(1, False), _look_up_run(2, False)])
    titles = {p.stem: re.search(r"^title: (.+)$", p.read_text(), re.M).group(1).strip("\"'")
              for p in (out / "insight").glob("insight-*.md")}
    pages = [*(out / "compilation").glob("step-*.md"), *(out / "raw").glob("step-*/metadata.md")]
    lines = [line for p in pages for line in p.read_text().splitlines() if "insight/insight-" in line and line.startswith("- ")]
    assert len(lines) == 6
    for line in lines:
        ident = re.search(r"\[(insight-\d+)\]", line).group(1)
        labelled = _LABELLED.match(line)
        assert labelled is None or labelled.group(3) == titles[ident], line
    own = [line for line in lines if "get_user_details" in line]
    assert own and all("the lesson as this run worded it" in line for line in own)  # the run's words, said to be the run's
