"""End to end on a short synthetic dialogue: compile -> pages -> query -> check."""

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wikitrace.cli import app
from wikitrace.fsio import make_writable
from wikitrace.dialogue.build import DialogueOptions, compile_dialogues
from wikitrace.dialogue.check import check_dialogue
from wikitrace.dialogue.query import run_query

FIXTURE = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"


def snapshot_tree(root: Path) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture()
def built(tmp_path):
    out = tmp_path / "corpus"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out))
    yield out
    make_writable(out)


def test_layout_pages_and_links(built):
    s = built / "dialogue" / "tiny"
    for folder in ("sources", "snapshots", "trajectories", "wiki"):
        assert (s / folder / "_index.md").exists()
    assert (s / "wiki" / "index.md").exists()
    mem = json.loads((s / "memory.json").read_text())
    assert {p["type"] for p in mem["pages"]} >= {"index", "entity"}
    claims = [c for sn in mem["snapshots"] for c in sn["claims"]]
    assert any("Ana" in c["text"] and "puppy" in c["text"] for c in claims)
    # relative date resolved against the session date
    assert any("2 March 2024" in c["text"] for c in claims)
    ops = [o for t in mem["trajectories"] for o in t["ops"]]
    assert len(ops) == len(claims) and all(o["op"] in ("ADD", "REVISE", "DEPRECATE") for o in ops)
    snap_md = (s / "snapshots" / "snap-0001.md").read_text()
    assert "../sources/session-01.md#s1-1" in snap_md
    assert check_dialogue(built) == []


def test_query_returns_right_sources(built):
    out = json.loads(run_query(built, "tiny", "What instrument is Ben learning?", budget=60, as_json=True))
    ids = [m["id"] for m in out["diagnostics"]["sources"]]
    assert ids[0] in ("S1:2", "S2:4") and "S1:2" in ids
    assert out["mode"].startswith("evidence-only")
    out = json.loads(run_query(built, None, "Where did Ben move from?", budget=40, as_json=True))
    assert out["diagnostics"]["sources"][0]["id"] == "S1:4"
    assert out["diagnostics"]["sources"][0]["path"] == "sources/session-01.md#s1-4"
    text = run_query(built, "tiny", "What is the name of Ana's puppy?", budget=80)
    assert "[S1:1]" in text and "evidence only" in text


def test_rebuild_is_byte_identical_and_read_only(built, tmp_path):
    first = snapshot_tree(built / "dialogue")
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=built))
    assert snapshot_tree(built / "dialogue") == first
    other = tmp_path / "other"
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=other))
    assert snapshot_tree(other / "dialogue") == first
    make_writable(other)
    for p in (built / "dialogue").rglob("*"):
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o755 if p.is_dir() else 0o444), p
    assert not any(n.startswith(".dialogue") for n in os.listdir(built))


def test_beside_agent_corpus_untouched(tmp_path):
    out = tmp_path / "corpus"
    (out / "raw").mkdir(parents=True)
    (out / "raw" / "_index.md").write_text("runs\n")
    (out / "corpus.json").write_text("{}\n")
    compile_dialogues(DialogueOptions(inputs=[FIXTURE], out=out))
    assert (out / "raw" / "_index.md").read_text() == "runs\n"
    assert (out / "corpus.json").read_text() == "{}\n"
    assert check_dialogue(out) == []
    make_writable(out)


def test_check_detects_broken_link(built):
    make_writable(built)
    page = built / "dialogue" / "tiny" / "snapshots" / "snap-0001.md"
    page.write_text(page.read_text().replace("../sources/session-01.md#s1-1", "../sources/session-09.md#s1-1"))
    idx = built / "dialogue" / "tiny" / "wiki" / "_index.md"
    idx.write_text(idx.read_text().replace("(index.md)", "(gone.md)"))
    problems = check_dialogue(built)
    assert any("broken link ../sources/session-09.md#s1-1" in p for p in problems)
    assert any("does not list index.md" in p for p in problems)


def test_cli_compile_and_query(tmp_path):
    runner = CliRunner()
    out = tmp_path / "c"
    r = runner.invoke(app, ["dialogue", "compile", str(FIXTURE), "--out", str(out), "--offline"])
    assert r.exit_code == 0, r.output
    assert "offline" in r.output
    r = runner.invoke(app, ["query", "--corpus", str(out), "--sample", "tiny", "Where did Ben move from?",
                            "--budget", "100", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["diagnostics"]["sources"][0]["id"] == "S1:4"
    r = runner.invoke(app, ["query", "--corpus", str(out), "--sample", "nope", "x"])
    assert r.exit_code == 2
    make_writable(out)
