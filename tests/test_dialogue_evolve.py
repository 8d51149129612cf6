"""Trajectories that evolve: a later fact that changes an earlier one revises it in the same
trajectory, the earlier claim is deprecated (never deleted) and the packet shows it as such."""

import json
from pathlib import Path

import pytest

from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.extract import Claim, Snapshot
from wikitrace.dialogue.query import run_query
from wikitrace.dialogue.trajectories import Trajectory, apply_claims

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("evolve") / "corpus"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out))
    yield out
    make_writable(out)


def test_a_new_count_revises_the_earlier_claim_in_one_evolving_trajectory(built):
    mem = json.loads((built / "dialogue" / "tiny" / "memory.json").read_text())
    claims = {c["id"]: c for s in mem["snapshots"] for c in s["claims"]}
    old = next(c for c in claims.values() if "2 cats" in c["text"])
    new = next(c for c in claims.values() if "3 cats" in c["text"])
    assert old["status"] == "deprecated" and old["replaced_by"] == new["id"] and new["replaces"] == old["id"]
    # the later session's snapshot joined the earlier thread: one trajectory, two snapshots, two sessions
    assert old["trajectory"] == new["trajectory"]
    traj = next(t for t in mem["trajectories"] if t["id"] == new["trajectory"])
    assert old["snapshot"] in traj["snapshots"] and new["snapshot"] in traj["snapshots"]
    assert {"op": "REVISE", "claim": new["id"], "previous": old["id"], "snapshot": new["snapshot"],
            "status": "active"} in traj["ops"]
    page = (built / "dialogue" / "tiny" / "trajectories" / f"{traj['id']}.md").read_text()
    assert f"[deprecated] {old['text']}" in page and f"REVISE `{new['id']}` replaces `{old['id']}`" in page


def test_the_packet_shows_the_deprecated_claim_as_deprecated(built):
    data = json.loads(run_query(built, "tiny", "How many cats does Ana have?", budget=120, as_json=True))
    ctx = data["context"]
    assert "[S2:1]" in ctx and 'deprecated claim: "Ana has 2 cats as well."' in ctx
    assert any(c["text"] == "Ana has 2 cats as well." and c["replaced_by"]
               for c in data["diagnostics"]["deprecated"])
    md = run_query(built, "tiny", "How many cats does Ana have?", budget=120)
    assert 'deprecated claim: "Ana has 2 cats as well."' in md


def _snap(sid, msg, claims):
    s = Snapshot(id=sid, session="1", date=None, timestamp=None, message_ids=[msg], speakers=["Ana"],
                 summary="", context="", keywords=[])
    s.claims = [Claim(id=f"{sid}-c{i}", text=t, status="active", source_message_ids=[msg], supporting_quote=t,
                      snapshot=sid, subject="Ana", speaker="Ana") for i, t in enumerate(claims)]
    return s


def test_two_sentences_of_one_message_are_never_a_revision():
    T = Trajectory(id="traj-0001")
    counts = apply_claims(T, _snap("s1", "D1:1", ["Ana has 2 cats.", "Ana has 3 cats at her mother's house."]))
    assert counts["REVISE"] == 0 and all(c.status == "active" for c in T.claims)


def test_a_later_exchange_with_an_unrelated_number_is_an_add():
    T = Trajectory(id="traj-0001")
    apply_claims(T, _snap("s1", "D1:1", ["Ana has 2 cats."]))
    counts = apply_claims(T, _snap("s2", "D2:1", ["Ana ran 5 miles on 3 May."]))
    assert counts["REVISE"] == 0 and counts["ADD"] == 1
    counts = apply_claims(T, _snap("s3", "D3:1", ["Ana has 4 cats now."]))
    assert counts["REVISE"] == 1 and T.claims[0].status == "deprecated"


def test_an_entity_page_states_only_that_entitys_facts(built):
    wiki = built / "dialogue" / "tiny" / "wiki"
    ana, ben = (wiki / "entity-ana.md").read_text(), (wiki / "entity-ben.md").read_text()
    facts = lambda page: page.split("## Key Facts", 1)[1].split("## ", 1)[0]  # noqa: E731
    assert "Ana has 2 cats" not in facts(ana)          # deprecated: not a key fact
    assert "Ana work as a nurse" in facts(ana) and "Ben " not in facts(ana)
    assert "Ben's cello teacher says" in facts(ben) and "Ana " not in facts(ben)
    # a thread is filed under everyone it is about: the exchanges holding both people's news are on
    # both pages (each page's key facts stay its own, above); the one about Ben and the puppy is not Ana's
    assert set(_linked(ana)) & set(_linked(ben))
    assert set(_linked(ben)) - set(_linked(ana))


def _linked(page: str) -> list[str]:
    import re
    return re.findall(r"\(\.\./trajectories/(traj-\d+)\.md\)", page)


def test_dense_vectors_do_not_change_how_trajectories_evolve():
    """The endpoint path hands build_trajectories dense snapshot vectors (here the hashed-lexical
    embedder stands in for them): continuation and revisions are decided as offline."""
    from wikitrace.dialogue.extract import build_snapshots
    from wikitrace.dialogue.load import load_inputs
    from wikitrace.dialogue.text import EMBED_DIM, IdfVectors, hashed_embedding
    from wikitrace.dialogue.trajectories import build_trajectories, feature_text

    d = load_inputs([FIXTURE])[0]
    runs = []
    for dense in (False, True):
        snaps, _ = build_snapshots(d)
        lexical = IdfVectors([feature_text(s, d.speakers) for s in snaps])
        dense_row = lambda v: [v.get(i, 0.0) for i in range(EMBED_DIM)]  # noqa: E731
        vectors = {s.id: dense_row(hashed_embedding(" ".join(c.text for c in s.claims))) for s in snaps} \
            if dense else None
        trajs, stats = build_trajectories(snaps, d.speakers, vectors=vectors, lexical=lexical)
        runs.append(([T.snapshots for T in trajs], stats["REVISE"], [s.match["score"] for s in snaps]))
    assert runs[0] == runs[1]
    assert runs[1][1] == 1 and any(len(x) > 1 for x in runs[1][0])
    assert set(runs[1][2]) == {"claim-continuity"}


def test_a_plan_carried_out_in_a_later_exchange_revises_the_plan():
    T = Trajectory(id="traj-0001")
    apply_claims(T, _snap("s1", "D1:1", ["Ana is looking for a flat near the Leeds canal."]))
    counts = apply_claims(T, _snap("s2", "D4:2", ["Ana found a flat near the Leeds canal, finally."]))
    assert counts["REVISE"] == 1 and T.claims[0].status == "deprecated"
    assert T.claims[0].replaced_by == T.claims[1].id
    # encouragement that merely repeats a resolve is not a change of fact
    T = Trajectory(id="traj-0002")
    apply_claims(T, _snap("s1", "D1:1", ["Ana is gonna keep chasing her dreams."]))
    counts = apply_claims(T, _snap("s2", "D5:1", ["Ana is gonna keep going and never quit."]))
    assert counts["REVISE"] == 0


def test_the_next_stage_of_a_plan_joins_its_trajectory_and_revises_it():
    """Sessions apart and worded differently, a later stage of the same person's plan continues the
    plan's thread (the continuity bonus) and deprecates the earlier stage."""
    from wikitrace.dialogue.text import IdfVectors
    from wikitrace.dialogue.trajectories import build_trajectories, feature_text

    snaps = [_snap("s1", "D1:1", ["Ana applied to the city orchestra in spring."]),
             _snap("s2", "D2:1", ["Ana bought a red bike for the commute."]),
             _snap("s3", "D3:1", ["Ana passed the city orchestra audition on Monday!"])]
    lexical = IdfVectors([feature_text(s, ["Ana", "Ben"]) for s in snaps])
    trajs, stats = build_trajectories(snaps, ["Ana", "Ben"], lexical=lexical)
    plan = next(T for T in trajs if "s1" in T.snapshots)
    assert plan.snapshots == ["s1", "s3"] and stats["REVISE"] == 1
    assert plan.claims[0].status == "deprecated" and plan.claims[0].replaced_by == plan.claims[1].id
