"""Where a call's argument values came from, as pages and lessons name it: the latest turn before
the call that shows the value as a whole token, not the first text that happens to contain it.
A common word credited to an answer only when one record gave it; an id to the look-up that
showed it last, not to an answer that merely repeats what the agent sent; and when the log
cannot tell, no source is named at all. Each case beside the near miss that flips it."""

from __future__ import annotations

import json
from pathlib import Path

from tau_messages import agent, tool, user

from wikitrace.compilers.argument_places import sources
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.value_sources import credited
from wikitrace.runs.load import iter_runs

POLICY = "# Airline Agent Policy\n\nThe current time is 2024-06-01 10:00:00 EST.\n"


def _trip(rid: str, cabin: str, paid: str) -> dict:
    return {"reservation_id": rid, "user_id": "tove_lind_4821", "origin": "SEA", "destination": "ORD",
            "flight_type": "round_trip", "cabin": cabin,
            "flights": [{"origin": "SEA", "destination": "ORD", "flight_number": "HAT" + rid[-3:], "date": "2024-06-12",
                         "price": 212}, {"origin": "ORD", "destination": "SEA", "flight_number": "HAT" + rid[:3],
                                         "date": "2024-06-19", "price": 198}],
            "passengers": [{"first_name": "Tove", "last_name": "Lind", "dob": "1979-02-14"}],
            "payment_history": [{"payment_id": paid, "amount": 410}], "insurance": "no"}


PROFILE = {"user_id": "tove_lind_4821", "name": {"first_name": "Tove", "last_name": "Lind"},
           "payment_methods": {"credit_card_71904428": {"source": "credit_card", "id": "credit_card_71904428"},
                               "gift_card_3305127": {"source": "gift_card", "id": "gift_card_3305127", "amount": 60}},
           "reservations": ["K2V9QA", "M7T4XE"], "membership": "silver"}


def _run(tmp_path: Path, messages: list[dict]):
    record = {"task_id": 7, "reward": 1.0, "trial": 0,
              "traj": [{"role": "system", "content": POLICY}, *messages, agent("Done."), user("Thanks. ###STOP###")],
              "info": {"task": {"user_id": "tove_lind_4821", "instruction": "You are tove_lind_4821.", "outputs": [],
                                "actions": []}, "source": "user", "reward_info": {"reward": 1.0, "info": {}, "actions": []}}}
    path = tmp_path / "results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    (run,) = list(iter_runs([path]))
    r = read_run(run)
    return r, [c for c in r.calls if c.writes][-1]


def _user_turn(r, words: str) -> int:
    return next(t.turn for t in r.run.turns if t.role == "user" and words in (t.content or ""))


def _lookup_turn(r, name: str, rid: str | None = None) -> int:
    return next(c.n for c in r.calls if c.name == name and (rid is None or rid in json.dumps(c.turn.arguments)))


def _cabin_change(tmp_path: Path, later_words: str, second_cabin: str = "economy"):
    """A silver member's two trips are looked up (both answers are big and hold "economy" under
    `cabin` when ``second_cabin`` says so); the user then names the trip, with ``later_words``."""
    return _run(tmp_path, [
        user("Hi, I'm tove_lind_4821 and I want to change the class of one of my trips."),
        *tool("get_user_details", {"user_id": "tove_lind_4821"}, PROFILE),
        *tool("get_reservation_details", {"reservation_id": "K2V9QA"}, _trip("K2V9QA", "economy", "credit_card_71904428")),
        *tool("get_reservation_details", {"reservation_id": "M7T4XE"}, _trip("M7T4XE", second_cabin, "gift_card_3305127")),
        agent("I see two trips, K2V9QA and M7T4XE. Which one, and which class?"),
        user(later_words),
        agent("Shall I change M7T4XE as you asked?"), user("yes"),
        *tool("update_reservation_flights", {"reservation_id": "M7T4XE", "cabin": "economy", "payment_id": "gift_card_3305127",
                                             "flights": [{"flight_number": "HAT4XE", "date": "2024-06-12"},
                                                         {"flight_number": "HATM7T", "date": "2024-06-19"}]},
              _trip("M7T4XE", "economy", "gift_card_3305127"))])


def test_a_short_value_an_early_big_answer_held_is_credited_to_the_user_who_typed_it_later(tmp_path):
    r, c = _cabin_change(tmp_path, "The M7T4XE one, and please put it in economy.", second_cabin="business")
    told = _user_turn(r, "put it in economy")
    assert credited(r, c)["cabin"] == [f"the user (turn {told})"]
    assert "cabin" in sources(r, c).user
    assert all("cabin" not in keys for keys in sources(r, c).tools.values())


def test_a_short_value_two_records_gave_and_the_user_never_wrote_is_credited_to_none(tmp_path):
    # near miss: the user names the trip only; both look-ups' answers held "economy" under `cabin`
    r, c = _cabin_change(tmp_path, "The M7T4XE one, same class as my other trip please.")
    assert "cabin" not in credited(r, c)
    came = sources(r, c)
    assert "cabin" not in came.user and all("cabin" not in keys for keys in came.tools.values())


def test_an_id_is_credited_to_the_latest_look_up_that_showed_it_whole(tmp_path):
    # the profile holds the card's id only inside a longer one; the trip's own answer holds it whole
    profile = dict(PROFILE, reservations=[],
                   payment_methods={"credit_card_719044281": {"source": "credit_card", "id": "credit_card_719044281"}})
    r, c = _run(tmp_path, [
        user("Hi, I'm tove_lind_4821; please downgrade M7T4XE to economy and charge the card I paid it with."),
        *tool("get_user_details", {"user_id": "tove_lind_4821"}, profile),
        *tool("get_reservation_details", {"reservation_id": "M7T4XE"}, _trip("M7T4XE", "business", "credit_card_71904428")),
        agent("Downgrade M7T4XE to economy, paid with credit_card_71904428?"), user("yes"),
        *tool("update_reservation_flights", {"reservation_id": "M7T4XE", "cabin": "economy",
                                             "payment_id": "credit_card_71904428",
                                             "flights": [{"flight_number": "HAT4XE", "date": "2024-06-12"}]},
              _trip("M7T4XE", "economy", "credit_card_71904428"))])
    look = _lookup_turn(r, "get_reservation_details", "M7T4XE")
    came = credited(r, c)
    assert came["payment_id"] == [f"get_reservation_details's answer (turn {look})"]
    # the reservation id the user typed: the look-up's answer only repeats what the agent sent it
    assert came["reservation_id"] == [f"the user (turn {_user_turn(r, 'downgrade M7T4XE')})"]
    took = sources(r, c)
    assert "payment_id" in took.tools["get_reservation_details"]
    assert "reservation_id" in took.user and "reservation_id" not in took.tools["get_reservation_details"]


def test_an_id_a_later_look_up_showed_again_is_credited_to_that_look_up(tmp_path):
    # near miss: the profile holds the card whole too, but the trip's answer, later, is the latest to show it
    r, c = _run(tmp_path, [
        user("Hi, I'm tove_lind_4821; please downgrade M7T4XE to economy and charge the card I paid it with."),
        *tool("get_user_details", {"user_id": "tove_lind_4821"}, PROFILE),
        *tool("get_reservation_details", {"reservation_id": "M7T4XE"}, _trip("M7T4XE", "business", "credit_card_71904428")),
        agent("Downgrade M7T4XE to economy?"), user("yes"),
        *tool("update_reservation_flights", {"reservation_id": "M7T4XE", "cabin": "economy",
                                             "payment_id": "credit_card_71904428",
                                             "flights": [{"flight_number": "HAT4XE", "date": "2024-06-12"}]},
              _trip("M7T4XE", "economy", "credit_card_71904428"))])
    assert credited(r, c)["payment_id"] == [
        f"get_reservation_details's answer (turn {_lookup_turn(r, 'get_reservation_details')})"]


def test_a_flight_date_is_read_where_its_flight_number_was(tmp_path):
    # the date alone stands in both trips' answers; beside its flight number it stands in one
    r, c = _cabin_change(tmp_path, "The M7T4XE one, and please put it in economy.", second_cabin="business")
    look = _lookup_turn(r, "get_reservation_details", "M7T4XE")
    assert credited(r, c)["flights"] == [f"get_reservation_details's answer (turn {look})"]
