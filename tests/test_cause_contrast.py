"""A failure page's causes set against the successful runs of its task type (corpus/cause_contrast.py),
on the coding corpus (SWE-agent Java runs without a JDK, pytest runs) and a tau-bench run: a cause
the successes met at least as often says so with counts that check out against every run's
patterns, sits below the run's own changes, and the page's ranking sentence says why."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

from wikitrace.build import BuildOptions, build
from wikitrace.corpus.cause_contrast import MOVED_NOTE, SETTING_NOTE, set_causes
from wikitrace.corpus.insights import kind_of

FIXTURES = Path(__file__).parent / "fixtures" / "importers"
CORPUS = FIXTURES / "coding_corpus"
SAID = re.compile(r"[Aa]n error of this form \(its values aside\) was also met in (\d+) of (\d+) successful runs? of this task type "
                  r"\(and in (\d+) of (\d+) failed runs?\): it did not decide this run\.")


def _causes(page: str) -> list[str]:
    section = page.split("\n## Failure Causes\n", 1)[1].split("\n## ", 1)[0].split("\nLeft out: ", 1)[0]
    blocks = re.split(r"\n### (?:Cause|Context|Setting|Also met) ", section)[1:]
    assert [b.split("\n", 1)[0] for b in blocks] == [str(n) for n in range(1, len(blocks) + 1)]
    return blocks


def _is_change(block: str) -> bool:
    return any(f"**Support**: {s}" in block for s in ("The call went through, yet the run was judged a failure",
                                                      "It handed in the edits made before it"))


def _check_pages(out: Path) -> dict[str, list[str]]:
    """Every failure page's causes: each count a cause states is the count of runs of its task type
    whose patterns hold the error's key, and no such cause stands above a change of the run."""
    data = json.loads((out / "corpus.json").read_text())
    runs = data["runs"]
    pages = {}
    for r in runs:
        if r["outcome"] != "failure":
            continue
        page = (out / "compilation" / f"{r['step']}.md").read_text()
        blocks = _causes(page)
        pages[r["run_id"]] = blocks
        said = [(i, SAID.search(b)) for i, b in enumerate(blocks)]
        said = [(i, m) for i, m in said if m]
        kin = [x for x in runs if kind_of(x) == kind_of(r)]
        won = [x for x in kin if x["outcome"] == "success"]
        lost = [x for x in kin if x["outcome"] == "failure"]
        keys = [k for c, _turns in (r.get("decisive") or {}).get("causes") or [] if isinstance(c, list) for k in c]
        for i, m in said:
            s, n, f, m_ = map(int, m.groups())
            assert (n, m_) == (len(won), len(lost))
            # one of the cause's own keys is met that often on each side, the successes at least as often
            assert any(sum(k in x["patterns"] for x in won) == s and sum(k in x["patterns"] for x in lost) == f
                       for k in keys)
            assert s * m_ >= f * n and s >= 1
            changes = [j for j, b in enumerate(blocks) if _is_change(b)]
            assert not changes or i > max(changes), (r["step"], i)
        assert MOVED_NOTE not in page or said  # the ranking line is added only where a cause was moved
        # a program the machine lacks that the successes met as often is headed Setting, after every cause
        heads = re.findall(r"\n### (Cause|Context|Setting|Also met) \d+\n", page)
        settings = [i for i, h in enumerate(heads) if h == "Setting"]
        # any other cause the successes met too is headed as also met, not as a cause, and only such a one
        assert all(heads[i] == "Also met" for i, _m in said if i not in settings), (r["step"], heads)
        assert all("it did not decide this run" in blocks[i] for i, h in enumerate(heads) if h == "Also met")
        assert settings == list(range(len(heads) - len(settings), len(heads))), (r["step"], heads)
        assert (SETTING_NOTE in page) == bool(settings)
        for i in settings:  # its counts: on the block where successes met it as often, else on its In short line
            assert "The shell could not find" in blocks[i], blocks[i]
            assert SAID.search(blocks[i]) or re.search(r"; an error of the same form \(its values aside\) was also met by \d+ of \d+ successful runs? of this task type", page)
    return pages


def test_coding_corpus_causes_the_successes_met_as_often_come_after_the_changes(tmp_path):
    out = tmp_path / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True))
    pages = _check_pages(out)
    # step-0006 of the review: edited the test file after its searches failed and an open went through: the
    # searches ended nothing, so they come after its changes with the turn that got past them, no contrast
    # sentence, and no In short line
    test_edit = pages["swe-llama/acme__jsonkit-101"]
    where = next(i for i, b in enumerate(test_edit) if "Directory src/main/java/acme/jsonkit/number not found" in b
                 and "**Decision**" in b)
    assert not SAID.search(test_edit[where])
    assert "the run went on without it: " in test_edit[where]
    assert "NumberParserTest.java\\` went through at turn 4, and edit made a change at turn 5." in test_edit[where]
    assert where > max(i for i, b in enumerate(test_edit) if _is_change(b))
    step = next(r["step"] for r in json.loads((out / "corpus.json").read_text())["runs"]
                if r["run_id"] == "swe-llama/acme__jsonkit-101")
    short = (out / "compilation" / f"{step}.md").read_text().split("## In short", 1)[1].split("\n## ", 1)[0]
    assert "search_dir failed" not in short and "edited NumberParserTest.java instead" in short
    # step-0008: the pytest reproduction the successful trial ran as well is no longer above the edit
    tally = pages["acme__tally-7"]
    repro = next(i for i, b in enumerate(tally) if "assert 2 == 2.5" in b)
    assert SAID.search(tally[repro]) and repro > max(i for i, b in enumerate(tally) if _is_change(b))
    untouched = [b for blocks in pages.values() for b in blocks]
    assert any(SAID.search(b) for b in untouched) and not all(SAID.search(b) for b in untouched)


def _tau_runs(tmp_path: Path, with_success: bool) -> Path:
    runs = json.loads((FIXTURES / "tau_bench" / "gpt-4o-rail.json").read_text())
    if with_success:  # another trial of the same task that met the same seat error and still succeeded
        won = copy.deepcopy(next(r for r in runs if r["task_id"] == 32))
        won["reward"], won["trial"] = 1.0, 1
        runs.append(won)
    folder = tmp_path / ("won" if with_success else "base")
    folder.mkdir()
    (folder / "gpt-4o-rail.json").write_text(json.dumps(runs))
    return folder


def test_tau_error_a_success_also_met_says_so_and_a_separating_one_is_left_as_it_was(tmp_path):
    plain, mixed = tmp_path / "plain", tmp_path / "mixed"
    build(BuildOptions(inputs=[_tau_runs(tmp_path, False)], out=plain, offline=True, quiet=True))
    build(BuildOptions(inputs=[_tau_runs(tmp_path, True)], out=mixed, offline=True, quiet=True))
    assert "did not decide this run" not in "".join(p.read_text() for p in (plain / "compilation").glob("*.md"))
    pages = _check_pages(mixed)
    failed = next(blocks for run_id, blocks in pages.items() if "32" in run_id)
    seats = next(b for b in failed if "not enough seats" in b and "**Support**" in b)
    m = SAID.search(seats)
    assert m and m.groups() == ("1", "1", "1", "6")


def test_an_error_every_successful_trial_of_its_task_met_moves_below_the_change(tmp_path):
    """Task 32's successful trial met the same seat error as its failed one, while the type's other
    successes (three tasks) met none: across the type the successes met it less often, yet within
    its own task it set nothing apart. The cause says so, sits below the run's changes, and the
    ranking line and the In short line say why."""
    from wikitrace.corpus.cause_contrast import TRIAL_MOVED_NOTE, set_causes

    folder = _tau_runs(tmp_path, True)
    runs = json.loads((folder / "gpt-4o-rail.json").read_text())
    for r in runs:
        if r["task_id"] in (31, 33, 34):
            r["reward"] = 1.0
    (folder / "gpt-4o-rail.json").write_text(json.dumps(runs))
    out = tmp_path / "out"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True))
    pages = _check_pages(out)  # no type-level sentence: 1 of 4 successes against 1 of 3 failures
    data = json.loads((out / "corpus.json").read_text())
    lost = next(r for r in data["runs"] if r["task_id"] == "32" and r["outcome"] == "failure")
    blocks = pages[lost["run_id"]]
    seats = next(i for i, b in enumerate(blocks) if "not enough seats" in b and "**Support**" in b)
    assert ("an error of this form (its values aside) was also met by the successful trial of this task: it did not "
            "decide this run.") in blocks[seats].lower()
    assert not SAID.search(blocks[seats])
    assert seats == len(blocks) - 1  # below both of the run's changes
    page = (out / "compilation" / f"{lost['step']}.md").read_text()
    assert TRIAL_MOVED_NOTE not in page  # the run ranked it last already: nothing was moved
    # ranked first by the run, the same cause is moved below both changes, and the ranking line says why
    causes = lost["decisive"]["causes"]
    error = next(c for c in causes if c[0] != "change")
    first = [error] + [c for c in causes if c is not error]
    moved = set_causes(page, {"met": [], "causes": first, "trials": [[0, 1]], "seen": []})
    assert TRIAL_MOVED_NOTE in moved and MOVED_NOTE not in moved
    reranked = _causes(moved)
    assert "not enough seats" in reranked[-1] and not any("not enough seats" in b for b in reranked[:-1])
    assert set_causes(moved, {"met": [], "causes": first, "trials": [[0, 1]], "seen": []}) == moved
    # built again from its own pages' state: the same bytes (the marks are set once, not stacked)
    again = tmp_path / "again"
    build(BuildOptions(inputs=[folder], out=again, offline=True, quiet=True))
    assert _pages(again) == _pages(out)


def _pages(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (out / "compilation").glob("step-*.md")}


def test_add_and_forget_recount_the_pages_they_do_not_write(tmp_path):
    """A success added to the task type changes the counts on the failure pages already there (and
    moves a cause it also met); forgetting it gives back what a compile without it writes."""
    from wikitrace.cli import app
    from typer.testing import CliRunner

    without = tmp_path / "without"
    for folder in ("swe-claude", "swe-gpt4o", "swe-llama", "swe-tally-bad"):
        (without / folder).mkdir(parents=True)
        for f in (CORPUS / folder).iterdir():
            (without / folder / f.name).write_bytes(f.read_bytes())
    extra = tmp_path / "extra" / "acme__tally-8.traj"  # the pytest success, as a run of another task
    extra.parent.mkdir()
    extra.write_bytes((CORPUS / "swe-tally-ok" / "acme__tally-7.traj").read_bytes())
    whole = tmp_path / "whole"
    (whole / "z").mkdir(parents=True)
    for folder in without.iterdir():
        (whole / folder.name).mkdir()
        for f in folder.iterdir():
            (whole / folder.name / f.name).write_bytes(f.read_bytes())
    (whole / "z" / extra.name).write_bytes(extra.read_bytes())
    (whole / "z" / "results.json").write_text('{"resolved": ["acme__tally-8"]}')

    base, grown, full = tmp_path / "base", tmp_path / "grown", tmp_path / "full"
    build(BuildOptions(inputs=[without], out=base, offline=True, quiet=True))
    build(BuildOptions(inputs=[whole], out=full, offline=True, quiet=True))
    build(BuildOptions(inputs=[without], out=grown, offline=True, quiet=True))
    runner = CliRunner()
    added = runner.invoke(app, ["add", str(extra), "-c", str(grown), "--outcome", "success"])
    assert added.exit_code == 0, added.output
    assert _pages(grown) == _pages(full) != _pages(base)
    _check_pages(grown)
    gone = runner.invoke(app, ["forget", "acme__tally-8", "-c", str(grown)])
    assert gone.exit_code == 0, gone.output
    assert _pages(grown) == _pages(base)


def test_tests_still_failing_after_the_edit_stay_a_cause(tmp_path):
    """The Claude Code session that failed: its tests failing after its Edit are what the successful
    session fixed, not an error the successes met before their change, so that cause has no note
    that successes met it; it ranks right after the edit it checked (the edit is what was wrong),
    and its first, failing reproduction is moved below with the note."""
    out = tmp_path / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                       outcomes=CORPUS / "claude-code" / "outcomes.json"))
    pages = _check_pages(out)
    blocks = pages["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    after = next(i for i, b in enumerate(blocks) if "2 failed, 7 passed" in b and "**Support**" in b)
    before = next(i for i, b in enumerate(blocks) if "1 failed, 8 passed" in b and "**Support**" in b)
    edit = next(i for i, b in enumerate(blocks) if _is_change(b))
    assert edit < after < before
    assert not SAID.search(blocks[after]) and SAID.search(blocks[before])


def test_a_missing_program_successes_met_too_is_the_setting_and_goes_back_when_they_no_longer_do(tmp_path):
    out = tmp_path / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True))
    runs = json.loads((out / "corpus.json").read_text())["runs"]
    # javac missing, as in 2 of 5 successes (as often as in the failed runs); mvn, as in 3 of 5 (less often)
    step = next(r["step"] for r in runs if r["run_id"] == "acme__jsonkit-102")
    page = (out / "compilation" / f"{step}.md").read_text()
    heads = re.findall(r"\n### (Cause|Context|Setting|Also met) (\d+)\n", page)
    assert [h for h, _n in heads][-2:] == ["Setting", "Setting"] and [h for h, _n in heads].count("Setting") == 2
    settings = "".join(page.split(f"### Setting {n}\n", 1)[1].split("\n### ", 1)[0] for h, n in heads if h == "Setting")
    assert "bash: javac: command not found" in settings and "mvn: command not found" in settings
    assert SETTING_NOTE in page
    # counts under which no success met it: the page is headed and ordered as the run ranked it
    entry = next(r for r in runs if r["step"] == step)
    bare = set_causes(page, {"met": [], "causes": entry["decisive"]["causes"], "seen": []})
    assert "### Setting" not in bare and "### Also met" not in bare and SETTING_NOTE not in bare
    assert [n for _h, n in re.findall(r"\n### (Cause|Context) (\d+)\n", bare)] == [str(n) for n in range(1, len(heads) + 1)]
