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
