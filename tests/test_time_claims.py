"""Claims of when a looked-up record was made ("booked within the last 24 hours"), checked against
the record's creation time and the current time the log states. Sentences and records are our own,
in tau-bench's result-file shape (the fixture helpers of test_in_short.py)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from test_in_short import POLICY, TRIP, _agent, _facts, _tau, _tool, _turn_of

from wikitrace.compilers.time_claims import claim_holds, parse_stamp, stated_now, time_claims


@pytest.mark.parametrize("text, kind, limit, days_back, negated", [
    ("Since your booking was made within the last 24 hours, a full refund is possible.", "within", timedelta(hours=24),
     None, False),
    ("Your order was placed more than 7 days ago, so it cannot be returned.", "more", timedelta(days=7), None, False),
    ("It was booked in the past two weeks.", "within", timedelta(weeks=2), None, False),
    ("The ticket was purchased less than 3 days ago.", "within", timedelta(days=3), None, False),
    ("The reservation wasn't created within the last 48 hours.", "within", timedelta(hours=48), None, True),
    ("Booking K2RM7T was made today.", "day", None, 0, False),
    ("As a gold member, and since the cancellation is within 24 hours of booking, you get a refund.", "within",
     timedelta(hours=24), None, False),
    ("We are not within the first 2 days after purchase.", "within", timedelta(days=2), None, True),
    ("It was bought on June 2, and it\u2019s within 48 hours of purchase.", "within", timedelta(hours=48), None, False),
    ("It was reserved yesterday, according to the record.", "day", None, 1, False),
    # counts in words, any English writes: not only the windows one policy happens to name
    ("The booking was made within the last forty-eight hours.", "within", timedelta(hours=48), None, False),
    ("Your order was placed more than twelve days ago.", "more", timedelta(days=12), None, False),
])
def test_a_claim_of_when_something_was_made_is_read(text, kind, limit, days_back, negated):
    [c] = time_claims(text)
    assert (c.kind, c.limit, c.days_back, c.negated) == (kind, limit, days_back, negated)


@pytest.mark.parametrize("text", [
    "A booking that was made within the last 24 hours can be cancelled for free.",  # a rule, not this record
    "If it was booked within the last 24 hours, you may cancel it.",  # a supposition
    "The policy reads: \"the reservation was made within the last 24 hours\" or insurance applies.",  # a quote
    "Was it booked within the last 24 hours?",  # a question
    "I will book it today for you.",  # a plan, no record's age
    "Refunds are possible within 24 hours of booking.",  # a window, said of nothing
    "Economy tickets can be cancelled within 24 hours of booking.",  # a rule
    "Your flight departs in the next 24 hours.",  # the future
])
def test_near_misses_are_not_claims(text):
    assert time_claims(text) == []


def test_a_date_alone_stands_for_its_whole_day():
    now = parse_stamp("2024-06-01 10:00:00")
    [within] = time_claims("It was booked within the last 24 hours.")
    [today] = time_claims("It was booked today.")
    assert claim_holds(within, parse_stamp("2024-05-31"), now) is None  # 10 to 34 hours: unsure
    assert claim_holds(within, parse_stamp("2024-05-29"), now) is False
    assert claim_holds(today, parse_stamp("2024-05-31T23:50:00"), now) is False
    assert claim_holds(today, parse_stamp("2024-06-01"), now) is True
    assert claim_holds(within, parse_stamp("2024-06-03T08:00:00"), now) is None  # made after now: the log disagrees
    assert parse_stamp("2024-05-31T08:00:00Z") is None  # a zone the stated now may not share


def test_now_is_read_only_when_the_log_states_one_value():
    assert stated_now([("the system prompt", POLICY)])[0].text == "2024-06-01 10:00:00"
    assert stated_now([("the system prompt", "The current time is 2024-06-01 10:00."),
                       ("the task's instruction", "Today's date is 2024-06-03.")]) is None
    assert stated_now([("the system prompt", "Bookings made now are final.")]) is None


def test_a_false_claim_about_the_looked_up_record_is_stated(tmp_path):
    run = _tau(tmp_path, [_agent("Since your reservation was made within the last 24 hours, it can be cancelled "
                                 "for a full refund. Shall I go ahead?"),
                          {"role": "user", "content": "Yes please."}], reward=0.0)
    said, looked = _turn_of(run, "within the last 24 hours"), _turn_of(run, "2024-05-20T08:11:02")
    assert _facts(run)[0] == (
        f"The agent said at turn {said}, of the record get_reservation_details returned at turn {looked}, that it was "
        "made within the last 24 hours (\"Since your reservation was made within the last 24 hours, it can be cancelled "
        "for a full refund.\"); its `created_at` 2024-05-20T08:11:02 is 12 days before the current time the system "
        "prompt gives, 2024-06-01 10:00:00.")


def test_a_true_claim_says_nothing(tmp_path):
    recent = {**TRIP, "created_at": "2024-05-31T19:40:00"}
    run = _tau(tmp_path, [_agent("Your reservation was booked within the last 24 hours, so a refund is possible.")],
               reward=1.0, record=recent)
    assert not any("The agent said at turn" in f for f in _facts(run))
    run = _tau(tmp_path, [_agent("Your reservation was not booked within the last 24 hours, so no refund.")],
               reward=1.0)
    assert not any("The agent said at turn" in f for f in _facts(run))


def test_a_wrong_negated_claim_says_how_recent_the_record_is(tmp_path):
    recent = {**TRIP, "created_at": "2024-05-31T19:40:00"}
    run = _tau(tmp_path, [_agent("Your reservation wasn't made within the last 24 hours, so I can't refund it.")],
               reward=0.0, record=recent)
    assert "was not made within the last 24 hours" in _facts(run)[0]
    assert "is 14 hours before the current time the system prompt gives" in _facts(run)[0]


def test_a_claim_about_another_record_is_checked_against_that_one(tmp_path):
    other = {**TRIP, "reservation_id": "M3TR8D", "created_at": "2024-05-31T19:40:00"}
    lookups = [*_tool("get_reservation_details", {"reservation_id": "M3TR8D"}, other)]
    # the sentence names Q4WZ8N (looked up first, booked 12 days before): true of it, though not of
    # M3TR8D, the last record looked up
    run = _tau(tmp_path, [*lookups, _agent("Reservation Q4WZ8N was not booked within the last 24 hours.")],
               reward=1.0)
    assert not any("The agent said at turn" in f for f in _facts(run))
    # and a false claim naming Q4WZ8N is set against Q4WZ8N's own look-up
    run = _tau(tmp_path, [*lookups, _agent("Reservation Q4WZ8N was booked within the last 24 hours.")], reward=0.0)
    first = _turn_of(run, "2024-05-20T08:11:02")
    assert f"of the record get_reservation_details returned at turn {first}, that it was booked" in _facts(run)[0]
    # a sentence naming both records, or one never looked up: nothing to check it against
    for said in ("Reservations Q4WZ8N and M3TR8D were booked within the last 24 hours.",
                 "Reservation ZZ9QK4 was booked within the last 24 hours."):
        run = _tau(tmp_path, [*lookups, _agent(said)], reward=1.0)
        assert not any("The agent said at turn" in f for f in _facts(run)), said


def test_without_a_stated_now_nothing_is_said(tmp_path, monkeypatch):
    import test_in_short

    monkeypatch.setattr(test_in_short, "POLICY", "# Airline Agent Policy\n\n- One tool call at a time.\n")
    run = _tau(tmp_path, [_agent("Since your reservation was made within the last 24 hours, it can be cancelled.")],
               reward=0.0)
    assert not any("The agent said at turn" in f for f in _facts(run))


def _unlooked(tmp_path, said: str, created: str):
    """The agent takes the user's word for when Q4WZ8N was booked, says ``said`` and cancels it with no
    look-up: the cancel's answer is the only record of it (created at ``created``)."""
    from tau_messages import agent, tool, user
    from test_expected_outputs import _load

    traj = [{"role": "system", "content": POLICY}, user("Hi, I booked Q4WZ8N by mistake about ten hours ago."),
            agent(said + " Shall I cancel it?"), user("Yes."),
            *tool("cancel_reservation", {"reservation_id": "Q4WZ8N"}, {**TRIP, "created_at": created,
                                                                         "status": "cancelled"}),
            agent("Done."), user("Thanks. ###STOP###")]
    task = {"user_id": "lena_vogt_3017", "outputs": [], "instruction": "You are lena_vogt_3017.", "actions": []}
    return _load(tmp_path, {"task_id": 9, "reward": 0.0, "trial": 0, "traj": traj,
                            "info": {"task": task, "source": "user",
                                     "reward_info": {"reward": 0.0, "info": {}, "actions": []}}})


def test_a_claim_about_a_record_never_looked_up_is_set_against_the_change_that_returned_it(tmp_path):
    run = _unlooked(tmp_path, "Since reservation Q4WZ8N was made within the last 24 hours, it can be refunded.",
                    "2024-05-20T08:11:02")
    said, cancelled = _turn_of(run, "within the last 24 hours"), _turn_of(run, "2024-05-20T08:11:02")
    assert (f"The agent said at turn {said}, before any look-up of the record, that the record cancel_reservation "
            f"then acted on at turn {cancelled} was made within the last 24 hours") in _facts(run)[0]
    assert "that call's answer gives `created_at` 2024-05-20T08:11:02, which is 12 days before" in _facts(run)[0]
    # the near miss: the change's record bears the claim out
    run = _unlooked(tmp_path, "Since reservation Q4WZ8N was made within the last 24 hours, it can be refunded.",
                    "2024-05-31T20:00:00")
    assert not any("The agent said at turn" in f for f in _facts(run))
