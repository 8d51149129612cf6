"""Routing. Through the wiki, as expansion: the page that holds several of a question's direct hits
lifts its other trajectories, and never pushes the best direct hits out of the packet. To the
participant a question names (shipped): after the first direct hits, their own messages take the
budget first."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.query import run_query
from wikitrace.dialogue.ranking import ROUTE_KEEP, expand_by_page, hit_pages, rrf
from wikitrace.dialogue.loaded_index import load_index
from wikitrace.dialogue.retrieve import retrieve
from wikitrace.fsio import make_writable

FIXTURES = Path(__file__).parent / "fixtures" / "dialogue"


def _index(pages: list[tuple[str, list[int]]]) -> SimpleNamespace:
    """The part of a loaded index routing reads: pages with their trajectory members."""
    return SimpleNamespace(raw={"pages": [{"slug": f"p{i}", "type": kind, "trajs": trajs}
                                          for i, (kind, trajs) in enumerate(pages)]})


def _direct(n: int) -> tuple[list[int], dict]:
    ranked = list(range(n))
    return ranked, rrf(ranked, ranked)       # two rankers that agree, as dense and sparse often do


def test_page_holding_two_hits_lifts_its_other_trajectory_above_unrelated_ones():
    ranked, fused = _direct(40)
    # trajectory 31 is the second fact of a thread whose first facts (1 and 6) the question matched
    li = _index([("index", list(range(40))), ("entity", [1, 6, 31]), ("entity", [2, 35])])
    new, scores, page = expand_by_page(li, ranked, fused)
    assert page == 1
    assert new.index(31) < new.index(12)            # lifted above unrelated direct matches
    assert sorted(new) == ranked                    # nothing is dropped
    assert scores[31] > fused[31]


def test_routing_never_displaces_the_first_direct_hits():
    ranked, fused = _direct(40)
    # a big page holding hits 4 and 5 and many weak trajectories: all lifted, none above the first hits
    li = _index([("entity", [4, 5] + list(range(20, 40)))])
    new, _, page = expand_by_page(li, ranked, fused)
    assert page == 0
    assert new[:ROUTE_KEEP] == ranked[:ROUTE_KEEP]


def test_no_page_holding_two_hits_leaves_the_ranking_alone():
    ranked, fused = _direct(30)
    # the index page holds everything and is no evidence; the entity page holds one hit only
    li = _index([("index", list(range(30))), ("entity", [3, 25])])
    assert hit_pages(li, ranked) == []
    assert expand_by_page(li, ranked, fused) == (ranked, fused, None)


def test_pages_are_ranked_by_the_hits_they_hold():
    ranked, _ = _direct(12)
    li = _index([("entity", [8, 9]), ("entity", [0, 1]), ("topic", [0, 9, 11])])
    assert hit_pages(li, ranked) == [1, 2, 0]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("routing") / "corpus"
    compile_dialogues(DialogueOptions(inputs=[FIXTURES / "tiny.jsonl", FIXTURES / "lives-change.json"], out=out))
    yield out
    make_writable(out)


QUESTIONS = {
    "tiny": ["What instrument is Ben learning?", "How many cats does Ana have?",
             "Where did Ben move from and what did he read on the train to Montreal?",
             "What pets does Ana have and where did Biscuit learn to fetch?"],
}


def _samples(built: Path) -> list[str]:
    return sorted(p.name for p in (built / "dialogue").iterdir() if (p / "index.json").exists())


@pytest.mark.parametrize("mode", ["expand", "entity"])
@pytest.mark.parametrize("budget", [60, 120, 400])
def test_routed_packet_keeps_the_top_direct_hit_and_the_budget(built, budget, mode):
    for sample in _samples(built):
        li = load_index(built / "dialogue" / sample / "index.json")
        questions = QUESTIONS.get(sample) or [m[4] for m in li.raw["messages"][::5]]
        for q in questions:
            off = retrieve(li, q, budget=budget, routing="off")
            routed = retrieve(li, q, budget=budget, routing=mode)
            assert routed.diagnostics["routing"] == mode
            assert routed.context_tokens <= budget
            top = off.diagnostics["sources"][0]["id"]
            assert top in routed.refs(), (sample, q, budget)
            assert routed.diagnostics["selected_trajectories"][0] == off.diagnostics["selected_trajectories"][0]


def test_unknown_routing_mode_is_refused(built):
    li = load_index(built / "dialogue" / "tiny" / "index.json")
    with pytest.raises(ValueError, match="routing must be one of"):
        retrieve(li, "What instrument is Ben learning?", routing="sideways")


def test_json_packet_names_the_page_routing_followed(built, monkeypatch):
    question = "What pets does Ana have?"
    shipped = json.loads(run_query(built, "tiny", question, budget=400, as_json=True))["diagnostics"]
    assert shipped["routing"] == "speaker" and shipped["expanded_from"] is None
    assert shipped["routed_to"] == "Ana"                    # the participant the question names
    assert shipped["pages"]                                 # pages are still listed for the reader
    monkeypatch.setattr("wikitrace.dialogue.retrieve.ROUTING", "expand")
    diag = json.loads(run_query(built, "tiny", question, budget=400, as_json=True))["diagnostics"]
    # both of Ana's threads (the puppy, the cats) are hits, and her page holds them
    assert diag["routing"] == "expand"
    assert diag["expanded_from"] == "entity-ana"
    assert diag["routed_trajectories"] == 2


# ---------------------------------------------------------------- routing to the participant asked about

ASKED = FIXTURES / "asked-about.json"


@pytest.fixture(scope="module")
def asked():
    from wikitrace.dialogue.build import compile_sample, render_sample
    from wikitrace.dialogue.load import load_inputs
    from wikitrace.dialogue.loaded_index import prepare_files

    return prepare_files(render_sample(compile_sample(load_inputs([ASKED])[0])))


def _sources(packet) -> list[str]:
    return [s["id"] for s in packet.diagnostics["sources"]]       # in the order the budget took them


def _said_by(li, ids: list[str]) -> list[str]:
    speaker = {m[0]: m[1] for m in li.raw["messages"]}
    return [speaker[i] for i in ids]


def test_speaker_routing_is_the_shipped_default():
    from wikitrace.dialogue import retrieve as retrieve_mod

    assert retrieve_mod.ROUTING == "speaker"


def test_named_participant_fills_the_budget_after_the_first_direct_hits(asked, monkeypatch):
    # Dev's cheering repeats the question's words ("passionate", "causes"); Noor's own news does not
    monkeypatch.setattr("wikitrace.dialogue.ranking.SPEAKER_KEEP", 1)
    question = "What causes is Noor passionate about?"
    gold = {"D1:1", "D2:2", "D3:1", "D3:3"}
    off = retrieve(asked, question, budget=100, routing="off")
    routed = retrieve(asked, question, budget=100, routing="speaker")
    assert routed.diagnostics["routed_to"] == "Noor" and off.diagnostics["routed_to"] is None
    assert routed.context_tokens <= 100
    assert _sources(routed)[:1] == _sources(off)[:1]                    # the best direct hit stays first
    after_head = _said_by(asked, _sources(routed)[1:])
    assert "Noor" in after_head
    assert "Noor" not in after_head[after_head.index("Dev"):] if "Dev" in after_head else True
    assert len(gold & set(routed.refs())) > len(gold & set(off.refs()))


def test_speaker_routing_keeps_the_first_messages_as_ranked(asked):
    # at the shipped keep the first six messages are the ranking's, whoever said them
    question = "What causes is Noor passionate about?"
    off = retrieve(asked, question, budget=60, routing="off")
    routed = retrieve(asked, question, budget=60, routing="speaker")
    assert _sources(routed) == _sources(off)


@pytest.mark.parametrize("question", ["What causes are Noor and Dev passionate about?", "Which causes are in the news?"])
def test_question_naming_both_or_neither_participant_is_not_routed(asked, monkeypatch, question):
    monkeypatch.setattr("wikitrace.dialogue.ranking.SPEAKER_KEEP", 0)
    off = retrieve(asked, question, budget=100, routing="off")
    routed = retrieve(asked, question, budget=100, routing="speaker")
    assert routed.diagnostics["routed_to"] is None
    assert _sources(routed) == _sources(off)


def test_speaker_first_orders_without_dropping(asked):
    from wikitrace.dialogue.ranking import speaker_first
    from wikitrace.dialogue.question import make_query

    order = list(range(len(asked.raw["messages"])))[::-1]
    q = make_query(asked, "Where does Noor spend Saturdays?")
    new, who = speaker_first(asked, q, order, keep=2)
    assert who == "Noor"
    assert sorted(new) == sorted(order) and new[:2] == order[:2]
    rest = _said_by(asked, [asked.raw["messages"][mi][0] for mi in new[2:]])
    assert rest == sorted(rest, key=lambda s: s != "Noor")             # Noor's first, then Dev's
