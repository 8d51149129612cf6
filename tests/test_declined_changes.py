"""A successful trial that told the user it could not make a change, set against the failed trial
of its task that made that very change (compilers/refusal_cites.py ``declined``,
corpus/trial_contrast.py ``declined_line``). Fixtures are tau-bench result files of a made-up
travel desk whose policy is our own wording (tests/test_rule_reasons.py)."""

from __future__ import annotations

import json
import re

from tau_messages import agent, tool, user
from test_rule_reasons import INSURED, MEMBER, TRIP

from wikitrace.build import BuildOptions, build

BUSINESS = dict(TRIP, reservation_id="B7QX2L", cabin="business")
MEMBER_TWO = dict(MEMBER, reservations=["K2PL7Q", "B7QX2L"])


def _trial(trial: int, reward: float, cancels: str | None, refusal: str | None, tried: bool = False) -> dict:
    traj = [{"role": "system", "content": INSURED}, user("Hi, I am tove_brand_5120 and I want to cancel a trip."),
            *tool("get_user_details", {"user_id": "tove_brand_5120"}, MEMBER_TWO),
            *tool("get_reservation_details", {"reservation_id": "B7QX2L"}, BUSINESS),
            *tool("get_reservation_details", {"reservation_id": "K2PL7Q"}, TRIP)]
    if refusal:
        traj.append(agent(refusal))
    if tried:  # it went back on its refusal: the change was sent, and only the tool's error stopped it
        traj += [user("Please try anyway."), *tool("cancel_reservation", {"reservation_id": "K2PL7Q"},
                                                  "Error: reservation K2PL7Q cannot be cancelled")]
    traj.append(user("Then cancel the business one, B7QX2L. Yes."))
    if cancels:
        traj += tool("cancel_reservation", {"reservation_id": cancels}, dict(TRIP, reservation_id=cancels,
                                                                            status="cancelled"))
    traj.append(user("Thanks. ###STOP###"))
    task = {"user_id": "tove_brand_5120", "outputs": [], "instruction": "You are tove_brand_5120.",
            "actions": [{"name": "cancel_reservation", "kwargs": {"reservation_id": "B7QX2L"}}]}
    return {"task_id": 3, "reward": reward, "trial": trial, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _pages(tmp_path, refusal: str, tried: bool = False) -> tuple[str, str]:
    folder = tmp_path / "in"
    folder.mkdir()
    won = _trial(0, 1.0, "B7QX2L", refusal, tried)
    lost = _trial(1, 0.0, "K2PL7Q", None)
    (folder / "desk.json").write_text(json.dumps([won, lost]), encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    steps = {r["outcome"]: r["step"] for r in data["runs"]}
    return ((out / "compilation" / f"{steps['success']}.md").read_text(), steps["failure"])


def test_a_success_that_refused_the_change_its_failed_trial_made_says_so_in_its_words(tmp_path):
    page, lost = _pages(tmp_path, "K2PL7Q is economy without insurance, so it cannot be cancelled.")
    assert ("this run told the user it could not make a cancel_reservation change, after looking up K2PL7Q: "
            "\"K2PL7Q is economy without insurance, so it cannot be cancelled.\"; the failed trial of this task made "
            f"that change on K2PL7Q ([{lost}]({lost}.md))") in page


def test_a_refusal_that_names_values_two_records_hold_alike_is_tied_to_neither(tmp_path):
    """"This trip cannot be cancelled" names no value of either record: which one it refused is not
    settled, so nothing is set against the failed trial."""
    page, _lost = _pages(tmp_path, "Sorry, this trip cannot be cancelled under the policy.")
    assert "told the user it could not make" not in page


def test_a_success_that_sent_the_change_after_refusing_it_teaches_no_refusal(tmp_path):
    """The success told the user K2PL7Q could not be cancelled, then sent the cancel anyway, which
    the tool refused: its "no" is not what set it apart from the failed trial (a rater found such a
    page implying the run succeeded by refusing)."""
    page, _lost = _pages(tmp_path, "K2PL7Q is economy without insurance, so it cannot be cancelled.", tried=True)
    assert "told the user it could not make" not in page


def test_a_success_says_what_the_rule_left_open_on_the_record_its_failed_trial_changed(tmp_path):
    """Round 16: a success's page named the failed trial's other cancellation but not why it was
    wrong. The failed trial's own page read the cancel rule on K2PL7Q's fields (booked days ago, no
    cover); the success's line now says what that reading left open, and points to that page."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "desk.json").write_text(json.dumps([_trial(0, 1.0, "B7QX2L", None), _trial(1, 0.0, "K2PL7Q", None)]),
                                      encoding="utf-8")
    out = tmp_path / "out"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    steps = {r["outcome"]: r["step"] for r in data["runs"]}
    lost = (out / "compilation" / f"{steps['failure']}.md").read_text()
    m = re.search(r"So of this rule only (.+?) could still have allowed this cancel_reservation\.", lost)
    assert m, lost
    won = (out / "compilation" / f"{steps['success']}.md").read_text()
    assert (f"the failed trial of this task made cancel_reservation(reservation_id K2PL7Q) instead "
            f"([{steps['failure']}]({steps['failure']}.md)); on the record it acted on, the system prompt's rule on "
            f"cancel_reservation, read on the record's fields, left only {m.group(1)} open (its page gives the "
            "fields)") in won, won
