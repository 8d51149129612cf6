"""Answer-level scores on LoCoMo: a reader model answers each question from three contexts and
is scored the way the field scores dialogue memories.

Contexts, all rendered by the same packer (``wikitrace.dialogue.packet``) so a token is a token:
(a) ``wikitrace``: the evidence packet of ``retrieve`` at ``--budget`` whitespace tokens;
(b) ``bm25``: flat BM25 over messages, packed to the same budget;
(c) ``full``: the whole conversation (no budget).

Scores per category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop): token F1 against the
gold answer (LoCoMo style: lower case, punctuation and articles dropped, words stemmed; for
multi-hop the gold is split at commas and each part takes its best-matching predicted part), and
an LLM-judge score (a second call grades the answer against the gold one: 1 or 0), with a control:
the judge also grades, for each question, the next question's gold answer, and the share of those
it accepts says whether its scores mean anything. Tokens: the
mean context size and the model tokens spent (prompt + completion, as the endpoint reports).
Both ask for plain text (one line, or one word for the judge): a small local model breaks JSON far
more often than a one-line answer. A model fault (after the gateway's retries) or an empty or
unreadable reply counts as an empty answer in ``failures``, with the faults' reasons - the run
never stops on it. All answers of a method come before any grade, so a server that keeps the last
prompt's prefix (llama.cpp) reads the whole conversation once for all questions.

    python benchmarks/locomo_qa.py --data ../shared/data/locomo-dev/conv-26.json \
        --base-url http://127.0.0.1:8080/v1 --model M [--judge-model M2] [--budget 1000] [--limit 50]
"""

from __future__ import annotations

import argparse
import json
import re
import string
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wikitrace.dialogue.bm25 import BM25  # noqa: E402
from wikitrace.dialogue.build import compile_sample, render_sample  # noqa: E402
from wikitrace.dialogue.load import load_inputs  # noqa: E402
from wikitrace.dialogue.packet import count_tokens, pack_context  # noqa: E402
from wikitrace.dialogue.loaded_index import prepare_files  # noqa: E402
from wikitrace.dialogue.retrieve import retrieve  # noqa: E402
from wikitrace.dialogue.text import stem, tokens  # noqa: E402

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
METHODS = ("wikitrace", "bm25", "full")
READER = ("You answer questions about a long conversation between two people, using only the "
          "excerpts below (each line: [id] speaker: text, grouped under session dates).\n\n"
          "{context}\n\nQuestion: {question}\n"
          "Answer in as few words as possible (a name, a date, a short phrase or a short list), "
          "on one line, with nothing else. If the excerpts do not say, answer: unknown")
JUDGE = ("Grade an answer to a question about a conversation.\nQuestion: {question}\n"
         "Gold answer: {gold}\nGiven answer: {answer}\n"
         "The given answer is correct if it states the same fact as the gold answer (wording, "
         "date format or extra detail do not matter; a vaguer or different fact is wrong). "
         "Reply with one word: CORRECT or WRONG.")
_VERDICT = re.compile(r"\b(correct|wrong|incorrect|true|false)\b", re.I)
_LEAD_IN = re.compile(r"^\s*(?:final\s+)?answer\s*[:\-]\s*", re.I)
ANSWER_WORDS = 40  # a reader that rambles is cut here: LoCoMo answers are short
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")      # closed class, as in LoCoMo's own normaliser


def normalise(text: str) -> list[str]:
    text = str(text).lower().replace(",", " ")
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    return [stem(w) for w in _ARTICLES.sub(" ", text).split()]


def token_f1(pred: str, gold: str) -> float:
    p, g = normalise(pred), normalise(gold)
    common = sum(min(p.count(w), g.count(w)) for w in set(p) & set(g))
    if not p or not g or not common:
        return 0.0
    prec, rec = common / len(p), common / len(g)
    return 2 * prec * rec / (prec + rec)


def locomo_f1(pred: str, gold: str, category: int) -> float:
    """Multi-hop golds list several items: each gold part scores its best predicted part."""
    if category == 1:
        golds = [g for g in str(gold).split(",") if g.strip()]
        preds = [p for p in str(pred).split(",") if p.strip()] or [""]
        return sum(max(token_f1(p, g) for p in preds) for g in golds) / max(1, len(golds))
    return token_f1(pred, gold)


class Reader:
    """OpenAI-compatible chat calls in plain text (small local models break JSON more often than
    they break a one-line answer); faults are retried by the gateway, then counted per kind."""

    def __init__(self, base_url: str, model: str, judge_model: str | None = None, timeout: float = 300.0):
        from wikitrace.llm.client import Client
        from wikitrace.llm.config import resolve

        self.client = Client(resolve(model, base_url), timeout=timeout)
        self.model, self.judge_model = model, judge_model or model
        self.tokens = {"reader": 0, "judge": 0}
        self.failures = {"reader": 0, "judge": 0}
        self.reasons: dict[str, int] = {}

    def _ask(self, role: str, model: str, prompt: str) -> str | None:
        from wikitrace.llm.client import ModelFault

        try:
            got = self.client.execute([{"role": "user", "content": prompt}], mode="text", model=model,
                                      temperature=0)
        except ModelFault as fault:
            self.failures[role] += 1
            reason = f"{role}: {fault.reason[:80]}"
            self.reasons[reason] = self.reasons.get(reason, 0) + 1
            return None
        self.tokens[role] += got.usage.get("prompt_tokens", 0) + got.usage.get("completion_tokens", 0)
        return got.text

    def answer(self, context: str, question: str) -> str:
        """The first non-empty line, without an "Answer:" lead-in or quotes; empty is a failure."""
        text = self._ask("reader", self.model, READER.format(context=context, question=question))
        line = next((ln for ln in (text or "").splitlines() if ln.strip()), "")
        line = _LEAD_IN.sub("", line).strip().strip('"\'`*').strip()
        if text is not None and not line:
            self.failures["reader"] += 1
        return " ".join(line.split()[:ANSWER_WORDS])

    def judge(self, question: str, gold: str, answer: str) -> int:
        if not answer.strip():
            return 0
        text = self._ask("judge", self.judge_model, JUDGE.format(question=question, gold=gold, answer=answer))
        verdict = _VERDICT.search(text or "")
        if text is not None and verdict is None:
            self.failures["judge"] += 1
        return 1 if verdict and verdict.group(1).lower() in ("correct", "true") else 0


def contexts(li, msgs: list, flat: BM25, question: str, budget: int) -> dict[str, str]:
    pk = retrieve(li, question, budget=budget)
    order = [i for i, _ in flat.ranked(tokens(question))]
    return {"wikitrace": pk.context,
            "bm25": pack_context(order, msgs, budget).text,
            "full": pack_context(list(range(len(msgs))), msgs, 10 ** 9).text}


def run(data: Path, reader: Reader, budget: int = 1000, limit: int | None = None,
        methods=METHODS, progress=None) -> dict:
    """Every answer of a method first, then every grade: a server that keeps the last prompt's
    prefix (llama.cpp) then reads the whole conversation once for all its questions."""
    scores: dict = {}
    ctx_tokens: dict = {m: [] for m in methods}
    spent: dict = {m: 0 for m in methods}
    control: list[int] = []
    for d in load_inputs([data]):
        li = prepare_files(render_sample(compile_sample(d)))
        msgs = li.raw["messages"]
        flat = BM25([tokens(f"{m[1]} {m[4]}") for m in msgs])
        qas = [qa for qa in d.qa if qa.get("category") in CATEGORIES and "answer" in qa][:limit]
        asked = [contexts(li, msgs, flat, str(qa["question"]), budget) for qa in qas]
        for name in methods:
            answers = []
            for i, (qa, ctx) in enumerate(zip(qas, asked), 1):
                before = reader.tokens["reader"]
                answers.append(reader.answer(ctx[name], str(qa["question"])))
                spent[name] += reader.tokens["reader"] - before
                ctx_tokens[name].append(count_tokens(ctx[name]))
                if progress:
                    progress(f"{d.sample_id} {name} answer {i}/{len(qas)}")
            for i, (qa, ans) in enumerate(zip(qas, answers), 1):
                cat, gold = qa["category"], str(qa["answer"])
                before = reader.tokens["judge"]
                ok = reader.judge(str(qa["question"]), gold, ans)
                spent[name] += reader.tokens["judge"] - before
                scores.setdefault((name, cat), []).append((locomo_f1(ans, gold, cat), ok))
                if progress:
                    progress(f"{name} grade {i}/{len(qas)}")
        # The judge's control: each gold answer given to the next question, which is wrong unless two
        # questions share a gold. A judge that accepts these cannot tell right from wrong.
        for qa, other in zip(qas, qas[1:] + qas[:1]):
            if normalise(other["answer"]) != normalise(qa["answer"]):
                control.append(reader.judge(str(qa["question"]), str(qa["answer"]), str(other["answer"])))
    table = {}
    for name in methods:
        row = {}
        allv = []
        for c, cname in CATEGORIES.items():
            v = scores.get((name, c), [])
            allv += v
            row[cname] = ({"f1": round(sum(f for f, _ in v) / len(v), 4), "judge": round(sum(j for _, j in v) / len(v), 4),
                           "n": len(v)} if v else None)
        row["overall"] = ({"f1": round(sum(f for f, _ in allv) / len(allv), 4),
                           "judge": round(sum(j for _, j in allv) / len(allv), 4), "n": len(allv)} if allv else None)
        row["context_tokens_mean"] = round(sum(ctx_tokens[name]) / len(ctx_tokens[name]), 1) if ctx_tokens[name] else 0
        row["model_tokens"] = spent[name]
        table[name] = row
    return {"data": str(data), "budget": budget, "model": reader.model, "judge_model": reader.judge_model,
            "methods": table, "failures": dict(reader.failures),
            "judge_control": {"wrong_answers": len(control), "accepted": sum(control)}, "fault_reasons": dict(sorted(reader.reasons.items()))}


def print_table(res: dict) -> None:
    print(f"reader {res['model']}, judge {res['judge_model']}, budget {res['budget']} (wikitrace, bm25); "
          f"failures {res['failures']}")
    ctl = res["judge_control"]
    print(f"judge control: accepted {ctl['accepted']} of {ctl['wrong_answers']} answers known to be wrong"
          " (another question's gold answer)")
    for reason, n in res.get("fault_reasons", {}).items():
        print(f"  {n} x {reason}")
    cols = list(CATEGORIES.values()) + ["overall"]
    print(f"{'method':<10}" + "".join(f"{c:>22}" for c in cols) + f"{'ctx tok':>9}{'model tok':>11}")
    for name, row in res["methods"].items():
        cells = "".join(f"{'-':>22}" if row[c] is None else
                        f"{'F1 %.3f J %.3f n%d' % (row[c]['f1'], row[c]['judge'], row[c]['n']):>22}" for c in cols)
        print(f"{name:<10}{cells}{row['context_tokens_mean']:>9}{row['model_tokens']:>11}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="LoCoMo file or folder")
    ap.add_argument("--base-url", required=True, help="OpenAI-compatible /v1 endpoint")
    ap.add_argument("--model", required=True, help="reader model")
    ap.add_argument("--judge-model", help="grading model (default: the reader)")
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--limit", type=int, help="questions per conversation")
    ap.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated, of {', '.join(METHODS)}")
    ap.add_argument("--json", type=Path, help="write the results here")
    args = ap.parse_args(argv)
    methods = tuple(m for m in args.methods.split(",") if m)
    if not methods or set(methods) - set(METHODS):
        ap.error(f"--methods: choose from {', '.join(METHODS)}")
    res = run(args.data, Reader(args.base_url, args.model, args.judge_model), args.budget, args.limit, methods,
              progress=lambda line: print(f"\r{line:<60}", end="", file=sys.stderr, flush=True))
    print(file=sys.stderr)
    print_table(res)
    if args.json:
        args.json.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
