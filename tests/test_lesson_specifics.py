"""Offline lessons are named by what they are about, never by one run's narration: the key
and the text come from the kind of lesson, the tool and the error's shape, with the
episode's names, ids, numbers and paths masked; what is particular to a run is its
``detail``. Lessons on real-shaped logs carry no other domain's wording."""

from __future__ import annotations

import json
from pathlib import Path

from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns

from wikitrace.compilers.offline import compile_offline

FIXTURES = Path(__file__).parent / "fixtures" / "importers"


def _qa(answer: str, gold: str, observations: list[tuple[str, str]], question: str, success: bool = False,
        run_id: str = "qa-1") -> dict:
    """A ReAct QA run as the importers write it: Search calls, a Finish, the gold answer in the task."""
    turns = [_msg("user", question)]
    turns += [_call("Search", query, seen) for query, seen in observations]
    turns.append(_call("Finish", answer, "Episode finished"))
    turns.append({"type": "episode_over"})
    record = _record(run_id, "hotpotqa", question, _turns(*turns), success)
    record["task"]["metadata"] = {"gold_answer": gold}
    return record


def _insights(record):
    return compile_offline(_run(record)).insights


def test_two_runs_that_fail_the_same_way_teach_one_lesson_with_their_own_details():
    a = _qa("Leeds", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is a festival near Leeds.")],
            "In which town is the Kestrel Film Days festival held?", run_id="qa-a")
    b = _qa("Paris", "Lyon", [("Grand Orchestra", "The Grand Orchestra toured Paris in 1990.")],
            "Which city is the home of the Grand Orchestra?", run_id="qa-b")
    (x,), (y,) = _insights(a), _insights(b)
    assert x.key == y.key == "answer|Finish|not-found"
    assert (x.title, x.guideline, x.applicability) == (y.title, y.guideline, y.applicability)
    for word in ("Leeds", "Harrogate", "Paris", "Lyon", "Kestrel", "Orchestra"):
        assert word not in x.guideline + x.title + x.applicability
    assert "Finish[Leeds]" in x.detail and "Harrogate" in x.detail and "Finish[Paris]" in y.detail


def test_a_wrong_answer_says_whether_the_look_ups_held_the_expected_answer():
    held = _qa("Leeds", "Harrogate", [("Kestrel Film Days", "The festival is held in Harrogate, near Leeds.")],
               "In which town is the Kestrel Film Days festival held?")
    missing = _qa("Leeds", "Harrogate", [("Kestrel Film Days", "Kestrel Film Days is a festival near Leeds.")],
                  "In which town is the Kestrel Film Days festival held?")
    assert [i.key for i in _insights(held)] == ["answer|Finish|misread"]
    assert [i.key for i in _insights(missing)] == ["answer|Finish|not-found"]
    assert "When a look-up has already returned the answer" in _insights(held)[0].guideline
    assert _insights(missing)[0].title == "Answer with Finish only once a look-up's text answers every part of the question"


def test_a_wrong_answer_in_another_word_form_or_a_yes_for_a_what_question_is_its_own_lesson():
    seen = [("Kestrel Review", "The Kestrel Review is a quarterly poetry magazine from Leeds.")]
    question = "What kind of publication is the Kestrel Review?"
    form = _qa("quarterly poetry magazines", "quarterly poetry magazine", seen, question)
    kind = _qa("yes", "quarterly poetry magazine", seen, question)
    # the near misses: other words (a misreading), and a yes that answers a yes-or-no question
    other = _qa("monthly poetry journal", "quarterly poetry magazine", seen, question)
    asked_whether = _qa("yes", "no", seen, "Is the Kestrel Review a daily paper?")
    assert [i.key for i in _insights(form)] == ["answer|Finish|form"]
    assert "ending" in _insights(form)[0].guideline
    assert [i.key for i in _insights(kind)] == ["answer|Finish|kind"]
    assert "not yes or no" in _insights(kind)[0].title
    assert [i.key for i in _insights(other)] == ["answer|Finish|misread"]
    assert [i.key for i in _insights(asked_whether)] == ["answer|Finish|not-found"]  # "no" stands in no look-up


def test_an_answer_the_question_itself_states_is_its_own_lesson_unless_the_question_names_it_as_an_option():
    question = "Which town near Leeds hosts the Kestrel Film Days festival?"
    seen = [("Kestrel Film Days", "Kestrel Film Days is a festival held in Harrogate, near Leeds.")]
    restated = _qa("Leeds", "Harrogate", seen, question)
    (x,) = _insights(restated)
    assert x.key == "answer|Finish|restated" and "stands in the question itself" in x.guideline
    # the near misses: an answer the question offers as an option, and one the question does not hold
    option = _qa("Leeds", "Harrogate", seen, "Is the festival held in Leeds or in Harrogate?")
    elsewhere = _qa("York", "Harrogate", seen, question)
    assert [i.key for i in _insights(option)] == ["answer|Finish|option"]
    assert [i.key for i in _insights(elsewhere)] == ["answer|Finish|misread"]


def test_an_error_lesson_is_keyed_by_tool_and_masked_shape_and_prefers_what_got_past_it():
    def run(run_id, locker, success):
        turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", f"Reset locker {locker}."),
                       _call("reset_code", {"locker": locker.lower()}, f"Error: no locker named '{locker.lower()}' in row 12",
                             is_error=True),
                       _call("reset_code", {"locker": locker}, "reset", is_error=False), {"type": "episode_over"})
        return _record(run_id, "lockers", f"Reset locker {locker}.", turns, success)

    a = _insights(run("l-1", "QX-7", True))
    b = _insights(run("l-2", "ZZ-90", False))
    err_a = next(i for i in a if i.key.startswith("error|"))
    err_b = next(i for i in b if i.key.startswith("error|"))
    assert err_a.key == err_b.key == "error|reset_code|Error: no locker named … in row …"
    assert err_a.worked and "call reset_code again with locker" in err_a.guideline
    assert "qx-7" not in err_a.guideline.lower() and "12" not in err_a.guideline


def test_a_command_error_names_the_command_and_the_missing_program():
    turns = _turns(_msg("user", "Fix the parser."),
                   _call("bash", {"command": "cd /repo && mvn -q test"}, "/bin/sh: 1: mvn: not found"),
                   {"type": "episode_over"})
    (lesson,) = [i for i in _insights(_record("j-1", "java", "Fix the parser.", turns, False)) if i.key.startswith("error|")]
    assert lesson.key == "error|missing-program" and lesson.detail.startswith("turn 1: mvn not found by the shell")
    # no run here got mvn to run: installing it is advice nothing showed
    assert "Reach the same end without it: read the code the change touches" in lesson.guideline
    assert "install" not in lesson.guideline.lower()
    assert "this run" not in lesson.guideline
    installed = _turns(_msg("user", "Fix the parser."),
                       _call("bash", {"command": "cd /repo && mvn -q test"}, "/bin/sh: 1: mvn: not found"),
                       _call("bash", {"command": "apt-get install -y maven"}, "Setting up maven (3.8.7-1) ..."),
                       _call("bash", {"command": "cd /repo && mvn -q test"}, "Tests run: 4, Failures: 0"),
                       {"type": "episode_over"})
    (lesson,) = [i for i in _insights(_record("j-2", "java", "Fix the parser.", installed, False))
                 if i.key.startswith("error|")]
    assert "Install or locate it" in lesson.guideline and "this run" not in lesson.guideline


def test_lessons_on_real_shaped_logs_carry_no_other_domains_wording():
    from wikitrace.runs.load import iter_runs
    from wikitrace.runs.model import Run

    qa_or_airline = ("reservation", "airline", "expected answer", "Finish[", "policy", "the user's own words")
    airline_or_code = ("reservation", "airline", "policy", "system prompt", "javac", "mvn", "edit ")
    for folder, foreign in ((FIXTURES / "swe_experiment", qa_or_airline), (FIXTURES / "swe_agent", qa_or_airline),
                            (FIXTURES / "react_notebook", airline_or_code), (FIXTURES / "react", airline_or_code)):
        runs = [r for r in iter_runs([folder]) if isinstance(r, Run)]
        assert runs, folder
        for run in runs:
            comp = compile_offline(run)
            if not comp.insights:  # only a success whose answer stood in no look-up teaches nothing
                from wikitrace.compilers.procedure_lessons import procedure_key
                from wikitrace.compilers.reading import read_run

                assert run.outcome.success and procedure_key(read_run(run)).endswith(":own"), run.run_id
                continue
            text = "\n".join(f"{i.title} {i.guideline} {i.applicability} {i.detail}" for i in comp.insights)
            tools = {t.name for t in run.turns if t.type == "function_call"}
            assert any(name in text for name in tools), (run.run_id, text)  # it names what the run used
            for word in foreign:
                assert word not in text, (run.run_id, word, text)
            for lesson in comp.insights:
                assert "this run" not in lesson.guideline.lower(), (run.run_id, lesson.guideline)


def _booking(amount: int, prices: dict) -> dict:
    """An airline-style booking: the search lists the flight with its price table, the user
    agrees, the agent books paying ``amount``."""
    flights = json.dumps([{"flight_number": "HAT412", "origin": "BOS", "destination": "ORD", "status": "available",
                           "prices": prices},
                          {"flight_number": "HAT413", "origin": "BOS", "destination": "ORD", "status": "available",
                           "prices": {"economy": 301, "business": 690}}])
    turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", "Book me on the morning flight BOS to ORD, economy."),
                   _call("search_direct_flight", {"origin": "BOS", "destination": "ORD", "date": "2024-06-02"}, flights),
                   _msg("assistant", "HAT412 in economy; shall I book it with your card credit_card_55?"),
                   _msg("user", "Yes, book it."),
                   _call("book_reservation", {"flights": [{"flight_number": "HAT412", "date": "2024-06-02"}],
                                              "cabin": "economy", "payment_methods": [
                                                  {"payment_id": "credit_card_55", "amount": amount}]},
                         '{"reservation_id": "QX81PA", "status": "booked"}'),
                   {"type": "episode_over"})
    return _record("book-1", "airline", "Book BOS to ORD.", turns, False)


def test_a_price_listed_beside_the_booked_flight_is_a_value_the_run_was_shown():
    from wikitrace.compilers.arguments import check_arguments
    from wikitrace.compilers.reading import read_run

    def amount_check(record):
        run = _run(record)
        reading = read_run(run)
        call = [t for t in run.turns if t.name == "book_reservation"][0]
        return next(c for c in check_arguments(reading, call) if c.path.endswith("amount"))

    # the flight's own price, under another field name: shown at the search (turn 2)
    assert amount_check(_booking(187, {"economy": 187, "business": 540})).seen_at == 2
    # another flight's price is not this booking's: still unseen
    assert amount_check(_booking(301, {"economy": 187, "business": 540})).seen_at is None
    # a number no record of the call's flight holds stays unseen, and the lesson on the change says so
    lessons = _insights(_booking(250, {"economy": 187, "business": 540}))
    checked = [i for i in lessons if i.key == "went-through|book_reservation"]
    # the amount is named, not the whole payment_methods: its payment_id stood in a look-up
    assert checked and ("set payment_methods[0].amount to a value no look-up or user message before it held"
                        in checked[0].detail), checked[0].detail


def test_an_upper_case_name_is_an_answer_not_a_verdict():
    # a call sign in upper case: the instructions name no such label, so it is a wrong answer's shape
    (lesson,) = _insights(_qa("KBTX 3", "KBTX", [("KBTX-TV", "KBTX-TV is a CBS-affiliated station.")],
                              "Which CBS station serves Brazos County?"))
    assert lesson.key == "answer|Finish|extra"
    # a label the instructions offer is a verdict
    claim = _qa("SUPPORTS", "REFUTES", [("Nile", "The Nile flows north.")],
                "Claim: the Nile flows south. Answer SUPPORTS, REFUTES or NOT ENOUGH INFO.")
    assert [i.key for i in _insights(claim)] == ["answer|Finish|verdict"]


def test_a_rule_lesson_is_titled_by_the_whole_rule_without_its_asides():
    from wikitrace.compilers.insight_words import clip_words, rule_title

    rule = ("Before taking any actions that update the booking database (booking, modifying flights, editing "
            "baggage), you must list the action details and obtain explicit user confirmation (yes) to proceed.")
    assert rule_title(rule) == ("Before taking any actions that update the booking database, you must list the "
                                "action details and obtain explicit user …")
    assert not clip_words(rule, 90).rstrip(" …")[-1:].isspace() and clip_words(rule, 90).endswith("modifying flights …")


def test_changes_listed_in_the_proposal_the_user_agreed_to_are_all_agreed():
    from wikitrace.compilers.reading import read_run

    def run(proposal):
        turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", "Move both my trips to economy."),
                       _msg("assistant", proposal), _msg("user", "Yes, please do both."),
                       _call("update_reservation_flights", {"reservation_id": "KQ2M7D", "cabin": "economy"},
                             '{"reservation_id": "KQ2M7D", "cabin": "economy"}'),
                       _call("update_reservation_flights", {"reservation_id": "ZP90LA", "cabin": "economy"},
                             '{"reservation_id": "ZP90LA", "cabin": "economy"}'),
                       {"type": "episode_over"})
        reading = read_run(_run(_record("both-1", "airline", "Downgrade two trips.", turns, True)))
        return [c.confirmed for c in reading.calls]

    assert run("I will move KQ2M7D and ZP90LA to economy. Shall I go ahead?") == [True, True]
    # one yes covers every change made before the user speaks again, named in the proposal or not
    assert run("I will move KQ2M7D to economy. Shall I go ahead?") == [True, True]


def test_a_yes_or_no_the_user_gave_in_words_is_a_value_they_gave():
    from wikitrace.compilers.arguments import check_arguments
    from wikitrace.compilers.reading import read_run

    def insurance_seen(said):
        turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", said),
                       _call("book_reservation", {"flights": [{"flight_number": "HAT412"}], "insurance": "no"},
                             '{"reservation_id": "QX81PA"}'), {"type": "episode_over"})
        run = _run(_record("ins-1", "airline", "Book HAT412.", turns, True))
        call = [t for t in run.turns if t.name == "book_reservation"][0]
        return next(c for c in check_arguments(read_run(run), call) if c.path == "insurance").seen_at

    assert insurance_seen("Book HAT412 for me; I don't want travel insurance.") == 1
    assert insurance_seen("Book HAT412 for me, economy please.") is None


def test_several_calls_written_into_one_argument_teach_one_call_per_query():
    turns = _turns(_msg("user", "Which of the three signers of the Harbour Accord was later exiled?"),
                   _call("Search", "Harbour Accord", "The Harbour Accord was signed by Ada Vell, Rik Sorn and Ma Lin."),
                   _call("Search", "Ada Vell], Search[Rik Sorn], Search[Ma Lin", "Could not find that page, please try again.",
                         is_error=True),
                   _call("Search", "Ada Vell], Search[Rik Sorn], Search[Ma Lin", "Could not find that page, please try again.",
                         is_error=True),
                   {"type": "episode_over"})
    record = _record("qa-packed", "hotpotqa", "Which signer was exiled?", turns, False)
    (lesson,) = [i for i in _insights(record) if i.key.startswith("error|Search|")]
    assert "send one Search call per query" in lesson.guideline
    assert lesson.detail.startswith("turn 2: its argument held 3 Search calls;")
    # an ordinary miss keeps its own advice
    plain = _qa("Leeds", "Harrogate", [("Kestrel Days", "Could not find that page, please try again.")],
                "Where is Kestrel Days held?")
    assert all("per query" not in i.guideline for i in _insights(plain))


def _payment_retry(run_id: str, amounts: list[int], success: bool) -> dict:
    """tau-bench's book_reservation refusing split payments that miss the price, then a retry."""
    user = "mia_li_3668"
    base = {"user_id": user, "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy",
            "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
            "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no"}
    first = dict(base, payment_methods=[{"payment_id": "certificate_7504069", "amount": 250},
                                        {"payment_id": "credit_card_4421486", "amount": 5}])
    again = dict(base, payment_methods=[{"payment_id": "certificate_7504069", "amount": amounts[0]},
                                        {"payment_id": "credit_card_4421486", "amount": amounts[1]}])
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"Book HAT136 on May 20 for me, {user}; certificate first, the rest on my card."),
        _call("get_user_details", {"user_id": user}, json.dumps({"user_id": user, "payment_methods": {
            "certificate_7504069": {"amount": 250}, "credit_card_4421486": {"brand": "visa"}}}), is_error=False),
        _msg("assistant", "I will book HAT136 paying 250 by certificate and the rest by card. Shall I?"),
        _msg("user", "yes"),
        _call("book_reservation", first, "Error: payment amount does not add up, total price is 305, but paid 255",
              is_error=True),
        _call("book_reservation", again, json.dumps({"reservation_id": "ZFA04Y"}), is_error=False),
        {"type": "episode_over"})
    return _record(run_id, "airline", "Book HAT136 on May 20.", turns, success)


def test_a_retry_whose_amounts_add_up_to_the_figure_the_error_names_is_taught_as_such():
    (err,) = [i for i in _insights(_payment_retry("pay-1", [250, 55], True)) if i.key.startswith("error|")]
    assert err.key == "error|book_reservation|Error: payment amount does not add up, total price is …, but paid …"
    assert ("with the amounts in payment_methods adding up to the figure the error names, once that figure is what "
            "the request should cost") in err.guideline  # the figure is the price of the call as sent, right or not
    # amounts that still miss the total are no such fix: the advice stays with what changed
    (miss,) = [i for i in _insights(_payment_retry("pay-2", [250, 45], True)) if i.key.startswith("error|")]
    assert "adding up" not in miss.guideline and "`payment_methods` changed" in miss.guideline


def test_a_hand_off_lesson_quotes_the_system_prompts_rule_on_hand_offs_and_no_other():
    from test_offline_content import hand_off_failure

    (hand,) = [i for i in _insights(hand_off_failure()) if i.key.startswith("hand-off|")]
    assert ("The system prompt's rule on it: \"You should transfer the user to a human agent if and only if the "
            "request cannot be handled within the scope of your actions.\"") in hand.guideline
    record = hand_off_failure()
    record["turns"][0]["content"] = "# Airline Agent Policy\n\n- Be brief.\n"
    (plain,) = [i for i in _insights(record) if i.key.startswith("hand-off|")]
    assert "system prompt" not in plain.guideline


def test_successes_that_settled_the_same_way_share_one_lesson_whether_or_not_they_followed_a_name():
    # a look-up that followed a name an earlier answer showed is how one success got there, counted
    # on the page; one way of settling is one lesson, not one page per route to it
    question = "Where is the Kestrel Days festival held?"
    hop = _qa("Ashby Vale", "Ashby Vale", [("Kestrel Days", "Kestrel Days is held in Ashby Vale each May."),
                                           ("Ashby Vale", "Ashby Vale is a market town.")], question, success=True)
    direct = _qa("Ashby Vale", "Ashby Vale", [("Kestrel Days festival", "Kestrel Days is held in Ashby Vale.")],
                 question, success=True)
    (a,), (b,) = _insights(hop), _insights(direct)
    assert a.key == b.key == "procedure|Finish:looked-up"
    assert a.title == b.title == "Settle with Finish, giving a value a look-up returned"
    assert "searching next" not in a.guideline and "searching next" not in b.guideline


def test_a_loop_names_its_tool_and_a_run_the_harness_stopped_is_told_to_answer_sooner():
    question = "Where is the Kestrel Days festival held?"
    turns = [_msg("user", question)] + [_call("Search", "Kestrel festival", "The kestrel is a small bird of prey.")
                                        for _ in range(3)] + [{"type": "episode_over"}]
    record = _record("halted-1", "hotpotqa", question, _turns(*turns), False, ended_by="harness: step limit")
    keys = {i.key: i for i in _insights(record)}
    assert "loop|Search" in keys and keys["loop|Search"].title == "Do not send the same Search call again after the same answer"
    idle = keys["idle|lookups"]
    assert idle.title == "Answer or act before the harness stops the run" and "stopped by the harness" in idle.detail
    ended = _record("quiet-1", "hotpotqa", question, _turns(*turns), False, ended_by="agent")
    assert next(i for i in _insights(ended) if i.key == "idle|lookups").title == "Act on what the look-ups found"


def _card_retry(run_id: str, first_id: str) -> dict:
    """tau-bench's update_reservation_flights refusing a payment id the agent wrote from the card's
    last digits ("credit_card_7334"), then the id get_user_details lists for that card."""
    user = "aarav_ahmed_6699"
    change = {"reservation_id": "M20IZO", "cabin": "business",
              "flights": [{"flight_number": "HAT268", "date": "2024-05-22"}]}
    details = {"user_id": user, "payment_methods": {
        "credit_card_9074831": {"source": "credit_card", "brand": "mastercard", "last_four": "7334",
                                "id": "credit_card_9074831"}}}
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"I am {user}. Please upgrade M20IZO to business, using my credit card ending in 7334."),
        _msg("assistant", "Upgrading M20IZO to business on your card ending in 7334. Shall I go ahead?"),
        _msg("user", "Yes, please."),
        _call("update_reservation_flights", dict(change, payment_id=first_id), "Error: payment method not found",
              is_error=True),
        _call("get_user_details", {"user_id": user}, json.dumps(details), is_error=False),
        _call("update_reservation_flights", dict(change, payment_id="credit_card_9074831"),
              json.dumps({"reservation_id": "M20IZO", "cabin": "business"}), is_error=False),
        {"type": "episode_over"})
    return _record(run_id, "airline", "Upgrade M20IZO to business.", turns, True)


def test_a_retry_that_swapped_a_made_up_id_for_a_listed_one_names_both_and_where_each_came_from():
    (err,) = [i for i in _insights(_card_retry("card-1", "credit_card_7334")) if i.key.startswith("error|")]
    assert err.detail == ('turn 4: got past it at turn 6 (with payment_id changed from "credit_card_7334", held as written '
                          'in no answer before it, only its digits 7334 in a user\'s message, to "credit_card_9074831", '
                          "returned by get_user_details at turn 5)")
    assert ("call update_reservation_flights again with `payment_id` exactly as get_user_details returns it (the "
            "refused value stood in no answer before it)") in err.guideline
    assert "credit_card" not in err.guideline and "7334" not in err.guideline  # the values stay on the run's line
    # an id made of no digits the user wrote is said as held nowhere; the advice is the same
    (other,) = [i for i in _insights(_card_retry("card-2", "credit_card_1111")) if i.key.startswith("error|")]
    assert 'from "credit_card_1111", held as written in no answer or user message before it, to' in other.detail


def test_a_retrys_value_is_credited_to_the_first_answer_that_held_it_not_a_changes_echo():
    """Round 17 (tau): "payment_id changed from 'gift_card_7480005', returned by update_reservation_flights
    at turn 20" hid that get_user_details had listed it at turn 4: a change's answer echoing a value
    is no place the agent learned it."""
    user = "aarav_ahmed_6699"
    change = {"reservation_id": "M20IZO", "cabin": "business",
              "flights": [{"flight_number": "HAT268", "date": "2024-05-22"}]}
    details = {"user_id": user, "payment_methods": {
        "gift_card_1111111": {"source": "gift_card", "amount": 5, "id": "gift_card_1111111"},
        "gift_card_2222222": {"source": "gift_card", "amount": 900, "id": "gift_card_2222222"}}}
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"I am {user}. Please upgrade M20IZO to business. Yes, go ahead."),
        _call("get_user_details", {"user_id": user}, json.dumps(details), is_error=False),
        _call("update_reservation_baggages", {"reservation_id": "M20IZO", "total_baggages": 1, "nonfree_baggages": 0,
                                              "payment_id": "gift_card_1111111"},
              json.dumps({"reservation_id": "M20IZO", "payment_history": [{"payment_id": "gift_card_1111111"}]}),
              is_error=False),
        _call("update_reservation_flights", dict(change, payment_id="gift_card_1111111"),
              "Error: gift card balance is not enough", is_error=True),
        _call("update_reservation_flights", dict(change, payment_id="gift_card_2222222"),
              json.dumps({"reservation_id": "M20IZO", "cabin": "business"}), is_error=False),
        {"type": "episode_over"})
    (err,) = [i for i in _insights(_record("echo-1", "airline", "Upgrade M20IZO.", turns, True))
              if i.key.startswith("error|update_reservation_flights")]
    assert ('with payment_id changed from "gift_card_1111111", returned by get_user_details at turn 2, to '
            '"gift_card_2222222", returned by get_user_details at turn 2)') in err.detail, err.detail


def test_a_yes_or_no_to_a_question_asking_for_a_thing_is_no_verdict_ending():
    # "no" to "what profession ...?" is a guess of the wrong kind, counted with answers no look-up held;
    # to "Were ... ?" it is the verdict the question asks for, even with a "which" clause in it
    from wikitrace.compilers.procedure_lessons import procedure_key
    from wikitrace.compilers.reading import read_run

    seen = [("Ada Vell", "Ada Vell is a poet from Rusk.")]
    what = _qa("no", "poet", seen, "What profession do Ada Vell and Ivo Marr share?")
    were = _qa("no", "no", seen, "Were Ada Vell and the man who founded Marr Press, which prints poems, born in one town?")
    assert procedure_key(read_run(_run(what))) == "procedure|Finish:own"
    assert procedure_key(read_run(_run(were))) == "procedure|Finish:label"


def test_words_only_a_retry_is_given_are_never_a_choice_contrasted_across_runs():
    # retries alone carry reflections, and retries fail more for being retries: the counts would lean
    # however the words were chosen, so the source is not set against the type's other runs
    from collections import Counter

    from wikitrace.corpus.choices import separating

    met = {"query|Search|given": Counter(failure=120, success=5), "query|Search|shown": Counter(failure=40, success=60),
           "query|Search|*": Counter(failure=300, success=80)}
    assert [c["pattern"] for c in separating(met)] == ["query|Search|shown"]


def test_a_value_the_expected_call_sends_too_is_not_said_to_want_checking():
    # the task expected another cabin, and the 250 no record held as the amount: the lesson on the booking
    # names the cabin's difference elsewhere and leaves the amount out; where the expected call pays
    # otherwise, the unheld amount is named as before
    def detail(expected_amount):
        record = _booking(250, {"economy": 187, "business": 540})
        call = next(t for t in record["turns"] if t.get("name") == "book_reservation")
        args = json.loads(call["arguments"]) if isinstance(call["arguments"], str) else call["arguments"]
        want = json.loads(json.dumps(args))
        want["payment_methods"][-1]["amount"] = expected_amount
        want["cabin"] = "business"
        record["task"].setdefault("metadata", {})["expected_calls"] = json.dumps(
            [{"name": "book_reservation", "arguments": want}])
        return " ".join(i.detail for i in _insights(record))

    assert "went through" in detail(250) and "set payment_methods" not in detail(250)
    assert "set payment_methods[0].amount to a value no look-up or user message before it held" in detail(187)
