"""An error lesson whose runs got past the error and still failed says what to do with the value
the message refused (corpus/retry_advice.py). A refused date already past by the prompt's stated
current time is a part already used (a flight flown): no other value replaces it, and the page
must not tell the reader to send one."""

from __future__ import annotations

import re

from wikitrace.corpus.retry_advice import UNPROVEN, untested_fix

_GOT_PAST = "turn 13: got past it at turn 20 (with flights changed); the message named the flights value sent"
_PAST = {"kind": "past-date"}


def _member(k: int, task: str, past: bool) -> tuple[dict, dict]:
    facts = [_PAST] if past else [{"kind": "unexpected-change", "about": ["update_reservation_flights"]}]
    return ({"step": f"step-{k:04d}", "task_id": task, "outcome": "failure", "facts": facts}, {"detail": _GOT_PAST})


def _entry() -> dict:
    return {"key": "error|update_reservation_flights|Error: flight … not available on date …", "counts": {"success": 0},
            "guideline": "When update_reservation_flights answers \"Error: flight … not available on date …\", "
                         "call update_reservation_flights again with flights changed."}


def test_a_refused_date_already_past_in_every_run_is_never_to_be_replaced():
    entry = _entry()
    untested_fix(entry, [_member(13, "13", True), _member(163, "13", True), _member(133, "33", True)])
    text = entry["guideline"]
    assert "replace" not in text and "in all of them the refused call sent a date the error named that was already past" in text
    assert text.split(", ", 1)[1].startswith("compare the dates a change sends with the current time the system prompt "
                                            "states first, and for a part already past tell the user it cannot be "
                                            "changed rather than sending another value: "), text
    assert "the 3 runs (of 2 tasks) here that got past it all failed (flights changed: 3 runs)." in text, text


def test_past_in_some_runs_leads_and_the_replace_advice_stays_for_the_rest():
    entry = _entry()
    untested_fix(entry, [_member(13, "13", True), _member(72, "22", False), _member(122, "22", False)])
    text = entry["guideline"]
    assert "in 1 of the 3 runs here (1 of their 2 tasks) the refused call sent a date" in text, text
    assert text.index("already past") < text.index("otherwise replace the value with one a look-up shows can work")


def test_no_past_date_keeps_the_replace_advice():
    entry = _entry()
    untested_fix(entry, [_member(72, "22", False), _member(122, "22", False)])
    assert re.search(r"replace the flights value the message names( \([^)]*\))? with one a look-up shows can work",
                     entry["guideline"]), entry["guideline"]
    assert "already past" not in entry["guideline"]


def test_retries_that_sent_the_expected_call_say_the_failure_lay_in_a_change_never_made():
    """Each run got past the error with the very call the task expected, and left another expected
    change unmade: the page says so, so no reader takes the changed argument for the fault; where a
    run's retried call differed from the expected one, nothing is added."""
    missed = {"kind": "missed-change", "about": ["update_reservation_baggages"]}

    def member(k: int, facts: list[dict]) -> tuple[dict, dict]:
        return ({"step": f"step-{k:04d}", "task_id": str(k), "outcome": "failure", "facts": facts},
                {"detail": _GOT_PAST})

    entry = _entry()
    untested_fix(entry, [member(73, [missed]), member(123, [missed])])
    assert entry["guideline"].endswith(
        "(flights changed: 2 runs); in each, the update_reservation_flights call that got through was the one the task "
        "expected, and a change it expected never went through (update_reservation_baggages in 2)."), entry["guideline"]
    entry = _entry()
    differing = {"kind": "arguments", "about": ["update_reservation_flights.flights@user"]}
    untested_fix(entry, [member(73, [missed]), member(123, [missed, differing])])
    assert "was the one the task expected" not in entry["guideline"]


def test_where_no_successful_run_that_met_the_error_got_the_call_through_telling_the_user_leads():
    """The seat error's successful runs told the user and changed nothing; the failed ones swapped
    in other flights and failed: "replace the value" would point the reader the failed runs' way.
    One successful run that got the call through after all keeps the replace advice."""
    def won(k: int, patterns: list[str]) -> dict:
        return {"step": f"step-{k:04d}", "task_id": "9", "outcome": "success", "patterns": patterns}

    stopped = {"step-0115": won(115, ["error|update_reservation_flights|x", "idle|lookups"]),
               "step-0165": won(165, ["error|update_reservation_flights|x"])}
    entry = _entry()
    entry["contrast"] = {"counted": {"success": {"sources": 0, "steps": ["step-0115", "step-0165"], "more": 0}}}
    untested_fix(entry, [_member(72, "22", False), _member(122, "22", False)], stopped)
    assert entry["guideline"].startswith(
        "When update_reservation_flights answers \"Error: flight … not available on date …\", tell the user it cannot "
        "be done rather than calling update_reservation_flights again with another flights value: the 2 successful "
        "runs (all trials of 1 task) of this task type that met it got no update_reservation_flights call through "
        "after it;"), entry["guideline"]
    assert "replace the flights value" not in entry["guideline"]

    through = dict(stopped, **{"step-0165": won(165, ["error|update_reservation_flights|x",
                                                      "went-through|update_reservation_flights"])})
    entry = _entry()
    entry["contrast"] = {"counted": {"success": {"sources": 0, "steps": ["step-0115", "step-0165"], "more": 0}}}
    untested_fix(entry, [_member(72, "22", False), _member(122, "22", False)], through)
    assert "replace the flights value the message names" in entry["guideline"], entry["guideline"]
    assert entry.get(UNPROVEN)  # a swap two runs made and failed with: the cut leads with what their pages show
    # a failed run whose task expected the call (sent with other flights): for it the call was to be made
    entry = _entry()
    entry["contrast"] = {"counted": {"success": {"sources": 0, "steps": ["step-0115", "step-0165"], "more": 0}}}
    sent_otherwise = ({"step": "step-0003", "task_id": "3", "outcome": "failure",
                       "facts": [{"kind": "arguments", "about": ["update_reservation_flights.flights@answer"]}]},
                      {"detail": _GOT_PAST})
    untested_fix(entry, [_member(72, "22", False), sent_otherwise], stopped)
    assert "replace the flights value the message names" in entry["guideline"], entry["guideline"]
    entry = _entry()  # successful runs the contrast does not name one by one: nothing is said of them
    entry["contrast"] = {"counted": {"success": {"sources": 0, "steps": ["step-0115"], "more": 1}}}
    untested_fix(entry, [_member(72, "22", False), _member(122, "22", False)], stopped)
    assert "replace the flights value the message names" in entry["guideline"], entry["guideline"]
