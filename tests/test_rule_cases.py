"""A rule with a case per kind of record (a bag allowance per membership tier) whose case the run
never learned before a wrong count: said, and only where no answer or user message named a case
(compilers/rule_cases.py). Fixtures: the made-up travel desk of tests/test_rule_reasons.py."""

from __future__ import annotations

from fixture_runs import RUNS, relabeled
from tau_messages import tool as _tool, user as _user
from test_rule_reasons import BOOKING, POLICY, TRIP, _booked, _facts, _run, _turn

from wikitrace.compilers.offline import compile_offline

UNLEARNED = "without learning which case applied"


def test_a_count_sent_before_any_turn_named_a_case_says_the_case_went_unlearned(tmp_path):
    run = _booked(tmp_path, look_up=False)
    [fact] = _facts(run)
    assert fact.text.endswith(
        "and no answer or user message before this call named any of them: the run sent `nonfree_baggages` "
        f"{UNLEARNED}.")
    assert fact.turns == sorted({0, _turn(run, "book_reservation")})


def test_a_case_named_by_an_answer_or_by_the_user_is_no_unlearned_case(tmp_path):
    assert not any(UNLEARNED in f.text for f in _facts(_booked(tmp_path)))  # the member record gave the tier
    told = _run(tmp_path, [_user("I'm a platinum member. Book HAT318 on June 12 in economy with 3 checked bags. Yes."),
                           *_tool("book_reservation", dict(BOOKING, nonfree_baggages=1), TRIP)],
                [{"name": "book_reservation", "kwargs": BOOKING}])
    assert not any(UNLEARNED in f.text for f in _facts(told))


def test_sentences_that_differ_in_more_than_one_word_are_no_cases(tmp_path):
    policy = POLICY.replace("If the account holder is a platinum member,", "Platinum holders of a booking get")
    run = _run(tmp_path, [_user("Book HAT318 on June 12 in economy with 3 checked bags. Yes, go ahead."),
                          *_tool("book_reservation", dict(BOOKING, nonfree_baggages=1), TRIP)],
               [{"name": "book_reservation", "kwargs": BOOKING}], policy=policy)
    assert not any(UNLEARNED in f.text or "has a case for each" in f.text for f in _facts(run))


def test_no_importer_fixture_gets_the_sentence():
    for run in [relabeled(r, success) for r in RUNS for success in (False, True)]:
        assert not any(UNLEARNED in f.text for f in compile_offline(run).in_short), run.run_id


def test_the_lesson_on_a_wrong_count_names_the_runs_that_never_learned_the_case(tmp_path):
    """Across runs: the lesson that the count differed from the expected one says which of its runs
    sent it before any turn named a membership tier, with the tiers, so the next agent learns the
    case before it counts bags."""
    import json

    from test_insight_layer import corpus_json, text_count_mismatches
    from test_rule_reasons import BOOKING, MEMBER, POLICY, TRIP

    from wikitrace.build import build
    from wikitrace.build_options import BuildOptions

    records = []
    for task, look_up in ((7, False), (8, False), (9, True)):
        told = [*_tool("get_user_details", {"user_id": "tove_brand_5120"}, MEMBER)] if look_up else []
        sent = dict(BOOKING, nonfree_baggages=1)
        traj = [{"role": "system", "content": POLICY}, _user("Hello, this is Tove, user id tove_brand_5120."), *told,
                _user("Book me on HAT318 on June 12 in economy, with 3 checked bags. Yes, go ahead."),
                *_tool("book_reservation", sent, dict(TRIP, nonfree_baggages=1)), _user("Thanks. ###STOP###")]
        info = {"task": {"user_id": "tove_brand_5120", "outputs": [], "instruction": "You are tove_brand_5120.",
                         "actions": [{"name": "book_reservation", "kwargs": BOOKING}]},
                "source": "user", "reward_info": {"reward": 0.0, "info": {}, "actions": []}}
        records.append({"task_id": task, "reward": 0.0, "trial": 0, "traj": traj, "info": info})
    path = tmp_path / "desk-results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[path], out=out, offline=True, quiet=True))
    data = corpus_json(out)
    unlearned = sorted(r["step"] for r in data["runs"] if any(f["kind"] == "unlearned-case" for f in r["facts"]))
    assert len(unlearned) == 2  # the run that looked the member up had the tier in hand
    (entry,) = [e for e in data["insights"] if "which case" in e.get("advice", "")]
    assert (f"in 2 of the 3 runs ({', '.join(unlearned)}) no answer or user message before the call named which case of "
            "the system prompt's rule on `nonfree_baggages` applied (\"bronze\" or \"platinum\"), so find that out "
            "first") in entry["advice"]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    assert "so find that out first" in page.split("## What to do", 1)[1].split("## Evidence", 1)[0]
    assert not text_count_mismatches(out)  # the runs it names are the count it states


def test_an_expected_value_nothing_in_reach_held_is_said_so(tmp_path):
    """The task expected a birth date that no answer, no user message and not the task's own
    instruction held: the page says so beside the difference, so no reader takes "check it against
    the records" for a check this log allowed; where the user gave it, nothing is said."""
    from test_rule_reasons import BOOKING, TRIP, _run

    other = [{"first_name": "Tove", "last_name": "Brand", "dob": "1980-01-01"}]
    sent = dict(BOOKING, passengers=other)

    def facts(words: str):
        run = _run(tmp_path, [_user(f"Book me on HAT318 on June 12 in economy, with 3 checked bags.{words} Yes."),
                              *_tool("book_reservation", sent, dict(TRIP, passengers=other))],
                   [{"name": "book_reservation", "kwargs": BOOKING}])
        return [f.text for f in _facts(run)]

    (fact,) = [t for t in facts("") if t.startswith("book_reservation at turn")]
    assert "where the task expected \"1979-02-11\". The expected \"1979-02-11\" stands in no answer or user message " \
           "of this run, nor in its task's instruction." in fact
    assert not any("stands in no answer" in t for t in facts(" I was born on 1979-02-11."))
