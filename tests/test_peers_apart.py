"""A success's way of settling that failed runs took too says what set its runs apart from their
own task's failed trials, or plainly that no difference recurs, after the check to make first."""

from __future__ import annotations

from wikitrace.corpus.peers import check_first


def _entry(differences: list[dict], compared: int, members: int = 9) -> dict:
    return {"guideline": "To settle the task: look with Search, then end with Finish.",
            "contrast": {"failed_ended": [{"insight": "insight-0004", "runs": 5, "steps": []}]},
            "same_task": {"side": "success", "compared": compared, "members": members, "differences": differences}}


ANSWER = {"text": "gave a Finish answer whose words all came from earlier answers, which each failed trial of its task "
                  "never did", "runs": 3, "pages": []}


def test_the_difference_found_in_two_runs_or_more_is_said_with_its_count():
    entry = _entry([ANSWER], 4)
    check_first(entry, {"insight-0004": "Answer only once a look-up returned it"})
    assert entry["guideline"].endswith(
        "the check to make first: \"Answer only once a look-up returned it\" (counts under Evidence). Against their own "
        "task's failed trials (4 of the 9 runs here have one), 3 of these 4 runs gave a Finish answer whose words all "
        "came from earlier answers, which each failed trial of its task never did."), entry["guideline"]


def test_a_difference_of_one_run_is_no_pattern_and_one_pair_says_nothing():
    entry = _entry([{**ANSWER, "runs": 1}], 4)
    check_first(entry, {})
    assert entry["guideline"].endswith("(4 of the 9 runs here have one), no checked difference from them recurs in two "
                                       "of these runs."), entry["guideline"]
    entry = _entry([ANSWER], 1)
    check_first(entry, {})
    assert "Against their own" not in entry["guideline"]
