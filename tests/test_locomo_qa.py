"""benchmarks/locomo_qa.py against the loopback fake: three contexts, LoCoMo token F1, an LLM
judge, tokens spent, and model faults counted instead of crashing the run."""

import importlib.util
import json
import re
from pathlib import Path

from fake_openai import reply

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "fixtures" / "dialogue" / "locomo-mini.json"
spec = importlib.util.spec_from_file_location("locomo_qa", ROOT / "benchmarks" / "locomo_qa.py")
qa = importlib.util.module_from_spec(spec)
spec.loader.exec_module(qa)

ANSWERS = {"How many cats does Maya have?": "two", "Who teaches Tomas the cello?": "Ingrid"}


def _prompt(body):
    return body["messages"][0]["content"]


def _scripted(body):
    text = _prompt(body)
    if text.startswith("Grade an answer"):
        gold = re.search(r"Gold answer: (.*)\n", text).group(1)
        given = re.search(r"Given answer: (.*)\n", text).group(1)
        return reply({"correct": gold.strip().lower() == given.strip().lower()})
    question = re.search(r"Question: (.*)\n", text).group(1)
    return reply({"answer": ANSWERS[question]})


def test_scores_each_context_by_token_f1_and_judge(fake_openai):
    fake_openai.respond_with(_scripted)
    res = qa.run(MINI, qa.Reader(fake_openai.base_url, "reader-m", "judge-m"), budget=200)
    assert set(res["methods"]) == {"wikitrace", "bm25", "full"}
    for name, row in res["methods"].items():
        assert row["single-hop"] == {"f1": 1.0, "judge": 1.0, "n": 1}          # "Ingrid" == gold
        assert row["multi-hop"]["f1"] == 0.0 and row["multi-hop"]["judge"] == 0.0  # "two" vs "3"
        assert row["model_tokens"] > 0
    assert res["methods"]["wikitrace"]["context_tokens_mean"] <= 200
    assert res["methods"]["full"]["context_tokens_mean"] > res["methods"]["wikitrace"]["context_tokens_mean"]
    judged = [json.loads(r["body"]) if isinstance(r["body"], str) else r["body"] for r in fake_openai.requests]
    assert {b["model"] for b in judged} == {"reader-m", "judge-m"}
    assert res["failures"] == {"reader": 0, "judge": 0}


def test_malformed_replies_are_retried_then_counted_not_fatal(fake_openai):
    fake_openai.respond_with(lambda body: reply("this is not json"))
    res = qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("wikitrace",))
    assert res["failures"]["reader"] == 2                 # two questions, each tried 3 times
    assert fake_openai.calls == 6
    assert res["methods"]["wikitrace"]["overall"]["f1"] == 0.0


def test_locomo_normalisation():
    assert qa.token_f1("The Leeds marathon!", "leeds marathon") == 1.0
    assert qa.locomo_f1("painting, pottery", "pottery, painting, camping", 1) == 2 / 3
    assert qa.token_f1("", "x") == 0.0
