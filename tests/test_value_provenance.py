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


CARDS = dict(PROFILE, payment_methods={
    "credit_card_52093318": {"source": "credit_card", "brand": "mastercard", "last_four": "9021", "id": "credit_card_52093318"},
    "credit_card_66104471": {"source": "credit_card", "brand": "visa", "last_four": "4471", "id": "credit_card_66104471"}})


def _card_change(tmp_path: Path, pick: str, own: bool = False):
    """The profile lists two cards by brand and last digits; look-ups of the user's trips follow,
    one of whose payment histories lists the Visa: the other trip's (K2V9QA), or with ``own`` the
    history of M7T4XE, the trip the change is about. The user then answers the agent's question of
    which card with ``pick``, and the agent changes M7T4XE, paying with the Visa."""
    visa, gift = "credit_card_66104471", "gift_card_3305127"
    return _run(tmp_path, [
        user("Hi, I'm tove_lind_4821; I want to upgrade my trip to Chicago but forgot its number."),
        *tool("get_user_details", {"user_id": "tove_lind_4821"}, CARDS),
        *tool("get_reservation_details", {"reservation_id": "K2V9QA"}, _trip("K2V9QA", "economy", gift if own else visa)),
        *tool("get_reservation_details", {"reservation_id": "M7T4XE"}, _trip("M7T4XE", "economy", visa if own else gift)),
        agent("M7T4XE is the Chicago trip. Which card should pay the difference: Mastercard ending in 9021 "
              "or Visa ending in 4471?"),
        user(pick),
        agent("Upgrade M7T4XE to business, charged to that card?"), user("yes"),
        *tool("update_reservation_flights", {"reservation_id": "M7T4XE", "cabin": "business", "payment_id": visa,
                                             "flights": [{"flight_number": "HAT4XE", "date": "2024-06-12"}]},
              _trip("M7T4XE", "business", gift))])


def test_a_card_the_user_picked_is_credited_to_the_profile_that_listed_it_not_to_another_trips_history(tmp_path):
    # the later look-up is of K2V9QA, a trip the change does not touch: its payment history is no source
    r, c = _card_change(tmp_path, "The Visa ending in 4471, please.")
    profile = _lookup_turn(r, "get_user_details")
    assert credited(r, c)["payment_id"] == [f"get_user_details's answer (turn {profile})"]
    assert "payment_id" in sources(r, c).tools["get_user_details"]


def test_a_card_no_words_picked_is_still_not_credited_to_another_trips_history(tmp_path):
    # near miss: the user names no card; the other trip's look-up is still about another record
    r, c = _card_change(tmp_path, "Whichever card you like.")
    assert credited(r, c)["payment_id"] == [f"get_user_details's answer (turn {_lookup_turn(r, 'get_user_details')})"]


def test_a_card_the_user_picked_by_its_digits_is_credited_to_the_record_that_holds_them(tmp_path):
    # the changed trip's own history lists the card too, later, but only the profile's record of it
    # holds the brand and digits the user picked it by
    r, c = _card_change(tmp_path, "The Visa ending in 4471, please.", own=True)
    assert credited(r, c)["payment_id"] == [f"get_user_details's answer (turn {_lookup_turn(r, 'get_user_details')})"]


def test_a_card_no_words_picked_is_credited_to_the_look_up_of_the_changed_trip(tmp_path):
    # near miss: with no words of the user's to go by, the answer about the record the change acts on
    r, c = _card_change(tmp_path, "Whichever card you like.", own=True)
    trip = _lookup_turn(r, "get_reservation_details", "M7T4XE")
    assert credited(r, c)["payment_id"] == [f"get_reservation_details's answer (turn {trip})"]


def _rebooking(tmp_path: Path, dates: tuple[str, str]):
    """The user's trips K2V9QA and M7T4XE were both paid with one gift card, and M7T4XE holds
    flight HAT4XE on 2024-06-12; two searches follow, on ``dates``, each listing a flight HAT4XE;
    the agent books a new trip with HAT4XE on 2024-06-14, paid with that gift card."""
    def search(date: str) -> list:
        return [{"flight_number": "HAT4XE", "origin": "SEA", "destination": "ORD", "status": "available",
                 "prices": {"economy": 230}}, {"flight_number": "HAT611", "origin": "SEA", "destination": "ORD",
                                                "status": "available", "prices": {"economy": 250}}]

    return _run(tmp_path, [
        user("Hi, I'm tove_lind_4821. Please book me the flight of my trip M7T4XE again, two days later."),
        *tool("get_reservation_details", {"reservation_id": "K2V9QA"}, _trip("K2V9QA", "economy", "gift_card_3305127")),
        *tool("get_reservation_details", {"reservation_id": "M7T4XE"}, _trip("M7T4XE", "economy", "gift_card_3305127")),
        *tool("search_direct_flight", {"origin": "SEA", "destination": "ORD", "date": dates[0]}, search(dates[0])),
        *tool("search_direct_flight", {"origin": "SEA", "destination": "ORD", "date": dates[1]}, search(dates[1])),
        agent("Book HAT4XE on 2024-06-14 in economy, paid as before?"), user("yes"),
        *tool("book_reservation", {"user_id": "tove_lind_4821", "origin": "SEA", "destination": "ORD",
                                   "flight_type": "one_way", "cabin": "economy",
                                   "flights": [{"flight_number": "HAT4XE", "date": "2024-06-14"}],
                                   "payment_methods": [{"payment_id": "gift_card_3305127", "amount": 230}]},
              {"reservation_id": "Q8W2NE", "flights": [{"flight_number": "HAT4XE", "date": "2024-06-14"}]})])


def test_an_id_several_answers_held_with_nothing_to_choose_among_them_names_them_all(tmp_path):
    # both trips' histories hold the gift card, and the new booking is about neither: the log does not say which was read
    r, c = _rebooking(tmp_path, ("2024-06-14", "2024-06-16"))
    first, second = _lookup_turn(r, "get_reservation_details", "K2V9QA"), _lookup_turn(r, "get_reservation_details", "M7T4XE")
    assert credited(r, c, {"payment_methods[0].payment_id"})["payment_methods"] == [
        f"get_reservation_details's answer (turn {first}) or get_reservation_details's answer (turn {second}), "
        "both of which held it"]
    # the user's id, which both answers repeat after the user wrote it: the user's words
    assert credited(r, c)["user_id"] == [f"the user (turn {_user_turn(r, 'book me the flight')})"]


def test_a_flight_number_is_credited_to_the_search_of_the_date_it_was_booked_for(tmp_path):
    # the later search, of another date, lists a flight of the same number; so does the trip, on its old date
    r, c = _rebooking(tmp_path, ("2024-06-14", "2024-06-16"))
    search = _lookup_turn(r, "search_direct_flight", "2024-06-14")
    assert credited(r, c, {"flights[0].flight_number"})["flights"] == [f"search_direct_flight's answer (turn {search})"]
    assert "flights" in sources(r, c).tools["search_direct_flight"]


def test_a_flight_number_no_search_of_its_date_listed_is_credited_to_the_searches_that_did(tmp_path):
    # near miss: no search was of the booked date and the trip holds the number on its old date: no answer is
    # about that flight, so each one listing the number is named, and a lesson names none of their tools
    r, c = _rebooking(tmp_path, ("2024-06-13", "2024-06-16"))
    trip = _lookup_turn(r, "get_reservation_details", "M7T4XE")
    first, second = (_lookup_turn(r, "search_direct_flight", d) for d in ("2024-06-13", "2024-06-16"))
    assert credited(r, c)["flights"] == [
        f"get_reservation_details's answer (turn {trip}), search_direct_flight's answer (turn {first}) or "
        f"search_direct_flight's answer (turn {second}), all of which held it"]
    assert all("flights" not in keys for keys in sources(r, c).tools.values())


def _rename(tmp_path: Path, new_last: str):
    """The user asks to rename the second passenger of a two-passenger trip; the agent sends the
    list back whole with that passenger's last name set to ``new_last``."""
    trip = _trip("K2V9QA", "economy", "credit_card_71904428")
    trip["passengers"].append({"first_name": "Mei", "last_name": "Chen", "dob": "1988-04-02"})
    passengers = [{"first_name": "Tove", "last_name": "Lind", "dob": "1979-02-14"},
                  {"first_name": "Mei", "last_name": new_last, "dob": "1988-04-02"}]
    return _run(tmp_path, [
        user("Hi, I'm tove_lind_4821 and reservation K2V9QA needs a passenger name fixed."),
        *tool("get_reservation_details", {"reservation_id": "K2V9QA"}, trip),
        agent("The passengers are Tove Lind and Mei Chen. Who should change?"),
        user(f"Please change Mei Chen to Mei {new_last}, same date of birth."),
        agent("Shall I update it?"), user("yes"),
        *tool("update_reservation_passengers", {"reservation_id": "K2V9QA", "passengers": passengers}, trip)])


def test_a_renamed_passenger_is_credited_to_the_user_though_the_look_up_holds_the_name_elsewhere(tmp_path):
    # "Lind" stands in the look-up as the first passenger's last name, but no record there is
    # Mei Lind: the list came from the look-up and the user together.
    r, c = _rename(tmp_path, "Lind")
    said = _user_turn(r, "Please change Mei Chen")
    looked = _lookup_turn(r, "get_reservation_details")
    assert credited(r, c)["passengers"] == [f"get_reservation_details's answer (turn {looked})", f"the user (turn {said})"]


def test_passengers_the_look_up_returned_whole_are_credited_to_it_alone(tmp_path):
    r, c = _rename(tmp_path, "Chen")  # nothing renamed: every record is the look-up's own
    looked = _lookup_turn(r, "get_reservation_details")
    assert credited(r, c)["passengers"] == [f"get_reservation_details's answer (turn {looked})"]
