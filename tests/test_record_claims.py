"""Why a failed tool-calling run failed, when the log alone shows it: the user's word about a record
that the record contradicts, changes failing on dates already past by the stated current time, and
an expected value no answer held because no look-up was made with the expected call's values.
Fixtures in the shape of tau-bench's result file, content our own."""

from __future__ import annotations

import json

from test_in_short import _check
from test_page_sentences import _checked

from tau_messages import agent as _agent, tool as _tool, user as _user
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs import load

POLICY = ("# Ferry Desk Policy\n\nThe current time is 2025-03-20 09:00:00 EST.\n\n"
          "- A plus member or a premier member travels with two free trunks; a basic member with none.\n"
          "- If the traveller is a plus/premier member and a sailing was delayed, the agent may offer a voucher.\n"
          "- You should only make one tool call at a time.\n")
PROFILE = {"name": {"first_name": "Ada", "last_name": "Okafor"}, "email": "ada.okafor31@example.com",
           "dob": "1979-08-02", "membership": "basic", "trips": ["FR7QK2", "FR2MZ9"],
           "payment_methods": {"credit_card_3301928": {"source": "credit_card", "id": "credit_card_3301928"}}}
TRIP = {"trip_id": "FR7QK2", "user_id": "ada_okafor_3118", "origin": "PIR", "destination": "HER",
        "sailings": [{"sailing": "SL4410", "date": "2025-03-18"}, {"sailing": "SL4477", "date": "2025-03-27"}],
        "created_at": "2025-03-01T10:12:40", "deck": "economy"}


def _run(tmp_path, messages, reward=0.0, actions=None, policy=POLICY,
         opening="Hello, my ferry was late and I want to sort it out."):
    traj = [{"role": "system", "content": policy}, _user(opening),
            _agent("I'm sorry to hear that. Could you tell me your user id?"),
            *messages, _user("That's all. ###STOP###")]
    task = {"user_id": "ada_okafor_3118", "outputs": [], "instruction": "You are ada_okafor_3118.",
            "actions": actions or []}
    record = {"task_id": 3, "reward": reward, "trial": 0, "traj": traj,
              "info": {"task": task, "source": "user", "reward_info": {"reward": reward, "info": {}, "actions": []}}}
    path = tmp_path / "ferry-results.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    [run] = list(load._read(path, load.detect(path)))
    return run


def _in_short(run) -> list[str]:
    facts = compile_offline(run).in_short
    for f in facts:  # each sentence checked against the turns it names (test_in_short's checker)
        _check(run, f.text, f.turns)
    return [f.text for f in facts]


def _turn(run, needle: str) -> int:
    return next(t.turn for t in run.turns if needle in json.dumps([t.content, t.arguments, t.result]))


def test_a_users_word_the_record_contradicts_leads_when_the_agent_took_it(tmp_path):
    run = _run(tmp_path, [
        _user("ada_okafor_3118. I'm a Premier member, so I expect something for this."),
        *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
        _agent("As a Premier member you can have a voucher. Shall I send it?"), _user("Yes please."),
        *_tool("send_voucher", {"user_id": "ada_okafor_3118", "amount": 40}, "Voucher sent."),
    ], actions=[{"name": "get_user_details", "kwargs": {"user_id": "ada_okafor_3118"}}])
    said, looked, echoed = _turn(run, "I'm a Premier"), _turn(run, "ada.okafor31"), _turn(run, "As a Premier")
    assert _in_short(run)[0] == (
        f"The user said \"Premier member\" (turn {said}), but get_user_details (turn {looked}) gives `membership` "
        f"\"basic\"; the agent repeated the user's word at turn {echoed}. Act on what the record holds, not on the "
        "user's word for it: whatever turns on `membership` follows the record.")
    _checked(run)  # every sentence of the page still passes the page checks


def test_a_success_says_whether_it_took_the_users_word_and_the_opening_message_counts(tmp_path):
    """The claim in the user's first message counts as the user's own words. A success whose agent
    repeated the claim succeeded by luck, and says so; one whose agent never did says that."""
    opening = "Hi, I'm a Premier member and my ferry was late."
    lucky = _run(tmp_path, [
        _user("ada_okafor_3118."), *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
        _agent("As a Premier member you could have a voucher, but none is due here."),
    ], reward=1.0, opening=opening)
    said, looked, echoed = _turn(lucky, "I'm a Premier"), _turn(lucky, "ada.okafor31"), _turn(lucky, "As a Premier")
    assert (f"The user said \"Premier member\" (turn {said}), but get_user_details (turn {looked}) gives `membership` "
            f"\"basic\"; the agent repeated the user's word at turn {echoed}, and the run succeeded all the same. Act on "
            "what the record holds, not on the user's word for it: whatever turns on `membership` follows the record."
            ) in _in_short(lucky)
    kept = _run(tmp_path, [
        _user("ada_okafor_3118."), *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
        _agent("Your record shows a basic membership, so no voucher is due."),
    ], reward=1.0, opening=opening)
    assert any(f.endswith("gives `membership` \"basic\"; no message of the agent repeated the user's word, and the run "
                          "succeeded. Act on what the record holds, not on the user's word for it: whatever turns on "
                          "`membership` follows the record.") for f in _in_short(kept)), _in_short(kept)
    # an agent that wrote the word to set it right did repeat it: nothing is said either way
    corrected = _run(tmp_path, [
        _user("ada_okafor_3118."), *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
        _agent('Your membership is listed as "basic," not "Premier." No voucher is due.'),
    ], reward=1.0, opening=opening)
    assert any(f.endswith("gives `membership` \"basic\", and the run succeeded. Act on what the record holds, not on the "
                          "user's word for it: whatever turns on `membership` follows the record.")
               for f in _in_short(corrected)), _in_short(corrected)


def test_a_word_the_policy_never_uses_as_a_value_or_the_records_own_value_says_nothing(tmp_path):
    for said in ("ada_okafor_3118. I'm a loyal member, so I expect something for this.",  # praise, not a tier
                 "ada_okafor_3118. I'm a basic member, I know."):  # the record agrees
        run = _run(tmp_path, [_user(said), *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
                              _agent("Let me look at your trips.")])
        assert not any("The user said" in f for f in _in_short(run))


def test_changes_failing_on_a_date_already_past_lead_with_that_date(tmp_path):
    change = {"trip_id": "FR7QK2", "sailings": [{"sailing": "SL4410", "date": "2025-03-18"},
                                                {"sailing": "SL4490", "date": "2025-03-28"}]}
    run = _run(tmp_path, [
        _user("ada_okafor_3118, trip FR7QK2. Please move my return to the 28th."),
        *_tool("get_trip_details", {"trip_id": "FR7QK2"}, TRIP),
        _agent("I will move the return to SL4490 on 2025-03-28. Shall I go ahead?"), _user("Yes."),
        *_tool("update_trip_sailings", change, "Error: sailing SL4410 not available on date 2025-03-18"),
        *_tool("update_trip_sailings", change, "Error: sailing SL4410 not available on date 2025-03-18"),
    ], actions=[{"name": "update_trip_sailings", "kwargs": {"trip_id": "FR7QK2", "sailings": [
        {"sailing": "SL4410", "date": "2025-03-18"}, {"sailing": "SL4491", "date": "2025-03-28"}]}}])
    first, second = [t.turn for t in run.turns if t.name == "update_trip_sailings"]
    facts = _in_short(run)
    assert facts[0] == (f"The update_trip_sailings calls at turns {first} and {second} failed with errors naming 2025-03-18 (the first: \"Error: "
                        "sailing SL4410 not available on date 2025-03-18\"), a date already past by the current time "
                        "the system prompt states (2025-03-20 09:00). Compare the dates a change sends with the stated "
                        "current time before sending it.")
    assert not any(f.startswith("update_trip_sailings failed at") for f in facts)  # the same errors, said once


def test_a_past_date_failing_a_change_to_a_record_the_task_never_asked_to_change_comes_after_what_it_did(tmp_path):
    """The run tried to move another trip (FR2MZ9) onto a sailing already past, and never changed the
    trip the task expected (FR7QK2): the expected change it left unmade leads, the past date follows
    (tau-bench rater, step-0133). A shared payment id does not make the two calls one record's."""
    other = {"trip_id": "FR2MZ9", "payment_id": "credit_card_3301928",
             "sailings": [{"sailing": "SL4410", "date": "2025-03-18"}]}
    run = _run(tmp_path, [
        _user("ada_okafor_3118. Please move my trips to the 28th."),
        *_tool("get_trip_details", {"trip_id": "FR7QK2"}, TRIP),
        _agent("Shall I move trip FR2MZ9?"), _user("Yes."),
        *_tool("update_trip_sailings", other, "Error: sailing SL4410 not available on date 2025-03-18"),
    ], actions=[{"name": "update_trip_sailings", "kwargs": {"trip_id": "FR7QK2", "payment_id": "credit_card_3301928",
                                                          "sailings": [{"sailing": "SL4491", "date": "2025-03-28"}]}}])
    facts = _in_short(run)
    expected = next(k for k, f in enumerate(facts) if f.startswith("The task expected update_trip_sailings("))
    past = next(k for k, f in enumerate(facts) if "already past by the current time" in f)
    assert expected < past, facts
    # on the expected trip itself, the past date still leads
    same = dict(other, trip_id="FR7QK2")
    run = _run(tmp_path, [_user("ada_okafor_3118. Please move trip FR7QK2 to the 28th."),
                          *_tool("get_trip_details", {"trip_id": "FR7QK2"}, TRIP), _agent("Shall I?"), _user("Yes."),
                          *_tool("update_trip_sailings", same, "Error: sailing SL4410 not available on date 2025-03-18")],
               actions=[{"name": "update_trip_sailings", "kwargs": {"trip_id": "FR7QK2", "payment_id": "credit_card_3301928",
                                                                   "sailings": [{"sailing": "SL4491", "date": "2025-03-28"}]}}])
    assert "already past by the current time" in _in_short(run)[0]


def test_an_error_on_a_date_still_ahead_is_no_past_date(tmp_path):
    change = {"trip_id": "FR7QK2", "sailings": [{"sailing": "SL4477", "date": "2025-03-27"}]}
    run = _run(tmp_path, [_user("ada_okafor_3118, trip FR7QK2."), *_tool("get_trip_details", {"trip_id": "FR7QK2"}, TRIP),
                          _agent("Shall I rebook SL4477?"), _user("Yes."),
                          *_tool("update_trip_sailings", change, "Error: sailing SL4477 not available on date 2025-03-27")])
    assert not any("already past" in f for f in _in_short(run))


EXPECTED_BOOKING = {"user_id": "ada_okafor_3118", "origin": "PIR", "destination": "CHQ", "deck": "economy",
                    "sailings": [{"sailing": "SL5102", "date": "2025-04-02"}], "payment_id": "credit_card_3301928"}


def _booking_run(tmp_path, searched: list[tuple[str, str]]):
    search = [m for o, d in searched for m in _tool("search_sailings", {"origin": o, "destination": d, "date": "2025-04-02"},
                                                   [{"sailing": f"SL{len(o + d)}0{ord(d[0])}", "origin": o,
                                                     "destination": d, "date": "2025-04-02"}])]
    sent = dict(EXPECTED_BOOKING, destination="HER", sailings=[{"sailing": "SL6602", "date": "2025-04-02"}])
    return _run(tmp_path, [_user("ada_okafor_3118. Book me Piraeus to Chania on 2 April."), *search,
                           _agent("I found SL6602. Shall I book it?"), _user("Yes."),
                           *_tool("book_sailing", sent, {"trip_id": "FR9XX1"})],
                actions=[{"name": "book_sailing", "kwargs": EXPECTED_BOOKING}])


def test_an_expected_value_no_look_up_could_show_names_the_look_ups_made(tmp_path):
    run = _booking_run(tmp_path, [("PIR", "HER"), ("RAF", "CHQ")])
    [fact] = [f for f in _in_short(run) if f.startswith("book_sailing at turn")]
    assert fact.endswith(
        "The expected `sailings[0].sailing` \"SL5102\" appeared in no answer of the run: no look-up sent destination "
        "\"CHQ\" and origin \"PIR\" together, as the expected call does (the run's look-ups sent "
        "search_sailings(destination \"HER\", origin \"PIR\"), search_sailings(destination \"CHQ\", origin \"RAF\")). "
        "Look up with the values the change must send before choosing what to send.")
    _checked(run)


def test_a_look_up_made_with_the_expected_values_says_nothing_of_it(tmp_path):
    run = _booking_run(tmp_path, [("PIR", "HER"), ("PIR", "CHQ")])
    assert not any("appeared in no answer" in f for f in _in_short(run))


def test_a_number_the_prompts_rule_computes_from_a_record_is_said_so_not_unseen(tmp_path):
    """A voucher of 80 that no turn wrote: the prompt's "$40 times the number of travellers" and a
    trip listing 2 travellers make it, and the page says so instead of calling it held nowhere."""
    trip = dict(TRIP, travellers=[{"first_name": "Ada", "last_name": "Okafor"}, {"first_name": "Ike", "last_name": "Okafor"}])
    policy = POLICY.replace("may offer a voucher.", "may offer a voucher of $40 times the number of travellers.")
    run = _run(tmp_path, [_user("ada_okafor_3118, trip FR7QK2."), *_tool("get_trip_details", {"trip_id": "FR7QK2"}, trip),
                          _agent("Shall I send you a voucher?"), _user("Yes."),
                          *_tool("send_voucher", {"user_id": "ada_okafor_3118", "amount": 80}, "Voucher sent.")],
               policy=policy)
    notes = [note for e in _checked(run) for note in e.notes]
    looked = _turn(run, "Ike")
    assert (f"`amount` is 80: no earlier turn holds this number as written; it is 40 times the 2 `travellers` of what "
            f"get_trip_details returned at turn {looked} (the system prompt's \"$40 times the number of travellers\").") \
        in notes
    assert not any("holds this value" in note for note in notes)


def test_a_change_made_from_a_second_search_after_the_first_found_nothing_says_both(tmp_path):
    query = {"origin": "PIR", "destination": "HER", "date": "2025-03-27"}
    via = [{"sailing": "SL3301", "origin": "PIR", "destination": "MLO"}, {"sailing": "SL3388", "origin": "MLO",
                                                                          "destination": "HER"}]
    change = {"trip_id": "FR7QK2", "sailings": [{"sailing": "SL3301", "date": "2025-03-27"},
                                                {"sailing": "SL3388", "date": "2025-03-27"}]}
    run = _run(tmp_path, [_user("ada_okafor_3118, trip FR7QK2. I want a direct sailing on the 27th instead."),
                          *_tool("get_trip_details", {"trip_id": "FR7QK2"}, TRIP),
                          *_tool("search_direct_sailings", query, []),
                          *_tool("search_stopover_sailings", query, [via]),
                          _agent("There is no direct sailing; one with a stop at Milos is SL3301 + SL3388. Shall I?"),
                          _user("Yes."), *_tool("update_trip_sailings", change, dict(TRIP))],
               actions=[{"name": "get_trip_details", "kwargs": {"trip_id": "FR7QK2"}}])
    empty = next(t.turn for t in run.turns if t.name == "search_direct_sailings")
    other = next(t.turn for t in run.turns if t.name == "search_stopover_sailings")
    changed = next(t.turn for t in run.turns if t.name == "update_trip_sailings")
    [fact] = [f for f in _in_short(run) if f.startswith("update_trip_sailings at turn")]
    assert fact == (f"update_trip_sailings at turn {changed} went through, but the task expected no change at all. "
                    f"search_direct_sailings(date \"2025-03-27\", destination \"HER\", origin \"PIR\") answered nothing at "
                    f"turn {empty}; \"SL3301\" and \"SL3388\", which this call sent, are in the answer of "
                    f"search_stopover_sailings at turn {other}, a look-up with the same arguments.")


def test_a_word_the_prompt_only_writes_before_the_noun_is_no_value_of_it(tmp_path):
    """"the member" and "your member" sit before the noun in the prompt too, but the prompt never
    sets them beside another value and no answer gives them: nothing is said."""
    policy = POLICY + "- Ask the member for the trip id; the member may name a travel companion.\n"
    run = _run(tmp_path, [_user("ada_okafor_3118. The member you are helping is me."),
                          *_tool("get_user_details", {"user_id": "ada_okafor_3118"}, PROFILE),
                          _agent("Thanks, the member record is open.")], policy=policy)
    assert not any("The user said" in f for f in _in_short(run))


def test_a_success_says_which_case_of_the_rule_let_its_expected_change_through(tmp_path):
    """A success that cancelled a business trip the task expected it to cancel: its page names the
    case of the desk's cancel rule that allows it, read on the record's own cabin, so a reader learns
    why the change was right, not only that it was made (the In short checker holds it to the log)."""
    policy = POLICY + ("\n## Cancel trip\n\n- Any trip can be cancelled within 24 hours of booking. Otherwise, economy trips can be cancelled "
                       "only with cover, and business trips can always be cancelled.\n")
    trip = dict(TRIP, deck="business")
    run = _run(tmp_path, [
        _user("ada_okafor_3118. Please cancel FR7QK2."),
        *_tool("get_trip_details", {"trip_id": "FR7QK2"}, trip),
        _agent("Cancel FR7QK2? Yes or no?"), _user("Yes."),
        *_tool("cancel_trip", {"trip_id": "FR7QK2"}, dict(trip, status="cancelled")),
    ], reward=1.0, actions=[{"name": "cancel_trip", "kwargs": {"trip_id": "FR7QK2"}}], policy=policy)
    [found] = [f for f in compile_offline(run).in_short if "was a change the task expected" in f.text]
    _check(run, found.text, found.turns)  # the call was the expected one; the quoted case is the prompt's, its field the look-up's
    fact = found.text
    assert "has a case that allows this change (`deck` \"business\", get_trip_details (turn" in fact, fact
    assert fact.endswith('"…business trips can always be cancelled."'), fact
