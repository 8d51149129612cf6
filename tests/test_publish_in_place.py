"""The corpus folder is the user's: git, editors, shells and mounts inside it survive rebuilds.

Each test works as a user would: a git repository at the corpus, notes and an
.obsidian/ folder beside the pages, a shell sitting inside it, a non-root owner
deleting it, a symlinked --out, damaged pages, builds killed with SIGKILL.
"""

import json
import os
import random
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus
from wikitrace.corpus.publish import BuildLock, PublishError

from helpers import EXAMPLES, example_runs, tree_bytes, write_jsonl

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def _build(inputs, out, **kw):
    return build(BuildOptions(inputs=list(inputs), out=out, quiet=True, **kw))


def git(cwd: Path, *args: str, user: list[str] | None = None) -> str:
    cmd = [*(user or []), GIT, "-c", "user.name=t", "-c", "user.email=t@example.org", "-c", "init.defaultBranch=main",
           *args]
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)})
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


def comparable(files: dict[str, bytes]) -> dict[str, bytes]:
    """Tree bytes without corpus.json's ``build`` block (time, call counts), the one part
    two builds of the same input may differ in."""
    files = dict(files)
    if "corpus.json" in files:
        data = json.loads(files["corpus.json"])
        data.pop("build")
        files["corpus.json"] = json.dumps(data).encode()
    return files


@needs_git
def test_a_git_repository_at_the_corpus_survives_and_diffs_only_the_added_run(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    git(out, "init", "-q")
    git(out, "add", "-A")
    git(out, "commit", "-qm", "memory of five runs")
    _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
    assert git(out, "log", "--format=%s").splitlines() == ["memory of five runs"], "history survives the rebuild"
    status = git(out, "status", "--porcelain", "--untracked-files=all").splitlines()
    modified = sorted(line[3:] for line in status if line.startswith(" M"))
    added = sorted(line[3:] for line in status if line.startswith("??"))
    assert len(modified) + len(added) == len(status), status  # nothing deleted, nothing else
    search_files = [f"index/grep/{layer}/{shard}.{ext}" for layer in ("compilation", "insight", "raw")
                    for shard in ("00", "head") for ext in ("map", "txt")]  # the shards the run and _index.md are in
    # insight pages the run taught again gain a source; the others of its task type change in their contrast only
    insight_pages = [m for m in modified if m.startswith("insight/insight-")]
    # the other trials of the run's task: a line of their "In short" set against it, nothing else
    runs_now = json.loads((out / "corpus.json").read_text())["runs"]
    task = next(r["task_id"] for r in runs_now if r["step"] == "step-0005")
    trial_pages = [m for m in modified if m in {f"compilation/{r['step']}.md" for r in runs_now
                                                if r["task_id"] == task and r["step"] != "step-0005"}]
    for page in trial_pages:
        lines = git(out, "diff", "-U0", "--", page).splitlines()
        assert all(ln.startswith(("+- ", "-- ", "@@", "+++", "---", "diff", "index")) for ln in lines), lines
    insight_pages += trial_pages
    assert [m for m in modified if not m.endswith(".words") and m not in insight_pages] == sorted(
        ["compilation/_index.md", "corpus.json", "index.md", "index/prompt.bin", "insight/_index.md", "raw/_index.md",
         *search_files])
    assert {m.rsplit(".", 1)[0] + ".txt" for m in modified if m.endswith(".words")} <= set(search_files)
    new_run = json.loads((out / "corpus.json").read_text())["runs"][-1]
    assert new_run["step"] == "step-0005"
    assert added == sorted(["raw/step-0005/metadata.md", "raw/step-0005/solver.full.jsonl", "raw/step-0005/turns.md",
                            "compilation/step-0005.md",
                            *(f"insight/{i}.md" for i in new_run["insights"] if f"insight/{i}.md" not in insight_pages)])
    for index in ("raw/_index.md", "compilation/_index.md"):  # the insight index lists counts, which change
        diff = git(out, "diff", "-U0", "--", index).splitlines()
        removed = [line for line in diff if line.startswith("-") and not line.startswith("---")]
        assert not any("step-000" in line or "insight-000" in line for line in removed), removed  # no entry rewritten
        assert any("step-0005" in line for line in diff if line.startswith("+")), index
    assert ".wikitrace" not in git(out, "ls-files"), "the build's own state stays out of the repository"
    assert check_corpus(out) == []


def test_user_files_obsidian_and_notes_survive_every_rebuild(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "all.jsonl", runs)], out)
    mine = {
        ".obsidian/app.json": '{"theme": "dark"}\n',
        "notes/what-i-learned.md": "# My notes\n",
        "insight/my-own-lesson.md": "not a wikitrace page\n",
        "raw/step-0000/annotation.md": "this run is odd\n",  # inside a run that leaves the input
        "todo.txt": "review step-0003\n",
    }
    for rel, text in mine.items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text)
    _build([write_jsonl(tmp_path / "fewer.jsonl", runs[1:])], out)  # step-0000 retired: its files go
    _build([write_jsonl(tmp_path / "again.jsonl", runs)], out)  # it comes back as step-0006
    for rel, text in mine.items():
        assert (out / rel).read_text() == text, rel
    assert not (out / "raw/step-0000/metadata.md").exists() and (out / "raw/step-0006/metadata.md").exists()
    assert check_corpus(out) == [], "check ignores what the build did not write"


def test_a_shell_and_an_open_folder_inside_the_corpus_see_the_rebuild(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    inode = out.stat().st_ino
    shell = subprocess.Popen(["sh", "-c", "read line; ls; ls ../raw"], cwd=out / "compilation",
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    fd = os.open(out / "raw", os.O_RDONLY | os.O_DIRECTORY)
    try:
        _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
        listed, _ = shell.communicate("go\n", timeout=30)
        assert "step-0005.md" in listed.split() and "step-0005" in listed.split()
        assert "step-0005" in os.listdir(fd)
        assert out.stat().st_ino == inode, "the folder is the same folder, never replaced"
    finally:
        os.close(fd)
        if shell.poll() is None:
            shell.kill()


def test_out_is_a_symlink_resolved_once_and_locked_as_the_real_folder(tmp_path):
    target = tmp_path / "real-corpus"
    link = tmp_path / "link"
    link.symlink_to(target)
    _build([EXAMPLES], link)
    assert link.is_symlink() and os.readlink(link) == str(target), "the link stays a link"
    assert (target / "corpus.json").is_file() and (target / ".wikitrace" / "lock").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real-corpus"], "nothing beside --out"
    with BuildLock(target):
        with pytest.raises(PublishError, match="another wikitrace build"):
            _build([EXAMPLES], link)
    _build([EXAMPLES], link)
    assert check_corpus(target) == []


def test_out_dot_builds_the_current_folder(tmp_path):
    out = tmp_path / "corpus"
    out.mkdir()
    cli = [sys.executable, "-m", "wikitrace.cli", "compile", str(EXAMPLES), "--out", ".", "--offline"]
    for _ in range(2):  # a new folder, then a rebuild of the corpus it holds
        done = subprocess.run(cli, cwd=out, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    assert check_corpus(out) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["corpus"]


def test_deleted_and_edited_pages_are_repaired_from_the_response_cache(tmp_path, fake_openai, monkeypatch):
    from fake_openai import merge_reply, reply, valid_answer

    fake_openai.respond_with(lambda body: merge_reply(body) or reply(valid_answer(
        "failure" if "failure_causes" in json.dumps(body) else "success", [0])))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    calls = fake_openai.calls
    built = tree_bytes(out)
    (out / "raw/step-0001/solver.full.jsonl").unlink()
    page = out / "compilation/step-0002.md"
    page.chmod(0o644)
    page.write_text(page.read_text().replace("## ", "## EDITED ", 1))
    (out / "insight/insight-0000.md").unlink()
    (out / "raw/_index.md").unlink()
    result = _build([EXAMPLES], out)
    assert sorted(result.repaired) == ["compilation/step-0002.md (edited)", "insight/insight-0000.md (missing)",
                                       "raw/_index.md (missing)", "raw/step-0001/solver.full.jsonl (missing)"]
    assert fake_openai.calls == calls, "answered from the response cache"
    assert comparable(tree_bytes(out)) == comparable(built)
    assert stat.S_IMODE(page.stat().st_mode) == 0o444
    assert json.loads((out / "corpus.json").read_text())["build"]["repaired"] == result.repaired
    assert check_corpus(out) == []
    cli = subprocess.run([sys.executable, "-m", "wikitrace.cli", "compile", str(EXAMPLES), "--out", str(out)],
                         capture_output=True, text=True, env={**os.environ, "OPENAI_BASE_URL": fake_openai.base_url})
    assert cli.returncode == 0 and "repaired" not in cli.stderr  # nothing left to repair
    (out / "compilation/step-0003.md").unlink()
    cli = subprocess.run([sys.executable, "-m", "wikitrace.cli", "compile", str(EXAMPLES), "--out", str(out)],
                         capture_output=True, text=True, env={**os.environ, "OPENAI_BASE_URL": fake_openai.base_url})
    assert cli.returncode == 0 and "repaired 1 file(s)" in cli.stderr and "compilation/step-0003.md (missing)" in cli.stderr


def test_a_user_file_where_a_page_would_go_stops_the_build_untouched(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    mine = out / "compilation" / "step-0005.md"
    mine.write_text("my page\n")
    with pytest.raises(PublishError, match="compilation/step-0005.md: exists but was not written by wikitrace"):
        _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
    assert mine.read_text() == "my page\n"
    assert not (out / "raw/step-0005").exists(), "files of the new run written before the stop are taken back"
    mine.rename(tmp_path / "my-page.md")  # as the message says: move it away, compile again
    _build([tmp_path / "six.jsonl"], out)
    assert check_corpus(out) == []


def test_dialogue_and_agent_builds_never_delete_each_others_files(tmp_path):
    from wikitrace.dialogue.build import DialogueOptions, compile_dialogues

    tiny = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    agent = tree_bytes(out)
    (out / "dialogue").mkdir()
    (out / "dialogue" / "my-notes.md").write_text("mine\n")
    compile_dialogues(DialogueOptions(inputs=[tiny], out=out))
    assert {k: v for k, v in tree_bytes(out).items() if not k.startswith("dialogue/")} == agent
    dialogue = {k: v for k, v in tree_bytes(out).items() if k.startswith("dialogue/")}
    runs = example_runs()
    _build([write_jsonl(tmp_path / "fewer.jsonl", runs[2:])], out)  # removes runs' files, never dialogue ones
    assert {k: v for k, v in tree_bytes(out).items() if k.startswith("dialogue/")} == dialogue
    compile_dialogues(DialogueOptions(inputs=[tiny], out=out))
    assert (out / "dialogue" / "my-notes.md").read_text() == "mine\n"
    assert check_corpus(out) == []


# --- a non-root owner ---------------------------------------------------------------------

def _as_nobody() -> list[str] | None:
    if os.geteuid() != 0:
        return []  # already not root: run as ourselves
    if shutil.which("setpriv"):
        return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return None


@needs_git
@pytest.mark.skipif(_as_nobody() is None, reason="running as root and setpriv is unavailable to drop to nobody")
def test_a_non_root_owner_can_check_out_stash_add_obsidian_and_delete_the_corpus(tmp_path):
    user = _as_nobody()
    base = Path(tempfile.mkdtemp(prefix="wikitrace-nobody-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        out = base / "corpus"
        _build([EXAMPLES], out)
        if user:  # the corpus belongs to the unprivileged user, as if it had compiled it
            for p in [base, *base.rglob("*")]:
                os.lchown(p, 65534, 65534)
        git(out, "init", "-q", user=user)
        git(out, "add", "-A", user=user)
        git(out, "commit", "-qm", "memory", user=user)
        page = "compilation/step-0001.md"

        def sh(script: str) -> None:
            done = subprocess.run([*user, "sh", "-c", script], cwd=out, capture_output=True, text=True)
            assert done.returncode == 0, (script, done.stderr)

        sh(f"rm {page} raw/step-0002/solver.full.jsonl")  # unlink needs a writable folder only
        git(out, "checkout", "--", ".", user=user)
        assert (out / page).is_file() and (out / "raw/step-0002/solver.full.jsonl").is_file()
        sh(f"chmod u+w {page} && echo edit >> {page}")
        git(out, "stash", "-q", user=user)
        assert "edit" not in (out / page).read_text()
        sh("mkdir .obsidian && echo '{}' > .obsidian/app.json")
        # a rebuild after the checkout: same bytes, so nothing is repaired; modes come back
        result = _build([EXAMPLES], out)
        assert result.repaired == [] and stat.S_IMODE((out / page).stat().st_mode) == 0o444
        if user:
            for p in [base, *base.rglob("*")]:
                os.lchown(p, 65534, 65534)
        sh("cd .. && rm -rf corpus")
        assert not out.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --- interrupted updates ------------------------------------------------------------------

def _inputs(tmp_path: Path) -> list[Path]:
    """Two inputs that differ by a changed run, a dropped run and a new one."""
    runs = example_runs()
    changed = json.loads(json.dumps(runs))
    changed[1]["turns"][2]["result"] += " (changed)"
    extra = json.loads(json.dumps(runs[0]))
    extra["run_id"] = "refund-001-again"
    extra["task"]["instruction"] += " (again)"
    return [write_jsonl(tmp_path / "a.jsonl", runs[:5]),
            write_jsonl(tmp_path / "b.jsonl", changed[:3] + changed[4:] + [extra])]


@pytest.mark.slow
def test_kill_9_at_random_points_of_an_update_then_a_rerun_converges(tmp_path):
    rng = random.Random(12)
    inputs = _inputs(tmp_path)
    out = tmp_path / "corpus"
    note = out / "notes" / "mine.md"
    # What each step must converge to: the same sequence of builds, never interrupted,
    # in a folder of its own (ids retired by earlier builds stay retired in both).
    ref = tmp_path / "reference"
    _build([inputs[0]], ref)
    _build([inputs[0]], out)
    note.parent.mkdir()
    note.write_text("mine\n")
    env = {**os.environ, "WIKITRACE_PUBLISH_PAUSE": "0.02"}
    mid_update = 0
    kills = 24
    for k in range(kills):
        which = (k + 1) % 2
        cmd = [sys.executable, "-m", "wikitrace.cli", "compile", str(inputs[which]), "--out", str(out), "--offline"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if k % 6 == 0:  # now and then during start-up, before the update began
            time.sleep(rng.uniform(0.0, 0.4))
        else:  # else at a random point of the update: ~20 files put in place or removed, 20 ms apart
            deadline = time.monotonic() + 20
            while not (out / ".wikitrace/runs.journal").exists() and proc.poll() is None \
                    and time.monotonic() < deadline:
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.6))
        journal = (out / ".wikitrace/runs.journal").exists()
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        mid_update += journal and proc.returncode == -signal.SIGKILL
        _build([inputs[which]], out)  # the rerun
        _build([inputs[which]], ref)
        got = comparable(tree_bytes(out))
        assert got.pop("notes/mine.md") == b"mine\n"
        assert got == comparable(tree_bytes(ref)), f"kill {k}: the rerun did not converge"
        assert check_corpus(out) == []
        assert not os.listdir(out / ".wikitrace" / "tmp"), "no temp file is left behind"
        assert all(stat.S_IMODE(p.stat().st_mode) == 0o444 for p in out.rglob("*")
                   if p.is_file() and ".wikitrace" not in p.parts and p != note)
    print(f"{mid_update} of {kills} kills landed inside an update")
    assert mid_update >= 15, f"only {mid_update} of {kills} kills landed inside an update"


def test_readers_looping_during_updates_never_meet_a_missing_file(tmp_path):
    inputs = _inputs(tmp_path)
    out = tmp_path / "corpus"
    _build([inputs[0]], out)
    problems: list[str] = []
    reads = [0]
    stop = threading.Event()

    def named(index_text: str, index: Path) -> list[Path]:
        import re

        return [(index.parent / t).resolve() for t in re.findall(r"\]\(([^)#\s]+)\)", index_text)]

    def reader() -> None:
        while not stop.is_set():
            for index in [out / "raw/_index.md", out / "compilation/_index.md", out / "insight/_index.md"]:
                text = index.read_text()
                for path in named(text, index):
                    try:
                        page = path.read_text()
                    except FileNotFoundError:
                        if path in named(index.read_text(), index):  # still named now: a real gap
                            problems.append(f"{index.name} names {path}, which is missing")
                        continue
                    reads[0] += 1
                    for linked in named(page, path):  # the page's own links
                        if not linked.exists() and path.exists() and linked in named(path.read_text(), path):
                            problems.append(f"{path} links {linked}, which is missing")
            data = json.loads((out / "corpus.json").read_text())
            for run in data["runs"]:
                for rel in (f"compilation/{run['step']}.md", f"raw/{run['step']}/solver.full.jsonl"):
                    if not (out / rel).exists():
                        now = json.loads((out / "corpus.json").read_text())
                        if any(r["step"] == run["step"] for r in now["runs"]):
                            problems.append(f"corpus.json names {rel}, which is missing")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for k in range(8):
            _build([inputs[(k + 1) % 2]], out)
    finally:
        stop.set()
        thread.join()
    assert problems == []
    assert reads[0] > 100, "the reader ran during the updates"


def test_a_corpus_of_an_earlier_wikitrace_is_taken_over_in_place(tmp_path):
    """Earlier builds swapped in a 0555 tree with no manifest: the first build now adopts
    it (its files are re-rendered and compared, rewritten only where they differ)."""
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    before = tree_bytes(out)
    shutil.rmtree(out / ".wikitrace")
    inodes = {p: p.stat().st_ino for p in out.rglob("*.md")}
    for p in [out, *out.rglob("*")]:
        if p.is_dir():
            p.chmod(0o555)
    result = _build([EXAMPLES], out)
    assert result.repaired == [] and comparable(tree_bytes(out)) == comparable(before)
    assert all(p.stat().st_ino == ino for p, ino in inodes.items()), "same bytes: not rewritten"
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o755 for p in [out, *out.rglob("*")] if p.is_dir())
    assert check_corpus(out) == []


def test_a_dialogue_build_repairs_its_pages_and_keeps_notes_inside_a_sample(tmp_path):
    from wikitrace.dialogue.build import DialogueOptions, compile_dialogues

    tiny = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
    out = tmp_path / "corpus"
    compile_dialogues(DialogueOptions(inputs=[tiny], out=out))
    built = tree_bytes(out)
    sample = out / "dialogue" / "tiny"
    (sample / "wiki" / "index.md").unlink()
    (sample / "my-reading-notes.md").write_text("mine\n")
    summary = compile_dialogues(DialogueOptions(inputs=[tiny], out=out))
    assert summary["repaired"] == ["dialogue/tiny/wiki/index.md (missing)"]
    after = tree_bytes(out)
    assert after.pop("dialogue/tiny/my-reading-notes.md") == b"mine\n"
    assert after == built


def test_kill_9_while_the_page_writer_process_writes_then_a_rerun_converges(tmp_path):
    """Past 32 runs the pages are written by a helper process; it dies with the build."""
    from test_build import _many_runs

    runs = _many_runs(48)
    first, second = write_jsonl(tmp_path / "a.jsonl", runs[:40]), write_jsonl(tmp_path / "b.jsonl", runs[4:])
    out, ref = tmp_path / "corpus", tmp_path / "reference"
    for folder in (out, ref):
        _build([first], folder)
    env = {**os.environ, "WIKITRACE_PUBLISH_PAUSE": "0.01"}
    tpl = tmp_path / "templates"  # the bundled templates, under another build key
    tpl.mkdir()
    (tpl / "NOTES.txt").write_text("no override; a file here changes the build key\n")
    cmd = [sys.executable, "-m", "wikitrace.cli", "compile", str(second), "--out", str(out), "--offline",
           "--templates", str(tpl)]  # another build key: every page is written again, most by the helper
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def page_writers() -> list[int]:
        try:
            children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
            return [int(c) for c in children if b"wikitrace.corpus.pages" in Path(f"/proc/{c}/cmdline").read_bytes()]
        except OSError:
            return []

    deadline = time.monotonic() + 60
    while not (writers := page_writers()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)  # the writer is putting the later runs' pages in place, 10 ms apart
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the build ended before the kill"
    assert writers, "the page writer process was at work when the build was killed"

    def state(pid: int) -> str:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return "Z"  # gone

    # The kernel kills the writer when its build dies; on a loaded machine that can take a
    # while to be scheduled, so wait for it (a fixed sleep raced it) rather than for a time.
    deadline = time.monotonic() + 30
    while any(state(pid) != "Z" for pid in writers) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in writers:  # gone, or a zombie nobody reaps here: not writing
        assert state(pid) == "Z", "the page writer outlived the build"
    _build([second], out, templates=tpl)
    _build([second], ref, templates=tpl)
    assert comparable(tree_bytes(out)) == comparable(tree_bytes(ref))
    assert check_corpus(out) == [] and not os.listdir(out / ".wikitrace" / "tmp")


def test_a_deleted_corpus_json_is_rebuilt_with_the_same_ids(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "all.jsonl", runs)], out)
    _build([write_jsonl(tmp_path / "fewer.jsonl", runs[1:])], out)  # step-0000 is retired
    kept = tree_bytes(out)
    (out / "corpus.json").unlink()
    result = _build([tmp_path / "fewer.jsonl"], out)
    assert result.repaired == ["corpus.json (missing)"]
    assert comparable(tree_bytes(out)) == comparable(kept), "the ids came from the manifest"
    _build([tmp_path / "all.jsonl"], out)
    steps = {r["run_id"]: r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]}
    assert steps["refund-001"] == "step-0006", "a retired id is never handed out again"


def test_a_layer_folder_that_is_a_symlink_is_not_followed_out(tmp_path):
    out = tmp_path / "corpus"
    outside = tmp_path / "outside"
    outside.mkdir()
    _build([EXAMPLES], out)
    shutil.copytree(out / "raw", outside / "raw")
    shutil.rmtree(out / "raw")
    (out / "raw").symlink_to(outside / "raw")  # the raw layer now points out of the corpus
    for p in (outside / "raw").rglob("*"):
        if p.is_file():
            p.chmod(0o644)
    before = tree_bytes(outside)
    cli = subprocess.run([sys.executable, "-m", "wikitrace.cli", "compile", str(EXAMPLES), "--out", str(out),
                          "--offline"], capture_output=True, text=True)
    assert cli.returncode == 1 and "Traceback" not in cli.stderr
    assert "is never followed out of the corpus" in " ".join(cli.stderr.split())
    assert tree_bytes(outside) == before and all(p.stat().st_mode & 0o200 for p in outside.rglob("*")), \
        "nothing outside was written or chmod-ed"


def test_a_user_file_inside_a_new_run_s_folder_stops_the_build_too(tmp_path):
    """The names already there are read once per folder: one in a folder the build has not
    made yet (a run's raw folder the user created) is found as well."""
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    (out / "raw/step-0005").mkdir()
    mine = out / "raw/step-0005/metadata.md"
    mine.write_text("my notes\n")
    with pytest.raises(PublishError, match="raw/step-0005/metadata.md: exists but was not written by wikitrace"):
        _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
    assert mine.read_text() == "my notes\n"
    assert not list((out / ".wikitrace/tmp").iterdir())  # nothing the stopped build made is left behind
