"""Change over time on a dialogue written for the purpose (tests/fixtures/dialogue/lives-change.json):
two friends' lives move on - a plan carried out, a job given up, a new pet - while their shared
photos show changing counts and they restate the same encouragement."""

from pathlib import Path

from wikitrace.dialogue.build import compile_sample
from wikitrace.dialogue.load import load_inputs

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "lives-change.json"


def _transitions():
    mem = compile_sample(load_inputs([FIXTURE])[0])
    claims = {c["id"]: c for s in mem["snapshots"] for c in s["claims"]}
    ops = [(o["op"], claims[o["previous"]], claims[o["claim"]]) for t in mem["trajectories"] for o in t["ops"]
           if o["op"] in ("REVISE", "DEPRECATE")]
    return ops, claims


def test_real_changes_revise_or_deprecate_the_old_claim():
    ops, _ = _transitions()
    seen = {(op, old["source_message_ids"][0], new["source_message_ids"][0]) for op, old, new in ops}
    assert ("REVISE", "D1:3", "D3:1") in seen          # planning a half marathon -> finished it
    assert ("REVISE", "D1:1", "D3:3") in seen          # 2 cats -> 3 cats
    assert ("DEPRECATE", "D1:2", "D2:1") in seen       # works as a barista -> quit the barista job
    for _, old, new in ops:
        assert old["status"] == "deprecated" and old["replaced_by"] == new["id"]


def test_photo_captions_and_restated_encouragement_never_change_a_fact():
    ops, claims = _transitions()
    for _, old, new in ops:
        for c in (old, new):
            assert not c["supporting_quote"].startswith("[shares a photo:")
            assert "chasing those goals" not in c["text"]
    photos = [c for c in claims.values() if c["supporting_quote"].startswith("[shares a photo:")]
    assert len(photos) == 3 and all(c["status"] == "active" for c in photos)
