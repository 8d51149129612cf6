"""Wiki pages split and titled by what the claims about their entity are about (noun phrases),
never by rare message words; small-talk threads make no page of their own."""

from pathlib import Path

from wikitrace.dialogue.build import compile_sample
from wikitrace.dialogue.load import load_inputs
from wikitrace.dialogue.phrases import noun_phrases, verbs_of
from wikitrace.dialogue.wiki import TrajInfo, audit, plan_pages

NAMES = frozenset({"ines", "tomasz"})


def texts(claim, verbs=frozenset()):
    return [p.text for p in noun_phrases(claim, NAMES, verbs)]


def test_noun_phrases_are_the_things_a_claim_is_about():
    assert texts("Ines went to a pottery workshop two days ago and it was lovely.") == ["pottery workshop"]
    assert texts("Tomasz adopted a puppy named Biscuit from the shelter.") == ["puppy", "shelter"]
    assert texts("Ines had a great time, and Tomasz's hard work paid off.") == []
    assert texts("Ines shared a photo: a photo of a ceramic bowl on a table.") == ["ceramic bowl", "table"]
    # a word the dialogue uses as a verb ends a phrase: "support means" is not one noun
    verbs = verbs_of(["It means a lot to Ines.", "Tomasz keeps bees."], NAMES)
    assert "means" in verbs
    assert texts("Tomasz's support means a lot.", verbs) == ["support"]
    assert texts("Ines's allotment garden keeps growing.", verbs) == ["allotment garden"]


def _info(tid, owner, claims, keywords=()):
    return TrajInfo(id=tid, entities=[], participants=[owner], families=[], keywords=list(keywords),
                    exact_terms=[], counts=[], emb={}, owners=[owner] if claims else [],
                    facts={owner: claims} if claims else {}, has_claims=bool(claims))


def _dialogue():
    dog = ["Ines adopted a rescue dog in March.", "Ines walks the rescue dog by the canal every morning.",
           "The rescue dog chewed Ines's slippers.", "Ines took the rescue dog to the vet for a check-up."]
    clay = ["Ines signed up for a pottery class.", "Ines fired her first bowl in the pottery class.",
            "The pottery class moved to Thursday evenings.", "Ines sold two mugs from the pottery class."]
    # message words shared across the two threads would pull them together if pages were keyed by them
    infos = [_info(f"traj-{i:04d}", "Ines", [c], keywords=["weekend", f"odd{i % 2}"]) for i, c in
             enumerate(dog + clay)]
    infos.append(_info("traj-0100", "Ines", []))          # "thanks! / you too!" - no claim at all
    return infos


def test_a_large_entity_splits_by_the_things_its_claims_are_about():
    pages, stats = plan_pages(_dialogue())
    ines = [p for p in pages if p.type == "entity" and p.entities == ["Ines"]]
    assert len(ines) == 2
    by_title = {p.title: set(p.trajectories) for p in ines}
    assert by_title == {"Ines: rescue dog": {f"traj-{i:04d}" for i in range(4)},
                        "Ines: pottery class": {f"traj-{i:04d}" for i in range(4, 8)}}


def test_claimless_threads_are_on_the_index_only_and_nothing_else_is_orphaned():
    infos = _dialogue()
    pages, stats = plan_pages(infos)
    assert all("traj-0100" not in p.trajectories for p in pages if p.type != "index")
    assert "traj-0100" in pages[0].trajectories
    assert not any(p.rescue for p in pages)
    assert audit(pages, [t.id for t in infos if t.has_claims]) == []


def test_plan_is_deterministic():
    a, _ = plan_pages(_dialogue())
    b, _ = plan_pages(list(reversed(_dialogue())))
    assert [(p.slug, p.title, p.trajectories) for p in a] == [(p.slug, p.title, p.trajectories) for p in b]


FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "two-threads.jsonl"


def test_compiled_pages_follow_what_the_claims_are_about():
    """Ines talks about a rescue dog and a pottery class on alternate days, with small talk around
    them: her pages are one per thing, titled by it, and the small talk makes no page."""
    mem = compile_sample(load_inputs([FIXTURE])[0])
    claims = {c["id"]: c for s in mem["snapshots"] for c in s["claims"]}
    text = {t["id"]: " ".join(claims[c]["text"] for c in t["claims"]) for t in mem["trajectories"]}
    dog = {t for t, x in text.items() if "dog" in x and "pottery" not in x}
    clay = {t for t, x in text.items() if "pottery" in x and "dog" not in x}
    small_talk = {t["id"] for t in mem["trajectories"] if not t["claims"]}
    assert len(dog) >= 4 and len(clay) >= 4 and small_talk
    ines = {p["title"]: set(p["trajectories"]) for p in mem["pages"] if p["entities"] == ["Ines"]}
    assert clay <= ines["Ines: pottery class"]
    # known limit: "the rescue dog slept all evening" - "slept" never follows a subject in this
    # dialogue, so it is not known as a verb and that thread's phrase is "rescue dog slept"
    assert len(dog - ines["Ines: rescue dog"]) <= 1 and not ines["Ines: rescue dog"] & clay
    for p in mem["pages"][1:]:
        assert not set(p["trajectories"]) & small_talk, p["title"]
        if p["type"] == "entity" and p["shard"]:    # a shard's title phrases are in its own claims
            said = " ".join(text[t] for t in p["trajectories"]).lower()
            assert all(ph in said for ph in p["title"].split(": ", 1)[1].lower().split(", ")), p["title"]
    assert mem["stats"]["audit_orphans"] == []
