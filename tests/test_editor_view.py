"""A compiled corpus reads well in an editor (VS Code, Obsidian): a root page links the
layers, every link opens (a .md page, never a folder or a .jsonl), a raw run has a
readable turns.md that turn refs point into, and raw pages are titled by run and task."""

import json
import re
import subprocess

import pytest

from helpers import EXAMPLES
from test_cli_errors import WIKITRACE
from test_content_as_text import _run

LINK = re.compile(r"(?<!\\)\]\(([^)\s]+)\)")
FENCE = re.compile(r"^(`{3,})[^\n]*\n.*?^\1`*[ \t]*$", re.M | re.S)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("editor")
    src = tmp / "runs.jsonl"
    src.write_text(EXAMPLES.read_text() + "".join(json.dumps(_run(i, i % 2 == 0)) + "\n" for i in range(2)))
    out = tmp / "corpus"
    subprocess.run([WIKITRACE, "compile", src, "--out", out, "--offline", "-q"], check=True)
    return out


def _links(corpus):
    for page in sorted(corpus.rglob("*.md")):
        text = page.read_text(encoding="utf-8")
        body = FENCE.sub("", text.split("---\n", 2)[2] if text.startswith("---\n") else text)  # no frontmatter
        for target in LINK.findall(body):
            yield page, target


def test_every_link_targets_a_page_an_editor_opens(corpus):
    links = list(_links(corpus))
    assert len(links) > 50
    for page, target in links:
        assert not re.match(r"^[a-z]+://", target), (page, target)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve()
        assert resolved.is_file(), (page, target)  # never a folder
        assert resolved.suffix == ".md", (page, target)  # never .jsonl or another format
        if anchor:
            headings = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
                        for h in re.findall(r"^#+ (.+)$", resolved.read_text(), re.M)}
            assert anchor in headings, (page, target)


def test_root_page_links_the_three_layers(corpus):
    root = (corpus / "index.md").read_text()
    for layer in ("raw", "compilation", "insight"):
        assert f"]({layer}/_index.md)" in root
    check = subprocess.run([WIKITRACE, "check", corpus], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout


def test_raw_pages_name_the_run_and_the_task_and_have_a_turns_view(corpus):
    data = json.loads((corpus / "corpus.json").read_text())
    titles = set()
    for run in data["runs"]:
        step = run["step"]
        heading = (corpus / "raw" / step / "metadata.md").read_text().split("\n# ", 1)[1].splitlines()[0]
        assert step in heading and run["run_id"].replace("[", "\\[") in heading.replace("\\\\", "\\")
        titles.add(heading)
        turns = (corpus / "raw" / step / "turns.md").read_text()
        log = (corpus / "raw" / step / "solver.full.jsonl").read_text().splitlines()
        assert turns.count("\n## Turn ") == len(log)
    assert len(titles) == len(data["runs"])  # no two raw pages titled alike


def test_turns_view_quotes_run_text_inside_fences(corpus):
    turns = next(p for p in corpus.glob("raw/*/turns.md") if "hostile" in p.read_text())
    text = turns.read_text()
    assert "```text\nread [g](docs/guide.md)" in text  # shown exactly, inside a fence
