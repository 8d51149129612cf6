"""Kinds: a question asking by kind ("Which cities ...?") finds the messages that name an instance
("a long weekend in Lisbon"), which share none of its words, through WordNet's hypernyms."""

from pathlib import Path

import pytest

from wikitrace.dialogue.kinds import kinds_of

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "kinds.json"


def test_a_place_name_is_a_city_and_a_country_is_a_country():
    assert "city" in kinds_of("Took a short trip to Lisbon to clear my mind.")
    assert "country" in kinds_of("Last year I took this pic in Portugal.")


def test_two_word_names_and_plurals_are_looked_up():
    assert "region" in kinds_of("We drove through the Pacific Northwest.")
    assert "bird" in kinds_of("Two parrots live next door.")              # parrots -> parrot -> bird


def test_kinds_leave_out_the_text_s_own_words_and_a_text_without_nouns_has_none():
    assert "city" not in kinds_of("What a city Vienna is!")               # "city" already matches directly
    assert kinds_of("Oh, and you too!") == []                             # no noun at all


@pytest.fixture(scope="module")
def li():
    from wikitrace.dialogue.build import compile_sample, render_sample
    from wikitrace.dialogue.load import load_inputs
    from wikitrace.dialogue.loaded_index import prepare_files

    return prepare_files(render_sample(compile_sample(load_inputs([FIXTURE])[0])))


def _wordless_order(li, question: str) -> list[str]:
    """Lena's messages outside the session where the question's words are said, in the order the
    budget takes them after the first direct hits (which routing keeps as ranked)."""
    from wikitrace.dialogue.ranking import SPEAKER_KEEP
    from wikitrace.dialogue.retrieve import retrieve

    speaker = {m[0]: m[1] for m in li.raw["messages"]}
    ids = [s["id"] for s in retrieve(li, question, budget=2000).diagnostics["sources"]][SPEAKER_KEEP:]
    return [i for i in ids if speaker[i] == "Lena" and not i.startswith("D1:")]


def test_messages_naming_cities_come_first_among_those_sharing_no_question_word(li, monkeypatch):
    question = "Which cities has Lena visited?"              # Lisbon (D2:3), Vienna (D3:3); "visit" is in D1
    assert "kinds" in li.bm
    assert set(_wordless_order(li, question)[:2]) == {"D2:3", "D3:3"}
    monkeypatch.setattr("wikitrace.dialogue.retrieve.W_KIND", 0.0)
    assert set(_wordless_order(li, question)[:2]) != {"D2:3", "D3:3"}   # without kinds a chore comes between


def test_an_index_built_before_kinds_still_answers(li, monkeypatch):
    from wikitrace.dialogue.retrieve import retrieve

    monkeypatch.delitem(li.bm, "kinds")
    packet = retrieve(li, "Which cities has Lena visited?", budget=200)
    assert packet.refs() and packet.context_tokens <= 200
