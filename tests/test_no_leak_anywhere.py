"""No secret leaves through any path: every covered kind, written in every context redaction
covers, is planted in run files, file names, dialogue messages, dates and ids, model answers,
endpoint error bodies, batch error lines and agent citations; then every command that reads
them runs (in process, through ``cli.main`` so stdout and stderr go the way a user sees them)
and every byte it leaves is searched: files, caches, request bodies, uploads, stdout, stderr.

Examples are few by default (each is some twenty commands); WIKITRACE_LEAK_EXAMPLES=N runs more.
"""

from __future__ import annotations

import base64
import collections
import json
import os
import random
import string
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fake_batch_api import line_error
from fake_openai import error, reply
from helpers import run_cli as cli
from secret_planting import ALNUM, KINDS, Secret, answer, files_under, make_secret, write_inputs, written

NEW_KINDS = ("stripe-key", "google-api-key", "api-token", "slack-webhook")
ALL_KINDS = KINDS + NEW_KINDS
# Kinds whose whole text starts with a prefix redaction also looks for in base64 and hex.
ENCODABLE = set(ALL_KINDS) - {"jwt", "api-token"}
GENERIC = ("plain", "escaped", "url", "nested", "unicode-escaped", "html")
SPECIAL = {"aws-secret-key": ("aws-configure",), "url-password": ("empty-user",), "private-key": ("python-list",)}


def _r(rng: random.Random, n: int, alphabet: str = ALNUM) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def make(kind: str, rng: random.Random) -> Secret:
    if kind == "stripe-key":
        s = rng.choice(("sk_live_", "rk_live_", "sk_test_")) + _r(rng, 24)
    elif kind == "google-api-key":
        s = "AIza" + _r(rng, 35, ALNUM + "_-")
    elif kind == "api-token":
        s = rng.choice(("hf_" + _r(rng, 34, string.ascii_letters), "npm_" + _r(rng, 36), "glpat-" + _r(rng, 20)))
    elif kind == "slack-webhook":
        body = f"T{_r(rng, 8, string.ascii_uppercase)}/B{_r(rng, 8, string.ascii_uppercase)}/{_r(rng, 24)}"
        return Secret(kind, f"https://hooks.slack.com/services/{body}", [body])
    else:
        return make_secret(kind, rng)
    return Secret(kind, s, [s])


def contexts(kind: str) -> tuple[str, ...]:
    return GENERIC + SPECIAL.get(kind, ()) + (("base64", "hex") if kind in ENCODABLE else ())


def in_context(secret: Secret, context: str) -> tuple[str, list[str]]:
    """(the text written into an input, extra needles that text alone would reveal)."""
    text = secret.text
    if context in ("plain", "escaped", "url", "nested"):
        return written(secret, context), []
    if context == "unicode-escaped":  # the first character as a \\uXXXX escape, written out
        return "cfg \\u%04x%s end" % (ord(text[0]), text[1:]), []
    if context == "html":
        return "<p>" + "".join(f"&#{ord(c)};" for c in text[:3]) + text[3:] + "</p>", []
    if context in ("base64", "hex"):
        enc = base64.b64encode(text.encode()).decode() if context == "base64" else text.encode().hex()
        return f"blob {enc} end", [enc[8:40]]
    if context == "aws-configure":
        return f"$ aws configure set aws_secret_access_key {secret.needles[0]}", []
    if context == "empty-user":
        return f"redis://:{secret.needles[0]}@cache.internal:6379/0", []
    if context == "python-list":
        lines = [line + "\n" for line in text.split("\n")]
        return f"print(f.readlines()) -> {lines!r}", []
    raise ValueError(context)


def needles_of(secrets: list[Secret], extra: list[str]) -> set[str]:
    """Every secret part, and its last 20 characters (an encoded first character hides the start)."""
    out = set(extra)
    for s in secrets:
        for n in s.needles:
            out.update((n, n[-20:]))
    return {n for n in out if len(n) >= 12}


def locomo(block: str, date_key: str, id_key: str) -> dict:
    """A small conversation in LoCoMo's flat shape, with secrets in a message, a date and a dia_id."""
    return {"speaker_a": "Ana", "speaker_b": "Ben",
            "session_1_date_time": "10:00 am on 3 March, 2024",
            "session_1": [
                {"speaker": "Ana", "dia_id": "D1:1", "text": f"I keep the deploy key here: {block}"},
                {"speaker": "Ben", "dia_id": "D1:2", "text": "Thanks, I started learning the cello last week."},
                {"speaker": "Ana", "dia_id": f"D1:3-{id_key}", "text": "I work as a nurse at Lakeside Hospital."}],
            "session_2_date_time": f"4:30 pm on 20 April, 2024 ({date_key})",
            "session_2": [
                {"speaker": "Ben", "dia_id": "D2:1", "text": "I moved from Norway to Toronto in 2019."},
                {"speaker": "Ana", "dia_id": "D2:2", "text": "I now have 3 cats."}],
            "qa": [{"question": "Where did Ben move from?", "answer": "Norway", "evidence": ["D2:1"], "category": 1}]}


def dialogue_model(block: str):
    """The model's side of a dialogue build: it writes the planted text back into every answer."""
    def respond(body):
        prompt = body["messages"][0]["content"]
        task = prompt.split("\n", 1)[0]
        if task.startswith("TASK: extract"):
            if "D1:1" in prompt:
                return {"claims": [{"text": f"Ana keeps the deploy key {block}", "status": "active",
                                    "source_message_ids": ["D1:1"], "supporting_quote": "I keep the deploy key here"}]}
            return {"claims": []}
        if task.startswith("TASK: does a new memory"):
            return {"decision": "NEW", "selected_candidate": None, "rationale": f"new thread {block}"}
        if "search_terms" in prompt:
            return {"search_terms": ["deploy", block]}
        if "can_answer" in prompt:
            return {"can_answer": True, "answer_type": "fact", "final_answer": f"The key is {block}",
                    "supporting_facts": [block], "supporting_source_refs": ["D1:1"], "uncertainties": [block]}
        return {"decision": "ADD", "selected_previous": None}
    return respond


def _path_of(where: str) -> str:
    """A haystack's name grouped by the path it stands for (a corpus, a cache, requests)."""
    for group in ("request", "uploaded batch file"):
        if where.startswith(group):
            return group + "s"
    return where.split("/")[0]


def _outcome_of(body: dict) -> str:
    return "failure" if "failure_causes" in body["messages"][0]["content"] else "success"


EXAMPLES = int(os.environ.get("WIKITRACE_LEAK_EXAMPLES", "1"))


@settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_no_planted_secret_leaves_through_any_path(fake_batch, tmp_path_factory, monkeypatch, seed):
    from wikitrace.compilers import batch as batch_module
    from wikitrace.fsio import make_writable
    from wikitrace.corpus_access import CorpusAccess

    rng = random.Random(seed)
    root = tmp_path_factory.mktemp("leak")
    secrets, lines, kind_of = [], [], {}
    for kind in ALL_KINDS:  # every kind in every context it is covered in, each a new secret
        for context in contexts(kind):
            secret = make(kind, rng)
            text, more = in_context(secret, context)
            secrets.append(secret)
            lines.append(text)
            for n in needles_of([secret], more):
                kind_of[n] = f"{kind}/{context}"
    block = "\n".join(lines)
    one_line = " ".join(line.replace("\n", "\\n") for line in lines)
    name_key = make_secret("github-token", rng)
    id_key, date_key, split_key = make("stripe-key", rng), make_secret("openai-key", rng), make_secret("openai-key", rng)
    for secret, where in ((name_key, "file name"), (id_key, "id"), (date_key, "date/label"), (split_key, "split")):
        for n in needles_of([secret], []):
            kind_of[n] = f"{secret.kind}/{where}"
    wanted = set(kind_of)
    codes: dict[str, int] = {}
    seconds: dict[str, float] = {}

    inp, outcomes = write_inputs(root, block, one_line, name_key.text)
    # A key cut over two fields of one run (the first part keeps its prefix).
    cut = len(split_key.text) // 2 + 4
    record = json.loads((inp / "native.jsonl").read_text().splitlines()[0])
    record["run_id"] = "split-key-run"
    record["task"]["metadata"] = {"key_first": f"export KEY={split_key.text[:cut]}", "key_rest": split_key.text[cut:]}
    (inp / "split.jsonl").write_text(json.dumps(record) + "\n")
    # Three formats and the named copies: every importer is planted in test_secrets_never_leave.py.
    runs_in = [str(inp / "native.jsonl"), str(inp / "chat.json"), str(inp / "split.jsonl"),
               str(inp / "claude_code"), str(inp / "named")]
    out: dict[str, str] = {}

    def run(label: str, *args: str, stdin: str = "") -> int:
        start = time.monotonic()
        code, so, se = cli(*args, stdin=stdin)
        seconds[label] = round(time.monotonic() - start, 1)
        out[f"{label} stdout"], out[f"{label} stderr"] = so, se
        codes[label] = code
        return code

    # -- agent runs: offline, live model, batch, add -----------------------------------------
    run("compile offline", "compile", *runs_in, "-o", str(root / "offline"), "--offline",
        "--outcomes", str(outcomes))
    fake_batch.respond_with(lambda body: reply(json.dumps(answer(_outcome_of(body), block))))
    run("compile llm", "compile", *runs_in, "-o", str(root / "llm"), "--outcomes", str(outcomes),
        "--cache-dir", str(root / "cache-llm"))
    failing = {"n": 0}

    def batch_answer(cid, body):
        failing["n"] += 1
        if failing["n"] == 1:  # one line of the batch's error file quotes the input back
            return line_error("invalid_request", f"could not parse {one_line}")
        return answer(_outcome_of(body), block)
    fake_batch.batch_responder = batch_answer
    real_prefill = batch_module.prefill_cache
    monkeypatch.setattr(batch_module, "prefill_cache",
                        lambda *a, **kw: real_prefill(*a, **{**kw, "poll_interval": 0.001}))
    run("compile batch", "compile", *runs_in, "-o", str(root / "batch"), "--batch", "--outcomes", str(outcomes),
        "--cache-dir", str(root / "cache-batch"), "--timeout", "5")
    fake_batch.respond_with(lambda body: error(400, f"invalid input near {one_line}"))
    run("compile 400", "compile", str(inp / "named"), "-o", str(root / "http400"), "--outcomes", str(outcomes),
        "--cache-dir", str(root / "cache-400"), "--timeout", "5")
    fake_batch.respond_with(lambda body: reply(json.dumps(answer(_outcome_of(body), block))))
    split_twin = root / "add-input" / f"{name_key.text}-one.jsonl"
    split_twin.parent.mkdir()
    split_twin.write_text(json.dumps({**record, "run_id": f"added-{name_key.text}"}) + "\n")
    run("add", "add", str(split_twin), "--corpus", str(root / "offline"), "--outcome", "success", "--offline")
    # -- input errors naming a secret -----------------------------------------------------------
    run("compile missing", "compile", str(root / f"nope-{name_key.text}.jsonl"), "-o", str(root / "none"), "--offline")
    run("add missing", "add", str(root / f"nope-{name_key.text}.jsonl"), "--corpus", str(root / "offline"))
    # -- citations: ids that are secrets, echoed back ---------------------------------------------
    reply_text = f"Done.\n{json.dumps({'R': ['step-0001', split_key.text, one_line], 'I': [id_key.text]})}"
    run("cite parse", "cite", "parse", "-", "--corpus", str(root / "offline"), stdin=reply_text)
    run("cite record", "cite", "record", "-", "--corpus", str(root / "offline"), "--run", f"ep-{id_key.text}",
        "--outcome", "success", "--task", date_key.text, stdin=reply_text)
    out["mcp cite"] = json.dumps(CorpusAccess(root / "offline").cite(reply_text))
    # -- dialogues: offline, model, add, query --------------------------------------------------
    conv = root / "dialogue-input" / f"conv-{name_key.text}.json"
    conv.parent.mkdir()
    conv.write_text(json.dumps(locomo(block, date_key.text, id_key.text)))
    run("dialogue offline", "dialogue", "compile", str(conv), "-o", str(root / "dlg"), "--offline")
    fake_batch.respond_with(dialogue_model(block))
    run("dialogue llm", "dialogue", "compile", str(conv), "-o", str(root / "dlg-llm"))
    session = root / "dialogue-input" / f"more-{name_key.text}.jsonl"
    session.write_text(json.dumps({"speaker": "Ben", "text": f"Here is mine: {block}",
                                   "timestamp": f"9:00 am on 1 May, 2024 {date_key.text}"}) + "\n")
    sample = next(p.name for p in (root / "dlg-llm" / "dialogue").iterdir() if p.is_dir())
    run("dialogue add", "dialogue", "add", str(session), "--corpus", str(root / "dlg-llm"), "--sample", sample)
    run("query", "query", "What is the deploy key?", "--corpus", str(root / "dlg-llm"), "--llm")
    run("query json", "query", "What is the deploy key?", "--corpus", str(root / "dlg-llm"), "--llm", "--json")

    haystacks = {k: v.encode() for k, v in out.items()}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in ("input", "add-input",
                                                                                     "dialogue-input")):
        haystacks.update({f"{folder.name}/{k}": v for k, v in files_under(folder).items()})
    haystacks.update({f"request {i} {r['path']}": json.dumps(r["body"]).encode()
                      for i, r in enumerate(fake_batch.requests)})
    haystacks.update({f"uploaded batch file {i}": data for i, data in enumerate(fake_batch.uploaded_bytes())})
    leaks = sorted({(where, needle) for where, data in haystacks.items()
                    for needle in wanted if needle in data.decode("utf-8", "replace")})
    for folder in root.iterdir():
        make_writable(folder)
    if os.environ.get("WIKITRACE_LEAK_REPORT"):  # a table of leaks by path and kind, for a report
        table = collections.Counter((_path_of(where), kind_of[n]) for where, n in leaks)
        Path(os.environ["WIKITRACE_LEAK_REPORT"]).write_text(json.dumps(
            {"codes": codes, "seconds": seconds, "leaks": [[w, k, c] for (w, k), c in sorted(table.items())]}, indent=1))
    assert leaks == [], f"{len(leaks)} leaks, first: {[(w, kind_of[n]) for w, n in leaks[:10]]}"
    # The paths were taken: a live model answered, a batch ran, the dialogue model wrote claims.
    assert codes["compile offline"] == codes["compile llm"] == 0 and codes["dialogue llm"] == 0
    assert codes["compile missing"] == codes["add missing"] == 2
    assert fake_batch.uploaded_bytes() and len(fake_batch.chat_requests) > 5
    sample_memory = (root / "dlg-llm" / "dialogue" / sample / "memory.json").read_text()
    assert "Ana keeps the deploy key" in sample_memory and "[REDACTED:" in sample_memory
    assert "[REDACTED:" in out["query stdout"] and "[REDACTED:" in out["cite parse stdout"] + out["cite parse stderr"]
