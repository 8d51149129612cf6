"""Facts checked only on failed runs, counted on a lesson though too few of its runs hold them to
lead it (corpus/failed_only_facts.py): a blind rater found a cancel lesson telling readers to
check the insurance while 6 of its 17 failed runs had cancelled trips already flown, insured or
not. The entries are in the shape corpus.json keeps a run's checked facts."""

from __future__ import annotations

from wikitrace.corpus.advice_cut import cut, sentences
from wikitrace.corpus.failed_only_facts import say

PAST = {"kind": "shown-past", "about": ["cancel_trip"]}


def _member(n: int, facts: list[dict], outcome: str = "failure", task: str | None = None) -> tuple[dict, dict]:
    return ({"step": f"step-{n:04d}", "outcome": outcome, "facts": facts, "task_id": task or str(n)}, {})


def _entry() -> dict:
    return {"key": "went-through|cancel_trip", "guideline": "Before cancel_trip, check the cover of the trip."}


def test_a_few_failed_runs_that_acted_on_a_past_record_get_a_counted_line_naming_them():
    members = [_member(1, [PAST]), _member(2, []), _member(3, [PAST]), _member(4, [{"kind": "arguments"}]),
               _member(5, []), _member(6, [PAST], outcome="success")]
    entry = _entry()
    say(entry, members, "cancel_trip")
    assert entry["guideline"].endswith(
        "In 2 of the 5 failed runs here, cancel_trip acted on a record whose dates in an earlier look-up were all "
        "before the current time the system prompt states (step-0001, step-0003; each page's \"In short\" gives the "
        "fact and its turns; checked only on failed runs, so no successful run is counted against it): compare the "
        "record's dates with the stated current time before cancel_trip."), entry["guideline"]


def test_most_runs_holding_the_fact_get_it_said_too():
    """No checked-facts lead is made from these kinds: a fact most failed runs hold is said here."""
    entry = _entry()
    say(entry, [_member(1, [PAST]), _member(2, [PAST]), _member(3, [])], "cancel_trip")
    assert "In 2 of the 3 failed runs here, cancel_trip acted on a record whose dates" in entry["guideline"]


def test_one_run_another_tool_or_a_lesson_on_no_tool_get_none():
    cases = [([_member(1, [PAST]), _member(2, []), _member(3, [])], "cancel_trip"),  # one run is no count
             ([_member(1, [PAST]), _member(2, [PAST]), _member(3, []), _member(4, []), _member(5, [])], "book_trip"),
             ([_member(1, [PAST]), _member(2, [PAST]), _member(3, []), _member(4, []), _member(5, [])], "")]
    for members, tool in cases:
        entry = _entry()
        say(entry, members, tool)
        assert entry["guideline"] == _entry()["guideline"], (tool, entry["guideline"])


def test_a_page_of_one_failed_run_says_its_fact_since_it_is_all_the_evidence():
    """One run among several is no count; a page whose only failed run holds the fact has nothing else
    to go by, so the fact is said (a blind rater asked a one-run seat error page to state the check)."""
    entry = _entry()
    say(entry, [_member(1, [PAST]), _member(2, [], outcome="success")], "cancel_trip")
    assert ("In the one failed run here, cancel_trip acted on a record whose dates in an earlier look-up were all "
            "before the current time the system prompt states (step-0001;") in entry["guideline"], entry["guideline"]
    alone = _entry()  # a page of successful runs only has no failed run to speak of
    say(alone, [_member(1, [PAST], outcome="success")], "cancel_trip")
    assert alone["guideline"] == _entry()["guideline"]


def test_a_sentence_after_a_quote_cut_short_is_a_sentence_of_its_own():
    text = 'Do what it asks: "Before any change, list the details and …" In 2 of the 5 failed runs here, x.'
    assert sentences(text) == ['Do what it asks: "Before any change, list the details and …"',
                               "In 2 of the 5 failed runs here, x."]


def test_advice_an_evidence_line_ends_with_is_not_listed_again_as_other_advice():
    entry = {"guideline": "When cancelling, check the cover. Read the request part by part. Say what you will do. "
                          "Ask before you act. In 2 of the 5 failed runs here, it acted on a past trip: compare the "
                          "dates with the current time."}
    cut(entry)
    assert any(e.endswith(": compare the dates with the current time.") for e in entry["counted"])
    assert "Compare the dates with the current time." not in entry.get("more_advice", []), entry


BAGS = '"If the booking user is a gold member, 3 free checked bags for each economy passenger." "Each extra bag is 50 dollars."'


def _rule(tool: str, on: str, quote: str = BAGS) -> dict:
    return {"kind": "rule", "about": [tool, on, quote, "arguments"]}


def test_a_rule_a_few_failed_runs_broke_on_the_lesson_s_tool_is_said_as_what_to_work_the_value_out_by():
    """Four of twelve failed bookings broke the free-bag rule: a reader is told the rule, in What to do."""
    members = [_member(n, [_rule("book_trip", "nonfree_bags")] if n < 4 else []) for n in range(12)]
    members.append(_member(20, [_rule("book_trip", "nonfree_bags")], outcome="success"))
    entry = {"key": "went-through|book_trip", "guideline": "Before book_trip, check the payment you send."}
    say(entry, members, "book_trip")
    assert entry["guideline"].endswith(
        "In 4 of the 12 failed runs here, the book_trip call differed from the task's expected one where the system "
        "prompt's rule on `nonfree_bags` decides it (step-0000, step-0001, step-0002, step-0003; each page's \"In "
        "short\" quotes the rule and the record it applies to): work out `nonfree_bags` for book_trip by the system "
        f"prompt's rule {BAGS}."), entry["guideline"]
    cut(entry)
    assert f"Work out `nonfree_bags` for book_trip by the system prompt's rule {BAGS}" in entry["advice"]


def test_a_rule_of_one_run_another_tool_or_most_runs_is_not_said_here():
    for members, tool in (
            ([_member(1, [_rule("book_trip", "bags")]), *(_member(n, []) for n in range(2, 6))], "book_trip"),
            ([_member(1, [_rule("cancel_trip", "x")]), _member(2, [_rule("cancel_trip", "x")]),
              *(_member(n, []) for n in range(3, 8))], "book_trip"),
            ([_member(1, [_rule("book_trip", "bags")]), _member(2, [_rule("book_trip", "bags")]), _member(3, [])],
             "book_trip")):
        entry = {"key": f"went-through|{tool}", "guideline": "Before it, check."}
        say(entry, members, tool)
        assert entry["guideline"] == "Before it, check.", entry["guideline"]


def test_a_confirmation_rule_says_a_pick_or_a_request_is_not_a_yes_with_the_runs_counted():
    """The failed runs that broke the rule asking for a yes: what the user's last message was (the
    lesson's case, compilers/run_insights.broken_rule_insight), counted, and said as what to do."""
    from wikitrace.corpus.failed_only_facts import unagreed

    def run(n, kind, outcome="failure"):
        return ({"step": f"step-{n:04d}", "outcome": outcome},
                {"case": {"unagreed": kind}} if kind else {})

    entry = {"key": "rule|ab12cd", "guideline": "Before each call this rule covers, do what it asks: \"Ask first.\""}
    unagreed(entry, [run(1, "picked"), run(2, "request"), run(3, "request"), run(4, "other"), run(5, None, "success")])
    assert entry["guideline"].endswith(
        "In 1 of the 4 failed runs here the user's last message before the change picked one of the options the agent "
        "had offered, and in 2 it asked for a change; each time the agent made the change without putting its details "
        "to the user for a yes: put what the call will do to the user and wait for their yes before making it, since a "
        "pick or a request is not a yes."), entry["guideline"]
    cut(entry)  # the instruction is what to do; the counts stand under Evidence
    assert "Put what the call will do to the user and wait for their yes" in entry["advice"]
    # one such run is no count, and another kind of lesson says nothing of it
    for key, members in (("rule|ab12cd", [run(1, "picked"), run(2, "other")]),
                         ("went-through|change_trip", [run(1, "picked"), run(2, "request")])):
        entry = {"key": key, "guideline": "Ask first."}
        unagreed(entry, members)
        assert entry["guideline"] == "Ask first."


def test_answers_from_pages_that_held_none_of_a_name_the_question_gives_are_counted_on_the_answer_lesson():
    """A wrong answer taken from a page about another thing (no page the run read held "Benvolio",
    which the question names) is checked on each failed run's page; two or more such runs of an
    answer lesson get the count and the check to make before Finish."""
    untied = {"kind": "answer-untied", "about": ["Finish"]}
    entry = {"key": "answer|Finish|not-found", "guideline": "Keep looking before Finish."}
    say(entry, [_member(1, [untied]), _member(2, [untied]), _member(3, [])], "Finish")
    assert ("In 2 of the 3 failed runs here, Finish gave an answer from a page that held none of some name the "
            "question gives (step-0001, step-0002;") in entry["guideline"], entry["guideline"]
    assert entry["guideline"].endswith("before Finish, find a page that ties the answer to every name the question "
                                       "gives."), entry["guideline"]
