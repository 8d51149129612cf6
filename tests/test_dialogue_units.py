"""Unit tests of the dialogue memory pieces on small hand-written inputs."""

import json
import math
from datetime import date

from wikitrace.dialogue.bm25 import BM25
from wikitrace.dialogue.extract import Claim, Snapshot, validate_claims
from wikitrace.dialogue.load import Message, load_file
from wikitrace.dialogue.question import query_shape
from wikitrace.dialogue.ranking import rrf
from wikitrace.dialogue.dates import resolve_relative
from wikitrace.dialogue.text import hashed_embedding, stem
from wikitrace.dialogue.trajectories import (DELTA, Trajectory, apply_claims, build_trajectories, g_det,
                                             prefilter, snapshot_features)
from wikitrace.dialogue.wiki import MAX_PAGE, TrajInfo, audit, plan_pages, shard

SPK = ["Ana", "Ben"]


def snap(sid, text, ents=(), terms=(), facets=(), claims=(), speakers=("Ana",)):
    s = Snapshot(id=sid, session="1", date="2024-03-03", timestamp=None, message_ids=[f"{sid}-m1"], speakers=list(speakers),
                 summary=text, context="", keywords=[], entities=list(ents), exact_terms=list(terms),
                 facets=list(facets))
    s.claims = [Claim(id=f"{sid}-c{i}", text=t, status=st, source_message_ids=[f"{sid}-m1"], supporting_quote=t,
                      snapshot=sid, subject="Ana", speaker="Ana") for i, (t, st) in enumerate(claims)]
    return s


def traj_from(s):
    T = Trajectory(id="traj-0001")
    f = snapshot_features(s, SPK)
    T.snapshots.append(s.id)
    T.K, T.E, T.broad, T.X, T.F = set(f.K), set(f.E), set(f.broad), set(f.X), set(f.F)
    T.emb_sum = T.emb_latest = f.emb
    return T


def test_g_det_weights_bonuses_and_penalties():
    a = snap("s1", "Ana adopted a puppy named Biscuit", ents=["Biscuit"], terms=["Biscuit"],
             facets=["pet", "pet=puppy"])
    T = traj_from(a)
    same = snapshot_features(a, SPK)
    score, d = g_det(same, T, detail=True)
    # identical: cosines 1, Jaccard 1, entity 0.08, facet value 0.06, continuity 3 specific terms x 0.04
    assert math.isclose(score, 0.60 + 0.20 + 0.20 + 0.08 + 0.06 + 0.12, abs_tol=1e-3)
    many = snap("s9", "Ana adopted a puppy named Biscuit", ents=["Biscuit"], facets=["pet=puppy"],
                terms=["Biscuit", "2 cats", "Halifax", "last week", "Lakeside"])
    assert g_det(snapshot_features(many, SPK), traj_from(many), detail=True)[1]["b_cont"] == 0.14   # capped
    assert d["penalty"] == 0.0 and score >= DELTA
    other = snapshot_features(snap("s2", "Ana talked about her nursing shift schedule", speakers=("Ana",)), SPK)
    s2, d2 = g_det(other, T, detail=True)
    assert s2 < DELTA
    assert d2["penalty"] == 0.10            # shares only the broad participant entity


def test_prefilter_keeps_overlapping_and_caps():
    base = snap("s0", "cello lessons orchestra")
    trajs = []
    for i in range(40):
        T = traj_from(snap(f"t{i}", "cello lessons" if i % 2 == 0 else "garden roses"))
        T.id = f"traj-{i:04d}"
        trajs.append(T)
    kept = prefilter(snapshot_features(base, SPK), trajs, cap=32)
    assert kept and all("cello" in T.K or "lesson" in T.K for T in kept) and len(kept) == 20
    none = prefilter(snapshot_features(snap("x", "zebra xylophone"), SPK), trajs[:5])
    assert len(none) == 5                    # nothing overlaps: all open trajectories allowed


def test_claim_lifecycle_add_revise_deprecate_append_only():
    T = Trajectory(id="traj-0001")
    s1 = snap("s1", "", claims=[("Ana has 2 cats.", "active"), ("Ana works as a nurse.", "active")])
    apply_claims(T, s1)
    assert [o["op"] for o in T.ops] == ["ADD", "ADD"]
    s2 = snap("s2", "", claims=[("Ana has 3 cats.", "active")])
    apply_claims(T, s2)
    assert T.ops[-1]["op"] == "REVISE" and T.ops[-1]["previous"] == "s1-c0"
    old = next(c for c in T.claims if c.id == "s1-c0")
    assert old.status == "deprecated" and old.replaced_by == "s2-c0" and old.snapshot == "s1"
    assert T.update_links == [["s1", "s2"]]
    s3 = snap("s3", "", claims=[("Ana works as a nurse.", "deprecated")])
    apply_claims(T, s3)
    assert T.ops[-1]["op"] == "DEPRECATE"
    assert len(T.claims) == 4                # nothing removed
    s4 = snap("s4", "", claims=[("Ana has 3 cats.", "active")])
    counts = apply_claims(T, s4)
    assert counts["duplicate"] == 1 and len(T.claims) == 4


def test_build_trajectories_continue_and_new():
    a = snap("s1", "Ana adopted a puppy named Biscuit", ents=["Biscuit"], terms=["Biscuit"], facets=["pet=puppy"])
    b = snap("s2", "Ana adopted a puppy named Biscuit", ents=["Biscuit"], terms=["Biscuit"], facets=["pet=puppy"])
    c = snap("s3", "Ben studies cello music", speakers=("Ben",))
    trajs, stats = build_trajectories([a, b, c], SPK)
    assert [t.snapshots for t in trajs] == [["s1", "s2"], ["s3"]]
    assert b.match["decision"] == "CONTINUE" and c.match["decision"] == "NEW"


def test_shard_sizes_and_audit():
    embs = {f"t{i:02d}": hashed_embedding(f"topic {i % 3} item{i}") for i in range(14)}
    parts = shard(sorted(embs), embs)
    assert sum(len(p) for p in parts) == 14 and all(len(p) <= MAX_PAGE for p in parts)
    assert len(parts) == math.ceil(14 / 4)
    infos = [TrajInfo(id=f"traj-{i:04d}", entities=["Biscuit"] if i < 3 else [], participants=["Ana"],
                      families=["pet"] if i < 9 else [], keywords=[f"k{i}"], exact_terms=[], counts=[],
                      emb=hashed_embedding(f"x{i}")) for i in range(12)]
    pages, st = plan_pages(infos)
    assert pages[0].type == "index" and len(pages[0].trajectories) == 12
    assert all(len(p.trajectories) <= MAX_PAGE for p in pages[1:])
    assert audit(pages, [i.id for i in infos]) == []
    assert st["rescue_pages"] == 0           # every trajectory has an owner: Ana's pages cover all
    ana = [t for p in pages if p.type == "entity" and p.entities == ["Ana"] for t in p.trajectories]
    assert len(ana) > MAX_PAGE and sorted(ana) == [i.id for i in infos]   # split, each on one page
    # a trajectory about nobody (no claims, no speaker) is reachable through a rescue page
    orphan = TrajInfo(id="traj-0099", entities=[], participants=[], families=[], keywords=["k99"],
                      exact_terms=[], counts=[], emb={})
    pages, st = plan_pages(infos + [orphan])
    assert st["rescue_pages"] == 1 and audit(pages, [i.id for i in infos] + ["traj-0099"]) == []


def test_shards_group_similar_trajectories_and_owners_never_share_a_page():
    words = {0: "kiln clay pottery glaze", 1: "marathon running shoes race", 2: "violin concert music"}
    infos = [TrajInfo(id=f"traj-{i:04d}", entities=[], participants=["Ana", "Ben"], families=["activity"],
                      keywords=words[i % 3].split() + [f"w{i}"], exact_terms=[], counts=[], emb={},
                      owners=["Ana"] if i < 12 else ["Ben"]) for i in range(15)]
    pages, _ = plan_pages(infos)
    ana = [p for p in pages if p.type == "entity" and p.entities == ["Ana"]]
    assert len(ana) == 3 and all(len(p.trajectories) == 4 for p in ana)
    for p in ana:     # one topic per shard, and none of Ben's trajectories
        assert len({int(t[-4:]) % 3 for t in p.trajectories}) == 1
        assert all(int(t[-4:]) < 12 for t in p.trajectories)
    assert {p.title.split(": ", 1)[1].split(", ")[0] for p in ana} <= set(" ".join(words.values()).split())


def test_rrf_formula():
    fused = rrf(["a", "b", "c"], ["b", "a"])
    assert math.isclose(fused["a"], 1 / 61 + 1 / 62)
    assert math.isclose(fused["c"], 1 / 63)
    assert max(fused, key=fused.get) in ("a", "b")


def test_bm25_matches_formula():
    docs = [["cat", "dog"], ["cat", "cat", "fish"], ["bird"]]
    bm = BM25(docs)
    n, avg = 3, 2.0
    idf = math.log(1 + (n - 2 + 0.5) / (2 + 0.5))
    tf, dl = 2, 3
    want = idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * dl / avg))
    assert math.isclose(bm.scores(["cat"])[1], want)
    again = BM25.from_json(json.loads(json.dumps(bm.to_json())))
    assert again.ranked(["cat", "fish"]) == bm.ranked(["cat", "fish"])


def test_relative_dates_and_stem():
    got = dict(resolve_relative("I went yesterday, and last week too, two days ago", date(2023, 5, 8)))
    assert got["yesterday"] == "7 May 2023"
    assert got["last week"] == "the week before 8 May 2023"
    assert got["two days ago"] == "6 May 2023"
    assert stem("researching") == stem("research") == stem("researched")


def test_validate_claims_drops_and_counts():
    by_id = {"m1": Message(id="m1", speaker="Ana", text="I adopted a puppy named Biscuit.", session="1")}
    raw = [{"text": "Ana adopted a puppy named Biscuit.", "source_message_ids": ["m1"],
            "supporting_quote": "adopted a puppy named Biscuit"},
           {"text": "x", "source_message_ids": ["m9"], "supporting_quote": "x"},
           {"text": "", "source_message_ids": ["m1"], "supporting_quote": "puppy"},
           {"text": "Ana adopted a kitten.", "source_message_ids": ["m1"], "supporting_quote": "a kitten"},
           {"text": "Ana adopted Rex.", "source_message_ids": ["m1"], "supporting_quote": "adopted a puppy"}]
    kept, dropped = validate_claims(raw, by_id, ["Ana", "Ben"])
    assert len(kept) == 1
    assert dropped == {"unknown_ids": 1, "empty": 1, "ungrounded_quote": 1, "ungrounded_terms": 1, "bad_status": 0}


def test_query_shape():
    s = query_shape("How many cats does Ana have?", SPK)
    assert s["count"] and s["coverage"] and s["speakers"] == ["Ana"]
    s = query_shape("What do Ana and Ben both like?", SPK)
    assert s["multi_entity"] and s["comparison"]
    assert not query_shape("Where does Ana work?", SPK)["coverage"]


def test_locomo_layouts_and_captions(tmp_path):
    conv = {"speaker_a": "Ana", "speaker_b": "Ben", "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ana", "dia_id": "D1:1", "text": "Look!", "blip_caption": "a photo of a dog"},
                          {"speaker": "Ben", "dia_id": "D1:2", "text": "Cute."}],
            "session_1_summary": "ignored", "qa": [{"question": "q", "answer": "a", "evidence": ["D1:1"], "category": 4}]}
    flat = tmp_path / "conv-1.json"
    flat.write_text(json.dumps(conv))
    nested = tmp_path / "locomo10.json"
    nested.write_text(json.dumps([{"sample_id": "conv-1", "conversation": {k: v for k, v in conv.items() if k != "qa"},
                                   "qa": conv["qa"]}]))
    for path in (flat, nested):
        (d,) = load_file(path)
        assert d.sample_id == "conv-1" and [m.id for m in d.messages] == ["D1:1", "D1:2"]
        assert d.messages[0].text == "Look! [shares a photo: a photo of a dog]"
        assert d.messages[0].date == "2023-05-08" and d.qa[0]["evidence"] == ["D1:1"]


def test_idf_of_the_dialogue_so_far_is_untouched_by_a_later_session():
    """Weights read while replaying session 1 are the same whether or not session 2 exists:
    what makes `dialogue add` append instead of recompute."""
    from wikitrace.dialogue.text import IdfVectors

    s1 = ["pottery class with my sister", "the pottery kiln broke", "sister moved to Boston"]
    s2 = ["pottery again today", "pottery pottery everywhere", "a new kiln for the studio"]
    short = IdfVectors(s1, stages=["1"] * 3)
    long = IdfVectors(s1 + s2, stages=["1"] * 3 + ["2"] * 3)
    short.reach(0)
    long.reach(0)
    assert long(s1[1]) == short(s1[1]) and long.n == 3      # session 2 not counted yet
    long.reach(3)
    assert long.n == 6 and long(s1[1]) != short(s1[1])      # once reached, it is
    whole = IdfVectors(s1 + s2)                              # without stages: the whole dialogue at once
    assert whole(s1[1]) == long(s1[1])


def test_pages_plan_with_dense_endpoint_vectors_and_keyword_less_threads():
    """On the embeddings-endpoint path a trajectory's vector is a dense list; a large owner's
    page is still sharded (it once crashed mixing that list with the sparse keyword vectors)."""
    infos = [TrajInfo(id=f"traj-{i:04d}", entities=[], participants=["Ana"], families=[],
                      keywords=[] if i % 3 == 0 else [f"word{i % 4}", "studio"], exact_terms=[], counts=[],
                      emb=[math.cos(i), math.sin(i)], owners=["Ana"])
             for i in range(1, 3 * MAX_PAGE)]
    pages, _ = plan_pages(infos)
    placed = [t for p in pages if p.type != "index" for t in p.trajectories]
    assert sorted(set(placed)) == sorted(t.id for t in infos)
    assert all(len(p.trajectories) <= MAX_PAGE for p in pages if p.type == "entity")
