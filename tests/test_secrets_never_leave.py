"""Secrets never leave the reader: planted in every field of every importer's input and in the
model's answers, none is found in anything a build writes or sends."""

from __future__ import annotations

import functools
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from fake_openai import reply
from secret_planting import (EXAMPLES, FIX, FORMS, KEY_STYLES, KINDS, answer, files_under, find_leaks, make_secret,
                             needles, write_inputs, written)
from wikitrace.build import BuildOptions, build
from wikitrace.runs.load import LoadReport, iter_runs

NAME_KINDS = ("github-token", "openai-key", "slack-token", "aws-access-key-id", "jwt", "anthropic-key")


def _outcome_of(body: dict) -> str:
    return "failure" if "failure_causes" in body["messages"][0]["content"] else "success"


@functools.lru_cache(maxsize=1)
def _baseline_runs() -> int:
    """Runs an unplanted copy of the same fixtures builds into (offline)."""
    with tempfile.TemporaryDirectory() as tmp:
        inp, outcomes = write_inputs(Path(tmp), None, None, None)
        return build(BuildOptions(inputs=[inp], out=Path(tmp) / "corpus", offline=True, outcomes=outcomes)).runs


# No shrinking: each example is three builds; the failing example is printed as generated.
@pytest.mark.slow
@settings(max_examples=3, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1),
       forms=st.lists(st.sampled_from(FORMS), min_size=len(KINDS), max_size=len(KINDS)),
       key_style=st.sampled_from(KEY_STYLES),
       name_kind=st.sampled_from(NAME_KINDS))
def test_planted_secrets_never_reach_the_corpus_cache_or_model(fake_batch, seed, forms, key_style, name_kind):
    rng = random.Random(seed)
    secrets = [make_secret(kind, rng, key_style) for kind in KINDS]
    block = "\n".join(written(s, f) for s, f in zip(secrets, forms))
    # Text fields of line-based formats (ReAct) hold no line break: the key goes in observations only.
    one_line = " ".join(written(s, f).replace("\n", "\\n") for s, f in zip(secrets, forms) if s.kind != "private-key")
    name_secret = make_secret(name_kind, rng)
    wanted = needles(secrets + [name_secret])

    def live(body):
        return reply(json.dumps(answer(_outcome_of(body), block)))

    fake_batch.reset()
    fake_batch.files.clear()
    fake_batch.respond_with(live)
    fake_batch.batch_responder = lambda cid, body: answer(_outcome_of(body), block)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inp, outcomes = write_inputs(root, block, one_line, name_secret.text)
        assert find_leaks(files_under(inp), wanted), "the secrets were planted"
        results = {}
        for name, extra in (("offline", dict(offline=True)), ("llm", {}),
                            ("batch", dict(batch=True, batch_poll_interval=0.001))):
            results[name] = build(BuildOptions(inputs=[inp], out=root / name / "corpus", outcomes=outcomes,
                                               cache_dir=root / name / "llm-cache", **extra))
        haystacks = files_under(root, skip=inp)  # corpora, their sibling files, the caches
        haystacks.update({f"request {i} {r['method']} {r['path']}": json.dumps(r["body"]).encode()
                          for i, r in enumerate(fake_batch.requests)})
        haystacks.update({f"uploaded batch file {i}": data for i, data in enumerate(fake_batch.uploaded_bytes())})
    assert find_leaks(haystacks, wanted) == []
    baseline = _baseline_runs()
    for name, result in results.items():
        assert result.runs >= baseline, f"{name}: planting broke an importer ({result.skipped[:3]})"
    assert results["llm"].stats["calls"] > 0 and results["batch"].batch is not None
    assert fake_batch.uploaded_bytes()


# -- one test per leak found by hand -----------------------------------------------------------

OPENAI = "sk-proj-" + "Zx9_Yw8-Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa77"
GITHUB = "ghp_" + "k3J9xQ2mW7pL5vR8tY1uZ4aS6dF0gH2jK9cB"
ANTHROPIC = "sk-ant-api03-" + "Qw3rTy7uIo9pAs2dFg5hJk8lZx1cVb4nM6" + "_-AbCdEf"
AWS_ID = "AKIA" + "Q7W2E9R4T1Y6U3I8"
KEY_LINES = ["MIIEowIBAAKCAQEA7YxZ3e1Qm0s3lq0G4s2Vd9u0Q2y5Vb8Xk1n9wJtq3ZL1rAbCd",
             "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAABlwAAAAdzc2gt",
             "Zm9vYmFyYmF6cXV4cXV1eGNvcmdlZ3JhdWx0Z2FycGx5d2FsZG9mcmVkcGx1Z2h4eXo0"]


def _build(inputs, out, **kw):
    return build(BuildOptions(inputs=list(inputs), out=out, cache_dir=out.parent / "llm-cache", **kw))


def _tree_text(root: Path) -> dict[str, str]:
    return {k: v.decode("utf-8", "replace") for k, v in files_under(root).items()}


def _swe_traj(observation: str, replay_config: str) -> dict:
    return {"trajectory": [{"thought": "Look at the settings.", "action": "cat settings.py",
                            "observation": observation},
                           {"thought": "Done.", "action": "submit", "observation": "submitted"}],
            "history": [{"role": "system", "content": "sys"},
                        {"role": "user", "content": [{"type": "text", "text": "Fix the settings loader"}]}],
            "info": {"exit_status": "submitted"}, "replay_config": replay_config}


def test_nested_json_in_the_kept_original(tmp_path):
    """SWE-agent's replay_config is JSON inside JSON: a key starting a line follows an escaped newline."""
    nested = json.dumps({"agent": {"templates": {"system_template": f"Setup:\nOPENAI_API_KEY={OPENAI}\n{GITHUB}\n"
                                                                      f"{ANTHROPIC}\n{AWS_ID}\n"}}})
    traj = tmp_path / "input" / "proj__proj-1.traj"
    traj.parent.mkdir()
    traj.write_text(json.dumps(_swe_traj("ok", nested)))
    (tmp_path / "input" / "results.json").write_text(json.dumps({"resolved": ["proj__proj-1"]}))
    _build([traj.parent], tmp_path / "corpus", offline=True)
    original = (tmp_path / "corpus" / "raw" / "step-0000" / "original.json").read_text()
    for secret in (OPENAI, GITHUB, ANTHROPIC, AWS_ID):
        assert secret not in original
    for kind in ("openai-key", "github-token", "anthropic-key", "aws-access-key-id"):
        assert f"[REDACTED:{kind}#" in original
    assert json.loads(json.loads(original)["replay_config"])  # still JSON inside JSON


def test_private_key_shown_as_a_numbered_file_cut_before_end(fake_openai, tmp_path):
    """A tool shows a key file with line numbers, cut before END: the body must go with the BEGIN line."""
    shown = "\n".join([f"{n:>6}\t{line}" for n, line in enumerate(
        ["# deploy key", "-----BEGIN OPENSSH PRIVATE KEY-----", *KEY_LINES], start=1)])
    shown += "\n(12 more lines below)"
    traj = tmp_path / "input" / "proj__proj-2.traj"
    traj.parent.mkdir()
    traj.write_text(json.dumps(_swe_traj(shown, "{}")))
    (tmp_path / "input" / "results.json").write_text(json.dumps({"resolved": ["proj__proj-2"]}))
    fake_openai.respond_with(lambda body: reply(json.dumps(answer(_outcome_of(body), "fine"))))
    _build([traj.parent], tmp_path / "corpus")
    files = _tree_text(tmp_path / "corpus")
    sent = json.dumps(fake_openai.bodies)
    for line in KEY_LINES:
        assert line not in sent
        for rel in ("raw/step-0000/solver.full.jsonl", "raw/step-0000/original.json", "compilation/step-0000.md"):
            assert line not in files[rel], rel
    assert "# deploy key" in files["raw/step-0000/solver.full.jsonl"]  # what came before the key stays
    assert "[REDACTED:private-key#" in files["raw/step-0000/solver.full.jsonl"]


def test_model_answer_is_redacted(fake_openai, tmp_path):
    """A key the model writes back reaches no page, corpus.json, prompt index or cache entry."""
    written_back = f"{GITHUB} and OPENAI_API_KEY={OPENAI}"
    fake_openai.respond_with(lambda body: reply(json.dumps(answer(_outcome_of(body), written_back))))
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    files = _tree_text(out)
    cache = _tree_text(out.parent / "llm-cache")
    assert cache and any(p.startswith("compilation/step-") for p in files)
    for secret in (GITHUB, OPENAI):
        for rel, text in {**files, **{f"cache/{k}": v for k, v in cache.items()}}.items():
            assert secret not in text, rel
    assert "[REDACTED:github-token#" in files["compilation/step-0000.md"]
    assert "[REDACTED:github-token#" in files["corpus.json"]
    assert "index/prompt.bin" in files


def test_url_encoded_key():
    from wikitrace.redact import redact_text

    plain, _ = redact_text(f"key={OPENAI}")
    for text in (f"https://x.example/?key%3D{OPENAI}&a=1", f"key%3D{OPENAI}", f"token%3D{GITHUB}%26next",
                 "aws_secret_access_key%3DwJalrXUtnFEMI%2FK7MDENG%2FbPxRfiCYEXAMPLEKEY",
                 "postgres%3A%2F%2Fadmin%3Ahunter2hunter2%40db.internal%2Fapp",
                 "Authorization%3A%20Bearer%20abcDEF123456ghiJKL789"):
        out, counts = redact_text(text)
        for needle in (OPENAI, GITHUB, "wJalrXUtnFEMI", "hunter2hunter2", "abcDEF123456ghiJKL789"):
            assert needle not in out, text
        assert counts, text
    # the same key written two ways carries the same tag
    assert redact_text(f"key%3D{OPENAI}")[0].split("key%3D")[1] == plain.split("key=")[1]


def test_token_in_file_name_is_not_a_run_id(tmp_path):
    inp = tmp_path / "input"
    inp.mkdir()
    (inp / f"deploy-{GITHUB}.txt").write_bytes((FIX / "react" / "hotpotqa_small.txt").read_bytes())
    (inp / f"run-{OPENAI}.traj").write_text(json.dumps(_swe_traj("ok", "{}")))  # no verdict: reported
    result = _build([inp], tmp_path / "corpus", offline=True)
    assert result.runs >= 2
    everything = _tree_text(tmp_path)  # the corpus, its sibling files
    for rel, text in everything.items():
        if not rel.startswith("input"):
            assert GITHUB not in text and OPENAI not in text, rel
            assert GITHUB not in rel and OPENAI not in rel
    data = json.loads(everything["corpus/corpus.json"])
    assert any("[REDACTED:github-token#" in r["run_id"] for r in data["runs"])
    assert all(OPENAI not in line for line in result.skipped)


def test_symlinked_file_leaving_the_input_folder_is_not_read(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    marker = "OUTSIDE-THE-INPUT-FOLDER-7f3a"
    (outside / "secret.txt").write_text((FIX / "react" / "hotpotqa_small.txt").read_text().replace("Amsterdam", marker))
    inp = tmp_path / "input"
    inp.mkdir()
    shutil.copy(FIX / "react" / "hotpotqa_small.txt", inp / "real.txt")
    (inp / "linked.txt").symlink_to(outside / "secret.txt")
    (inp / "environ.log").symlink_to("/proc/self/environ")
    (inp / "inside.txt").symlink_to(inp / "real.txt")  # a link that stays inside is read
    report = LoadReport()
    runs = list(iter_runs([inp], report=report))
    assert runs and not any(marker in json.dumps([t.to_record() for t in r.turns]) for r in runs)
    skipped = "\n".join(report.ignored)
    assert "linked.txt: symlink leading out of" in skipped and "environ.log: symlink leading out of" in skipped
    assert str(inp / "inside.txt") in report.detected
    result = _build([inp], tmp_path / "corpus", offline=True)
    assert marker not in json.dumps(_tree_text(tmp_path / "corpus"))
    assert "environ" not in "".join(_tree_text(tmp_path / "corpus")["corpus.json"].split("ignored_files")[0:1])
    assert result.runs >= 1


CONTROLS = "\x00\x07\x1b[31m\r\u202e\x9b\u200b"


def test_control_characters_are_escaped_in_pages_and_tool_output(fake_openai, tmp_path):
    records = [json.loads(x) for x in EXAMPLES.read_text().splitlines() if x.strip()][:1]
    for turn in records[0]["turns"]:
        if turn.get("result"):
            turn["result"] += f" tail{CONTROLS}end"
    records[0]["task"]["instruction"] += f" {CONTROLS}"
    inp = tmp_path / "runs.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in records))
    fake_openai.respond_with(lambda body: reply(json.dumps(answer(_outcome_of(body), f"model{CONTROLS}"))))
    out = tmp_path / "corpus"
    _build([inp], out)
    raw = set(CONTROLS) - {"[", "3", "1", "m"}
    for rel, text in _tree_text(out).items():
        if rel.endswith((".md", ".json", ".jsonl", ".txt")):
            assert not raw & set(text), (rel, raw & set(text))
    page = (out / "compilation" / "step-0000.md").read_text()
    # shown, not acted on (the bracket after ESC is escaped too: page text never becomes markup)
    assert "\\x1b\\[31m" in page and "\\u202e" in page and "\\x00" in page
    step_log = [json.loads(x) for x in (out / "raw" / "step-0000" / "solver.full.jsonl").read_text().splitlines()]
    # the JSON value keeps what the reader kept (it replaces C0/C1 controls itself, not bidi or CR)
    assert any("\u202e" in (t.get("result") or "") for t in step_log)
    tools = Path(__file__).resolve().parent.parent / "tools"
    env = dict(os.environ, WIKITRACE_CORPUS=str(out))
    turn_no = next(t["turn"] for t in step_log if "\u202e" in (t.get("result") or ""))
    for argv in (["actions", "step-0000"], ["turn", "step-0000", str(turn_no)]):
        proc = subprocess.run([sys.executable, str(tools / argv[0]), *argv[1:]], env=env, capture_output=True,
                              timeout=60)
        assert proc.returncode == 0, proc.stderr
        text = proc.stdout.decode("utf-8")
        assert not raw & set(text) and "\\u202e" in text
    page_path = out / "compilation" / "step-0000.md"  # a page written by something else, raw ESC and all
    os.chmod(page_path, 0o644)
    page_path.write_text(page_path.read_text() + "\nplanted \x1b[2J line\n")
    # the build's search files hold what the build wrote; without them grep reads the pages
    shutil.rmtree(out / "index" / "grep")
    proc = subprocess.run([sys.executable, str(tools / "grep"), "planted"], env=env, capture_output=True, timeout=60)
    assert proc.returncode == 0 and b"planted \\x1b[2J line" in proc.stdout and b"\x1b" not in proc.stdout
    proc = subprocess.run([sys.executable, str(tools / "turn"), "step-0000", str(turn_no), "--json"], env=env,
                          capture_output=True, timeout=60)
    assert "\u202e" in json.loads(proc.stdout.decode("utf-8"))[0]["result"]  # --json as before


def test_placeholder_keeps_kind_and_a_stable_keyed_tag(monkeypatch):
    from wikitrace.redact import redact_text

    out, _ = redact_text(f"a {GITHUB} b {GITHUB} c {GITHUB[:-1]}X")
    tags = re.findall(r"\[REDACTED:github-token#([0-9a-f]{4})\]", out)
    assert len(tags) == 3 and tags[0] == tags[1] != tags[2]
    monkeypatch.setenv("WIKITRACE_REDACT_KEY", "another-key")
    other, _ = redact_text(f"a {GITHUB}")
    monkeypatch.setenv("WIKITRACE_REDACT_KEY", "another-key-2")
    third, _ = redact_text(f"a {GITHUB}")
    assert len({tags[0], other[-5:-1], third[-5:-1]}) > 1  # the tag depends on the key, not only the secret


def test_redaction_key_is_made_once_outside_the_corpus(monkeypatch, tmp_path):
    from wikitrace import redact_tags as redact

    monkeypatch.delenv("WIKITRACE_REDACT_KEY")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    redact._hmac_key.cache_clear()
    try:
        first = redact.tag(GITHUB)
        key_file = tmp_path / "cfg" / "wikitrace" / "redact-key"
        assert key_file.is_file() and oct(key_file.stat().st_mode & 0o777) == "0o600"
        assert len(bytes.fromhex(key_file.read_text().strip())) == 32
        redact._hmac_key.cache_clear()
        assert redact.tag(GITHUB) == first  # stable across processes: read back, not made again
    finally:
        redact._hmac_key.cache_clear()


def test_tool_and_page_control_sets_agree():
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    try:
        import _corpus
    finally:
        sys.path.pop(0)
    from wikitrace import controls

    assert _corpus.HIDDEN_RANGES == controls.RANGES
    sample = "".join(chr(c) for c in range(0x0, 0x3000)) + "\U000e0041\U0001F600"
    assert _corpus.visible(sample) == controls.visible(sample)


def test_every_hidden_character_is_escaped_even_in_a_one_line_value():
    """A printable one-line value is passed as it is without a scan; that is only right
    while every character of the hidden set is one ``str.isprintable`` refuses."""
    from wikitrace import controls

    for first, last in controls.RANGES:
        for cp in range(first, last + 1):
            if chr(cp) in "\t\n":
                continue
            value = f"id-{chr(cp)}-x"
            assert not value.isprintable(), hex(cp)
            assert chr(cp) not in controls.visible(value), hex(cp)
            assert chr(cp) not in controls.json_visible(json.dumps(value, ensure_ascii=False)), hex(cp)
    assert controls.visible("café — naïve") == "café — naïve"


def test_json_pages_escape_as_json_visible_does():
    """The page writer tells JSON text json.dumps wrote that needs no escape by two scans
    (ASCII, no DEL): every other character of the hidden set must still reach json_visible."""
    from wikitrace import controls
    from wikitrace.corpus.pages import _json_text

    for first, last in controls.RANGES:
        for cp in range(first, last + 1):
            record = {"content": f"id-{chr(cp)}-x", "turn": 1}
            for text in (json.dumps(record, ensure_ascii=False),
                         json.dumps(record, ensure_ascii=False) + "\n" + json.dumps(record) + "\n"):
                assert _json_text(text) == controls.json_visible(text), hex(cp)
                assert chr(cp) not in _json_text(text) or chr(cp) == "\n", hex(cp)
    plain = json.dumps({"a": "b\tc\nd", "n": [1, 2.5, None]}, ensure_ascii=False) + "\n"
    assert _json_text(plain) is plain
