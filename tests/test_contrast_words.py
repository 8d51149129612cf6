"""What an insight page says of its contrast with the successful runs (corpus/contrast_words.py)."""

from __future__ import annotations

from wikitrace.corpus.contrast_words import contrast_sentence


def _entry(failed_sources: int, **contrast) -> dict:
    base = {"pattern": "hand-off|transfer_to_human_agents", "failed_met": 13, "failed": 116, "success_met": 35,
            "success": 84, "verdict": "success", "p": 0.001}
    return {"counts": {"runs": 13 + failed_sources, "success": 13, "failure": failed_sources},
            "contrast": {**base, **contrast}}


def test_trouble_the_successes_met_more_often_is_no_cause_by_itself_where_failed_runs_met_it_too():
    """A hand-off successful runs made more often is no cause of failure; but where failed runs here
    handed off in place of a change, the page does not clear what they did: it points to their pages."""
    said = contrast_sentence(_entry(9))
    assert said.endswith("so meeting it is not by itself a cause of failure; what the failed runs here did where "
                         "they met it is on their pages.")
    assert contrast_sentence(_entry(0)).endswith("so it is not a cause of failure.")


def test_a_change_made_as_expected_by_failed_runs_is_not_named_a_cause():
    said = contrast_sentence(_entry(5, pattern="went-through|cancel_reservation", verdict="failure", as_expected=4,
                                    failed_met=11))
    assert "but in 4 of the 11 failed runs every cancel_reservation call that went through was the one the task " \
           "expected: the change going through is not named a cause of failure." in said
    assert "named a likely cause" not in said
    assert contrast_sentence(_entry(5, pattern="went-through|cancel_reservation", verdict="failure")).endswith(
        "so it is named a likely cause of failure.")


def test_ending_after_look_ups_that_no_success_did_is_failing_not_a_cause_found():
    """In a task type where every success gave an answer, the runs that ended after look-ups only all
    failed: that is what failing is there, not a cause the counts found."""
    from wikitrace.corpus.contrast_words import index_note

    entry = _entry(10, pattern="idle|lookups", verdict="failure", failed_met=80, success_met=0, failed=374,
                   success=85)
    said = contrast_sentence(entry)
    assert "ending so is failing here rather than a cause the counts found" in said
    assert "named a likely cause" not in said
    assert index_note(entry).endswith("no successful run ended so")
