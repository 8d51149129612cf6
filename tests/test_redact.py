"""Input safety: secret redaction and path-safe names."""

from __future__ import annotations

import base64
import copy
import json
import os
import re
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikitrace.redact import Redactor, redact_run, redact_text
from wikitrace.runs.model import Outcome, Run, Task, Turn
from wikitrace.safe_names import contained, safe_join, safe_name

# Fake credentials of the right shapes (none of them is real).
OPENAI = "sk-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" + "T3BlbkFJ" + "a1b2c3d4e5f6g7h8"
OPENAI_PROJ = "sk-proj-" + "Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
ANTHROPIC = "sk-ant-api03-" + "Q" * 40 + "-abcDEF_123"
AWS_ID = "AKIA" + "IOSFODNN7EXAMPLE"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
GITHUB = "ghp_" + "1234567890abcdefghijABCDEFGHIJ123456"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7YxZ3e1Qm0s3lq0G4s2Vd9u0\nQ2y5Vb8Xk1n9wJtq3ZL1rA==\n"
       "-----END RSA PRIVATE KEY-----")


def untag(text: str) -> str:
    """The text with each placeholder's tag dropped (``#3f2a``), for comparing shapes."""
    return re.sub(r"(\[REDACTED:[a-z-]+)#[0-9a-f]{4}\]", r"\1]", text)


@pytest.mark.parametrize("text, kind, expected", [
    (f"key={OPENAI}.", "openai-key", "key=[REDACTED:openai-key]."),
    (f"OPENAI_API_KEY={OPENAI_PROJ}", "openai-key", "OPENAI_API_KEY=[REDACTED:openai-key]"),
    (f"export ANTHROPIC_API_KEY='{ANTHROPIC}'", "anthropic-key", "export ANTHROPIC_API_KEY='[REDACTED:anthropic-key]'"),
    (f"id {AWS_ID} ok", "aws-access-key-id", "id [REDACTED:aws-access-key-id] ok"),
    (f"aws_secret_access_key = {AWS_SECRET}", "aws-secret-key", "aws_secret_access_key = [REDACTED:aws-secret-key]"),
    (f'{{"SecretAccessKey": "{AWS_SECRET}"}}', "aws-secret-key", '{"SecretAccessKey": "[REDACTED:aws-secret-key]"}'),
    (f"git clone https://{GITHUB}@github.com/x/y", "github-token", "git clone https://[REDACTED:github-token]@github.com/x/y"),
    (f"token: {GITHUB_PAT}", "github-token", "token: [REDACTED:github-token]"),
    (f"SLACK={SLACK}", "slack-token", "SLACK=[REDACTED:slack-token]"),
    ("Authorization: Bearer abc.DEF-123_xyz~", "bearer-token", "Authorization: Bearer [REDACTED:bearer-token]"),
    ('{"authorization": "Basic dXNlcjpwYXNz"}', "bearer-token", '{"authorization": "Basic [REDACTED:bearer-token]"}'),
    (f"cookie {JWT} end", "jwt", "cookie [REDACTED:jwt] end"),
    (f"key:\n{PEM}\nafter", "private-key", "key:\n[REDACTED:private-key]\nafter"),
    ("postgres://admin:s3cr3t!@db.internal:5432/app", "url-password", "postgres://admin:[REDACTED:url-password]@db.internal:5432/app"),
])
def test_builtin_shapes(text, kind, expected):
    out, counts = redact_text(text)
    assert untag(out) == expected
    assert counts == {kind: 1}


def test_cut_off_private_key_block_is_still_redacted():
    out, counts = redact_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmU\nAAAAB3NzaC1yc2E")
    assert untag(out) == "[REDACTED:private-key]" and counts == {"private-key": 1}


def test_bearer_with_jwt_is_one_secret():
    out, counts = redact_text(f"Authorization: Bearer {JWT}")
    assert untag(out) == "Authorization: Bearer [REDACTED:bearer-token]" and counts == {"bearer-token": 1}


@pytest.mark.parametrize("text", [
    "the task-sk-1 is done", "ask-questions-first", "AKIA is a prefix", "http://example.com:8080/path",
    "user@example.com", "see https://docs.python.org/3/", "xox-box", "ghp_short", "eyJ.not.jwt",
    "Bearer of bad news", "a secret garden", "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
])
def test_ordinary_text_is_left_alone(text):
    assert redact_text(text) == (text, {})


def test_user_patterns_and_secret_group():
    r = Redactor([r"ACME-\d{6}", r"pin=(?P<secret>\d{4})"])
    counts = Counter()
    assert untag(r.text("order ACME-123456 pin=1234", counts)) == "order [REDACTED:custom] pin=[REDACTED:custom]"
    assert counts == {"custom": 2}
    with pytest.raises(ValueError, match="not a valid regular expression"):
        Redactor(["(unclosed"])


def _run() -> Run:
    task = Task(id="t1", instruction=f"deploy with {GITHUB}", initial_observation="env AWS " + AWS_ID,
                metadata={"env": {"OPENAI_API_KEY": OPENAI}, "list": [JWT, 3, None]})
    turns = [
        Turn(turn=0, type="message", role="user", content="go"),
        Turn(turn=1, type="function_call", name="http", arguments={"headers": {"Authorization": f"Bearer {OPENAI_PROJ}"},
                                                                   "url": "https://bob:pw1234@api.example.com"},
             reasoning="use the key " + SLACK, result="ok " + ANTHROPIC, extra={"note": [AWS_ID]}),
        Turn(turn=2, type="episode_over", extra={"ended_by": "agent"}),
    ]
    original = {"raw": [{"text": PEM}], GITHUB: "as a key"}
    return Run(run_id="r1", task=task, turns=turns, outcome=Outcome(True, 1, ended_by="agent"),
               source={"format": "x", "original": original})


def test_redact_run_walks_everything():
    run = _run()
    counts = redact_run(run)
    dumped = json.dumps([run.task.__dict__, [t.to_record() for t in run.turns], run.source], default=str)
    for secret in (GITHUB, AWS_ID, OPENAI, JWT, OPENAI_PROJ, "pw1234", SLACK, ANTHROPIC, "MIIEowIBAAKCAQEA"):
        assert secret not in dumped
    assert counts == {"github-token": 2, "aws-access-key-id": 2, "openai-key": 2, "jwt": 1,
                      "url-password": 1, "slack-token": 1, "anthropic-key": 1, "private-key": 1}
    # header name and value are separate strings here: the key shape is what is caught
    assert untag(run.turns[1].arguments["headers"]["Authorization"]) == "Bearer [REDACTED:openai-key]"
    assert run.run_id == "r1" and run.task.id == "t1"


def test_redaction_is_deterministic_and_idempotent():
    a, b = _run(), _run()
    assert redact_run(a) == redact_run(b)
    assert [t.to_record() for t in a.turns] == [t.to_record() for t in b.turns]
    before = copy.deepcopy([t.to_record() for t in a.turns])
    assert redact_run(a) == {}
    assert [t.to_record() for t in a.turns] == before


def test_deeply_nested_values_do_not_recurse():
    value: object = OPENAI
    for _ in range(5000):
        value = [value]
    out = Redactor().value(value)
    for _ in range(5000):
        out = out[0]
    assert untag(out) == "[REDACTED:openai-key]"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_redact_never_fails_and_is_stable(text):
    once, _ = redact_text(text)
    twice, counts = redact_text(once)
    assert twice == once and not counts


# -- safe names ---------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    "../../x", "/etc/passwd", "..", ".", "", "a\x00b", "a/b\\c", "line\nbreak", "\u202eevil.txt", "CON", "nul.txt",
    "  ", "...", "x" * 10_000, "é" * 5_000, "日本語のラン", "run id with spaces", "-", "\ud800bad",
])
def test_safe_name_properties(raw):
    name = safe_name(raw)
    assert name and ".." not in name and not name.startswith(".")
    assert "/" not in name and "\\" not in name and "\x00" not in name
    assert all(ch.isprintable() for ch in name)
    assert len(name.encode("utf-8")) <= 120
    assert safe_name(raw) == name  # deterministic


def test_safe_name_keeps_good_names_and_separates_changed_ones():
    assert safe_name("task-0-trial-3") == "task-0-trial-3"
    assert safe_name("django__django-11099") == "django__django-11099"
    assert safe_name("日本語のラン") == "日本語のラン"
    assert safe_name("a/b") != safe_name("a_b") and safe_name("a/b").startswith("a_b-")
    long_a, long_b = safe_name("x" * 10_000), safe_name("x" * 9_999 + "y")
    assert long_a != long_b and len(long_a) <= 120
    assert safe_name("../../etc/passwd").startswith("____etc_passwd-")
    assert safe_name("v1.2") == "v1.2" and safe_name("a..b").startswith("a_b-")


@given(st.text(max_size=400))
@settings(max_examples=500, deadline=None)
def test_safe_name_fuzz(raw):
    name = safe_name(raw)
    assert name and ".." not in name and not name.startswith(".") and "/" not in name and "\x00" not in name
    assert all(ch.isprintable() for ch in name)
    assert len(name.encode("utf-8")) <= 120


def test_contained(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "raw").mkdir()
    assert contained(root, "raw/step-0001")
    assert contained(root, root / "raw")
    assert contained(root, ".")
    assert not contained(root, "../x")
    assert not contained(root, "raw/../../x")
    assert not contained(root, "/etc/passwd")
    os.symlink("/etc", root / "link")
    assert not contained(root, "link/passwd")
    assert safe_join(root, "raw", "../../x") == root / "raw" / safe_name("../../x")
    assert contained(root, safe_join(root, "/etc/passwd"))


# -- decoded views: escapes and URL encoding around and inside secrets ----------------------

_NOISE = st.text(alphabet="ab \\%nu0123456789ABCDEFfx\"'=:/\n", max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_NOISE, after=_NOISE, secret=st.sampled_from([OPENAI, OPENAI_PROJ, ANTHROPIC, AWS_ID, GITHUB, SLACK, JWT]),
       form=st.sampled_from(["plain", "escaped", "url", "double"]))
def test_encoded_secrets_are_found_among_random_escapes(before, after, secret, form):
    from urllib.parse import quote

    written = {"plain": secret, "escaped": "\\n" + secret + "\\n", "url": "key%3D" + quote(secret, safe=""),
               "double": json.dumps(json.dumps({"k": "x\n" + secret}))}[form]
    text = before + " " + written + " " + after
    once, counts = redact_text(text)
    assert secret not in once and quote(secret, safe="") not in once
    assert sum(counts.values()) >= 1
    twice, again = redact_text(once)
    assert twice == once and not again


# -- shapes and contexts added for provider keys, encodings and split keys -------------------

STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
GOOGLE = "AIza" + "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"


@pytest.mark.parametrize("text, kind, expected", [
    (f"STRIPE_KEY={STRIPE}", "stripe-key", "STRIPE_KEY=[REDACTED:stripe-key]"),
    ("rk_test_" + "Zy9Xw8Vu7Ts6Rq5Po4Nm3Lk2", "stripe-key", "[REDACTED:stripe-key]"),
    (f"maps?key={GOOGLE}&q=1", "google-api-key", "maps?key=[REDACTED:google-api-key]&q=1"),
    (f"HF_TOKEN={HF}", "api-token", "HF_TOKEN=[REDACTED:api-token]"),
    ("npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "api-token", "[REDACTED:api-token]"),
    ("https://hooks.slack.com/services/T0ABCDEFG/B0ABCDEFG/aBcDeFgHiJkLmNoPqRsTuVwX", "slack-webhook",
     "https://hooks.slack.com/services/[REDACTED:slack-webhook]"),
    (f"$ aws configure set aws_secret_access_key {AWS_SECRET}", "aws-secret-key",
     "$ aws configure set aws_secret_access_key [REDACTED:aws-secret-key]"),
    ("redis://:hunter2hunter2@cache:6379/0", "url-password", "redis://:[REDACTED:url-password]@cache:6379/0"),
    (repr([line + "\n" for line in PEM.split("\n")]), "private-key", "['[REDACTED:private-key]\\n']"),
    ("&#115;&#107;&#45;proj-" + OPENAI_PROJ[8:], "openai-key", "[REDACTED:openai-key]"),
    ("postgres:\\/\\/admin:s3cr3t!@db:5432/app", "url-password", "postgres:\\/\\/admin:[REDACTED:url-password]@db:5432/app"),
    ("\\u0067hp_" + GITHUB[4:], "github-token", "[REDACTED:github-token]"),
    ("key " + base64.b64encode(GITHUB.encode()).decode() + " end", "github-token", "key [REDACTED:github-token] end"),
    ("key " + STRIPE.encode().hex() + " end", "stripe-key", "key [REDACTED:stripe-key] end"),
    ("pem " + base64.b64encode(PEM.encode()).decode(), "private-key", "pem [REDACTED:private-key]"),
])
def test_provider_shapes_and_contexts(text, kind, expected):
    out, counts = redact_text(text)
    assert untag(out) == expected
    assert counts == {kind: 1}


@pytest.mark.parametrize("text", [
    "task_live_report and sk_live_ alone", "AIza is short", "hf_model_name", "SG.Some.Thing", "dapi request",
    "aGVsbG8gd29ybGQgdGhpcyBpcyBqdXN0IHRleHQ=", "6869207468657265", "&amp; &lt;b&gt; &#169; 2024",
    "call_sumFTucxMOyQNc2iud9dAHdy", "4a02dcbc0e3ace4d398988d60a33e73afad4d201",
])
def test_ordinary_text_near_the_new_shapes_is_left_alone(text):
    assert redact_text(text) == (text, {})


def test_a_key_cut_over_two_fields_loses_both_halves_and_words_stay():
    r = Redactor()
    value = {"first": "export KEY=" + OPENAI_PROJ[:30], "rest": OPENAI_PROJ[30:] + "Zq9", "next": "Understood, thanks"}
    out = r.value(value)
    assert untag(out["first"]) == "export KEY=[REDACTED:openai-key]"
    assert untag(out["rest"]) == "[REDACTED:openai-key]" and out["next"] == "Understood, thanks"
    assert r.value(["token " + GITHUB, "Booked flight AB12 for you"])[1] == "Booked flight AB12 for you"


def test_a_run_whose_only_secret_is_escaped_is_still_searched():
    for written_key in ("\\u0067hp_" + GITHUB[4:], "postgres:\\/\\/u:pw12345678@db", "sk\\u002dproj-" + OPENAI_PROJ[8:],
                        "\\u0041KIA" + AWS_ID[4:], "&#103;hp_" + GITHUB[4:]):
        run = Run(run_id="r", task=Task(id="t", instruction="go"), outcome=Outcome(True, 1),
                  turns=[Turn(turn=0, type="message", role="user", content=f"cfg {written_key} end")])
        assert sum(redact_run(run).values()) == 1, written_key
        assert "[REDACTED:" in run.turns[0].content


def test_runs_sharing_a_long_clean_text_are_each_still_searched():
    """One redactor reads a whole input: the long system prompt every run repeats is tested
    once, but a secret beside it, inside a copy of it, or only in the kept record is found."""
    r = Redactor()
    prompt = "# Shop Agent Policy\n" + "Help the customer politely and check the order first. " * 40

    def run(prompt_text: str, reply: str, original: dict) -> Run:
        return Run(run_id="r", task=Task(id="t", instruction="go"), outcome=Outcome(True, 1),
                   turns=[Turn(turn=0, type="message", role="system", content=prompt_text),
                          Turn(turn=1, type="message", role="assistant", content=reply)],
                   source={"format": "x", "original": original})

    assert r.run(run(prompt, "done", {"traj": [prompt, "done"]})) == {}
    beside = run(prompt, f"use {GITHUB}", {"traj": [prompt, f"use {GITHUB}"]})
    assert r.run(beside) == {"github-token": 2} and GITHUB not in beside.turns[1].content
    inside = run(prompt + GITHUB, "done", {"traj": [prompt + GITHUB, "done"]})
    assert r.run(inside) == {"github-token": 2} and GITHUB not in inside.turns[0].content
    only_kept = run(prompt, "done", {"traj": [prompt, "done"], "env": {"token": OPENAI}})
    assert r.run(only_kept) == {"openai-key": 1} and OPENAI not in json.dumps(only_kept.source)


def test_the_run_screen_finds_every_trigger_word_of_the_rules():
    """The screen tests a whole run for the rules' trigger words in few scans (words sharing a
    first character in one); a word lost on the way would let its secrets through unredacted."""
    from wikitrace import redact_rules

    screen = Redactor()._screen
    cased = set(screen._plain) | set(screen._enc_plain)
    uncased = set(screen._lower) | set(screen._enc_lower) | set(redact_rules.ENCODED_TRIGGERS)
    assert len(cased) > 10 and len(uncased) > 10
    for word in cased:
        assert screen._holds_trigger(json.dumps(["an ordinary line", f"x {word} y"])), word
    for word in uncased:
        assert screen._holds_trigger(json.dumps(["an ordinary line", f"x {word.upper()} y"])), word
    assert not screen._holds_trigger(json.dumps(["an ordinary line", "and another"]))
