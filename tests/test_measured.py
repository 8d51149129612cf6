"""A figure in the docs cannot go stale unseen: every measured table in docs/ sits in a region
stamped with the commit and date it was measured at, and the README stays short enough to read.

A region is ``<!-- measured by WHAT: commit C, date D -->`` ... ``<!-- end -->``; a benchmark's
``--record`` rewrites its own region (benchmarks/record.py). A *figure table* is a markdown table
with a body cell that is a measurement: a number, optionally with a unit, a ratio or a bracketed
aside (``242 / 254 ms (0.85x)``, ``0.809``, ``21 (1.000)``), as opposed to a cell of words that
merely contains a digit (``200 with an answer``).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from helpers import REPO

DOC_PAGES = sorted((REPO / "docs").glob("*.md"))

_spec = importlib.util.spec_from_file_location("record", REPO / "benchmarks" / "record.py")
record = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(record)

_FIGURE = re.compile(r"^[~≈<>≤≥+−-]?\s*\d[\d,.]*\s*(?:%|ms|s|min|h|KB|MB|GB|x|×|k|M)?\s*(?:$|[/(–])")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _regions(text: str) -> list[tuple[int, int, re.Match]]:
    """(start offset, end offset, opening match) of every measured region, in page order."""
    found = []
    for m in record.START.finditer(text):
        end = text.find("\n" + record.END, m.end())
        found.append((m.start(), len(text) if end < 0 else end, m))
    return found


def _tables(text: str) -> list[tuple[int, list[list[str]]]]:
    """(offset, body rows) of every markdown table outside code fences."""
    text = _FENCE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    tables, offset, current, start = [], 0, [], 0
    for line in text.split("\n") + [""]:
        if line.lstrip().startswith("|"):
            if not current:
                start = offset
            current.append(line)
        elif current:
            rows = [[c.strip().strip("`*") for c in row.strip().strip("|").split("|")] for row in current]
            tables.append((start, [r for r in rows[1:] if not all(set(c) <= set("-: ") for c in r)]))
            current = []
        offset += len(line) + 1
    return tables


def _is_figure_table(rows: list[list[str]]) -> bool:
    return any(_FIGURE.match(cell) for row in rows for cell in row if cell)


def test_the_figure_rule_tells_measurements_from_words():
    figures = [["242 / 254 ms (0.85x)"], ["0.809"], ["21 (1.000)"], ["5.84 s"], ["~43 M"], ["1,260"]]
    words = [["200 with an answer"], ["step-0003"], ["`--budget 8000` (64 insights)"], ["WordNet 3.0"]]
    assert all(_is_figure_table([row]) for row in figures)
    assert not _is_figure_table(words)


@pytest.mark.parametrize("page", DOC_PAGES, ids=lambda p: p.name)
def test_every_figure_table_sits_in_a_stamped_region(page):
    text = page.read_text(encoding="utf-8")
    regions = _regions(text)
    assert text.count("<!-- measured by") == len(regions), (
        f"{page.name}: a stamp not of the form '<!-- measured by WHAT: commit C, date YYYY-MM-DD -->' on a line of its own")
    for start, end, m in regions:
        assert end < len(text), f"{page.name}: the region measured by {m.group('by')} has no {record.END!r} line"
    for (start, end, m), (next_start, _, _) in zip(regions, regions[1:]):
        assert end < next_start, f"{page.name}: the region measured by {m.group('by')} is not closed before the next"
    outside = [f"docs/{page.name}:{text.count(chr(10), 0, offset) + 1}" for offset, rows in _tables(text)
               if _is_figure_table(rows) and not any(s < offset < e for s, e, _ in regions)]
    assert not outside, (f"tables of measured figures outside a '<!-- measured by WHAT: commit C, date D -->' ... "
                         f"'{record.END}' region: {', '.join(outside)}")


def test_every_region_names_a_commit_of_this_repository_and_a_benchmark_that_exists():
    shallow = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--is-shallow-repository"],
                             capture_output=True, text=True)
    has_git = shallow.returncode == 0 and shallow.stdout.strip() == "false"  # a full history to look stamps up in
    for page in DOC_PAGES:
        for _, _, m in _regions(page.read_text(encoding="utf-8")):
            by = m.group("by")
            for script in re.findall(r"\bbenchmarks/[\w/]+\.py\b", by):
                assert (REPO / script).is_file(), f"{page.name}: {script} does not exist"
            if has_git:
                known = subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", m.group("commit") + "^{commit}"],
                                       capture_output=True)
                assert known.returncode == 0, f"{page.name}: {m.group('commit')} ({by}) is not a commit here"


def test_the_readme_holds_no_figure_table_and_reads_in_five_minutes():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.count("\n") <= 300, "README.md is past 300 lines: move reference material into docs/"
    assert not [rows for _, rows in _tables(text) if _is_figure_table(rows)], \
        "measured tables live in docs/, written by the benchmark that measures them"


def test_recording_replaces_only_its_own_region_and_restamps_it():
    page = ("# Speed\n\nintro 1.5x\n\n"
            "<!-- measured by benchmarks/a.py: commit 1111111, date 2026-01-01 -->\n| x | ms |\n|---|---|\n| a | 9 |\n"
            "<!-- end -->\n\nbetween\n\n"
            "<!-- measured by benchmarks/a.py update: commit 2222222, date 2026-01-02 -->\n| old |\n<!-- end -->\ntail\n")
    new = record.replace_region(page, "benchmarks/a.py", "| x | ms |\n|---|---|\n| a | 7 |\n", "abcdef0+changes",
                                "2026-12-01")
    assert new == page.replace("commit 1111111, date 2026-01-01", "commit abcdef0+changes, date 2026-12-01") \
                      .replace("| a | 9 |", "| a | 7 |")
    with pytest.raises(ValueError, match="0 regions measured by 'benchmarks/b.py'"):
        record.replace_region(page, "benchmarks/b.py", "| y |", "abcdef0", "2026-12-01")
    with pytest.raises(ValueError, match="no '<!-- end -->' line"):
        record.replace_region(page.replace("| old |\n<!-- end -->", "| old |"), "benchmarks/a.py update", "| z |",
                              "abcdef0", "2026-12-01")
