"""A record value that decides a change is quoted in the system prompt's own words, and a rule
another run quoted is borrowed only for runs whose records hold the value its clause names.

Fixtures are tau-bench result files (OpenAI chat messages with ``tool_calls``) of made-up shops
whose policies are our own wording (tests/test_change_conditions.py's ferry desk, and
tests/test_rule_reasons.py's travel desk with a bag allowance per membership tier)."""

from __future__ import annotations

import re

import json
from pathlib import Path

import test_change_conditions as ferry
from test_fact_leads import _booking as desk_booking

from wikitrace.compilers.offline import compile_offline
from wikitrace.corpus.checked_facts import fitting, rules_on, run_facts
from wikitrace.runs import load

VOID_RULE = "Do not void a booking on a saver fare unless the ferry line cancelled one of its legs."
SEAT_RULE = "A saver fare gets its seat at check-in only."
# the seat section comes first and names the fare too, but speaks of bookings in one block of two
POLICY = ("# Ferry Desk Policy\n\nThe current time is 2031-03-04 10:00:00 UTC.\n\n"
          "## Seats\n\n- Seats on a booking can be moved once.\n\n- " + SEAT_RULE + "\n\n"
          "## Voiding\n\n- Before voiding a booking, read it back to the traveller and get a clear yes.\n\n"
          "- " + VOID_RULE + "\n")


def _runs(path: Path, records: list[dict]):
    path.write_text(json.dumps(records), encoding="utf-8")
    return list(load._read(path, load.detect(path)))


def test_a_run_keeps_the_prompts_rule_naming_its_records_value_from_the_changes_section(tmp_path, monkeypatch):
    monkeypatch.setattr(ferry, "POLICY", POLICY)
    saver = ferry._booking(4, "saver", "aisle", age_days=2)
    (run,) = _runs(tmp_path / "one.json", [ferry._record(4, 0, saver, void=True, success=False)])
    # the void sentence, not the seat one: the voiding section speaks of bookings in every block
    assert compile_offline(run).value_rules == [["void_booking", "fare", "saver", VOID_RULE]]
    kept = ferry._record(5, 0, ferry._booking(5, "saver", "aisle", 2), void=False, success=True)
    (run,) = _runs(tmp_path / "two.json", [kept])
    assert compile_offline(run).value_rules == []  # no change made: nothing to quote a rule for


def test_a_deciding_value_leads_with_the_prompts_sentence_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(ferry, "POLICY", POLICY)
    data = ferry._compile(tmp_path, ferry._separating_set())
    failed = ferry._lesson(data, "went-through|void_booking")
    assert failed["title"] == "Before void_booking, check the fare of the record it acts on"
    # the failed runs' own rule fact quotes the same sentence first (corpus/fact_leads.py); the records'
    # counts on both sides follow it
    assert failed["guideline"].startswith(f"Before void_booking, check the system prompt's rule on void_booking "
                                          f"against the record it acts on: \"{VOID_RULE}\"")
    assert (
        "Before void_booking, look up the record `booking_id` points at and check `fare`: the system prompt's rule "
        f"naming \"saver\" says \"{VOID_RULE}\" In these tasks successful runs made void_booking on 6 records and "
        "looked up 6 records without making it (12 tasks); `fare` was \"saver\" in 6 of the 6 they did not make it "
        "on and in 0 of the 6 they made it on (one-sided Fisher p = 0.0011).") in failed["guideline"]
    assert SEAT_RULE not in failed["guideline"]
    # the successful runs' way to the change is on the same page; the rule is said there, not again
    assert not [i for i in data["insights"] if i["key"] == "procedure|void_booking"]
    assert re.search(r"The 12 successful runs here settled the task this way: look with get_booking \(12 of 12\), then "
                     r"call void_booking, taking booking_id from the task statement \(12 of the 12 successful runs "
                     r"here\)\.$", failed["advice"]), failed["advice"]


def test_a_prompt_naming_no_deciding_value_keeps_the_counts_only(tmp_path):
    data = ferry._compile(tmp_path, ferry._separating_set())  # the ferry desk's own policy names no fare
    assert all(not r.get("value_rules") for r in data["runs"])
    g = ferry._lesson(data, "went-through|void_booking")["guideline"]
    assert "system prompt's rule naming" not in g and "(one-sided Fisher p = 0.0011). Where it has `fare`" in g


def _entry(tmp_path: Path, name: str, record: dict) -> dict:
    """A run's corpus entry fields that the rule borrowing reads: its step, facts and patterns."""
    (run,) = _runs(tmp_path / name, [record])
    comp = compile_offline(run)
    return {"step": name, "task_type": "desk", "facts": run_facts(comp), "patterns": list(comp.patterns)}


def test_another_runs_rule_is_borrowed_only_where_the_records_hold_the_value_its_clause_names(tmp_path):
    platinum = _entry(tmp_path, "p.json", desk_booking(1, 0, "platinum", 1, 0))
    bronze = _entry(tmp_path, "b.json", desk_booking(2, 0, "bronze", 1, 2))
    (rule,) = [f for f in platinum["facts"] if f["kind"] == "rule"]
    assert rule["about"][1] == "nonfree_baggages" and rule["about"][4:] == ["membership=platinum"]
    rules = rules_on([platinum], lambda r: r["task_type"])["desk"]["baggages"]  # by the thing the argument names
    assert fitting(rules, [bronze]) is None  # the platinum clause is no rule of a bronze member's run
    quote, step = fitting(rules, [platinum])
    assert step == "p.json" and quote.startswith('"Bag allowance: If the account holder is a bronze member,') is False
    assert "platinum member" in quote
    assert fitting(rules, [platinum, bronze]) is None  # every run the lead counts must hold it


def test_a_one_run_recipe_says_first_what_it_did_that_its_tasks_failed_trials_did_not(tmp_path):
    booking = ferry._booking(20, "flex", "aisle", age_days=3)
    records = [ferry._record(20, 0, booking, void=True, success=True),
               ferry._record(20, 1, booking, void=False, success=False),
               ferry._record(20, 2, booking, void=False, success=False)]
    data = ferry._compile(tmp_path, records)
    failed = sorted(r["step"] for r in data["runs"] if r["outcome"] == "failure")
    recipe = ferry._lesson(data, "procedure|void_booking")
    assert recipe["counts"]["runs"] == 1
    # beside the guideline, not in it: adding a failed trial leaves a model's merged guideline as it was
    assert recipe["one_run_apart"] == {"failed": failed, "did": [
        "called void_booking without an error, which each failed trial of its task never did"]}
    page = (tmp_path / "corpus" / "insight" / f"{recipe['id']}.md").read_text()
    # under Evidence, with the runs it names linked (What to do keeps the recipe itself)
    evidence = page.split("## Evidence", 1)[1].split("## Sources", 1)[0]
    links = ", ".join(f"[{s}](../compilation/{s}.md)" for s in failed)
    assert f"What it did that none of the 2 failed trials of its task ({links}) did: called void_booking without an " \
           "error." in evidence


def test_a_one_run_recipe_against_a_single_failed_trial_says_what_that_trial_did_not_do():
    """With one failed trial the sentence names it and says it did not do what the successful
    run did (the plural form's "none of" has no singular: it must not turn into "did")."""
    from wikitrace.corpus.one_run import _NONE_DID, apart_line

    class Link:
        def rel(self, path):
            return str(path)

    line = apart_line({"failed": ["step-0005"], "did": [f"called void_booking without an error{_NONE_DID}"]},
                      Link(), lambda t: t)
    assert line.startswith("What it did that the failed trial of its task (")
    assert line.endswith(" did not: called void_booking without an error.")
