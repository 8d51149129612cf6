"""The dialogue LLM paths against the loopback fake OpenAI server: structured claims (validated,
with recorded fallback), CONTINUE/NEW match, transition judge, answer synthesis (refs subset,
abstention, exactly one reflection retry), and failures (malformed JSON, 429, timeout)."""

import json
from pathlib import Path

from fake_openai import error, reply, slow

from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues, compile_sample
from wikitrace.dialogue.check import check_dialogue
from wikitrace.dialogue.llm import StructuredLLM, answer, from_options
from wikitrace.dialogue.load import load_inputs
from wikitrace.dialogue.query import run_query
from wikitrace.dialogue.loaded_index import prepare_files
from wikitrace.dialogue.retrieve import retrieve
from wikitrace.dialogue.build import render_sample
from wikitrace.llm.config import resolve

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"


def _task(body) -> str:
    return body["messages"][0]["content"].split("\n", 1)[0]


def _llm(fake, **kw):
    return StructuredLLM(resolve(None, fake.base_url), timeout=kw.pop("timeout", 10.0),
                         max_retries=kw.pop("max_retries", 0))


def _index():
    (d,) = load_inputs([FIXTURE])
    return prepare_files(render_sample(compile_sample(d)))


# ------------------------------------------------------------------ compile-time paths

def test_structured_claims_validated_and_fallback_recorded(fake_openai):
    """Good claims are kept, invalid ones dropped and counted; an exchange whose answer is
    malformed or entirely invalid falls back to the offline extractor, and says so."""
    def respond(body):
        task = _task(body)
        prompt = body["messages"][0]["content"]
        if task.startswith("TASK: extract"):
            if "S1:1" in prompt:
                return {"claims": [
                    {"text": "Ana adopted a puppy named Biscuit.", "status": "active",
                     "source_message_ids": ["S1:1"], "supporting_quote": "I adopted a puppy named Biscuit"},
                    {"text": "Ana owns a parrot.", "status": "active", "source_message_ids": ["S9:9"],
                     "supporting_quote": "parrot"},                               # unknown id
                    {"text": "Ben plays cello.", "status": "active", "source_message_ids": ["S1:2"],
                     "supporting_quote": "I play the cello every day"},            # quote not in source
                    {"text": "Ben met Oprah.", "status": "active", "source_message_ids": ["S1:2"],
                     "supporting_quote": "I started learning the cello"},          # invented name
                    {"text": "Ben is learning cello.", "status": "certain", "source_message_ids": ["S1:2"],
                     "supporting_quote": "I started learning the cello"},          # bad status
                ]}
            if "S1:3" in prompt:
                return "this is not JSON at all"
            return {"claims": [{"text": "", "source_message_ids": [], "supporting_quote": ""}]}
        if task.startswith("TASK: does a new memory"):
            return {"decision": "NEW", "selected_candidate": None, "rationale": "different thread"}
        return {"decision": "ADD", "selected_previous": None}
    fake_openai.respond_with(respond)
    (d,) = load_inputs([FIXTURE])
    llm = _llm(fake_openai)
    mem = compile_sample(d, llm)
    snaps = mem["snapshots"]
    assert snaps[0]["extractor"] == "llm"
    assert [c["text"] for c in snaps[0]["claims"]] == ["Ana adopted a puppy named Biscuit."]
    dropped = mem["stats"]["extraction"]["dropped"]
    assert dropped["unknown_ids"] >= 1 and dropped["ungrounded_quote"] >= 1
    assert dropped["ungrounded_terms"] >= 1 and dropped["bad_status"] >= 1
    assert snaps[1]["extractor"] == "offline-fallback"             # malformed JSON
    assert snaps[1]["claims"], "the offline extractor filled in"
    assert all(s["extractor"] in ("llm", "offline-fallback") for s in snaps)
    assert mem["stats"]["extraction"]["fallback_exchanges"] >= 1
    assert mem["stats"]["extraction"]["invalid_fallback_exchanges"] >= 1
    assert llm.stats["invalid"] >= 1
    assert mem["stats"]["extractor"] == "llm"
    # every trajectory decision was NEW by the model
    assert all(s["match"]["decision"] == "NEW" for s in snaps)
    assert any(s["match"]["decided_by"] == "llm" for s in snaps)


def test_match_continue_and_revise_judge(fake_openai):
    def respond(body):
        task = _task(body)
        prompt = body["messages"][0]["content"]
        if task.startswith("TASK: extract"):
            return "{}"                                    # missing 'claims': offline fallback
        if task.startswith("TASK: does a new memory"):
            return {"decision": "CONTINUE", "selected_candidate": "T1", "rationale": "same thread"}
        if task.startswith("TASK: does a new claim") and "3 cats" in prompt:
            return {"decision": "REVISE", "selected_previous": "C1"}
        return {"decision": "ADD", "selected_previous": None}
    fake_openai.respond_with(respond)
    (d,) = load_inputs([FIXTURE])
    mem = compile_sample(d, _llm(fake_openai))
    assert len(mem["trajectories"]) == 1                   # the model continued every time
    ops = [o["op"] for t in mem["trajectories"] for o in t["ops"]]
    assert "REVISE" in ops
    claims = {c["id"]: c for s in mem["snapshots"] for c in s["claims"]}
    rev = [c for c in claims.values() if c["replaces"]]
    assert rev and all(claims[c["replaces"]]["status"] == "deprecated" for c in rev)


def test_failures_never_crash_compile(fake_openai, tmp_path):
    """429s, a timeout and garbage all fall back to the deterministic path."""
    fake_openai.script(error(429, retry_after=0), slow(3.0), reply("[1, 2"), error(500))
    fake_openai.respond_with(lambda body: error(429, retry_after=0))
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=0.5, max_retries=0)
    out = tmp_path / "c"
    res = compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out, llm=llm))
    st = res["samples"][0]["stats"]
    assert st["extraction"]["llm_exchanges"] == 0
    assert st["extraction"]["fallback_exchanges"] == st["extraction"]["exchanges"]
    assert llm.stats["failures"] >= 3 and llm.stats["invalid"] >= 1
    assert check_dialogue(out) == []
    make_writable(out)


# ------------------------------------------------------------------ answer synthesis

def test_synthesis_refs_are_a_subset_of_retrieved(fake_openai):
    li = _index()
    fake_openai.script(reply({"can_answer": True, "answer_type": "fact", "final_answer": "the cello",
                              "supporting_facts": ["Ben started learning the cello"],
                              "supporting_source_refs": ["S1:2", "S9:9", {"bad": 1}], "abstain_reason": ""}))
    pk = retrieve(li, "What instrument is Ben learning?", budget=200)
    assert "S1:2" in pk.refs() and "S9:9" not in pk.refs()
    out = answer(_llm(fake_openai), pk, lambda terms: retrieve(li, "x", budget=200))
    assert out["can_answer"] and out["final_answer"] == "the cello"
    assert out["supporting_source_refs"] == ["S1:2"]
    assert "S9:9" in out["dropped_refs"]
    assert out["mode"] == "llm" and fake_openai.calls == 1       # no reflection when answered


def test_abstains_when_no_ref_supports_and_reflects_exactly_once(fake_openai):
    li = _index()
    retries = []

    def retry(terms):
        retries.append(terms)
        return retrieve(li, "What instrument is Ben learning? " + " ".join(terms), budget=200)
    fake_openai.script(
        reply({"can_answer": True, "final_answer": "a violin", "supporting_source_refs": ["X:1"]}),
        reply({"search_terms": ["cello", "instrument"]}),
        reply({"can_answer": False, "final_answer": "", "supporting_source_refs": [],
               "abstain_reason": "not in the evidence"}),
        reply({"search_terms": ["never", "used"]}),            # a second reflection must not happen
    )
    pk = retrieve(li, "What instrument is Ben learning?", budget=200)
    out = answer(_llm(fake_openai), pk, retry)
    assert out["can_answer"] is False and out["final_answer"] == ""
    assert out["abstain_reason"] == "not in the evidence"
    assert out["mode"] == "llm-reflected" and out["reflection"] == ["cello", "instrument"]
    assert retries == [["cello", "instrument"]]
    assert fake_openai.calls == 3
    tasks = [_task(b) for b in fake_openai.bodies]
    assert sum(t.startswith("TASK: the evidence") for t in tasks) == 1


def test_reflection_retry_can_recover(fake_openai):
    li = _index()
    fake_openai.script(
        reply({"can_answer": False, "supporting_source_refs": [], "abstain_reason": "missing"}),
        reply({"search_terms": ["Norway"]}),
        reply({"can_answer": True, "final_answer": "Norway", "supporting_source_refs": ["S1:4"]}),
    )
    pk = retrieve(li, "Where did Ben live before?", budget=30)
    out = answer(_llm(fake_openai), pk,
                 lambda t: retrieve(li, "Where did Ben live before? " + " ".join(t), budget=60))
    assert out["can_answer"] and out["supporting_source_refs"] == ["S1:4"]
    assert out["mode"] == "llm-reflected"


def test_synthesis_failures_never_crash(fake_openai):
    li = _index()
    pk = retrieve(li, "What instrument is Ben learning?", budget=200)
    llm = StructuredLLM(resolve(None, fake_openai.base_url), timeout=0.5, max_retries=0)
    for resp in (error(429, retry_after=0), slow(3.0), reply("not json {"), reply({"can_answer": "yes"})):
        fake_openai.reset()
        fake_openai.script(resp)
        out = answer(llm, pk, lambda t: pk)
        assert out["can_answer"] is False and out["final_answer"] == ""
        assert out["mode"] == "llm-failed"
    # reflection answers garbage: the first abstention stands
    fake_openai.reset()
    fake_openai.script(reply({"can_answer": False, "supporting_source_refs": []}), reply("{oops"))
    out = answer(llm, pk, lambda t: pk)
    assert out["can_answer"] is False and out["mode"] == "llm"


def test_run_query_with_llm_end_to_end(fake_openai, tmp_path):
    out = tmp_path / "c"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out))
    fake_openai.script(reply({"can_answer": True, "answer_type": "fact", "final_answer": "Biscuit",
                              "supporting_source_refs": ["S1:1"]}))
    llm = from_options(None, None)                 # OPENAI_BASE_URL points at the fake
    assert llm is not None
    data = json.loads(run_query(out, "tiny", "What is the name of Ana's puppy?", budget=80, as_json=True, llm=llm))
    assert data["mode"] == "evidence+answer"
    assert data["answer"]["final_answer"] == "Biscuit" and data["answer"]["supporting_source_refs"] == ["S1:1"]
    assert fake_openai.response_modes() == ["json_object"]
    make_writable(out)
