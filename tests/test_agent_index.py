"""The prompt index (wikitrace/agent/index.py): same prompts as the corpus.json path,
ignored when stale, byte-identical for the same inputs, and a CLI path without typer."""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from wikitrace.agent import index as idxmod
from wikitrace.agent import index_reader
from wikitrace.corpus import index_pair
from wikitrace.agent.corpusdata import corpus_from_dict, load_corpus
from wikitrace.agent.index import INDEX_PATH, write_prompt_index
from wikitrace.corpus.corpus_json import corpus_region
from wikitrace.agent.index_reader import index_status
from wikitrace.agent.prompt import build_prompt, citation_prompt

REPO = Path(__file__).resolve().parent.parent
WORDS = ("cancel reservation refund flight book change baggage seat upgrade economy business gift card "
         "certificate order return exchange kettle mug address email phone password café naïve 東京 ü").split()
KINDS = [("airline", None), ("retail", None), (None, ["mail", "calendar"]), (None, None)]


def corpus_json_text(data: dict) -> str:
    """corpus.json exactly as wikitrace.build writes it."""
    from wikitrace.corpus.corpus_json import dumps

    return dumps(data)[0]


def synth(n_runs: int, seed: int = 0, insights_per_run=(0, 3)) -> dict:
    rng = random.Random(seed)
    runs, insights = [], []
    for i in range(n_runs):
        tt, apps = KINDS[i % len(KINDS)]
        outcome = rng.choice(["success", "failure"])
        step = f"step-{i:04d}"
        ids = []
        for _ in range(rng.randint(*insights_per_run)):
            iid = f"insight-{len(insights):04d}"
            ids.append(iid)
            insights.append({
                "id": iid, "title": " ".join(rng.sample(WORDS, 3)).capitalize(), "task_type": tt, "apps": apps,
                "source_step": step, "source_outcome": outcome,
                "guideline": " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 20))) + ".",
                "applicability": "Applies to " + " ".join(rng.sample(WORDS, 2)) + " tasks;\nnot   to others.",
            })
        instruction = " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 25)))
        runs.append({"step": step, "run_id": f"run-{i}", "task_id": str(i % 7), "task_type": tt, "apps": apps,
                     "outcome": outcome, "steps": rng.randint(1, 9), "instruction": instruction,
                     "title": f"[{outcome}] {instruction[:30]}", "compiler": "offline",
                     "content_hash": f"sha256:{i:064x}", "insights": ids})
    return {"format": "wikitrace-corpus/1", "wikitrace_version": "0.1.0", "mount_path": "/work/corpus",
            "compiler": {"name": "offline", "model": None},
            "counts": {"runs": len(runs), "insights": len(insights)},
            "runs": runs, "insights": insights, "retired": {"steps": [], "insights": []},
            "build": {"built_at": "2026-01-01T00:00:00Z", "stats": {}, "skipped": []}}


def write(root: Path, data: dict, index: bool = True) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "corpus.json").write_text(corpus_json_text(data), encoding="utf-8")
    if index:
        assert write_prompt_index(root, data["runs"], data["insights"]) == [INDEX_PATH]
    return root


def same(a, b) -> None:
    assert a.to_dict() == b.to_dict()


CASES = [{}, {"budget": 600}, {"budget": 600, "variant": "insights-only"}, {"budget": 1500, "task_type": "airline"},
         {"budget": 2500, "task_type": "retail", "k": 5}, {"apps": ["mail", "calendar"], "budget": 900},
         {"variant": "insights-only", "task_type": "airline"}, {"budget": 10}, {"k": 0, "budget": 800}]


@pytest.fixture(scope="module")
def synth_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth") / "corpus"
    data = synth(240)
    write(root, data)
    return root, data


# --- same prompts as the corpus.json path --------------------------------------------------------

def test_index_matches_fallback(synth_dir):
    root, data = synth_dir
    assert index_status(root)[1] == "ok"
    loaded = corpus_from_dict(data)
    rng = random.Random(3)
    tasks = [r["instruction"] for r in data["runs"][:5]] + \
            [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(8)] + ["", "zzz qqq"]
    for task in tasks:
        for kw in CASES:
            same(build_prompt(root, task, **kw), build_prompt(loaded, task, **kw))


def test_similar_runs_and_selected_insights_match(synth_dir):
    root, data = synth_dir
    idx = index_reader.open_index(root)
    loaded = corpus_from_dict(data)
    task = "cancel my reservation and refund the gift card"
    p_idx = build_prompt(root, task, budget=800, task_type="airline")
    p_ref = build_prompt(loaded, task, budget=800, task_type="airline")
    assert p_idx.similar_runs and p_idx.left_out > 0
    assert [s.step for s in p_idx.similar_runs] == [s.step for s in p_ref.similar_runs]
    assert p_idx.insight_ids == p_ref.insight_ids
    # the scores are the same floats, not merely the same order
    from wikitrace.agent.similarity import BM25, insight_text, run_text

    assert idx.run_scores(task) == BM25([run_text(r) for r in loaded.runs]).scores(task)
    assert idx.insight_scores(task) == BM25([insight_text(i) for i in loaded.insights]).scores(task)


def test_built_corpus_index_is_current_and_matches(tmp_path):
    """On a corpus written by wikitrace.build: the index's stamp agrees with build's
    corpus.json (guards against the two serialisations drifting apart)."""
    from wikitrace.build import BuildOptions, build

    out = tmp_path / "built"
    build(BuildOptions(inputs=[REPO / "examples" / "runs.jsonl"], out=out, offline=True, quiet=True))
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    os.chmod(copy, 0o755)
    data = json.loads((copy / "corpus.json").read_text(encoding="utf-8"))
    region, _, _ = corpus_region(data["runs"], data["insights"])
    assert region in (copy / "corpus.json").read_bytes()
    write_prompt_index(copy, list(reversed(data["runs"])), data["insights"])  # any input order
    assert index_status(copy)[1] == "ok"
    loaded = load_corpus(out)
    for task in [r.instruction for r in loaded.runs] + ["refund the damaged book"]:
        for kw in ({}, {"budget": 700}, {"budget": 700, "variant": "insights-only"}, {"task_type": "refund"}):
            same(build_prompt(copy, task, **kw), build_prompt(loaded, task, **kw))
    assert citation_prompt(copy) == citation_prompt(loaded)


def test_no_insights_and_empty_texts(tmp_path):
    data = synth(12, seed=5, insights_per_run=(0, 0))
    data["runs"][3]["instruction"] = ""
    root = write(tmp_path / "c", data)
    assert index_status(root)[1] == "ok"
    for kw in ({}, {"budget": 300}, {"task_type": "retail"}):
        same(build_prompt(root, "refund flight", **kw), build_prompt(corpus_from_dict(data), "refund flight", **kw))


def test_template_override(tmp_path, synth_dir):
    root, data = synth_dir
    loaded = corpus_from_dict(data)
    bundled = REPO / "corpus_templates" / "agent" / "_insight.md.j2"
    other = tmp_path / "other" / "agent"
    other.mkdir(parents=True)
    (other / "_insight.md.j2").write_text(bundled.read_text().replace("**Title:**", "**Lesson:**"))
    unrelated = tmp_path / "unrelated" / "agent"
    unrelated.mkdir(parents=True)
    (unrelated / "memory_documents.md.j2").write_text(
        (REPO / "corpus_templates" / "agent" / "memory_documents.md.j2").read_text().replace("<memory_documents>", "<memory>"))
    idx = index_reader.open_index(root)
    assert idx.texts(True, other.parent).stored is False
    assert idx.texts(True, unrelated.parent).stored is True
    for tpl in (other.parent, unrelated.parent):
        for kw in ({}, {"budget": 700}, {"budget": 700, "variant": "insights-only"}):
            p = build_prompt(root, "refund the gift card", templates=tpl, **kw)
            same(p, build_prompt(loaded, "refund the gift card", templates=tpl, **kw))
    assert "**Lesson:**" in build_prompt(root, "x", templates=other.parent).memory_block


def test_both_variants_stored_when_no_single_cut(tmp_path, monkeypatch):
    data = synth(60, seed=9)
    monkeypatch.setattr(idxmod, "_split_plain", lambda w, p: None)
    root = write(tmp_path / "c", data)
    assert "plain_text" in index_reader.open_index(root).header["sections"]
    loaded = corpus_from_dict(data)
    for kw in ({"variant": "insights-only"}, {"variant": "insights-only", "budget": 500}, {"budget": 500}):
        same(build_prompt(root, "book a seat upgrade", **kw), build_prompt(loaded, "book a seat upgrade", **kw))


# --- stale or foreign indexes are ignored --------------------------------------------------------

def test_stale_index_is_ignored(tmp_path):
    data = synth(80, seed=1)
    root = write(tmp_path / "c", data)
    assert index_status(root)[1] == "ok"
    edited = json.loads(json.dumps(data))
    edited["runs"][7]["instruction"] = "upgrade the seat to business on the Tokyo flight"
    edited["insights"][2]["guideline"] = "Always ask for the booking code first."
    (root / "corpus.json").write_text(corpus_json_text(edited), encoding="utf-8")
    idx, why = index_status(root)
    assert idx is None and why.startswith("stale")
    task = "upgrade seat business tokyo"
    p = build_prompt(root, task)
    same(p, build_prompt(corpus_from_dict(edited), task))
    assert p.similar_runs[0].step == "step-0007"
    assert "Always ask for the booking code first." in p.memory_block


def test_same_length_edit_is_caught(tmp_path):
    data = synth(30, seed=2)
    root = write(tmp_path / "c", data)
    text = corpus_json_text(data)
    old = data["runs"][4]["instruction"]
    assert old
    swapped = text.replace(json.dumps(old, ensure_ascii=False), json.dumps(old[::-1], ensure_ascii=False), 1)
    assert len(swapped) == len(text) and swapped != text
    (root / "corpus.json").write_text(swapped, encoding="utf-8")
    assert index_status(root)[0] is None


def test_index_of_another_corpus_or_layout_is_ignored(tmp_path):
    a = write(tmp_path / "a", synth(40, seed=1))
    b_data = synth(40, seed=2)
    b = write(tmp_path / "b", b_data, index=False)
    assert index_status(b)[1] == "absent"
    (b / "index").mkdir()
    shutil.copy(a / INDEX_PATH, b / INDEX_PATH)
    assert index_status(b)[1].startswith("stale")
    same(build_prompt(b, "refund the order"), build_prompt(corpus_from_dict(b_data), "refund the order"))
    # the same content written another way (hand-written corpora, older tools): not recognised, still right
    (b / "corpus.json").write_text(json.dumps(b_data, indent=2))
    write_prompt_index(b, b_data["runs"], b_data["insights"])
    assert index_status(b)[0] is None
    same(build_prompt(b, "refund the order"), build_prompt(corpus_from_dict(b_data), "refund the order"))


def test_scoring_or_format_change_invalidates(tmp_path, monkeypatch):
    root = write(tmp_path / "c", synth(20, seed=4))
    monkeypatch.setattr(index_reader, "scoring_stamp", lambda: "something-else")
    assert "tokenizer" in index_status(root)[1]
    monkeypatch.undo()
    raw = (root / INDEX_PATH).read_bytes()
    (root / INDEX_PATH).write_bytes(raw.replace(index_reader.FORMAT.encode(), b"wikitrace-prompt-index/0", 1))
    assert "format" in index_status(root)[1]
    (root / INDEX_PATH).write_bytes(b"garbage")
    idx, why = index_status(root)
    assert idx is None and why


def test_hand_written_fixture_corpus_still_works(tmp_path):
    sys.path.insert(0, str(Path(__file__).parent / "fixtures" / "agent"))
    import agent_corpus

    root = agent_corpus.write_corpus(tmp_path / "corpus")
    data = agent_corpus.corpus_dict()
    write_prompt_index(root, data["runs"], data["insights"])  # its corpus.json uses indent=2
    assert index_status(root)[0] is None
    same(build_prompt(root, "put a mug in the cabinet"), build_prompt(corpus_from_dict(data), "put a mug in the cabinet"))


# --- determinism -------------------------------------------------------------------------------

def test_index_bytes_are_deterministic(tmp_path):
    data = synth(150, seed=7)
    a = write(tmp_path / "a", data)
    shuffled = json.loads(json.dumps(data))
    random.Random(1).shuffle(shuffled["runs"])
    random.Random(2).shuffle(shuffled["insights"])
    b = tmp_path / "b"
    b.mkdir()
    write_prompt_index(b, shuffled["runs"], shuffled["insights"])
    first = (a / INDEX_PATH).read_bytes()
    assert first == (b / INDEX_PATH).read_bytes()
    # and in another process with another string-hash seed
    (tmp_path / "in.json").write_text(json.dumps(data))
    code = ("import json, sys; from pathlib import Path; from wikitrace.agent.index import write_prompt_index; "
            "d = json.loads(Path(sys.argv[1]).read_text()); write_prompt_index(Path(sys.argv[2]), d['runs'], d['insights'])")
    for seed in ("1", "12345"):
        out = tmp_path / f"p{seed}"
        out.mkdir()
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-c", code, str(tmp_path / "in.json"), str(out)], env=env, check=True)
        assert (out / INDEX_PATH).read_bytes() == first


def test_header_is_one_json_line(synth_dir):
    root, data = synth_dir
    head = json.loads((root / INDEX_PATH).read_bytes().split(b"\n", 1)[0])
    assert head["format"] == index_reader.FORMAT
    assert head["counts"] == {"runs": len(data["runs"]), "insights": len(data["insights"])}
    assert "built_at" not in json.dumps(head)


# --- CLI ---------------------------------------------------------------------------------------

def test_cli_uses_the_index_and_prompt_main_matches_typer(synth_dir, tmp_path):
    from typer.main import get_command
    from typer.testing import CliRunner

    from wikitrace.agent.cli_glue import prompt_main, prompt_parser
    from wikitrace.cli import app

    root, _ = synth_dir
    cmd = get_command(app).commands["prompt"]
    typer_opts = {o for p in cmd.params for o in p.opts if o.startswith("-")}
    argparse_opts = {o for a in prompt_parser()._actions for o in a.option_strings}
    assert typer_opts - {"--help", "-h"} == argparse_opts
    defaults = {p.name: p.default for p in cmd.params}
    assert all(defaults[a.dest] == a.default for a in prompt_parser()._actions if a.dest != "corpus")
    for argv in (["--task", "refund the gift card"],
                 ["--task", "refund the gift card", "--budget", "700", "--variant", "insights-only", "--json"],
                 ["--task", "book a flight", "--task-type", "airline", "--similar", "2", "--mount-path", "/m"]):
        full = ["--corpus", str(root)] + argv
        r = CliRunner().invoke(app, ["prompt"] + full)
        assert r.exit_code == 0, r.output
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert prompt_main(full) == 0
        assert buf.getvalue() == r.stdout
    assert prompt_main(["--corpus", str(root), "--help"]) is None
    assert prompt_main(["--corpus", str(root), "--budget", "-1", "--task", "x"]) is None
    assert prompt_main(["--corpus", str(root), "--bud", "5", "--task", "x"]) is None  # no abbreviations
    from wikitrace.agent.corpusdata import CorpusError

    with pytest.raises(CorpusError) as failed:  # printed as one line by cli.main
        prompt_main(["--corpus", str(tmp_path), "--task", "x"])
    assert failed.value.exit_code == 2


def test_cli_import_path_is_light(synth_dir):
    """`wikitrace prompt` through the index imports neither numpy nor rich nor openai."""
    root, _ = synth_dir
    code = ("import sys; from wikitrace.agent.cli_glue import prompt_main; "
            "rc = prompt_main(['--corpus', sys.argv[1], '--task', 'refund', '--budget', '500']); "
            "bad = sorted(m for m in ('numpy', 'rich', 'openai', 'wikitrace.agent.descents', "
            "'wikitrace.agent.evaluate') if m in sys.modules); print(rc, bad, file=sys.stderr)")
    r = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True, check=True)
    assert r.stderr.strip().splitlines()[-1] == "0 []"


# --- a build's note of the pair spares the hash, never a stale answer --------------------------

def test_noted_pair_skips_the_hash_and_reads_the_same(tmp_path, monkeypatch):
    data = synth(60, seed=5)
    root = write(tmp_path / "c", data)
    (root / ".wikitrace").mkdir()
    index_pair.note_pair(root)
    assert (root / index_pair.PAIR_PATH).is_file()
    hashed = []
    real_sha = index_reader.hashlib.sha256
    monkeypatch.setattr(index_reader.hashlib, "sha256", lambda *a: hashed.append(len(a[0]) if a else 0) or real_sha(*a))
    idx, why = index_status(root)
    assert why == "ok" and idx.header["source"]["bytes"] not in hashed  # corpus.json's runs and insights: not hashed
    task = "refund the order"
    same(build_prompt(root, task), build_prompt(corpus_from_dict(data), task))


def test_edit_after_the_note_is_still_caught(tmp_path):
    data = synth(30, seed=6)
    root = write(tmp_path / "c", data)
    (root / ".wikitrace").mkdir()
    index_pair.note_pair(root)
    path = root / "corpus.json"
    before = path.stat()
    text = corpus_json_text(data)
    old = data["runs"][3]["instruction"]
    assert old
    # the same length, written in place (same inode), at a later time
    path.write_text(text.replace(json.dumps(old, ensure_ascii=False), json.dumps(old[::-1], ensure_ascii=False), 1),
                    encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    idx, why = index_status(root)
    assert idx is None and why.startswith("stale")
    # a note that names other files is ignored the same way
    index_pair.note_pair(root)
    index = root / INDEX_PATH
    before = index.stat()
    write_prompt_index(root, data["runs"], data["insights"])  # a new index file: the note is out of date
    os.utime(index, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert index_status(root)[1].startswith("stale")


def test_a_corpus_json_replaced_at_the_same_size_and_time_is_read_again(tmp_path):
    # A publish renames a new file into place; same size and the same clock tick must not
    # serve the old corpus from memory.
    root = tmp_path / "c"
    root.mkdir()
    first = {"format": "x", "runs": [], "insights": [], "mark": "AAAA"}
    path = root / "corpus.json"
    path.write_text(json.dumps(first))
    st = path.stat()
    before = load_corpus(root)
    fresh = root / "corpus.json.new"
    fresh.write_text(json.dumps({**first, "mark": "BBBB"}))
    os.utime(fresh, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(fresh, path)
    assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
    after = load_corpus(root)
    assert after is not before
