"""Wiki routing as expansion: the page that holds several of a question's direct hits lifts its
other trajectories, and never pushes the best direct hits out of the packet."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.query import run_query
from wikitrace.dialogue.ranking import ROUTE_KEEP, expand_by_page, hit_pages, rrf
from wikitrace.dialogue.retrieve import load_index, retrieve
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
    off = json.loads(run_query(built, "tiny", question, budget=400, as_json=True))["diagnostics"]
    assert off["routing"] == "off" and off["expanded_from"] is None
    assert off["pages"]                                     # pages are still listed for the reader
    monkeypatch.setattr("wikitrace.dialogue.retrieve.ROUTING", "expand")
    diag = json.loads(run_query(built, "tiny", question, budget=400, as_json=True))["diagnostics"]
    # both of Ana's threads (the puppy, the cats) are hits, and her page holds them
    assert diag["routing"] == "expand"
    assert diag["expanded_from"] == "entity-ana"
    assert diag["routed_trajectories"] == 2
