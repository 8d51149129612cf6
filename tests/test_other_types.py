"""A lesson taught by runs of two task types links each type's page to the other's
(corpus/other_types.py): a Claude Code session and a SWE-agent run that both ended with their
tests still failing teach one lesson, each page counting only its own type's runs. A run added
to one type rewrites the other type's page, so its link and counts never go stale."""

from __future__ import annotations

import copy
import json
import re
import shutil
from pathlib import Path

from wikitrace.add import AddOptions, add_runs
from wikitrace.build import BuildOptions, build
from wikitrace.check import check_corpus
from wikitrace.corpus.other_types import link

CORPUS = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus"
FAILED_SESSION = CORPUS / "claude-code" / "9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69.jsonl"
LINE = re.compile(r"^Runs of other task types teach this lesson too \(counted on their own pages, not here\): "
                  r"\[(.+)\]\((insight-\d{4})\.md\) \(([\w-]+): (\d+) runs?, (\d+) successful, (\d+) failed\)\.$", re.M)


def _entry(iid: str, key: str, kind: str, runs: int) -> dict:
    return {"id": iid, "key": key, "title": f"lesson {iid}", "task_type": kind,
            "counts": {"runs": runs, "success": 0, "failure": runs}}


def test_only_entries_of_another_task_type_with_the_same_key_are_linked_and_none_is_changed_in_place():
    entries = [_entry("insight-0000", "ended|failing-tests", "claude-code", 1),
               _entry("insight-0001", "ended|failing-tests", "swe-bench", 2),
               _entry("insight-0002", "ended|failing-tests", "swe-bench", 3),  # same type as 0001: no link between them
               _entry("insight-0003", "error|missing-program", "claude-code", 1)]
    before = copy.deepcopy(entries)
    out = link(entries)
    assert entries == before
    assert [o["insight"] for o in out[0]["elsewhere"]] == ["insight-0001", "insight-0002"]
    assert [o["insight"] for o in out[1]["elsewhere"]] == ["insight-0000"]
    assert out[1]["elsewhere"][0] == {"insight": "insight-0000", "title": "lesson insight-0000",
                                     "task_type": "claude-code", "runs": 1, "success": 0, "failure": 1}
    assert "elsewhere" not in out[3]
    # a link that no longer holds is dropped, and an entry already right is the same object
    assert "elsewhere" not in link([out[0], out[3]])[0]
    assert link(out)[0] is out[0]


def _linked(out: Path) -> dict[str, list[tuple]]:
    """Each insight page's cross-type links, as (linked id, its type, runs, successful, failed)."""
    found = {}
    for page in sorted((out / "insight").glob("insight-*.md")):
        found[page.stem] = [(m[2], m[3], int(m[4]), int(m[5]), int(m[6])) for m in LINE.finditer(page.read_text())]
    return found


def _by_key(out: Path) -> dict[tuple[str, str], dict]:
    data = json.loads((out / "corpus.json").read_text())
    return {(i["task_type"], i["key"]): i for i in data["insights"]}


def test_the_coding_corpus_pages_of_a_lesson_two_task_types_teach_link_each_other(tmp_path):
    out = tmp_path / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                       outcomes=CORPUS / "claude-code" / "outcomes.json"))
    entries = _by_key(out)
    cc, swe = entries[("claude-code", "ended|failing-tests")], entries[("swe-bench", "ended|failing-tests")]
    links = _linked(out)
    assert links[cc["id"]] == [(swe["id"], "swe-bench", swe["counts"]["runs"], swe["counts"]["success"],
                                swe["counts"]["failure"])]
    assert links[swe["id"]] == [(cc["id"], "claude-code", 1, 0, 1)]
    # a page of a key no other type shares has no such line
    assert not links[entries[("swe-bench", "error|missing-program")]["id"]]
    assert check_corpus(out) == []  # every link resolves


def test_adding_a_run_of_one_type_rewrites_the_linked_page_of_the_other(tmp_path):
    inputs = tmp_path / "in"
    for folder in sorted(CORPUS.iterdir()):
        if folder.is_dir() and folder.name != "claude-code":
            shutil.copytree(folder, inputs / folder.name)
    out = tmp_path / "out"
    build(BuildOptions(inputs=[inputs], out=out, offline=True, quiet=True))
    swe = _by_key(out)[("swe-bench", "ended|failing-tests")]
    page = out / "insight" / f"{swe['id']}.md"
    assert _linked(out)[swe["id"]] == []
    add_runs(AddOptions(corpus=out, run_file=FAILED_SESSION, outcome="failure", offline=True, quiet=True))
    cc = _by_key(out)[("claude-code", "ended|failing-tests")]
    # the swe-bench type gained no run, yet its page now names the session's lesson
    assert _linked(out)[swe["id"]] == [(cc["id"], "claude-code", 1, 0, 1)]
    assert _linked(out)[cc["id"]] == [(swe["id"], "swe-bench", 1, 0, 1)]
    assert f"]({cc['id']}.md)" in page.read_text()
    assert check_corpus(out) == []
