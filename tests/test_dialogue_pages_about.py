"""Entity pages group what a claim is about, whoever said it, on a dialogue written for it: a claim
by one person about another lands on the other's page, a nickname used in address is its person,
greetings are never entities, and a rebuild is byte-identical."""

from pathlib import Path

from wikitrace.dialogue.build import compile_sample, render_sample
from wikitrace.dialogue.load import load_inputs
from wikitrace.dialogue.ranking import expand_by_entity
from wikitrace.dialogue.loaded_index import prepare_files
from wikitrace.dialogue.question import make_query

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "about-whom.json"


def _memory():
    return compile_sample(load_inputs([FIXTURE])[0])


def _trajectory_of(mem, words: str) -> str:
    for s in mem["snapshots"]:
        for c in s["claims"]:
            if words in c["text"]:
                return c["trajectory"] or s["trajectory"]
    raise AssertionError(f"no claim says {words!r}")


def _pages_of(mem, entity: str) -> set[str]:
    return {t for p in mem["pages"] if p["type"] == "entity" and p["entities"] == [entity]
            for t in p["trajectories"]}


def test_a_claim_by_one_speaker_about_the_other_lands_on_the_others_page():
    mem = _memory()
    # Priya's message is mostly about herself; its one line about Tomasz's mugs is still his news
    t = _trajectory_of(mem, "bakery mugs")
    assert t in _pages_of(mem, "Tomasz")
    assert t in _pages_of(mem, "Priya")


def test_a_report_about_a_third_person_lands_on_that_persons_page():
    mem = _memory()
    for words in ("leather shop from Krakow", "teaching leather classes"):
        t = _trajectory_of(mem, words)
        assert t in _pages_of(mem, "Hanna"), words
    about = {t["id"]: t["about"] for t in mem["trajectories"]}
    assert "Hanna" in about[_trajectory_of(mem, "leather shop from Krakow")]


def test_a_nickname_in_address_is_not_what_a_report_is_about():
    mem = _memory()
    t = _trajectory_of(mem, "second shop in Sopot")
    assert t in _pages_of(mem, "Hanna")
    about = {t["id"]: t["about"] for t in mem["trajectories"]}
    assert "Hanna" in about[t]


def test_a_nickname_used_in_address_is_its_person_not_an_entity():
    mem = _memory()
    assert mem["stats"]["extraction"]["aliases"].get("Pri") == "Priya"
    pages = {p["title"].split(":")[0].split(" - ")[0] for p in mem["pages"] if p["type"] == "entity"}
    assert "Pri" not in pages
    assert not any("Pri" in t["about"] for t in mem["trajectories"])


def test_greetings_and_interjections_are_never_entities_or_what_a_claim_is_about():
    mem = _memory()
    names = {e for s in mem["snapshots"] for e in s["entities"]} | \
        {e for t in mem["trajectories"] for e in t["about"]} | \
        {e for p in mem["pages"] for e in p["entities"]}
    for junk in ("Hey", "Hey Pri", "Hi", "Wow", "Oh", "Bye", "Bye Tomasz", "Ha", "Haha", "Cool",
                 "Nice", "Perfect", "Thanks", "I", "I'm"):
        assert junk not in names, junk


def test_rebuild_is_byte_identical():
    first, second = render_sample(_memory()), render_sample(_memory())
    assert first.keys() == second.keys()
    assert all(first[k] == second[k] for k in first)


def test_entity_routing_lifts_what_the_question_is_about():
    li = prepare_files(render_sample(_memory()))
    q = make_query(li, "What did Hanna teach?")
    ranked = list(range(len(li.raw["trajectories"])))[::-1]
    fused = {t: 1.0 / (60 + r) for r, t in enumerate(ranked, 1)}
    new, _, pages = expand_by_entity(li, q, ranked, fused)
    assert pages, "the question names Hanna, who has a page"
    on_page = {t for p in li.raw["pages"] if p["ents"] == ["hanna"] for t in p["trajs"]}
    assert on_page - set(ranked[:3])
    assert sorted(new) == sorted(ranked)                     # nothing dropped
    assert new[:3] == ranked[:3]                             # the best direct hits keep their places
    assert all(new.index(t) < new.index(o) for t in on_page for o in ranked[3:] if o not in on_page)
