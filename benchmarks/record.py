"""Write a benchmark's measured table into its docs page, stamped with the commit and date.

A figure in docs/ lives in a region that names what measured it:

    <!-- measured by benchmarks/tool_startup.py: commit 0e77fce, date 2026-12-01 -->
    | command | ms | ... |
    <!-- end -->

A benchmark run with ``--record`` replaces the text between the two lines and the commit and
date of the opening line, and nothing else in the page, so a figure can only change together
with its stamp. A benchmark that writes several tables names each one after the script
(``benchmarks/tool_startup.py update``). The region must already exist: where a table belongs
on its page is a writer's choice, made once by hand. tests/test_measured.py checks that every
figure table in docs/ sits in such a region.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"

#: The opening line of a region; ``by`` is a benchmark path (and part) or a description.
START = re.compile(r"^<!-- measured by (?P<by>.+?): commit (?P<commit>[0-9a-f]{7,40})(?P<dirty>\+changes)?, "
                   r"date (?P<date>\d{4}-\d{2}-\d{2}) -->$", re.M)
END = "<!-- end -->"


def add_record_flag(parser: argparse.ArgumentParser, doc: str) -> None:
    """``--record``: also write the table into docs/DOC (the benchmark's own page)."""
    parser.add_argument("--record", action="store_true",
                        help=f"write the measured table into docs/{doc}, stamped with the commit and date")


def current_commit() -> str:
    """Short HEAD, with ``+changes`` when the code measured differs from it."""
    git = ["git", "-C", str(REPO)]
    head = subprocess.run([*git, "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True, check=True)
    changed = subprocess.run([*git, "status", "--porcelain", "--", "wikitrace", "tools", "corpus_templates",
                              "benchmarks"], capture_output=True, text=True, check=True)
    return head.stdout.strip() + ("+changes" if changed.stdout.strip() else "")


def replace_region(text: str, by: str, body: str, commit: str, date: str) -> str:
    """``text`` with the region measured by ``by`` holding ``body``, restamped; nothing else changes."""
    starts = [m for m in START.finditer(text) if m.group("by") == by]
    if len(starts) != 1:
        raise ValueError(f"{len(starts)} regions measured by {by!r}; put one "
                         f"'<!-- measured by {by}: commit C, date D -->' ... '{END}' where the table goes")
    start = starts[0]
    end = text.find("\n" + END, start.end())
    if end < 0:
        raise ValueError(f"the region measured by {by!r} has no '{END}' line")
    opening = f"<!-- measured by {by}: commit {commit}, date {date} -->"
    return text[:start.start()] + opening + "\n" + body.strip("\n") + text[end:]


def record(doc: str, by: str, body: str) -> Path:
    """Write ``body`` into docs/``doc``'s region measured by ``by``, stamped with HEAD and today (UTC)."""
    page = DOCS / doc
    text = page.read_text(encoding="utf-8")
    page.write_text(replace_region(text, by, body, current_commit(), time.strftime("%Y-%m-%d", time.gmtime())),
                    encoding="utf-8")
    print(f"recorded in {page.relative_to(REPO)} ({by})")
    return page


def load_average() -> str:
    """The machine's 1/5/15-minute load, printed beside every figure (the machine is shared)."""
    try:
        return " / ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    """A plain markdown table, the shape every recorded region holds."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
