"""Against real LoCoMo conversations (skipped when ../shared/data/locomo-dev is absent)."""

from pathlib import Path

import pytest

from wikitrace.dialogue.build import compile_sample, render_sample
from wikitrace.dialogue.load import load_inputs
from wikitrace.dialogue.loaded_index import prepare_files
from wikitrace.dialogue.retrieve import retrieve

from helpers import SHARED_DATA

DATA = SHARED_DATA / "locomo-dev"
pytestmark = pytest.mark.skipif(not (DATA / "conv-30.json").exists(),
                                reason=f"LoCoMo dev data not found at {DATA}")


def test_conv30_compiles_and_retrieves_gold_evidence():
    (d,) = load_inputs([DATA / "conv-30.json"])
    assert d.sample_id == "conv-30" and len(d.messages) > 300
    mem = compile_sample(d)
    assert mem["stats"]["audit_orphans"] == []
    assert all(len(p["trajectories"]) <= 6 for p in mem["pages"] if p["type"] != "index")
    claims = [c for s in mem["snapshots"] for c in s["claims"]]
    ids = {m["id"] for m in mem["messages"]}
    assert claims and all(set(c["source_message_ids"]) <= ids for c in claims)
    li = prepare_files(render_sample(mem))
    recalls = []
    for qa in d.qa:
        if qa["category"] in (1, 2, 3, 4):
            pk = retrieve(li, qa["question"], budget=1000)
            got = set(pk.refs())
            gold = [e for e in qa["evidence"] if e in ids]
            if gold:
                recalls.append(sum(e in got for e in gold) / len(gold))
    assert sum(recalls) / len(recalls) >= 0.7
