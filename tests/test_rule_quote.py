"""A lesson telling the agent to check an argument of a change quotes the system prompt's own rule
on that argument, when its runs share one; runs without a system prompt get no quote.

Fixtures are tau-bench result files (OpenAI chat messages with ``tool_calls``, arguments as a
JSON string) of tests/test_rule_reasons.py's made-up travel desk, whose policy is our own wording."""

from __future__ import annotations

import json

from tau_messages import tool, user
from test_fact_leads import _build
from test_rule_reasons import BOOKING, MEMBER, POLICY, TRIP
from test_value_rules import _runs

from wikitrace.compilers.offline import compile_offline
from wikitrace.corpus.rule_quote import LEAD, quote_rule, rules_of

CABIN_RULE = "All passengers must share one cabin."
PLATINUM = ("If the account holder is a platinum member, 2 free checked bags for each basic economy traveller and "
            "4 free checked bags for each economy traveller.")
BRONZE = ("If the account holder is a bronze member, 0 free checked bags for each basic economy traveller and "
          "1 free checked bag for each economy traveller.")


def _record(task_id: int, sent: dict, want: dict, membership: str = "platinum", system: bool = True) -> dict:
    reward = float(sent == want)
    traj = ([{"role": "system", "content": POLICY}] if system else []) + [
        user("Hello, this is Tove, user id tove_brand_5120."),
        *tool("get_user_details", {"user_id": "tove_brand_5120"}, dict(MEMBER, membership=membership)),
        user("Book me on HAT318 on June 12, with 3 checked bags. Yes, go ahead."),
        *tool("book_reservation", sent, dict(TRIP, cabin=sent["cabin"])), user("Thanks. ###STOP###")]
    task = {"user_id": "tove_brand_5120", "outputs": [], "instruction": f"You are tove_brand_5120, booking trip {task_id}.",
            "actions": [{"name": "book_reservation", "kwargs": want}]}
    return {"task_id": task_id, "reward": reward, "trial": 0, "traj": traj,
            "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}


def _cabins(system: bool) -> list[dict]:
    """Three tasks whose run booked business where economy was asked, three that booked economy."""
    economy, business = dict(BOOKING, cabin="economy"), dict(BOOKING, cabin="business")
    return ([_record(t, business, economy, system=system) for t in (1, 2, 3)]
            + [_record(t, economy, economy, system=system) for t in (4, 5, 6)])


def test_advice_to_check_an_argument_quotes_the_prompts_rule_on_it(tmp_path):
    data = _build(tmp_path, "desk-results.json", json.dumps(_cabins(system=True)))
    [lesson] = [i for i in data["insights"] if i["key"] == "went-through|book_reservation"]
    assert "check the `cabin` you send" in lesson["advice"]
    assert lesson["advice"].endswith(f'{LEAD}"{CABIN_RULE}"')
    # the successful runs' way to the booking joins the check's page: its rule is quoted once there
    assert not [i for i in data["insights"] if i["key"] == "procedure|book_reservation"]
    assert lesson["counts"]["success"] > 0 and lesson["advice"].count(LEAD) == 1


def test_runs_without_a_system_prompt_keep_no_rule_and_quote_none(tmp_path):
    data = _build(tmp_path, "desk-results.json", json.dumps(_cabins(system=False)))
    assert all(not r.get("value_rules") for r in data["runs"])
    [lesson] = [i for i in data["insights"] if i["key"] == "went-through|book_reservation"]
    assert "check the `cabin` you send" in lesson["advice"]  # the same advice, without a rule to quote
    assert all(LEAD not in (i.get("advice") or "") for i in data["insights"])


def test_a_run_keeps_the_clause_its_own_records_name(tmp_path):
    sent = dict(BOOKING, nonfree_baggages=1)
    kept = {}
    for tier in ("platinum", "bronze"):
        (run,) = _runs(tmp_path / f"{tier}.json", [_record(1, sent, BOOKING, membership=tier)])
        kept[tier] = rules_of({"value_rules": compile_offline(run).value_rules})
    assert kept["platinum"][("book_reservation", "nonfree_baggages")] == (PLATINUM,)
    assert kept["bronze"][("book_reservation", "nonfree_baggages")] == (BRONZE,)
    assert kept["bronze"][("book_reservation", "cabin")] == (CABIN_RULE,)
    # an id picks a record; the prompt has no block on users, so no rule is kept for it
    assert ("book_reservation", "user_id") not in kept["bronze"]


def test_a_rule_the_lessons_runs_do_not_share_is_not_quoted():
    advice = "Before book_reservation, check the `nonfree_baggages` you send against the request."
    runs = {"s1": [["book_reservation", "nonfree_baggages", "", PLATINUM]],
            "s2": [["book_reservation", "nonfree_baggages", "", BRONZE]], "s3": []}
    of_run = {s: rules_of({"value_rules": v}) for s, v in runs.items()}

    def quoted(steps: list[str]) -> str:
        entry = {"advice": advice}
        quote_rule(entry, [({"step": s}, {}) for s in steps], of_run)
        return entry["advice"]

    assert quoted(["s1", "s1"]) == f'{advice} {LEAD}"{PLATINUM}"'
    assert quoted(["s1", "s2"]) == advice  # two tiers: neither clause is the lesson's rule
    assert quoted(["s1", "s3"]) == advice  # one run's prompt holds no such rule


def test_a_thing_s_name_is_not_cut_to_a_prefix_of_another_word():
    """A sentence names ``cabin_class``'s thing only by a word for a class: "claim" once matched,
    the stemmed "clas" losing its "s" again to "cla"; "bags" still stands for ``baggages``."""
    from wikitrace.compilers.field_rules import _names
    from wikitrace.compilers.rule_reasons import _head
    from wikitrace.compilers.rules import _words

    assert not _names(_words("You may claim a refund for a cancelled flight."), _head("cabin_class"))
    assert _names(_words("All flights of a reservation keep the same cabin class."), _head("cabin_class"))
    assert _names(_words("Gold members get 2 free checked bags."), _head("nonfree_baggages"))


def test_a_list_argument_keeps_only_the_rules_on_the_part_that_differs(tmp_path):
    """A booking paying the wrong amount from the right card is not told the rule on which cards may
    pay: the rule kept on ``payment_methods`` names what differed from the expected call."""
    payment = ("book_reservation", "payment_methods")
    rule = "Every payment method must already be in the user's profile."
    policy = POLICY.replace("at most two cards.", f"at most two cards. {rule}")

    def kept(sent_payment: list[dict]) -> tuple[str, ...] | None:
        record = _record(1, dict(BOOKING, payment_methods=sent_payment), BOOKING)
        record["traj"][0]["content"] = policy
        (run,) = _runs(tmp_path / "one.json", [record])
        return rules_of({"value_rules": compile_offline(run).value_rules}).get(payment)

    assert kept([{"payment_id": "credit_card_5512093", "amount": 250}]) is None  # only the amount differs
    assert kept([{"payment_id": "voucher_1180", "amount": 210}]) == (rule,)  # the payment itself differs
    assert kept(BOOKING["payment_methods"]) == (rule,)  # as expected: the rule on the argument stands


def test_a_rule_on_a_case_none_of_the_lesson_s_records_is_in_is_not_quoted():
    """"Basic economy flights cannot be modified" names `cabin` "basic_economy", a value the task
    type's records hold; the lesson's runs looked up economy and business trips only: the sentence
    is no rule on their change. Where one of them held basic economy it may apply, and is kept."""
    from wikitrace.corpus.rule_quote import _other_case, held

    def run(*cabins):
        return {"patterns": [f'rec|{k}|' + json.dumps([["cabin", c], ["insurance", "no"]]) for k, c in enumerate(cabins)]}

    known = held([run("basic_economy", "economy", "business")])
    rule = "Basic economy flights cannot be modified."
    assert _other_case(rule, held([run("economy"), run("business")]), known)
    assert not _other_case(rule, held([run("economy"), run("basic_economy")]), known)
    # "economy" inside "basic economy" is not named on its own; a sentence on economy is about economy runs
    assert not _other_case("Economy flights can be changed.", held([run("economy")]), known)
    assert _other_case("Economy flights can be changed.", held([run("business")]), known)
    assert not _other_case("Each reservation can use at most one travel certificate.", held([run("economy")]), known)


def test_an_error_lesson_quotes_the_prompts_rule_on_the_argument_its_retry_changed(tau_bench_corpus):
    """tau-bench's "certificate cannot be used to update reservation": its runs got past it by another
    payment_id; the page quotes the prompt's rule on that argument for that action (a flight change is
    paid by a gift card or credit card), the fix the error itself does not state."""
    import json

    out, _result = tau_bench_corpus
    data = json.loads((out / "corpus.json").read_text())
    entry = next(i for i in data["insights"] if i["key"].startswith("error|update_reservation_flights|")
                 and "certificate cannot be used" in i["key"])
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    todo = page.split("## What to do\n", 1)[1].split("\n## ", 1)[0]
    assert "again with \\`payment_id\\` changed." in todo
    assert ('The system prompt says: "All payment methods must already be in user profile for safety reasons." "If '
            'the flights are changed, the user needs to provide one gift card or credit card for payment or refund '
            'method."') in todo


def test_a_rule_on_a_case_is_quoted_with_the_other_rules_on_that_tool_naming_the_case():
    """"Basic economy flights cannot be modified" without "all reservations, including basic
    economy, can change cabin" tells the agent to refuse a cabin change the prompt allows: both
    stand in What to do when every run of the lesson kept both."""
    import json

    from wikitrace.corpus.rule_quote import held

    no = "Basic economy flights cannot be modified."
    but = "all reservations, including basic economy, can change cabin without changing the flights."
    other = "Each extra baggage is 50 dollars."
    kept = [["update_reservation_flights", "flights", "", no], ["update_reservation_flights", "cabin", "", but],
            ["update_reservation_flights", "payment_id", "", other]]
    of_run = {s: rules_of({"value_rules": kept}) for s in ("s1", "s2")}
    of_run["s3"] = rules_of({"value_rules": kept[:1]})  # a run whose prompt lacks the exception
    known = held([{"patterns": ['rec|0|' + json.dumps([["cabin", "basic_economy"]]),
                                'rec|1|' + json.dumps([["cabin", "economy"]])]}])
    advice = "Before update_reservation_flights, check `flights` against what the user asked for."

    def quoted(steps: list[str]) -> str:
        entry = {"advice": advice}
        runs = [({"step": s, "patterns": ['rec|0|' + json.dumps([["cabin", "basic_economy"]])]}, {}) for s in steps]
        quote_rule(entry, runs, of_run, known)
        return entry["advice"]

    assert quoted(["s1", "s2"]) == f'{advice} {LEAD}"{no}" "{but}"'
    assert quoted(["s1", "s3"]) == f'{advice} {LEAD}"{no}"'  # not every run kept the exception
