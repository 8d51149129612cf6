"""The offline compiler's cheap tests in front of its patterns must never change what is found.

A value is looked for by plain substring first and by its pattern only where the substring is;
consent words are matched on ASCII text lowered instead of with a case-insensitive pattern. Both
stand in for the pattern only where they are exact: text whose case folding ``lower()`` does not
reproduce (the long s, the dotless i) still reaches the case-insensitive pattern."""

from __future__ import annotations

import json

from test_offline_content import _call, _msg, _record, _run, _turns

from wikitrace.compilers.consent import AGREES, ASKS, REFUSES, answer_kind
from wikitrace.compilers.reading import read_run
from wikitrace.compilers.renderings import held_before


SYSTEM = "You are an airline agent. Look the reservation up before you change it, and ask the user first."


def _reading(*turns: dict):
    return read_run(_run(_record("fast-1", "airline", "Change my flight.", _turns(*turns), False)))


def test_a_value_is_found_in_every_rendering_the_pattern_knows():
    r = _reading(
        _msg("system", SYSTEM),
        _msg("user", "My budget is $1,000 and I fly Basic Economy on May 5th."),
        _call("get_reservation_details", {"reservation_id": "QX81ZB"},
              json.dumps({"reservation_id": "QX81ZB", "cabin": "basic_economy", "price": 305.5})),
        _msg("assistant", "Booking now."),
    )
    assert held_before(r, 1000, 9) == 1  # digits with a thousands comma
    assert held_before(r, "2024-05-05", 9) == 1  # an ISO date the user spelled out
    assert held_before(r, "basic_economy", 9) == 2  # as the answer wrote it: the latest turn holding it
    assert held_before(r, "basic_economy", 2) == 1  # another case, a space for the "_"
    assert held_before(r, "305.50", 9) == 2  # a trailing zero the answer left off
    assert held_before(r, 1000, 1) is None  # only earlier turns count
    assert held_before(r, "premium_economy", 9) is None
    assert held_before(r, 4521, 9) is None


def test_text_whose_case_folding_lower_misses_is_still_matched_without_case():
    # "ſ" (long s) and "K" (Kelvin sign) are "s" and "k" to a case-insensitive pattern
    r = _reading(
        _msg("system", SYSTEM),
        _msg("user", "The passenger is \u017fam, and the code \u212aX12 is on my ticket."),
        _msg("assistant", "Noted."),
    )
    assert held_before(r, "Sam", 9) == 1
    assert held_before(r, "kx12", 9) == 1


def test_consent_words_read_whatever_the_case_and_the_alphabet():
    assert answer_kind("YES, PLEASE GO AHEAD.") == AGREES
    assert answer_kind("Yes \u2014 go ahead with the Zürich flight.") == AGREES  # non-ASCII text
    assert answer_kind("NO, WAIT. Not that one.") == REFUSES
    assert answer_kind("Can you look up my other reservation instead?") == ASKS
    assert answer_kind("\u017fure, go ahead.") == AGREES  # the long s is an s to the pattern


def test_a_quote_is_kept_wherever_its_turn_holds_it_and_dropped_where_none_does():
    from wikitrace.compilers.grounding import ground
    from wikitrace.compilers.schema import Compilation, Evidence

    deep = {"reservations": [{"reservation_id": f"R{k:05d}", "cabin": "economy"} for k in range(60)],
            "note": "Σ upgrade refused: the fare was BASIC ECONOMY"}
    run = _run(_record("fast-2", "airline", "Upgrade my seat.", _turns(
        _msg("system", SYSTEM),
        _msg("user", "Please   upgrade\nmy seat."),
        _call("get_reservations", {"user_id": "ana_1"}, json.dumps(deep, indent=4, ensure_ascii=False)),
    ), False))
    quotes = ["please upgrade my seat.",  # its message's head, whitespace and case folded
              "σ upgrade refused: the fare was basic economy",  # deep in a long answer, past any head
              '"reservation_id": "r00000"',  # the answer's head, indented JSON
              "the fare was first class"]  # in no cited turn
    comp = Compilation("t", "d", "failure", [Evidence("x", "y", [1 if k == 0 else 2], q) for k, q in enumerate(quotes)], [])
    ground(comp, run)
    assert [e.quote for e in comp.evidence] == quotes[:3] + [None]
    assert comp.dropped_quotes == 1


def test_a_pattern_with_words_it_needs_finds_what_it_found_without_them():
    # the words each consent pattern lists as needed are a shortcut only: every phrase any of its
    # alternatives reads, in any case, is still found where the pattern alone finds it
    import re

    from wikitrace.compilers import claim_checks, consent

    phrases = [
        "Please proceed with it.", "I'd like to go ahead.", "Let's just go ahead", "I wish to proceed now",
        "Yes, but not the blue one.", "However, keep my seat.", "Although I paid, wait.", "Hold on a second.",
        "Not yet, thanks.", "Use the other card instead.", "I would rather keep it.", "Yeah sure.", "Yep.",
        "I confirm.", "Confirmed!", "That is correct.", "Please do.", "Okay then.", "OK.", "Good.", "Fine by me.",
        "I agree.", "Make sure it is refundable.", "I am not sure.", "Shall I book it?", "Should I cancel it?",
        "May I proceed?", "Would you like the window seat?", "Do you want insurance?", "Is that okay?",
        "Is this correct?", "Is everything fine?", "Does that look right?", "Do these sound good?",
        "How many bags?", "There were 3 of us.", "there is one left", "thereafter we left", "A book about oaks.",
        "Nothing to see here.", "",
    ]
    patterns = [p for module in (consent, claim_checks) for p in vars(module).values()
                if isinstance(p, consent._Caseless) and p._needs]
    assert len(patterns) >= 5
    for p in patterns:
        alone = re.compile(p.pattern, re.I)
        for text in phrases:
            found, expected = p.search(text), alone.search(text)
            assert (found and found.span()) == (expected and expected.span()), (p.pattern, text)


def test_an_argument_is_credited_to_the_latest_fact_before_its_call_holding_it():
    from wikitrace.compilers.arguments import check_arguments

    r = _reading(
        _msg("system", SYSTEM),
        _msg("user", "My reservation is QX81ZB.\nIt is under my name."),
        _call("get_reservation_details", {"reservation_id": "QX81ZB"},
              json.dumps({"reservation_id": "QX81ZB", "cabin": "economy", "payment_id": "card_7730215"})),
        _call("get_user_details", {"user_id": "ana_1"},
              json.dumps({"user_id": "ana_1", "payment_methods": {"card_7730215": {"brand": "visa"}}})),
        _call("update_reservation_baggages", {"reservation_id": "QX81ZB", "payment_id": "card_7730215"},
              json.dumps({"reservation_id": "QX81ZB", "payment_id": "card_7730215"})),
        _call("update_reservation_baggages", {"reservation_id": "QX81ZB", "payment_id": "card_7730215"}, "done"),
    )
    assert r.facts_holding("card_7730215") == [1, 2, 3]  # its places in r.facts (the user message is 0)
    assert r.facts_holding("qx81zb.\nit") is None  # a line break: each fact is read on its own
    seen = {a.path: a.seen_at for a in check_arguments(r, r.run.turns[4])}
    assert seen == {"reservation_id": 2, "payment_id": 3}  # not the change's own answer, nor a later one
    seen = {a.path: a.seen_at for a in check_arguments(r, r.run.turns[5])}
    assert seen == {"reservation_id": 4, "payment_id": 4}
