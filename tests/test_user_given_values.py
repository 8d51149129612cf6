"""Claims a strict reader found false on tau-bench pages, each held to a rule true on any log:
where a value came from is one reading for every sentence (a value the user asked for is not
taken from a look-up that also held it); a reply that says how to go on is no refusal; a change
the task did not expect is not called unasked; and a run teaches the check before a change only
when that change is not the one the task expected. Fixtures in the shape of tau-bench's result
file, content our own."""

from __future__ import annotations

import json

from tau_messages import agent, tool, user

from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import read_run
from wikitrace.corpus.trial_recur import recurring
from wikitrace.runs import load
from wikitrace.runs.model import Run

POLICY = ("# Airline Agent Policy\n\nThe current time is 2024-05-15 15:00:00 EST.\n\n"
          "- Before taking any actions that update the booking database (booking, modifying flights, editing "
          "baggage, upgrading cabin class, or updating passenger information), you must list the action details "
          "and obtain explicit user confirmation (yes) to proceed.\n")
PROFILE = {"name": {"first_name": "Ravi", "last_name": "Okafor"}, "email": "ravi.okafor@example.com",
           "payment_methods": {"credit_card_6620417": {"source": "credit_card", "brand": "visa", "last_four": "0417",
                                                       "id": "credit_card_6620417"},
                               "gift_card_2207318": {"source": "gift_card", "amount": 90, "id": "gift_card_2207318"}},
           "membership": "gold", "reservations": ["M3KD7Q", "ZP41RW"]}


def _trip(rid: str, cabin: str, number: str, day: str) -> dict:
    return {"reservation_id": rid, "user_id": "ravi_okafor_5120", "origin": "DTW", "destination": "BOS",
            "flight_type": "one_way", "cabin": cabin,
            "flights": [{"origin": "DTW", "destination": "BOS", "flight_number": number, "date": day, "price": 412}],
            "passengers": [{"first_name": "Ravi", "last_name": "Okafor", "dob": "1979-03-02"}],
            "payment_history": [{"payment_id": "credit_card_6620417", "amount": 412}],
            "created_at": "2024-05-03T10:20:00", "total_baggages": 0, "nonfree_baggages": 0, "insurance": "yes"}


BUSINESS, ECONOMY = _trip("M3KD7Q", "business", "HAT402", "2024-05-22"), _trip("ZP41RW", "economy", "HAT117", "2024-05-26")


def _downgrade(rid: str = "M3KD7Q", number: str = "HAT402", day: str = "2024-05-22") -> dict:
    return {"reservation_id": rid, "cabin": "economy", "flights": [{"flight_number": number, "date": day}],
            "payment_id": "credit_card_6620417"}


def _load(tmp_path, traj: list, reward: float, actions: list | None = None) -> Run:
    task = {"user_id": "ravi_okafor_5120", "outputs": [], "actions": actions or [],
            "instruction": "You are ravi_okafor_5120. Downgrade your business flights to economy."}
    record = {"task_id": 4, "reward": reward, "trial": 0, "traj": [{"role": "system", "content": POLICY}, *traj],
              "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}
    path = tmp_path / "airline.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = [r for r in load._read(path, load.detect(path)) if isinstance(r, Run)]
    return run


def test_a_value_the_user_asked_for_is_not_taken_from_a_record_that_also_holds_it(tmp_path):
    """The user asks for economy; of the two bookings looked up, one is economy already. The change
    to the other sends "economy": from the user's words, as the page's In short says, not from
    the economy booking's record, which merely held the same word."""
    traj = [user("Hi, money is tight: please downgrade my business flights to economy. I'm ravi_okafor_5120."),
            *tool("get_user_details", {"user_id": "ravi_okafor_5120"}, PROFILE),
            *tool("get_reservation_details", {"reservation_id": "M3KD7Q"}, BUSINESS),
            *tool("get_reservation_details", {"reservation_id": "ZP41RW"}, ECONOMY),
            agent("M3KD7Q is in business; ZP41RW is already economy. I'll move M3KD7Q to economy on HAT402, refund "
                  "to your Visa. Shall I proceed?"),
            user("Yes, go ahead."),
            *tool("update_reservation_flights", _downgrade(), dict(BUSINESS, cabin="economy")),
            agent("Done."), user("Thanks. ###STOP###")]
    comp = compile_offline(_load(tmp_path, traj, 1.0, [{"name": "update_reservation_flights", "kwargs": _downgrade()}]))
    looked = {e.turns[0]: e.decision for e in comp.evidence if e.decision.startswith("Looked up")}
    assert all("took cabin" not in d and ", cabin" not in d for d in looked.values()), looked
    short = "\n".join(k.text for k in comp.in_short)
    assert "`cabin` \"economy\" from the user (turn 1)" in short, short


def test_a_reply_saying_how_to_go_on_is_no_refusal(tmp_path):
    """The agent offers two ways to pay; the user answers with one of them in their own words, with
    no "yes" in it. That may well be agreement: no sentence says the user did not agree. A question
    that only asks something, answered by a change, still is said."""
    offer = ("The gift card holds only $90. You can: 1. use the rest of the gift card and cover the remainder with "
             "a credit card, or 2. use a travel certificate. Please let me know how you'd like to proceed!")
    failed = tool("update_reservation_flights", dict(_downgrade(), payment_id="gift_card_2207318"),
                  "Error: gift card balance is not enough")
    head = [user("Please downgrade M3KD7Q to economy; I'm ravi_okafor_5120."),
            *tool("get_reservation_details", {"reservation_id": "M3KD7Q"}, BUSINESS),
            agent("I'll move M3KD7Q to economy on HAT402, paid by your gift card. Shall I proceed?"),
            user("Yes, go ahead."), *failed, agent(offer)]
    told = user("Let's use the remaining balance on the gift card and cover the rest with the Visa from my profile.")
    run = _load(tmp_path, [*head, told, *tool("update_reservation_flights", _downgrade(), BUSINESS),
                           agent("Done."), user("Thanks. ###STOP###")], 0.0)
    last = [c for c in read_run(run).calls if c.writes][-1]
    assert last.unagreed is None
    assert not any("did not agree" in n for e in compile_offline(run).evidence for n in e.notes)
    asked = user("What would a travel certificate cover?")
    run = _load(tmp_path, [*head, asked, *tool("update_reservation_flights", _downgrade(), BUSINESS),
                           agent("Done."), user("Thanks. ###STOP###")], 0.0)
    last = [c for c in read_run(run).calls if c.writes][-1]
    assert last.unagreed is not None and "did not agree to a change" in last.unagreed.sentence()


def test_a_request_put_as_a_question_is_said_as_a_request(tmp_path):
    """"Could you charge my Visa instead?" asks for the change: the page says the change was made
    without a yes to its details, not that the user did not agree to one."""
    run = _load(tmp_path, [user("Please downgrade M3KD7Q to economy; I'm ravi_okafor_5120."),
                           *tool("get_reservation_details", {"reservation_id": "M3KD7Q"}, BUSINESS),
                           agent("M3KD7Q is business class on HAT402."),
                           user("Could you move it to economy and refund my Visa?"),
                           *tool("update_reservation_flights", _downgrade(), BUSINESS),
                           agent("Done."), user("Thanks. ###STOP###")], 0.0)
    [change] = [c for c in read_run(run).calls if c.writes]
    assert change.unagreed is not None
    assert change.unagreed.sentence() == ("the user's last message before the call (turn 4) was a request, and the "
                                          "agent made the change without first putting its details to the user for "
                                          "a yes")


def test_a_change_the_task_did_not_expect_is_not_called_unasked():
    """The task's expected calls say what the task expected, not what the user asked for: a user who
    asked for the upgrade the task did not expect was still asking for it."""
    members = [{"step": f"step-000{k}", "outcome": "failure", "decisive": {"changes": []},
                "facts": [{"kind": "unexpected-change", "about": ["update_reservation_flights"]}]} for k in range(3)]
    text, _turns = recurring(members[0], members)
    assert "update_reservation_flights" in text
    assert "does not ask for" not in text and "unasked" not in text
    assert "check that the request calls for it and the rules allow it as sent" in text


def test_a_run_teaches_the_check_before_a_change_only_when_it_is_not_the_expected_one(tmp_path):
    """A failed run that made the baggage change exactly as expected and an upgrade the task did not
    expect teaches the check before the upgrade; one whose only change was the expected one teaches
    no check before it."""
    bags = {"reservation_id": "M3KD7Q", "total_baggages": 2, "nonfree_baggages": 0, "payment_id": "credit_card_6620417"}
    upgrade = dict(_downgrade(), cabin="business")
    expected = [{"name": "update_reservation_baggages", "kwargs": bags}]
    head = [user("Hi, I'm ravi_okafor_5120. Add 2 bags to M3KD7Q, and upgrade my companion if it's cheap."),
            *tool("get_reservation_details", {"reservation_id": "M3KD7Q"}, BUSINESS),
            agent("I'll upgrade the reservation and add 2 bags on your Visa. Shall I proceed?"), user("Yes, go ahead.")]
    both = _load(tmp_path, [*head, *tool("update_reservation_flights", upgrade, BUSINESS),
                            *tool("update_reservation_baggages", bags, dict(BUSINESS, total_baggages=2)),
                            agent("Done."), user("Thanks. ###STOP###")], 0.0, expected)
    keys = [i.key for i in compile_offline(both).insights]
    assert "went-through|update_reservation_flights" in keys and "went-through|update_reservation_baggages" not in keys
    alone = _load(tmp_path, [*head, *tool("update_reservation_baggages", bags, dict(BUSINESS, total_baggages=2)),
                             agent("Done."), user("Thanks. ###STOP###")], 0.0, expected)
    assert not any(i.key.startswith("went-through|") for i in compile_offline(alone).insights)
