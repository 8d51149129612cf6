"""Was a change agreed to? Fixtures in the shape of tau-bench's result file (a list of records,
each with the task, the reward and the chat as OpenAI messages with ``tool_calls``), content our own.

One yes covers every change made before the user's next message; a page calls a change a breach
only when the log plainly shows one, and says nothing when in doubt."""

from __future__ import annotations

import json

from test_page_sentences import _checked

from tau_messages import agent as _agent, tool as _tool, user as _user
from wikitrace.compilers.consent import AGREES, ASKS, REFUSES, UNSURE, answer_kind
from wikitrace.compilers.reading import read_run
from wikitrace.runs import load

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n"
          "- Before taking any actions that update the booking database (booking, modifying flights, editing "
          "baggage, upgrading cabin class, or updating passenger information), you must list the action details "
          "and obtain explicit user confirmation (yes) to proceed.\n\n"
          "- You should only make one tool call at a time.\n")
RULE = "obtain explicit user confirmation (yes) to proceed.\" — here"
TRIP = {"reservation_id": "K7PQ2M", "user_id": "ines_moreau_4410", "origin": "SEA", "destination": "ATL",
        "flight_type": "one_way", "cabin": "economy",
        "flights": [{"origin": "SEA", "destination": "ATL", "flight_number": "HAT118", "date": "2024-05-21",
                     "price": 182}],
        "passengers": [{"first_name": "Ines", "last_name": "Moreau", "dob": "1984-02-11"},
                       {"first_name": "Theo", "last_name": "Moreau", "dob": "2010-07-30"}],
        "payment_history": [{"payment_id": "credit_card_5521907", "amount": 364}],
        "created_at": "2024-05-02T09:14:51", "total_baggages": 1, "nonfree_baggages": 0, "insurance": "no"}





def _cabin(payment="credit_card_5521907"):
    return _tool("update_reservation_flights", {"reservation_id": "K7PQ2M", "cabin": "business", "flights": [
        {"flight_number": "HAT118", "date": "2024-05-21"}], "payment_id": payment}, dict(TRIP, cabin="business"))


def _bags(payment="credit_card_5521907"):
    return _tool("update_reservation_baggages", {"reservation_id": "K7PQ2M", "total_baggages": 3,
                                                 "nonfree_baggages": 1, "payment_id": payment},
                 dict(TRIP, total_baggages=3, nonfree_baggages=1))


def _run(tmp_path, messages, reward=0.0):
    """One record of a tau-bench result file, loaded by the importer a user's file goes through."""
    traj = [{"role": "system", "content": POLICY},
            _user("Hi, I'd like to make a couple of changes to my trip to Atlanta."),
            _agent("Sure. Could you give me your user id and the reservation id?"),
            _user("I'm ines_moreau_4410 and the reservation is K7PQ2M."),
            *_tool("get_reservation_details", {"reservation_id": "K7PQ2M"}, TRIP),
            *messages, _user("That's everything, thanks. ###STOP###")]
    record = {"task_id": 7, "reward": reward, "trial": 0, "traj": traj,
              "info": {"task": {"user_id": "ines_moreau_4410", "actions": [], "outputs": [],
                                "instruction": "You are ines_moreau_4410. Upgrade Theo to business and add bags."},
                       "source": "user", "user_cost": 0.0021,
                       "reward_info": {"reward": reward, "info": {"r_actions": reward}, "actions": []}}}
    path = tmp_path / "airline-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    runs = list(load._read(path, load.detect(path)))
    assert len(runs) == 1 and runs[0].source.get("format") == "openai-chat"
    return runs[0]


def _notes(run):
    """What the page says about the confirmation rule (every sentence checked against the log by
    test_page_sentences' checks)."""
    return [n.split(" — here ", 1)[1] for e in _checked(run) for n in e.notes if RULE in n]


def _verdicts(run):
    """(tool, confirmed, plain breach) for each change, and the page's confirmation notes."""
    changes = [(c.name, c.confirmed, c.unagreed.sentence() if c.unagreed else None)
               for c in read_run(run).calls if c.writes]
    return changes, _notes(run)


def _agreed(run):
    return [c.confirmed for c in read_run(run).calls if c.writes]


LISTING = ("Here are the changes I can make to reservation K7PQ2M:\n\n1. **Cabin upgrade for Theo:** economy to "
           "business on HAT118, $420 extra\n2. **Checked bags:** 2 more bags, 1 of them free with your Gold status "
           "($50)\n\n**Payment:** the Visa card on file (credit_card_5521907).\n\nWould you like me to proceed "
           "with both changes?")


def test_one_yes_naming_the_changes_in_words_covers_each_change_made_before_the_next_message(tmp_path):
    """"Yes, please proceed with upgrading Theo and adding the bags" names neither call's values."""
    words = ("Upgrading only Theo to business comes to $420 for the flight. Would you like me to go ahead with this "
             "upgrade and the extra bags for you?")
    run = _run(tmp_path, [_agent(words), _user("Yes, please proceed with upgrading Theo and adding the bags."),
                          *_cabin(), *_bags(),
                          _agent("Done: Theo is in business and your reservation has 3 checked bags.")])
    assert _agreed(run) == [True, True] and _notes(run) == []


def test_a_yes_to_a_follow_up_listing_covers_the_bundle_redone(tmp_path):
    """Both changes made, then the user asks to pay another way; the agent lists it, the user says
    "Yes, please proceed", and both changes are sent again with the new payment."""
    run = _run(tmp_path, [_agent(LISTING), _user("Yes, go ahead with both."), *_cabin(), *_bags(),
                          _agent("Both changes are made and charged to your Visa card."),
                          _user("Oh, I'd rather pay with my gift card."),
                          _agent("I will charge both changes to gift_card_3390125 instead. Shall I proceed?"),
                          _user("Yes, please proceed."), *_cabin("gift_card_3390125"), *_bags("gift_card_3390125"),
                          _agent("Both changes now use your gift card.")])
    assert _agreed(run) == [True] * 4 and _notes(run) == []


def test_an_answer_that_opens_by_agreeing_and_adds_a_payment_choice_agrees(tmp_path):
    run = _run(tmp_path, [_agent(LISTING.replace("**Payment:** the Visa card on file (credit_card_5521907).",
                                                 "**Payment:** which of your cards should I use?")),
                          _user("Everything looks good! I'd like to use the gift card ending in 0125 for this."),
                          *_cabin("gift_card_3390125"), *_bags("gift_card_3390125"), _agent("All done.")])
    assert _agreed(run) == [True, True] and _notes(run) == []


def test_a_change_with_no_agreement_since_the_proposal_is_a_breach(tmp_path):
    run = _run(tmp_path, [_agent(LISTING), _user("Hmm, what would the bags cost if I had Silver status?"),
                          *_cabin(), _agent("Theo is in business now. Bags would be $50 each for Silver.")])
    changes, notes = _verdicts(run)
    said = "the user's last message before the call (turn 6) did not agree to a change"
    assert changes == [("update_reservation_flights", False, said)]
    assert notes == [said + "."]


def test_a_change_made_after_the_user_asked_for_something_new_is_a_breach(tmp_path):
    run = _run(tmp_path, [_agent(LISTING.split("\n2.")[0] + "\n\nShall I go ahead?"), _user("Yes, go ahead."),
                          *_cabin(), _agent("Theo is now in business class."),
                          _user("Great! Could you also add 2 checked bags under my name?"), *_bags(),
                          _agent("Two bags were added.")])
    changes, notes = _verdicts(run)
    # the request named the bags: said as the user's own request made without a yes to its details
    asked = ("the user's last message before the call (turn 9) was a request naming the \"bags\", and the agent made "
             "the change without first putting its details to the user for a yes")
    assert changes == [("update_reservation_flights", True, None), ("update_reservation_baggages", False, asked)]
    assert notes == [asked + "."]
    run = _run(tmp_path, [_agent(LISTING.split("\n2.")[0] + "\n\nShall I go ahead?"), _user("Yes, go ahead."),
                          *_cabin(), _agent("Theo is now in business class."),
                          _user("Great! Could you also note that Theo needs a window seat?"), *_bags(),
                          _agent("Two bags were added.")])
    changes, notes = _verdicts(run)
    # a request put as a question may be for the change made next: said as a request, not as no agreement
    request = ("the user's last message before the call (turn 9) was a request, and the agent made the change "
               "without first putting its details to the user for a yes")
    assert changes == [("update_reservation_flights", True, None), ("update_reservation_baggages", False, request)]
    run = _run(tmp_path, [_agent(LISTING.split("\n2.")[0] + "\n\nShall I go ahead?"), _user("Yes, go ahead."),
                          *_cabin(), _agent("Theo is now in business class."),
                          _user("Which seat does Theo have on that flight?"), *_bags(),
                          _agent("Two bags were added.")])
    changes, notes = _verdicts(run)
    late = "the user agreed at turn 6, then asked for something else at turn 9, and did not agree again before the call"
    assert changes == [("update_reservation_flights", True, None), ("update_reservation_baggages", False, late)]
    assert notes == [late + "."]


def test_a_reply_taking_one_of_the_options_put_is_said_as_a_pick_not_as_a_yes_withheld(tmp_path):
    """A pick is not the yes to the change's details a confirmation rule asks for: it is still
    counted, and said as what it was (a reviewer counted such runs as breaking the rule, and an
    insight undercounted them when picks were left out)."""
    options = ("I found two flights for the upgrade:\n\n1. HAT118 in business, $420\n2. HAT204 in business, $380\n\n"
               "Would you like to proceed with one of these options?")
    run = _run(tmp_path, [_agent(options), _user("I'll go with the first one, on the Visa card."), *_cabin(),
                          _agent("Done.")])
    assert _verdicts(run) == ([("update_reservation_flights", False,
                                "the user's last message before the call (turn 6) picked one of the options the agent "
                                "had given, and the agent made the change without first putting its details to the "
                                "user for a yes")],
                               ["the user's last message before the call (turn 6) picked one of the options the agent "
                                "had given, and the agent made the change without first putting its details to the "
                                "user for a yes."])
    # the same words with no agent message before them take nothing: the request is said as one
    run = _run(tmp_path, [_user("I'll go with business for Theo's flight, on the Visa card."), *_cabin()])
    [(_name, _ok, said)] = _verdicts(run)[0]
    assert said.startswith("the user's last message before the call (turn 5) was a request naming the \"flight\"")


def test_a_no_after_the_listing_is_a_breach_and_a_detail_answered_after_a_yes_is_left_unsaid(tmp_path):
    run = _run(tmp_path, [_agent(LISTING), _user("No, wait. Let me check with Theo first."), *_cabin()])
    changes, notes = _verdicts(run)
    assert changes[0][2] == "the user's last message before the call (turn 6) said no or wait, not yes"
    # yes, then the agent asks which card and the user names one: neither confirmed nor a breach
    run = _run(tmp_path, [_agent(LISTING), _user("Yes, both please."), _agent("Which card: the Visa or the gift card?"),
                          _user("The gift card ending in 0125."), *_cabin("gift_card_3390125")])
    changes, notes = _verdicts(run)
    assert changes == [("update_reservation_flights", False, None)] and notes == []
    # several such answers in a row, and a first try that failed, leave it in doubt all the same
    failed = _tool("update_reservation_flights", {"reservation_id": "K7PQ2M", "cabin": "business", "flights": [
        {"flight_number": "HAT118", "date": "2024-05-21"}], "payment_id": "gift_card_3390125"},
        "Error: gift card balance is not enough")
    run = _run(tmp_path, [_agent(LISTING), _user("Yes, both please."), _agent("Which card: the Visa or the gift card?"),
                          _user("The gift card ending in 0125."), *failed,
                          _agent("That card is short by $60. Which card covers the rest?"),
                          _user("The Visa then."), *_cabin()])
    assert _verdicts(run) == ([("update_reservation_flights", False, None), ("update_reservation_flights", False, None)],
                              [])


def test_how_a_reply_is_read():
    assert answer_kind("Yes, please proceed with upgrading Noah and adding the checked bags. Thanks!") == AGREES
    assert answer_kind("Everything looks good! I'd like to use the travel certificate for this booking.") == AGREES
    assert answer_kind("Sounds good, go ahead.") == AGREES
    assert answer_kind("I'd like to proceed with these changes.") == AGREES
    assert answer_kind("Okay.") == AGREES
    assert answer_kind("Yes, but tell me the cost first.") == UNSURE  # agrees to part, holds the rest back
    assert answer_kind("Okay, I want to change my return flight.") == UNSURE  # maybe a new request
    assert answer_kind("Can you go ahead?") == UNSURE
    assert answer_kind("No, that's all.") == REFUSES and answer_kind("Wait, not yet.") == REFUSES
    assert answer_kind("No problem, go ahead.") == AGREES
    assert answer_kind("Could you also add a bag?") == ASKS
    assert answer_kind("I need to make sure the seats are together.") == ASKS


def test_a_yes_to_a_question_that_proposed_no_change_agrees_to_none(tmp_path):
    """"Sure, it is ..." answers a request for facts: a change after the next question is a breach
    (an answer naming whom to upgrade may agree in its own words: test_user_given_values)."""
    run = _run(tmp_path, [_agent("What name is on the frequent flyer account?"), _user("Sure, it is Ines Moreau."),
                          _agent("Business on HAT118 costs $420 more. Which passenger should I upgrade?"),
                          _user("How much would economy plus cost instead?"), *_cabin(), _agent("Theo is in business now.")])
    said = "the user's last message before the call (turn 8) did not agree to a change"
    assert _verdicts(run) == ([("update_reservation_flights", False, said)], [said + "."])


def test_a_run_that_went_ahead_without_a_yes_counts_among_those_that_broke_the_rule_whatever_its_lessons(tmp_path):
    """The contrast "runs that broke this rule" counts every run whose change plainly went ahead
    without the yes, not only the runs whose lesson is that rule (a reviewer counted 16 where a tau
    insight said 15: the 16th run was filed under another rule)."""
    from wikitrace.compilers.rule_lessons import confirmation_broken, rule_insight
    from wikitrace.compilers.run_patterns import patterns_of
    from wikitrace.compilers.insight_parts import rules_once

    options = ("I found two flights for the upgrade:\n\n1. HAT118 in business, $420\n2. HAT204 in business, $380\n\n"
               "Would you like to proceed with one of these options?")
    run = _run(tmp_path, [_agent(options), _user("I'll go with the first one, on the Visa card."), *_cabin()])
    r = read_run(run)
    [w] = [c for c in r.calls if c.writes]
    key = confirmation_broken(r, w)
    [rule] = [h.sentence for h in rules_once(r, w) if "confirm" in h.sentence]
    assert key == rule_insight(r, rule, "", False).key and key in patterns_of(r)
    agreed = _run(tmp_path, [_agent(LISTING), _user("Yes, please go ahead."), *_cabin()])
    ra = read_run(agreed)
    assert not any(confirmation_broken(ra, c) for c in ra.calls if c.writes)


def test_the_rule_lesson_keeps_what_the_users_last_message_did_for_its_page_to_count(tmp_path):
    """The failed run's lesson on the rule records whether the user had picked an offered option or
    asked for the change (corpus/failed_only_facts.unagreed counts it on the rule's page)."""
    from wikitrace.compilers.offline import compile_offline

    options = ("I found two flights for the upgrade:\n\n1. HAT118 in business, $420\n2. HAT204 in business, $380\n\n"
               "Would you like to proceed with one of these options?")
    picked = _run(tmp_path, [_agent(options), _user("I'll go with the first one, on the Visa card."), *_cabin(),
                             _agent("Done.")])
    asked = _run(tmp_path, [_user("I'll go with business for Theo's flight, on the Visa card."), *_cabin()])
    agreed = _run(tmp_path, [_agent("I will upgrade HAT118 to business for $420 on the Visa card. Shall I?"),
                             _user("Yes."), *_cabin(), _agent("Done.")])
    cases = [[i.case for i in compile_offline(run).insights if i.key.startswith("rule|")] for run in (picked, asked, agreed)]
    assert cases[0] == [{"unagreed": "picked"}] and cases[1] == [{"unagreed": "request"}], cases
    assert all(c is None for c in cases[2]), cases
