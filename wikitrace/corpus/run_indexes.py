"""raw/_index.md and compilation/_index.md without a template engine pass per run.

Both pages are a short head and one line per run, so on a large corpus nearly all of
their rendering is the engine's per-row work, paid again by every ``add`` and
``forget``. With the bundled templates (the run loop is the last thing in each) the
head is rendered by the engine with no runs and the rows are written here, exactly as
the template writes them (tests/test_run_indexes.py holds the two to the same bytes).
A ``--templates`` folder that brings either page is rendered by the engine whole.

An add keeps every run of the corpus and appends its own: the rows of the runs kept
are then taken from the published page (``published``) rather than written again, and
only the head and the new rows are made.
"""

from __future__ import annotations

from pathlib import Path

from ..controls import visible
from ..templates import _oneline, environment, md_text, render

RAW, COMPILATION = "raw_index.md.j2", "compilation_index.md.j2"
TITLE_LENGTH = 100  # the raw index's `truncate(100)` of each task


def _shown(value) -> str:
    """A printed value as the engine prints it (its ``finalize``, then ``str``)."""
    return visible(value) if isinstance(value, str) else str(value)


def _raw_rows(runs: list[dict]) -> str:
    from jinja2.filters import do_truncate

    env = environment(None)
    return "".join(
        f"| [{_shown(step)}]({_shown(step)}/metadata.md) | "
        f"{_shown(md_text(do_truncate(env, _oneline(r['instruction']), TITLE_LENGTH)).replace('|', chr(92) + '|'))} | "
        f"{_shown(r['outcome'])} | {_shown(r['steps'])} |\n"
        for r in runs for step in (r["step"],))


def _compilation_rows(runs: list[dict]) -> str:
    return "".join(f"- [{_shown(r['step'])}]({_shown(r['step'])}.md): {_shown(md_text(r['title']))}\n" for r in runs)


# each page's row of a run begins with this, and no head line does
_ROW_START = {"raw/_index.md": "| [{step}]({step}/metadata.md) |", "compilation/_index.md": "- [{step}]({step}.md): "}


def kept_rows(page: str, rel: str, runs: list[dict], kept: int) -> str | None:
    """The rows of ``runs[:kept]`` as the published ``page`` holds them: its last ``kept``
    lines, when the page shows exactly those runs (its first and last rows name the first
    and last of them, and no row follows). None when it does not: the rows are written."""
    if kept <= 0 or kept > len(runs) or not page.endswith("\n"):
        return None
    first = _ROW_START[rel].format(step=_shown(runs[0]["step"]))
    at = page.find("\n" + first)
    if at < 0:
        return None
    rows = page[at + 1:]
    last = rows.rfind("\n", 0, len(rows) - 1) + 1
    if rows.count("\n") != kept or not rows.startswith(_ROW_START[rel].format(step=_shown(runs[kept - 1]["step"])),
                                                         last):
        return None
    return rows


def render_run_indexes(runs: list[dict], counts: dict, mount: str, templates: Path | None,
                       frontmatters: dict[str, str], published: dict[str, str] | None = None,
                       kept: int = 0) -> dict[str, str]:
    """The two pages by path; ``runs`` in id order, ``frontmatters`` by path.
    ``published``: the pages as the corpus holds them now, made from exactly ``runs[:kept]``
    (the same entries, unchanged): their rows are reused."""
    pages = {}
    for rel, name, rows in (("raw/_index.md", RAW, _raw_rows), ("compilation/_index.md", COMPILATION, _compilation_rows)):
        context = {"mount": mount, "counts": counts, "frontmatter": frontmatters[rel]}
        if templates is not None and (Path(templates) / name).is_file():
            pages[rel] = render(name, templates, runs=runs, **context)
            continue
        before = kept_rows((published or {}).get(rel) or "", rel, runs, kept)
        try:
            body = rows(runs) if before is None else before + rows(runs[kept:])
        except (KeyError, TypeError):  # an entry without a field the template prints: the engine says which
            pages[rel] = render(name, None, runs=runs, **context)
            continue
        pages[rel] = render(name, None, runs=[], **context) + body
    return pages
