"""`wikitrace forget` through the installed CLI: a run removed on request leaves no
trace — no page, index line, search file, state entry or cached LLM answer holds its
text — and a rebuild from the same input keeps it out until `--restore`.

The input is examples/runs.jsonl plus one run with a unique marker in its task and in
a tool observation; the LLM path runs against the loopback fake, whose answer for that
run quotes the marker, so the response cache holds it until the run is forgotten."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import frontmatter

from fake_openai import merge_reply, reply, valid_answer
from helpers import EXAMPLES, example_runs, write_jsonl, without_build_stamp

WIKITRACE = shutil.which("wikitrace") or str(Path(sys.executable).parent / "wikitrace")
MARKER = "Quillwort-Basalt-8812"
INDEX_FILES = ("corpus.json", "index.md", "raw/_index.md", "compilation/_index.md", "insight/_index.md")


def marked_run() -> dict:
    """A native-format run with the marker in the task and in one tool observation (turn 2)."""
    return {
        "run_id": "locker-913", "outcome": {"success": True, "ended_by": "agent"},
        "task": {"id": "locker", "task_type": "refund",
                 "instruction": f"Reset the code of locker {MARKER} for customer Ivo Lund."},
        "turns": [
            {"type": "message", "role": "user", "content": f"Reset the code of locker {MARKER} for Ivo Lund.",
             "turn": 0},
            {"type": "function_call", "role": "assistant", "name": "find_locker", "arguments": {"owner": "Ivo Lund"},
             "result": json.dumps({"locker": MARKER, "owner": "Ivo Lund", "status": "locked"}), "turn": 1},
            {"type": "function_call", "role": "assistant", "name": "reset_code", "arguments": {"locker": "L 1"},
             "result": "Error: no locker named 'L 1'", "is_error": True, "turn": 2},
            {"type": "function_call", "role": "assistant", "name": "reset_code", "arguments": {"locker": "L-1"},
             "result": f"code of {MARKER} reset; new code sent to the owner", "is_error": False, "turn": 3},
            {"type": "message", "role": "assistant", "content": "The code is reset.", "turn": 4},
            {"type": "episode_over", "turn": 5},
        ],
    }


def twin_run() -> dict:
    """Another run that resets a locker's code (no marker): it teaches the marked run's
    procedure too, not its error."""
    run = marked_run()
    run["run_id"], run["task"] = "locker-207", {"id": "locker-2", "task_type": "refund",
                                                "instruction": "Reset the code of locker B-7 for customer Ada Holm."}
    run["turns"] = [
        {"type": "message", "role": "user", "content": "Reset the code of locker B-7 for Ada Holm.", "turn": 0},
        {"type": "function_call", "role": "assistant", "name": "find_locker", "arguments": {"owner": "Ada Holm"},
         "result": json.dumps({"locker": "B-7", "owner": "Ada Holm", "status": "locked"}), "turn": 1},
        {"type": "function_call", "role": "assistant", "name": "reset_code", "arguments": {"locker": "B-7"},
         "result": "code of B-7 reset; new code sent to the owner", "is_error": False, "turn": 2},
        {"type": "message", "role": "assistant", "content": "Done.", "turn": 3},
        {"type": "episode_over", "turn": 4},
    ]
    return run


def cli(*args, env=None):
    full = {k: v for k, v in os.environ.items() if k != "WIKITRACE_CORPUS"}
    full.update(env or {})
    return subprocess.run([WIKITRACE, *map(str, args)], capture_output=True, text=True, env=full, timeout=300)


def ok(proc):
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc


def answer_for(body):
    """A valid answer for any run (and any insight merge); for the marked run it quotes the marker (turn 2)."""
    if merge_reply(body) is not None:
        return merge_reply(body)
    system = body["messages"][0]["content"]
    outcome = "failure" if "failure_causes" in system else "success"
    if any(MARKER in m["content"] for m in body["messages"]):
        return reply(json.dumps(valid_answer(outcome, turns=[3], quote=f"code of {MARKER} reset")))
    return reply(json.dumps(valid_answer(outcome, turns=[1])))


def hits(*folders: Path, skip: Path | None = None) -> list[str]:
    """Every file under ``folders`` (hidden ones too) whose bytes hold the marker."""
    found = []
    for folder in folders:
        for p in folder.rglob("*"):
            if p.is_file() and p != skip and MARKER.encode() in p.read_bytes():
                found.append(str(p))
    return found


def pages_of_others(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
            if p.is_file() and not p.relative_to(root).as_posix().startswith((".wikitrace/", "index/"))
            and p.relative_to(root).as_posix() not in INDEX_FILES}


def without_evidence(page: bytes) -> str:
    """An insight page without its contrast: the Evidence section and the verdict field."""
    text = re.sub(r"^contrast_verdict: .*$", "", page.decode(), flags=re.M)
    return re.sub(r"## Evidence\n.*?(?=\n## Sources)", "", text, flags=re.S)


def prompt_json(corpus: Path) -> dict:
    return json.loads(ok(cli("prompt", "-c", corpus, "--task", "Refund an order for a customer", "--budget", "0",
                             "--json")).stdout)


def test_forget_leaves_no_trace_and_a_rebuild_keeps_the_run_out(fake_openai, tmp_path):
    data = write_jsonl(tmp_path / "runs.jsonl", example_runs() + [marked_run(), twin_run()])
    out, cache = tmp_path / "corpus", tmp_path / "answers"  # a cache outside the corpus, not the default one
    fake_openai.respond_with(answer_for)

    ok(cli("compile", data, "--out", out, "--offline", "-q"))
    assert hits(out), "the offline pages should hold the marker before forget"
    ok(cli("compile", data, "--out", out, "--cache-dir", cache, "-q"))
    corpus = json.loads((out / "corpus.json").read_text())
    entry = next(r for r in corpus["runs"] if r["run_id"] == "locker-913")
    assert entry["compiler"] == "llm" and corpus["counts"]["by_compiler"] == {"llm": 8}
    assert hits(cache), "the cached answer should quote the marker before forget"
    step, own_insights = entry["step"], entry["insights"]
    # One insight per lesson: those the marked run shares with other runs stay (one source
    # fewer), those only it taught go with it.
    listed = {i["id"]: i for i in corpus["insights"]}
    shared = [i for i in own_insights if len(listed[i]["sources"]) > 1]
    alone = [i for i in own_insights if i not in shared]
    assert shared and alone, (shared, alone)
    before = prompt_json(out)
    others_before = pages_of_others(out)

    proc = ok(cli("forget", "locker-913", "--corpus", out, "--json"))
    report = json.loads(proc.stdout)
    gone = report["forgotten"][0]
    assert (gone["run_id"], gone["step"], gone["insights"]) == ("locker-913", step, alone)
    assert f"compilation/{step}.md" in gone["files"] and f"raw/{step}/metadata.md" in gone["files"]
    # its own answer and the merges of every insight it was a source of (their prompts held its notes)
    assert report["cache"]["answers_removed"] == 1 + len(own_insights) and str(cache.resolve()) in report["cache"]["dirs"]

    # No file anywhere the build or the cache wrote holds the run's text.
    assert hits(tmp_path, skip=data) == []
    assert ok(cli("check", out)).returncode == 0
    after = pages_of_others(out)
    removed = {rel for rel in others_before if rel.startswith((f"raw/{step}/", f"compilation/{step}."))} | {
        f"insight/{i}.md" for i in alone}
    assert set(after) == set(others_before) - removed
    # other runs' pages do not change; a shared insight loses the run from its sources and counts;
    # the other insights of the task type change only in their contrast (one run fewer in the totals)
    changed = {rel for rel in after if after[rel] != others_before[rel]}
    assert {f"insight/{i}.md" for i in shared} <= changed and all(rel.startswith("insight/insight-") for rel in changed)
    for rel in changed - {f"insight/{i}.md" for i in shared}:
        assert without_evidence(after[rel]) == without_evidence(others_before[rel]), rel
    corpus = json.loads((out / "corpus.json").read_text())
    now = {i["id"]: i for i in corpus["insights"]}
    for i in shared:
        assert f"[{step}](" in others_before[f"insight/{i}.md"].decode() and step not in after[f"insight/{i}.md"].decode()
        assert now[i]["counts"]["runs"] == listed[i]["counts"]["runs"] - 1 == len(now[i]["sources"])
    assert step in corpus["retired"]["steps"] and set(alone) <= set(corpus["retired"]["insights"])
    assert not set(shared) & set(corpus["retired"]["insights"])
    assert corpus["counts"]["runs"] == 7
    after_prompt = prompt_json(out)
    assert len(after_prompt["insight_ids"]) == len(before["insight_ids"]) - len(alone)
    named = json.dumps(after_prompt)
    assert not any(i in named for i in alone) and step not in named

    # A rebuild from the same input skips the run, says so, and never sends it to the model.
    sent = len(fake_openai.requests)
    proc = ok(cli("compile", data, "--out", out, "--cache-dir", cache, "--json"))
    assert json.loads(proc.stdout)["forgotten"] == ["locker-913"]
    assert "1 run skipped: forgotten; pass --restore to compile them again" in proc.stderr
    assert not any(MARKER in json.dumps(r["body"]) for r in fake_openai.requests[sent:])
    assert hits(tmp_path, skip=data) == []
    assert ok(cli("check", out)).returncode == 0
    # forget asks no model: a shared insight showed the offline wording (marked) until this
    # compile merged it again; nothing else changed
    rebuilt = pages_of_others(out)
    remerged = {rel for rel in after if rebuilt.get(rel) != after[rel]}
    assert set(rebuilt) == set(after) and remerged <= {f"insight/{i}.md" for i in shared}
    for rel in remerged:
        assert frontmatter.loads(after[rel].decode())["guideline_by"] == "offline-fallback"
        assert frontmatter.loads(rebuilt[rel].decode())["guideline_by"] == "llm"

    # --restore brings it back, under ids never used before.
    proc = ok(cli("compile", data, "--out", out, "--cache-dir", cache, "--restore", "--json"))
    assert json.loads(proc.stdout)["forgotten"] == []
    corpus = json.loads((out / "corpus.json").read_text())
    back = next(r for r in corpus["runs"] if r["run_id"] == "locker-913")
    assert back["step"] != step and not set(back["insights"]) & set(alone)  # retired ids are never handed out again
    assert hits(out) and hits(cache)
    ok(cli("check", out))
    # ... and stays: the tombstone went with the restore.
    proc = ok(cli("compile", data, "--out", out, "--cache-dir", cache, "--json"))
    assert json.loads(proc.stdout)["forgotten"] == [] and hits(out)


def test_forget_by_step_id_then_the_corpus_can_be_compiled_empty(tmp_path):
    data = write_jsonl(tmp_path / "runs.jsonl", [marked_run()])
    out = tmp_path / "corpus"
    ok(cli("compile", data, "--out", out, "--offline", "-q"))
    proc = ok(cli("forget", "step-0000", "-c", out))
    assert "forgot locker-913 (step-0000)" in proc.stderr and "removed raw/step-0000/metadata.md" in proc.stderr
    assert hits(out) == [] and ok(cli("check", out))
    proc = ok(cli("compile", data, "--out", out, "--offline", "--json"))
    assert json.loads(proc.stdout)["runs"] == 0 and hits(out) == []
    # Forgetting it again is accepted (an interrupted forget is finished this way).
    proc = ok(cli("forget", "locker-913", "-c", out, "--json"))
    assert json.loads(proc.stdout)["forgotten"][0]["forgotten_before"] is True


def test_an_unknown_id_is_one_error_line_and_nothing_is_forgotten(tmp_path):
    out = tmp_path / "corpus"
    ok(cli("compile", EXAMPLES, "--out", out, "--offline", "-q"))
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and "tmp" not in p.parts}
    proc = cli("forget", "refund-001", "no-such-run", "-c", out)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("wikitrace: error: ")]
    assert len(lines) == 1 and "'no-such-run'" in lines[0] and "nothing was forgotten" in lines[0], proc.stderr
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file() and "tmp" not in p.parts}
    assert after == before
    assert not (out / ".wikitrace" / "forgotten.json").exists()


def test_forget_never_touches_files_the_build_did_not_write(tmp_path):
    out = tmp_path / "corpus"
    ok(cli("compile", EXAMPLES, "--out", out, "--offline", "-q"))
    step = next(r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]
                if r["run_id"] == "refund-001")
    note = out / "raw" / step / "my-notes.md"
    note.write_text("my own notes on this run\n")
    ok(cli("forget", "refund-001", "-c", out))
    assert note.read_text() == "my own notes on this run\n"
    assert not (out / "raw" / step / "metadata.md").exists()
    ok(cli("check", out))


def test_a_forget_killed_mid_update_is_finished_by_the_next_compile(tmp_path):
    import signal

    from helpers import tree_bytes

    data = write_jsonl(tmp_path / "runs.jsonl", example_runs() + [marked_run()])
    out, clean = tmp_path / "corpus", tmp_path / "clean"
    ok(cli("compile", data, "--out", out, "--offline", "-q"))
    shutil.copytree(out, clean)
    published = tree_bytes(out)
    ok(cli("forget", "locker-913", "-c", clean))
    final = tree_bytes(clean)

    # The kill is exact, not timed (a fixed sleep raced the command's start-up on a loaded
    # machine): count the forget's file replacements on a copy, then kill it half-way through.
    counter = tmp_path / "replacements"
    counted = tmp_path / "counted"
    shutil.copytree(out, counted)
    ok(cli("forget", "locker-913", "-c", counted, env={"WIKITRACE_KILL_AT": f"0:{counter}"}))  # 0 never fires
    points = counter.stat().st_size
    counter.unlink()
    env = {k: v for k, v in os.environ.items() if k != "WIKITRACE_CORPUS"}
    env["WIKITRACE_KILL_AT"] = f"{points // 2}:{counter}"
    proc = subprocess.run([WIKITRACE, "forget", "locker-913", "-c", str(out)], env=env, capture_output=True,
                          timeout=300, start_new_session=True)  # the kill takes the command's own session only
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (out / ".wikitrace" / "forgotten.json").is_file(), "the tombstone is written before anything else"
    interrupted = tree_bytes(out)
    assert interrupted != final, "the kill should land mid-update"
    for rel, blob in interrupted.items():  # every file is the old bytes or the new ones, never half
        assert blob in (published.get(rel), final.get(rel)), rel
    if "locker-913" in json.loads(interrupted["corpus.json"])["runs"].__repr__():
        proc = cli("check", out)
        assert proc.returncode == 1 and "was forgotten but is still listed" in proc.stdout

    ok(cli("compile", data, "--out", out, "--offline", "-q"))
    ok(cli("compile", data, "--out", clean, "--offline", "-q"))
    assert hits(out) == [] and ok(cli("check", out))
    assert without_build_stamp(tree_bytes(out)) == without_build_stamp(tree_bytes(clean))


def test_the_cache_purge_deletes_only_answers_tagged_with_a_forgotten_run(tmp_path):
    from wikitrace.llm.cache import CachedAnswer, ResponseCache, purge_runs

    cache = ResponseCache(tmp_path / "c")
    mine, other = "sha256:" + "a" * 64, "sha256:" + "b" * 64
    cache.put("1" * 64, CachedAnswer("about mine", runs=[mine]), model="m", mode="text", messages=[])
    cache.put("2" * 64, CachedAnswer("shared by both", runs=[other, mine]), model="m", mode="text", messages=[])
    cache.put("3" * 64, CachedAnswer("about the other", runs=[other]), model="m", mode="text", messages=[])
    cache.put("4" * 64, CachedAnswer("no tag (an older wikitrace)"), model="m", mode="text", messages=[])
    leftover = tmp_path / "c" / "55" / ".5555555555555555.99.tmp"  # a write killed half-way
    leftover.parent.mkdir()
    leftover.write_text('{"format": "wikitrace-llm-cache/1", "runs": ["' + mine + '"], "text": "abo')
    removed, untagged = purge_runs(tmp_path / "c", {mine})
    assert sorted(removed)[:2] == ["1" * 64, "2" * 64] and len(removed) == 3 and not leftover.exists()
    assert cache.get("3" * 64).text == "about the other" and cache.get("4" * 64) is not None
    assert cache.get("1" * 64) is None and cache.get("2" * 64) is None
    assert untagged == 1
