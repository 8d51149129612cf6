"""benchmarks/locomo_qa.py against the loopback fake: three contexts, LoCoMo token F1, an LLM
judge, tokens spent, and model faults counted instead of crashing the run."""

import importlib.util
import json
import re
from pathlib import Path

from fake_openai import error, reply

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
        return reply("CORRECT" if gold.strip().lower() == given.strip().lower() else "Wrong.")
    question = re.search(r"Question: (.*)\n", text).group(1)
    return reply(f"Answer: {ANSWERS[question]}\n(from the excerpts)")


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


def test_faults_and_empty_replies_are_counted_not_fatal(fake_openai):
    fake_openai.respond_with(lambda body: reply("   \n"))
    res = qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("wikitrace",))
    assert res["failures"]["reader"] == 2                 # two questions, both unreadable
    assert res["methods"]["wikitrace"]["overall"] == {"f1": 0.0, "judge": 0.0, "n": 2}

    fake_openai.respond_with(lambda body: error(500, "model crashed"))
    res = qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("wikitrace",))
    assert res["failures"]["reader"] == 2
    assert any("HTTP 500" in reason for reason in res["fault_reasons"])


def test_every_answer_of_a_method_comes_before_its_grades(fake_openai):
    fake_openai.respond_with(_scripted)
    qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("full", "wikitrace"))
    kinds = ["grade" if _prompt(json.loads(r["body"]) if isinstance(r["body"], str) else r["body"])
             .startswith("Grade") else "answer" for r in fake_openai.requests]
    assert kinds == ["answer", "answer", "grade", "grade"] * 2 + ["grade", "grade"]  # then the judge's control


def test_a_judge_that_accepts_anything_shows_in_its_control(fake_openai):
    fake_openai.respond_with(_scripted)
    fair = qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("wikitrace",))
    assert fair["judge_control"] == {"wrong_answers": 2, "accepted": 0}
    fake_openai.respond_with(lambda body: reply("CORRECT" if _prompt(body).startswith("Grade") else "two"))
    lax = qa.run(MINI, qa.Reader(fake_openai.base_url, "m"), budget=200, methods=("wikitrace",))
    assert lax["judge_control"] == {"wrong_answers": 2, "accepted": 2}


def test_answer_lines_are_cleaned_and_cut():
    class Canned(qa.Reader):
        def __init__(self, text):
            self.text, self.failures, self.reasons = text, {"reader": 0, "judge": 0}, {}
            self.model = self.judge_model = "m"

        def _ask(self, role, model, prompt):
            return self.text

    assert Canned('\n  Answer: "Ingrid"\nbecause ...').answer("ctx", "q") == "Ingrid"
    assert len(Canned("word " * 100).answer("ctx", "q").split()) == qa.ANSWER_WORDS
    assert Canned("I think it is WRONG").judge("q", "a", "b") == 0
    assert Canned("correct.").judge("q", "a", "b") == 1


def test_locomo_normalisation():
    assert qa.token_f1("The Leeds marathon!", "leeds marathon") == 1.0
    assert qa.locomo_f1("painting, pottery", "pottery, painting, camping", 1) == 2 / 3
    assert qa.token_f1("", "x") == 0.0
