"""The corpus compiler end to end: layout, determinism, stable ids, publishing in place, check."""

import json
import stat
from pathlib import Path

import frontmatter
import pytest

from wikitrace.add import add_run
from wikitrace.build import BuildError, BuildOptions, build
from wikitrace.errors import Failed
from wikitrace.runs.model import RunError
from wikitrace.check import check_corpus
from wikitrace.corpus.publish import BuildLock, PublishError

from helpers import (EXAMPLES, example_runs, make_writable_copy, tree_bytes, without_build_stamp,
                     write_jsonl)


def _build(inputs, out, **kw):
    return build(BuildOptions(inputs=list(inputs), out=out, quiet=True, **kw))


def test_example_corpus_layout(tmp_path):
    out = tmp_path / "corpus"
    result = _build([EXAMPLES], out)
    assert (result.runs, result.success, result.failure) == (6, 3, 3)
    assert check_corpus(out) == []
    for layer in ("raw", "compilation", "insight"):
        assert (out / layer / "_index.md").is_file()
    assert not (out / "_index.md").exists(), "the paper's corpus has no root index"
    assert (out / "raw/step-0000/solver.full.jsonl").is_file()
    meta = frontmatter.load(out / "raw/step-0000/metadata.md").metadata
    assert meta["run_id"] == "refund-001" and meta["outcome"] == "success" and meta["steps"] == 3
    comp = frontmatter.load(out / "compilation/step-0001.md")
    assert comp["compiler"] == "offline" and comp["outcome"] == "failure"
    assert "## Failure Causes" in comp.content and "harness" in comp.content
    for ins_id in comp["insights"]:
        ins = frontmatter.load(out / f"insight/{ins_id}.md")
        assert ins["source_step"] == "step-0001" and ins["source_outcome"] == "failure"
        assert "(../compilation/step-0001.md)" in ins.content
        # each source by its link and outcome; the mount paths of its pages once, above the list
        assert "- [step-0001](../compilation/step-0001.md) (failure)" in ins.content
        assert "`<step>.md` in `/work/corpus/compilation/`, its log the folder `<step>/` in `/work/corpus/raw/`" in ins.content
    data = json.loads((out / "corpus.json").read_text())
    assert data["counts"]["runs"] == 6 and len(data["insights"]) == result.insights
    assert all(1 <= len(r["insights"]) <= 3 for r in data["runs"])


def _published_modes_ok(out: Path) -> None:
    for p in [out, *out.rglob("*")]:
        if ".wikitrace" in p.relative_to(out).parts:
            continue
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode == (0o755 if p.is_dir() else 0o444), p


def test_corpus_files_are_read_only_and_folders_the_owners(tmp_path):
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    _published_modes_ok(out)


def test_rebuild_is_byte_identical(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    _build([EXAMPLES], a)
    _build([EXAMPLES], b)
    assert without_build_stamp(tree_bytes(a)) == without_build_stamp(tree_bytes(b))
    before = tree_bytes(a)
    _build([EXAMPLES], a)  # in place, over the published corpus
    after = tree_bytes(a)
    assert {k for k in before if before[k] != after[k]} <= {"corpus.json"}


# What every build writes afresh from all runs: the indexes (root page included), the
# manifest, the prompt index; and grep's search files of the shards the new run and the
# _index.md pages are in (``00`` and ``head`` here: fewer than 100 runs). A shard's
# word list changes only when the new text brings a new word.
_SHARDS = [f"index/grep/{layer}/{shard}" for layer in ("raw", "compilation", "insight") for shard in ("head", "00")]
REGENERATED = {"index.md", "raw/_index.md", "compilation/_index.md", "insight/_index.md", "corpus.json",
               "index/prompt.bin"} | {f"{shard}.{ext}" for shard in _SHARDS for ext in ("txt", "map")}
WORD_LISTS = {f"{shard}.words" for shard in _SHARDS}


def contrast_only(before: dict, after: dict, changed: set) -> set:
    """The insight pages among ``changed``: each must differ only in its contrast (one more run
    in the task type's totals, or one more trial of a source's task to compare with, and the
    advice and cases drawn from that comparison) unless the new run is among its sources."""
    import re

    def strip(page: bytes) -> str:
        text = re.sub(r"^contrast_verdict: .*$", "", page.decode(), flags=re.M)
        text = re.sub(r"\n\n(?:Where a failed run here|What set these successful runs|In a run like these|What it did that|Set against the)[^\n]*", "",
                      text)
        text = re.sub(r" Failed runs ended this way too; [^\n]*", "", text)
        text = re.sub(r"## Cases\n.*?(?=\n## )", "", text, flags=re.S)  # a success's case: its line against the trials
        return re.sub(r"## Evidence\n.*?(?=\n## Sources)", "", text, flags=re.S)

    pages = {k for k in changed if k.startswith("insight/insight-")}
    for rel in pages:
        if strip(before[rel]) != strip(after[rel]):
            assert before[rel].count(b"\n- [step-") < after[rel].count(b"\n- [step-"), rel  # a new source
    return pages


def trial_lines_only(before: dict, after: dict, changed: set, corpus: Path, step: str) -> set:
    """The compilation pages among ``changed`` of other trials of ``step``'s task: each may
    differ only in its "In short" (its line against the trials of the other outcome)."""
    import json
    import re

    runs = json.loads((corpus / "corpus.json").read_text())["runs"]
    task = next(r["task_id"] for r in runs if r["step"] == step)
    pages = {f"compilation/{r['step']}.md" for r in runs if r["task_id"] == task and r["step"] != step} & changed
    for rel in pages:
        outside = [re.sub(r"\n## In short\n.*?(?=\n## )", "", page[rel].decode(), flags=re.S) for page in (before, after)]
        assert outside[0] == outside[1], rel
    return pages


def test_one_more_run_changes_only_its_files(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    before = tree_bytes(out)
    _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
    after = tree_bytes(out)
    changed = {k for k in before if before[k] != after[k]}
    added = set(after) - set(before)
    assert changed - WORD_LISTS - contrast_only(before, after, changed) \
        - trial_lines_only(before, after, changed, out, "step-0005") <= REGENERATED
    assert set(before) - set(after) == set()
    assert {"raw/step-0005/metadata.md", "raw/step-0005/solver.full.jsonl", "compilation/step-0005.md"} <= added
    new_insights = {a for a in added if a.startswith("insight/")}
    old_count = sum(1 for k in before if k.startswith("insight/insight-"))  # ids continue after the old ones
    assert new_insights and all(int(a[len("insight/insight-"):-3]) >= old_count for a in new_insights)


def test_rebuild_skips_parsing_records_it_compiled_before(tmp_path, monkeypatch):
    runs = example_runs()
    out = tmp_path / "corpus"
    src = write_jsonl(tmp_path / "runs.jsonl", runs[:5])
    _build([src], out)
    assert json.loads((out / ".wikitrace/runs.json").read_text())["data"]["records"], "record digests are the build's state"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == [], "nothing is written beside --out"
    assert "record_digest" not in (out / "corpus.json").read_text()
    import wikitrace.runs.native as native

    parsed = []
    real = native.run_from_dict
    monkeypatch.setattr(native, "run_from_dict", lambda obj, where, **kw: parsed.append(obj["run_id"]) or real(obj, where, **kw))
    runs[1]["turns"][2]["result"] += " (changed)"
    write_jsonl(src, runs)  # one record changed, one added
    result = _build([src], out)
    assert parsed == [runs[1]["run_id"], runs[5]["run_id"]]
    assert result.runs == 6 and (result.success, result.failure) == (3, 3)
    data = json.loads((out / "corpus.json").read_text())
    assert data["build"]["reused_runs"] == 4
    assert "(changed)" in (out / "raw/step-0001/solver.full.jsonl").read_text()
    assert check_corpus(out) == []
    # The same corpus from scratch: the same pages, but for insight ids. A lesson keeps its id
    # while a run teaches it, so the changed run's new lesson takes the next free id here, where
    # a fresh build numbers lessons in input order.
    fresh = tmp_path / "fresh"
    _build([src], fresh)
    a, b = tree_bytes(fresh), tree_bytes(out)
    def by_key(root):
        data = json.loads((root / "corpus.json").read_text())
        return sorted((i["key"], [s["step"] for s in i["sources"]], i["counts"], i["guideline"]) for i in data["insights"])
    assert by_key(fresh) == by_key(out)
    assert {k: v for k, v in a.items() if k.startswith("raw/") and not k.endswith("metadata.md")} == \
        {k: v for k, v in b.items() if k.startswith("raw/") and not k.endswith("metadata.md")}


def test_rebuild_after_the_code_changed_compiles_every_run_again(tmp_path, monkeypatch):
    """A development checkout changes the code without changing the version: the pages the old
    code wrote must not be kept for unchanged runs."""
    import wikitrace.code_digest as code

    out = tmp_path / "corpus"
    src = write_jsonl(tmp_path / "runs.jsonl", example_runs()[:5])
    _build([src], out)
    _build([src], out)
    assert json.loads((out / "corpus.json").read_text())["build"]["reused_runs"] == 5
    monkeypatch.setattr(code, "_digest", "another version of the code")
    one = write_jsonl(tmp_path / "one.jsonl", example_runs()[5:6])
    before = tree_bytes(out)
    with pytest.raises(Failed, match="from other source code .* rebuild it once"):
        add_run(one, out)  # add would write pages the full build's code would not
    assert tree_bytes(out) == before
    _build([src], out)
    assert json.loads((out / "corpus.json").read_text())["build"]["reused_runs"] == 0
    assert check_corpus(out) == []
    assert add_run(one, out).added


def test_new_run_first_in_input_keeps_old_ids(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "a.jsonl", runs[1:])], out)
    first = json.loads((out / "corpus.json").read_text())
    _build([write_jsonl(tmp_path / "b.jsonl", [runs[0]] + runs[1:])], out)
    second = json.loads((out / "corpus.json").read_text())
    old = {r["run_id"]: (r["step"], r["insights"]) for r in first["runs"]}
    new = {r["run_id"]: (r["step"], r["insights"]) for r in second["runs"]}
    assert all(new[k] == v for k, v in old.items())
    assert new["refund-001"][0] == "step-0005"
    assert check_corpus(out) == []


def test_dropped_run_ids_are_retired(tmp_path):
    runs = example_runs()
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "a.jsonl", runs)], out)
    result = _build([write_jsonl(tmp_path / "b.jsonl", runs[1:])], out)
    assert result.dropped_runs == ["refund-001"]
    data = json.loads((out / "corpus.json").read_text())
    assert "step-0000" in data["retired"]["steps"]
    _build([write_jsonl(tmp_path / "c.jsonl", runs)], out)  # it comes back: a new id, never the retired one
    data = json.loads((out / "corpus.json").read_text())
    assert {r["run_id"]: r["step"] for r in data["runs"]}["refund-001"] == "step-0006"


def test_interrupted_build_leaves_previous_corpus(tmp_path, monkeypatch):
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    before = tree_bytes(out)
    import wikitrace.build as b

    calls = {"n": 0}
    real = b._Writer.__call__

    def dying(self, run, digest, comp):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt("killed mid-build")
        return real(self, run, digest, comp)

    monkeypatch.setattr(b._Writer, "__call__", dying)
    with pytest.raises(KeyboardInterrupt):
        _build([EXAMPLES], out)
    assert tree_bytes(out) == before
    monkeypatch.setattr(b._Writer, "__call__", real)
    _build([EXAMPLES], out)
    assert check_corpus(out) == []


def test_refuses_to_replace_a_folder_that_is_not_a_corpus(tmp_path):
    out = tmp_path / "notes"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    with pytest.raises(PublishError, match="holds no corpus; choose a new or empty folder"):
        _build([EXAMPLES], out)
    assert (out / "mine.txt").read_text() == "keep me"


def test_concurrent_build_is_refused(tmp_path):
    out = tmp_path / "corpus"
    with BuildLock(out):
        with pytest.raises(PublishError, match="another wikitrace build"):
            _build([EXAMPLES], out)


def test_bad_lines_are_reported_and_the_rest_builds(tmp_path):
    runs = example_runs()
    src = tmp_path / "mixed.jsonl"
    lines = [json.dumps(runs[0]), "{not json", json.dumps({**runs[1], "outcome": {"success": "maybe"}}),
             json.dumps(runs[2]), json.dumps(runs[0])]
    src.write_text("\n".join(lines) + "\n")
    result = _build([src], tmp_path / "corpus")
    assert result.runs == 2
    joined = "\n".join(result.skipped)
    assert f"{src}:2: not valid JSON" in joined
    assert f"{src}:3:" in joined and "outcome.success" in joined
    assert "appears again" in joined
    data = json.loads((tmp_path / "corpus" / "corpus.json").read_text())
    assert len(data["build"]["skipped"]) == 3


def test_nothing_readable_publishes_nothing(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text("{oops\n")
    with pytest.raises(BuildError, match="nothing was published"):
        _build([src], tmp_path / "corpus")
    assert not (tmp_path / "corpus").exists()


def test_template_override_changes_one_document_kind(tmp_path):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    (tpl / "insight.md.j2").write_text("---\n{{ frontmatter }}---\nLESSON: {{ insight.guideline }}\n"
                                      "[compilation]({{ link.rel(compilation) }})\n")
    out = tmp_path / "corpus"
    _build([EXAMPLES], out, templates=tpl)
    text = (out / "insight/insight-0000.md").read_text()
    assert "LESSON: " in text and "## Applicability" not in text
    assert "## Key Decisions" in (out / "compilation/step-0000.md").read_text()
    assert check_corpus(out) == []


def test_mount_path_is_used_in_absolute_links(tmp_path):
    out = tmp_path / "corpus"
    _build([EXAMPLES], out, mount_path="/mnt/memory")
    text = (out / "insight/insight-0000.md").read_text()
    assert "`/mnt/memory/compilation/`" in text and "`/mnt/memory/raw/`" in text
    assert "/work/corpus" not in text
    assert check_corpus(out) == []


def test_check_finds_broken_corpus(tmp_path):
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    bad = make_writable_copy(out, tmp_path / "bad")
    (bad / "insight/insight-0003.md").unlink()
    comp = bad / "compilation/step-0000.md"
    comp.write_text(comp.read_text().replace("`turn step-0000 2`", "`turn step-0000 99`"))
    idx = bad / "raw/_index.md"
    idx.write_text("\n".join(l for l in idx.read_text().splitlines() if "step-0004" not in l))
    problems = "\n".join(check_corpus(bad))
    assert "insight-0003" in problems and "missing" in problems
    assert "turn step-0000 99" in problems
    assert "raw/_index.md: does not list step-0004" in problems


def test_tau_bench_offline(tau_bench_corpus):
    out, result = tau_bench_corpus
    assert (result.runs, result.success, result.failure) == (200, 84, 116)
    data = json.loads((out / "corpus.json").read_text())
    assert all(len(r["insights"]) <= 3 for r in data["runs"])
    # a run teaches none only when it is a success that looked nothing up and changed nothing (its
    # task needed no change): its page says so rather than linking a lesson
    bare = [r for r in data["runs"] if not r["insights"]]
    assert bare and all(r["outcome"] == "success" for r in bare)
    for r in bare:
        page = (out / "compilation" / f"{r['step']}.md").read_text()
        assert "## Insights from this run\n- None: this run's log shows no step another run could copy or avoid." in page
        turns = [json.loads(x) for x in (out / "raw" / r["step"] / "solver.full.jsonl").read_text().splitlines() if x]
        # no look-up and no change: at most a hand-off
        assert all("transfer" in (t.get("name") or "") for t in turns if t.get("type") == "function_call"), r["step"]
    assert len(list((out / "compilation").glob("step-*.md"))) == 200
    assert check_corpus(out) == []
    assert all(r["compiler"] == "offline" for r in data["runs"])


HOSTILE_IDS = ["../../x", "/etc/passwd", "a\x00b", "x" * 5000, "..", "C:\\Windows\\evil", "\u202egnp.exe"]


def test_hostile_run_ids_never_leave_the_output_folder(tmp_path):
    runs = example_runs()
    for run, rid in zip(runs, HOSTILE_IDS):
        run["run_id"] = rid
        run["task"]["id"] = rid
    work = tmp_path / "work"
    work.mkdir()
    out = work / "corpus"
    _build([write_jsonl(tmp_path / "runs.jsonl", runs)], out)
    outside = {p for p in tmp_path.rglob("*") if not str(p).startswith(str(work))}
    assert outside == {tmp_path / "runs.jsonl"}, outside
    inside = {p.name for p in work.iterdir()}
    assert inside == {"corpus"}
    assert all(p.name.startswith(("step-", "insight-", "_index", "metadata", "solver", "original", "corpus", "prompt",
                                  "turns.md", "index.md", "head.", "00."))
               or p.is_dir() for p in out.rglob("*") if ".wikitrace" not in p.parts)
    data = json.loads((out / "corpus.json").read_text())
    assert {r["run_id"] for r in data["runs"]} >= {"../../x", "/etc/passwd"}  # kept as data, never as paths
    assert check_corpus(out) == []


def test_hostile_dialogue_sample_ids_stay_inside(tmp_path):
    from wikitrace.dialogue.load import _slug

    for raw in HOSTILE_IDS:
        name = _slug(raw)
        assert name and "/" not in name and "\\" not in name and not name.startswith(".")
        assert "\x00" not in name and len(name.encode()) <= 120
        assert (tmp_path / "dialogue" / name).resolve().parent == (tmp_path / "dialogue").resolve()


def test_tools_on_the_tau_bench_corpus(tmp_path, tau_bench_corpus):
    import subprocess
    import sys

    from wikitrace.tools_install import install

    out, _ = tau_bench_corpus
    tools = tmp_path / "tools"
    install(tools)
    env = {"WIKITRACE_CORPUS": str(out), "PATH": "/usr/bin:/bin", "WIKITRACE_TOOLS_NO_RG": "1"}
    comp = frontmatter.load(out / "compilation/step-0000.md")
    import re

    step, first = re.search(r"`turn (step-\d+) (\d+)", comp.content).groups()
    shown = subprocess.run([sys.executable, str(tools / "turn"), step, first], env=env, capture_output=True, text=True)
    assert shown.returncode == 0 and f"turn {first}" in shown.stdout
    actions = subprocess.run([sys.executable, str(tools / "actions"), step], env=env, capture_output=True, text=True)
    assert actions.returncode == 0 and "book_reservation" in actions.stdout
    bad = subprocess.run([sys.executable, str(tools / "turn"), "step-0999", "1"], env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and "step-0000..step-0199" in bad.stderr
    hits = subprocess.run([sys.executable, str(tools / "grep"), "payment", "--layer", "compilation", "--max", "5"],
                          env=env, capture_output=True, text=True)
    assert hits.returncode == 0 and "/compilation/step-" in hits.stdout


def test_agent_runs_join_a_dialogue_only_corpus(tmp_path):
    import subprocess
    import sys

    out = tmp_path / "corpus"
    tiny = Path(__file__).parent / "fixtures" / "dialogue" / "tiny.jsonl"
    done = subprocess.run([sys.executable, "-m", "wikitrace.cli", "dialogue", "compile", str(tiny), "--out", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert check_corpus(out) == [], "a dialogue-only corpus checks clean"
    asked = subprocess.run([sys.executable, "-m", "wikitrace.cli", "query", "--corpus", str(out), "--json",
                            "Where does Ana work?"], capture_output=True, text=True)
    assert asked.returncode == 0, asked.stderr
    packet = json.loads(asked.stdout)
    assert packet["question"] == "Where does Ana work?"
    assert "S1:3" in json.dumps(packet), "the message saying where Ana works is in the evidence"
    before = tree_bytes(out / "dialogue")
    _build([EXAMPLES], out)
    assert tree_bytes(out / "dialogue") == before
    assert check_corpus(out) == []


def _many_runs(n: int) -> list[dict]:
    """``n`` distinct runs made from the examples (new ids, a word changed in the task)."""
    base = example_runs()
    out = []
    for i in range(n):
        run = json.loads(json.dumps(base[i % len(base)]))
        run["run_id"] = f"{run['run_id']}-copy-{i}"
        run["task"]["instruction"] += f" (copy {i})"
        out.append(run)
    return out


def test_helper_process_writes_the_same_tree_as_this_process(tmp_path, monkeypatch):
    """Past HELPER_AFTER runs the pages are rendered and written by a helper
    process; the published bytes must not depend on which process wrote them."""
    from wikitrace.build import _Writer

    src = write_jsonl(tmp_path / "many.jsonl", _many_runs(_Writer.HELPER_AFTER + 12))
    helper, local = tmp_path / "helper", tmp_path / "local"
    from wikitrace.corpus.pages import HelperSink

    spawned = []

    class Counting(HelperSink):
        def __init__(self, *a):
            spawned.append(a)
            super().__init__(*a)

    monkeypatch.setattr("wikitrace.corpus.pages.HelperSink", Counting)
    _build([src], helper)
    assert len(spawned) == 1
    monkeypatch.setattr(_Writer, "HELPER_AFTER", 10**9)
    _build([src], local)
    assert len(spawned) == 1
    assert without_build_stamp(tree_bytes(helper)) == without_build_stamp(tree_bytes(local))
    assert check_corpus(helper) == []


@pytest.mark.parametrize("failing_step", ["step-0008", "step-0046"])  # this process / the helper
def test_a_page_that_cannot_be_written_fails_the_build_and_publishes_nothing(tmp_path, failing_step):
    tpl = tmp_path / "tpl"
    tpl.mkdir()
    bundled = Path(__file__).resolve().parent.parent / "corpus_templates" / "raw_metadata.md.j2"
    (tpl / "raw_metadata.md.j2").write_text(
        f'{{% if step == "{failing_step}" %}}{{{{ 1 // 0 }}}}{{% endif %}}' + bundled.read_text())
    src = write_jsonl(tmp_path / "many.jsonl", _many_runs(44))  # step-0006 ... step-0049
    out = tmp_path / "corpus"
    _build([EXAMPLES], out)
    before = tree_bytes(out)
    with pytest.raises(BuildError) as err:
        _build([src], out, templates=tpl)
    message = str(err.value)
    assert failing_step in message and "ZeroDivisionError" in message and "corpus was not updated" in message
    assert tree_bytes(out) == before, "the pages of new runs written before the failure are taken back"
    assert check_corpus(out) == []
    _build([src], out)  # the template fixed: the same input publishes
    assert check_corpus(out) == [] and len(json.loads((out / "corpus.json").read_text())["runs"]) == 44


def test_unchanged_runs_are_not_touched_when_one_is_added(tmp_path):
    runs = _many_runs(45)
    out = tmp_path / "corpus"
    _build([write_jsonl(tmp_path / "a.jsonl", runs[:44])], out)
    before = tree_bytes(out)
    stats = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*") if p.is_file()}
    _build([write_jsonl(tmp_path / "b.jsonl", runs)], out)
    after = tree_bytes(out)
    changed = {k for k in before if before[k] != after[k]}
    insights = contrast_only(before, after, changed) | trial_lines_only(before, after, changed, out, "step-0044")
    assert changed - WORD_LISTS - insights <= REGENERATED
    assert {k.split("/")[1] for k in set(after) - set(before) if k.startswith("raw/")} == {"step-0044"}
    untouched = {p.relative_to(out).as_posix() for p, st in stats.items()
                 if p.exists() and (p.stat().st_ino, p.stat().st_mtime_ns) == st}
    assert untouched >= set(before) - REGENERATED - WORD_LISTS - insights  # not rewritten, not relinked: the same inodes
    assert json.loads((out / "corpus.json").read_text())["build"]["reused_runs"] == 44
    _published_modes_ok(out)  # pages from both processes and the indexes


@pytest.fixture
def read_beside(monkeypatch):
    """Every input counts as large: the runs are read by the helper process."""
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 0)


def test_reading_in_a_helper_process_changes_nothing(tmp_path, read_beside, monkeypatch):
    runs = example_runs()
    src = tmp_path / "mixed.jsonl"
    lines = [json.dumps(runs[0]), "{not json", json.dumps({**runs[1], "outcome": {"success": "maybe"}}),
             *map(json.dumps, runs[2:]), json.dumps(runs[0])]
    src.write_text("\n".join(lines) + "\n")
    beside = _build([src], tmp_path / "beside")
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 10**12)
    here = _build([src], tmp_path / "here")
    assert without_build_stamp(tree_bytes(tmp_path / "beside")) == without_build_stamp(tree_bytes(tmp_path / "here"))
    assert beside.skipped == here.skipped and len(beside.skipped) == 3
    assert beside.report.summary() == here.report.summary()
    assert beside.detected == here.detected == {str(src): "native"}


def test_a_strict_stop_in_the_reader_process_is_the_same_error(tmp_path, read_beside):
    swe = Path(__file__).resolve().parent / "fixtures" / "importers" / "swe_agent"  # one run has no verdict
    with pytest.raises(RunError, match=r"no outcome for run 'psf__requests-2317'.*--outcomes FILE"):
        _build([swe], tmp_path / "corpus", strict=True)
    assert not (tmp_path / "corpus").exists()
    result = _build([swe], tmp_path / "corpus")  # not strict: skipped and reported
    assert result.report.missing_outcome == 1 and any("psf__requests-2317" in e for e in result.skipped)


def test_outcome_counts_come_from_the_reader_before_any_call(tmp_path, read_beside, fake_openai, monkeypatch):
    from fake_openai import reply, valid_answer

    fake_openai.respond_with(lambda body: reply(valid_answer(
        "failure" if "failure_causes" in json.dumps(body) else "success", [0])))
    monkeypatch.setenv("WIKITRACE_CACHE_DIR", str(tmp_path / "cache"))
    lines: list[str] = []
    calls_when_announced = []

    def announce(line):
        lines.append(line)
        calls_when_announced.append(fake_openai.calls)

    build(BuildOptions(inputs=[EXAMPLES], out=tmp_path / "corpus", quiet=True), announce=announce)
    runs = example_runs()
    ok = sum(bool(r["outcome"]["success"]) for r in runs)
    assert lines and lines[0].startswith(f"{len(runs)} runs in the input ({ok} success, {len(runs) - ok} failure)")
    assert calls_when_announced == [0] and fake_openai.run_calls == len(runs)


def test_prompt_index_reuses_renders_of_carried_insights(tmp_path, monkeypatch):
    import wikitrace.agent.index as index

    runs = example_runs()
    out, fresh = tmp_path / "corpus", tmp_path / "fresh"
    _build([write_jsonl(tmp_path / "five.jsonl", runs[:5])], out)
    before_insights = json.loads((out / "corpus.json").read_text())["insights"]
    rendered: list[int] = []
    tokenized: list[str] = []
    real_render, real_tokenize = index._render_pool, index.tokenize
    monkeypatch.setattr(index, "_render_pool",
                        lambda infos, show: rendered.append(len(infos)) or real_render(infos, show))
    monkeypatch.setattr(index, "tokenize", lambda text: tokenized.append(text) or real_tokenize(text))
    _build([write_jsonl(tmp_path / "six.jsonl", runs)], out)
    old = {i["id"]: i for i in before_insights}
    new = [i for i in json.loads((out / "corpus.json").read_text())["insights"] if old.get(i["id"]) != i]
    assert rendered == [len(new), len(new)]  # only the insights new or changed, with and without their source line
    assert len(tokenized) <= 1 + len(json.loads((out / "corpus.json").read_text())["insights"])
    _build([tmp_path / "six.jsonl"], fresh)
    assert (out / "index/prompt.bin").read_bytes() == (fresh / "index/prompt.bin").read_bytes()
    # A run dropped from the middle: nothing can be extended; the index scores as a fresh build's.
    fewer = write_jsonl(tmp_path / "fewer.jsonl", runs[:2] + runs[3:])
    _build([fewer], out)
    _build([fewer], tmp_path / "fresh-fewer")
    from wikitrace.agent.index_reader import open_index  # ids differ (one retired step-0002): compare scores

    a, b = open_index(out), open_index(tmp_path / "fresh-fewer")
    task = "change the shipping address of an order"
    assert a.run_scores(task) == b.run_scores(task) and a.insight_scores(task) == b.insight_scores(task)


def test_a_task_type_given_to_a_build_read_beside_reaches_the_pages(tmp_path, read_beside, monkeypatch):
    """The page writer is handed the run as the reader pickled it, unless the build changed
    it: ``--task-type`` fills in a run's missing type after reading, and the pages show it
    as a build read in one process does."""
    from wikitrace.build import _Writer

    runs = _many_runs(_Writer.HELPER_AFTER + 4)
    for run in runs:
        run["task"].pop("task_type", None)
        run["task"].pop("apps", None)
    src = write_jsonl(tmp_path / "untyped.jsonl", runs)
    _build([src], tmp_path / "beside", task_type="helpdesk")
    monkeypatch.setattr("wikitrace.runs.read_helper.WORTH_IT_BYTES", 10**12)
    monkeypatch.setattr(_Writer, "HELPER_AFTER", 10**9)
    _build([src], tmp_path / "here", task_type="helpdesk")
    beside = without_build_stamp(tree_bytes(tmp_path / "beside"))
    assert beside == without_build_stamp(tree_bytes(tmp_path / "here"))
    last = sorted((tmp_path / "beside" / "raw").glob("step-*/metadata.md"))[-1].read_text()
    assert "helpdesk" in last
