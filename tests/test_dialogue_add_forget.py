"""`wikitrace dialogue add` and `wikitrace dialogue forget` through the installed CLI.

add: a conversation compiled without its last session, plus `dialogue add` of that session,
is byte-for-byte what compiling the whole conversation writes; files whose bytes do not change
are not touched. forget: a marker planted in one session is gone from every file of the corpus
(hidden state included) and from the caches, the memory equals a compile of the input without
that session, a rebuild from the same input keeps it out, and `--restore` brings it back."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wikitrace.fsio import make_writable
from wikitrace.dialogue.check import check_dialogue
from wikitrace.dialogue.embed import text_key

HERE = Path(__file__).parent
FIXTURE = HERE / "fixtures" / "dialogue" / "locomo-mini.json"
TINY = HERE / "fixtures" / "dialogue" / "tiny.jsonl"
DATA = Path(os.environ.get("WIKITRACE_DATA", HERE.parent.parent / "shared" / "data")) / "locomo-dev"
WIKITRACE = shutil.which("wikitrace") or str(Path(sys.executable).parent / "wikitrace")
MARKER = "QZXVOLCANO4417"
SPEAKER = "Qzxwren Haldor"        # a third person heard only in the session that is forgotten


def cli(*args, env=None, check=True):
    proc = subprocess.run([WIKITRACE, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    if check:
        assert proc.returncode == 0, proc.stderr
    return proc


def tree(root: Path, hidden: bool = False) -> dict:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and (hidden or ".wikitrace" not in p.parts)}


def stats(root: Path) -> dict:
    return {str(p.relative_to(root)): (p.stat().st_ino, p.stat().st_mtime_ns)
            for p in sorted((root / "dialogue").rglob("*")) if p.is_file()}


def grep(folder: Path, needle: str) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and needle.lower().encode() in p.read_bytes().lower()]


@pytest.fixture()
def work(tmp_path):
    yield tmp_path
    make_writable(tmp_path)


def split_last(conv: dict, folder: Path, name: str) -> tuple[Path, dict]:
    """The conversation without its last session (same file name), and that session."""
    n = max(int(k.split("_")[1]) for k in conv if k.startswith("session_") and isinstance(conv[k], list))
    head = {k: v for k, v in conv.items() if k != f"session_{n}"}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(head))
    return folder / name, {"n": n, "turns": conv[f"session_{n}"], "date_time": conv[f"session_{n}_date_time"]}


def session_file(shape: str, last: dict, path: Path) -> Path:
    n, turns, when = last["n"], last["turns"], last["date_time"]
    if shape == "locomo":
        path.write_text(json.dumps({f"session_{n}": turns, f"session_{n}_date_time": when}))
    elif shape == "object":            # no session number: the next one
        path.write_text(json.dumps({"date_time": when, "turns": turns}))
    else:
        path = path.with_suffix(".jsonl")
        path.write_text("".join(json.dumps({"id": t["dia_id"], "speaker": t["speaker"], "text": t["text"],
                                            "blip_caption": t.get("blip_caption"), "timestamp": when,
                                            "session": n}) + "\n" for t in turns))
    return path


# ------------------------------------------------------------------------------------------ add

@pytest.mark.parametrize("shape", ["locomo", "object", "jsonl"])
def test_add_last_session_is_the_whole_compile(work, shape):
    conv = json.loads(FIXTURE.read_text())
    head, last = split_last(conv, work / "head", FIXTURE.name)
    cli("dialogue", "compile", FIXTURE, "--out", work / "whole", "--offline", "-q")
    cli("dialogue", "compile", head, "--out", work / "inc", "--offline", "-q")
    before = stats(work / "inc")
    sess = session_file(shape, last, work / "session.json")
    out = json.loads(cli("dialogue", "add", sess, "--corpus", work / "inc", "--sample", "locomo-mini",
                         "--offline", "--json").stdout)

    assert tree(work / "inc") == tree(work / "whole")          # byte-identical to compiling it all
    assert check_dialogue(work / "inc") == []
    assert out["session"] == "4" and out["messages_added"] == 6
    assert out["message_ids"] == [f"D4:{i}" for i in range(1, 7)]
    assert out["snapshots_added"] == 3 and out["transitions_added"] > 0
    after = stats(work / "inc")
    owned = [r for r in after if r.startswith("dialogue/locomo-mini/")]
    f = out["files"]
    assert f["added"] + f["rewritten"] + f["unchanged"] == len(owned)
    # what the summary calls unchanged was not touched (same inode and mtime); the rest was
    unchanged = [r for r in owned if r in before and before[r] == after[r]]
    assert len(unchanged) == f["unchanged"] > 0
    assert "dialogue/locomo-mini/sources/session-01.md" in unchanged
    assert "dialogue/locomo-mini/sources/session-04.md" in out["changed"]["added"]
    # appended, not recomputed: every earlier snapshot keeps its file untouched
    earlier = [r for r in before if "/snapshots/snap-" in r and r.startswith("dialogue/locomo-mini/")]
    assert earlier and all(before[r] == after[r] for r in earlier)
    assert out["earlier_snapshots_rewritten"] == 0 and out["earlier_trajectories_regrouped"] == 0


def test_add_refusals_are_one_line_and_change_nothing(work):
    conv = json.loads(FIXTURE.read_text())
    cli("dialogue", "compile", FIXTURE, "--out", work / "c", "--offline", "-q")
    before = tree(work / "c", hidden=True)

    def refused(session_json, *extra, suffix=".json"):
        path = work / f"s{suffix}"
        path.write_text(session_json if isinstance(session_json, str) else json.dumps(session_json))
        proc = cli("dialogue", "add", path, "--sample", "locomo-mini", "--offline", *extra, check=False,
                   env={"WIKITRACE_CORPUS": str(work / "c")})
        assert proc.returncode == 2, proc.stderr
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("wikitrace: error: ") and "Traceback" not in proc.stderr
        assert tree(work / "c", hidden=True) == before
        return lines[0]

    again = {"session_3": conv["session_3"], "session_3_date_time": conv["session_3_date_time"]}
    assert "session 3 is already in sample locomo-mini" in refused(again)
    earlier = {"session": 0, "date_time": "1 May, 2024", "turns": [{"speaker": "Maya", "text": "Hello there."}]}
    assert "comes before the last session of sample locomo-mini (4); sessions are appended in order" in refused(earlier)
    assert "is not a session number" in refused({**earlier, "session": "two"})
    clash = {"session": 5, "date_time": "9:00 am on 20 July, 2024",
             "turns": [{"speaker": "Maya", "dia_id": "D1:1", "text": "A repeated id."}]}
    assert "message id 'D1:1' is already in sample" in refused(clash)
    two = {"session_5": [{"speaker": "Maya", "text": "a"}], "session_6": [{"speaker": "Maya", "text": "b"}]}
    assert "holds 2 sessions" in refused(two)
    assert "not a session" in refused({"hello": "world"})
    assert "not JSON" in refused("{not json")
    bad_date = {"session": 5, "date_time": "30 February, 2024", "turns": [{"speaker": "Maya", "text": "Hi."}]}
    assert "not a valid date" in refused(bad_date)
    row = json.dumps({"speaker": "Maya", "text": "Hi", "session": 5, "sample": "other-talk"}) + "\n"
    assert "not only locomo-mini" in refused(row, suffix=".jsonl")
    proc = cli("dialogue", "add", work / "s.json", "--corpus", work / "c", "--sample", "nope", check=False)
    assert proc.returncode == 2 and "no compiled sample 'nope'" in proc.stderr and "locomo-mini" in proc.stderr
    proc = cli("dialogue", "add", work / "s.json", "--sample", "locomo-mini", check=False,
               env={"WIKITRACE_CORPUS": ""})
    assert proc.returncode == 2 and "no corpus given" in proc.stderr


def test_added_session_is_redacted_and_numbered_after_the_last(work):
    key = "ghp_" + "Q7wXz" * 7 + "a"        # the shape of a GitHub token, made up here
    cli("dialogue", "compile", FIXTURE, "--out", work / "c", "--offline", "-q")
    sess = work / "later.json"
    sess.write_text(json.dumps({"date_time": "9:00 am on 20 July, 2024", "turns": [
        {"speaker": "Tomas", "text": f"I found a cello on Luthier Lane! The shop login is {key} by the way."},
        {"speaker": "Maya", "text": "Congrats on the cello, finally yours."}]}))
    out = json.loads(cli("dialogue", "add", sess, "--corpus", work / "c", "--sample", "locomo-mini",
                         "--offline", "--json").stdout)
    assert out["session"] == "5" and out["message_ids"] == ["D5:1", "D5:2"]
    assert sum(out["redactions"].values()) == 1
    assert grep(work / "c", key) == [] and grep(work / "c", "Q7wXzQ7wXz") == []
    assert "Luthier Lane" in (work / "c" / "dialogue" / "locomo-mini" / "sources" / "session-05.md").read_text()
    assert check_dialogue(work / "c") == []


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "conv-26.json").exists(), reason="real LoCoMo data not available")
def test_add_last_session_of_a_real_conversation(work):
    conv = json.loads((DATA / "conv-26.json").read_text())
    head, last = split_last(conv, work / "head", "conv-26.json")
    cli("dialogue", "compile", DATA / "conv-26.json", "--out", work / "whole", "--offline", "-q")
    cli("dialogue", "compile", head, "--out", work / "inc", "--offline", "-q")
    sess = session_file("locomo", last, work / "last.json")
    out = json.loads(cli("dialogue", "add", sess, "--corpus", work / "inc", "--sample", "conv-26",
                         "--offline", "--json").stdout)
    assert tree(work / "inc") == tree(work / "whole")
    assert out["session"] == str(last["n"]) and out["files"]["unchanged"] > 0


# --------------------------------------------------------------------------------------- forget

@pytest.fixture()
def fake_emb(monkeypatch):
    from test_dialogue_embeddings import FakeEmbeddings

    f = FakeEmbeddings()
    yield f
    f.close()


def marked_fixture(folder: Path) -> tuple[Path, Path]:
    """The fixture with a marker in session 2, and the same input without session 2."""
    conv = json.loads(FIXTURE.read_text())
    conv["session_2"][3]["text"] += f" The vet's code word is {MARKER}."
    conv["session_2"].append({"speaker": SPEAKER, "dia_id": "D2:7", "text": "Hello, I am the vet, Maya told me."})
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "in").mkdir()
    (folder / "in" / FIXTURE.name).write_text(json.dumps(conv))
    (folder / "without").mkdir()
    del conv["session_2"]
    (folder / "without" / FIXTURE.name).write_text(json.dumps(conv))
    return folder / "in" / FIXTURE.name, folder / "without" / FIXTURE.name


@pytest.mark.slow
def test_forget_session_leaves_no_trace_and_stays_forgotten(work, fake_emb):
    marked, without = marked_fixture(work / "inputs")
    cache = work / "llm-cache"
    env = {"WIKITRACE_EMBEDDINGS_URL": fake_emb.url, "WIKITRACE_CACHE_DIR": str(cache)}
    corpus = work / "corpus"
    cli("dialogue", "compile", marked, "--out", corpus, "-q", env=env)
    assert grep(corpus, MARKER) and grep(corpus, "Qzxwren")      # the markers are in the memory
    emb_cache = corpus / "dialogue" / "locomo-mini" / "embeddings.json"
    keys_before = set(json.loads(emb_cache.read_text())["keys"])
    marked_keys = {text_key("e5-small-passage", t) for t in fake_emb.texts("passage") if MARKER in t}
    assert marked_keys and marked_keys <= keys_before            # the marked text's vectors are cached

    out = json.loads(cli("dialogue", "forget", "--corpus", corpus, "--sample", "locomo-mini", "--session", "2",
                         "--json", env=env).stdout)
    assert out["message_ids"] == [f"D2:{i}" for i in (1, 2, 3, 4, 6, 7)]       # D2:5 has no text
    assert out["before"]["sessions"] == 4 and out["after"]["sessions"] == 3
    assert out["snapshots"] and out["claims"]
    assert "dialogue/locomo-mini/sources/session-02.md" in out["files"]["removed"]
    # no file of the corpus (hidden state included) and no cache holds the marker
    assert grep(corpus, MARKER) == [] and (not cache.exists() or grep(cache, MARKER) == [])
    assert grep(corpus, "Qzxwren") == []
    tomb = corpus / ".wikitrace" / "dialogue-forgotten.json"
    text = tomb.read_text()
    assert "locomo-mini" not in text and "Miso" not in text and '"2"' in text
    # the memory is what compiling the input without session 2 writes (embedding cache included)
    cli("dialogue", "compile", without, "--out", work / "reference", "-q", env=env)
    assert tree(corpus) == tree(work / "reference")
    assert not marked_keys & set(json.loads(emb_cache.read_text())["keys"])     # and gone from the cache
    assert check_dialogue(corpus) == []
    q = cli("query", "--corpus", corpus, "--sample", "locomo-mini", "Who teaches Tomas the cello?", "--json",
            env=env)
    assert "D1:6" in [s["id"] for s in json.loads(q.stdout)["diagnostics"]["sources"]]

    # a rebuild from the same input keeps it out, and says so
    snapshot = tree(corpus, hidden=True)
    proc = cli("dialogue", "compile", marked, "--out", corpus, "--json", env=env)
    assert json.loads(proc.stdout)["forgotten"] == [{"sample": "locomo-mini", "session": "2", "same_content": True,
                                                     "action": "left out"}]
    assert "left out" in proc.stderr
    assert grep(corpus, MARKER) == [] and grep(corpus, "Qzxwren") == [] and tree(corpus) == {k: v for k, v in snapshot.items() if ".wikitrace" not in k}
    again = cli("dialogue", "forget", "--corpus", corpus, "--sample", "locomo-mini", "--session", "2", env=env)
    assert "already forgotten" in again.stderr
    # a new session cannot take the forgotten number
    sess = work / "s2.json"
    sess.write_text(json.dumps({"session": 2, "date_time": "1 May, 2024", "turns": [{"speaker": "Maya", "text": "Hi."}]}))
    proc = cli("dialogue", "add", sess, "--corpus", corpus, "--sample", "locomo-mini", check=False, env=env)
    assert proc.returncode == 2 and "already in sample" not in proc.stderr and "--restore" in proc.stderr

    # --restore compiles it again and drops the tombstone
    cli("dialogue", "compile", marked, "--out", corpus, "--restore", "-q", env=env)
    assert grep(corpus / "dialogue", MARKER) and not tomb.exists()


def test_forget_whole_sample_keeps_the_rest(work):
    marked, _ = marked_fixture(work / "inputs")
    corpus = work / "corpus"
    cli("dialogue", "compile", marked, TINY, "--out", corpus, "--offline", "-q")
    note = corpus / "dialogue" / "locomo-mini" / "my-notes.md"
    note.write_text("my own notes\n")
    tiny_before = {k: v for k, v in stats(corpus).items() if "/tiny/" in k}

    out = json.loads(cli("dialogue", "forget", "--sample", "locomo-mini", "--offline", "--json",
                         env={"WIKITRACE_CORPUS": str(corpus)}).stdout)
    assert out["after"]["messages"] == 0 and out["before"]["sessions"] == 4
    assert "dialogue/locomo-mini/memory.json" in out["files"]["removed"]
    assert grep(corpus, MARKER) == []
    left = sorted(p.name for p in (corpus / "dialogue" / "locomo-mini").iterdir())
    assert left == ["my-notes.md"]                                # the user's file is the user's
    assert {k: v for k, v in stats(corpus).items() if "/tiny/" in k} == tiny_before
    assert "locomo-mini" not in (corpus / "dialogue" / "_index.md").read_text()
    assert check_dialogue(corpus) == []
    proc = cli("query", "--corpus", corpus, "--sample", "locomo-mini", "cats?", check=False)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1

    proc = cli("dialogue", "compile", marked, TINY, "--out", corpus, "--offline", "--json")
    assert json.loads(proc.stdout)["forgotten"][0]["session"] is None
    assert grep(corpus, MARKER) == [] and not (corpus / "dialogue" / "locomo-mini" / "memory.json").exists()
    again = cli("dialogue", "forget", "--corpus", corpus, "--sample", "locomo-mini")
    assert "already forgotten" in again.stderr


def test_forget_refusals(work):
    one = work / "one.jsonl"
    one.write_text("".join(line for line in TINY.read_text().splitlines(True) if '"session": 1' in line))
    cli("dialogue", "compile", FIXTURE, one, "--out", work / "c", "--offline", "-q")
    before = tree(work / "c", hidden=True)
    for args, says in ((("--sample", "locomo-mini", "--session", "9"), "has no session '9' (sessions: 1, 2, 3, 4)"),
                       (("--sample", "one", "--session", "1"), "only session of sample one"),
                       (("--sample", "gone"), "no compiled sample 'gone'")):
        proc = cli("dialogue", "forget", "--corpus", work / "c", *args, check=False)
        assert proc.returncode == 2 and says in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1
        assert tree(work / "c", hidden=True) == before


def test_forget_a_sample_whose_memory_is_damaged(work):
    cli("dialogue", "compile", FIXTURE, TINY, "--out", work / "c", "--offline", "-q")
    mem = work / "c" / "dialogue" / "tiny" / "memory.json"
    mem.chmod(0o644)
    mem.write_text("not json")
    proc = cli("dialogue", "forget", "--corpus", work / "c", "--sample", "tiny")
    assert "could not be read" in proc.stderr
    assert not (work / "c" / "dialogue" / "tiny").exists() and (work / "c" / "dialogue" / "locomo-mini").is_dir()
    assert check_dialogue(work / "c") == []
    out = json.loads(cli("dialogue", "compile", TINY, "--out", work / "c", "--offline", "--json").stdout)
    assert out["forgotten"][0]["action"] == "left out" and not (work / "c" / "dialogue" / "tiny").exists()


def test_a_damaged_tombstone_file_stops_the_build_with_one_line(work):
    cli("dialogue", "compile", TINY, "--out", work / "c", "--offline", "-q")
    before = tree(work / "c")
    (work / "c" / ".wikitrace" / "dialogue-forgotten.json").write_text('{"samples": {"k": {"whole": "x"}}}')
    for args in (("dialogue", "compile", TINY, "--out", work / "c", "--offline"),
                 ("dialogue", "forget", "--corpus", work / "c", "--sample", "tiny")):
        proc = cli(*args, check=False)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
        assert "dialogue-forgotten.json: not the shape wikitrace writes" in proc.stderr
        assert tree(work / "c") == before                    # nothing forgotten or brought back by accident
