"""A success's way of settling that failed runs took too names the check to make first, and
nothing more: what set its runs apart from their own task's failed trials is listed, with its
links, under Evidence ("Compared with the failed trials of the same task"), not said again."""

from __future__ import annotations

from wikitrace.corpus.peers import check_first


def _entry(differences: list[dict], compared: int, members: int = 9) -> dict:
    return {"guideline": "To settle the task: look with Search, then end with Finish.",
            "contrast": {"failed_ended": [{"insight": "insight-0004", "runs": 5, "steps": []}]},
            "same_task": {"side": "success", "compared": compared, "members": members, "differences": differences}}


ANSWER = {"text": "gave a Finish answer whose words all came from earlier answers, which each failed trial of its task "
                  "never did", "runs": 3, "pages": []}


def test_the_check_first_is_added_and_the_trial_difference_is_not_repeated():
    for differences in ([ANSWER], [{**ANSWER, "runs": 1}], []):
        entry = _entry(differences, 4)
        check_first(entry, {"insight-0004": "Answer only once a look-up returned it"})
        assert entry["guideline"] == (
            "To settle the task: look with Search, then end with Finish. Failed runs ended this way too; the lesson "
            "they teach most often is the check to make first: \"Answer only once a look-up returned it\" (counts "
            "under Evidence)."), entry["guideline"]
