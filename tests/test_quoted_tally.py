"""A quote-mark lead says the plain count behind it: how many of the task type's look-ups of its
tool sent with quote marks failed, over runs of either outcome, recountable from each run's record."""

from __future__ import annotations

from fixture_runs import IMPORTERS

from wikitrace.compilers.trial_record import record
from wikitrace.compilers.reading import read_run
from wikitrace.corpus.quoted_tally import quoted_plainly
from wikitrace.runs import load
from wikitrace.runs.model import Run

SLIPS = IMPORTERS / "react_reflexion" / "react_reflexion_slips.txt"


def _entry(guideline: str) -> dict:
    return {"guideline": guideline, "checked": {"kind": "quoted-name", "steps": ["step-0001"]}}


BY_STEP = {"step-0001": {"facts": [{"kind": "quoted-name", "about": ["Search"]}]}}


def _run(sent: int, failed: int, outcome: str = "failure") -> dict:
    return {"outcome": outcome, "decisive": {"quoted_calls": {"Search": [sent, failed]}}}


def test_every_quoted_call_failing_is_said_as_all_after_the_lead_sentence():
    entry = _entry("Send Search a name without quote marks. The successful runs set it apart.")
    quoted_plainly(entry, [_run(3, 3), _run(2, 2, "success"), {"outcome": "success", "decisive": {}}], BY_STEP)
    assert entry["guideline"] == ("Send Search a name without quote marks. Of the Search calls in this task type's runs "
                                  "whose text held quote marks, all 5 failed (sent in 2 runs, either outcome). The "
                                  "successful runs set it apart.")


def test_a_quoted_call_that_went_through_is_counted_and_other_leads_are_left_alone():
    entry = _entry("Send Search a name without quote marks.")
    quoted_plainly(entry, [_run(3, 3), _run(2, 1, "success")], BY_STEP)
    assert "4 of the 5 failed (sent in 2 runs" in entry["guideline"]
    other = {"guideline": "Do X.", "checked": {"kind": "packed-calls", "steps": ["step-0001"]}}
    quoted_plainly(other, [_run(3, 3)], BY_STEP)
    assert other["guideline"] == "Do X."


def test_the_record_counts_a_run_s_quoted_look_ups_and_their_failures():
    runs = [r for r in load._read(SLIPS, load.detect(SLIPS)) if isinstance(r, Run)]
    quoted = [r for r in runs if any(t.name == "Search" and '"' in str(t.arguments) for t in r.turns)]
    assert quoted  # the fixture sends "Vell Dunmore (painter)" in quote marks
    for run in quoted:
        calls = [t for t in run.turns if t.type == "function_call" and t.name == "Search"
                 and ('"' in str(t.arguments) or str(t.arguments).strip()[:1] + str(t.arguments).strip()[-1:] == "''")]
        sent, failed = record(read_run(run))["quoted_calls"]["Search"]
        assert (sent, failed) == (len(calls), sum(bool(t.is_error) for t in calls)), run.run_id


def test_the_tally_goes_after_the_first_sentence_not_inside_a_quoted_error():
    """The lesson's first sentence quotes the error ("Could not find …. Similar: …"): the tally is
    put after that whole sentence, not at the "…. " inside the quote."""
    guideline = ('When Search answers "Could not find …. Similar: …", call Search again with a listed name. '
                 "Send the name without quote marks.")
    entry = {"guideline": guideline, "checked": {"kind": "quoted-name", "steps": ["step-0000"]},
             "key": "error|Search|not-found", "sources": [{"step": "step-0000", "outcome": "failure"}]}
    runs = [{"step": f"step-{k:04d}", "outcome": "failure", "patterns": [],
             "facts": [{"kind": "quoted-name", "about": ["Search"]}],
             "decisive": {"quoted_calls": {"Search": [2, 2]}}} for k in range(2)]
    quoted_plainly(entry, runs, {r["step"]: r for r in runs})
    assert entry["guideline"].startswith(
        'When Search answers "Could not find …. Similar: …", call Search again with a listed name. Of the Search calls '
        "in this task type's runs whose text held quote marks, all 4 failed (sent in 2 runs, either outcome)."), entry
