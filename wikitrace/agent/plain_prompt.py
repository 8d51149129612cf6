"""The prompt's blocks written without jinja2, for the bundled templates.

``wikitrace prompt`` starts a process per agent task, and importing jinja2 (with what it
pulls in) costs about as much as the rest of an indexed prompt. So with no
``--templates`` folder the agent templates are rendered here: the system addition and
the citation prompt (text with ``{{ name }}`` placeholders) are filled in from the
template files themselves; the insight, memory and similar-runs blocks, which loop and
branch, are written out in Python. A ``--templates`` folder goes through jinja2 as
before. tests/test_plain_prompt.py renders both ways on awkward values and compares the
bytes, so a change to one of those templates must be made here too.

Every printed value goes through ``controls.visible`` as the template environment's
``finalize`` does, and ``oneline`` is the templates' own filter.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from ..controls import visible
from ..templates import _oneline, bundled_dir


def _shown(value) -> str:
    """A value as a template prints it: strings with controls escaped, others as str()."""
    return visible(value) if isinstance(value, str) else str(value)


_PLACEHOLDER = re.compile(r"\{\{ *([A-Za-z_][A-Za-z0-9_]*) *\}\}")


@lru_cache(maxsize=None)
def _fill_in_parts(name: str) -> tuple[str, ...] | None:
    """A bundled template as text and placeholder names, alternating; None when it holds
    anything but an opening comment, text and ``{{ name }}`` (it then needs jinja2)."""
    source = (bundled_dir("corpus_templates") / name).read_text(encoding="utf-8")
    if source.startswith("{#"):  # the comment and its line end (trim_blocks) print nothing
        end = source.find("#}")
        if end < 0:
            return None
        source = source[end + 2:]
        source = source[1:] if source.startswith("\n") else source
    parts = tuple(_PLACEHOLDER.split(source))
    literal = "".join(parts[::2])
    if "\r" in source or any(mark in literal for mark in ("{{", "{%", "{#", "}}", "%}", "#}")):
        return None
    return parts


def fill_in(name: str, values: dict) -> str | None:
    parts = _fill_in_parts(name)
    if parts is None:
        return None
    return "".join(part if k % 2 == 0 else _shown(values[part]) for k, part in enumerate(parts))


def _plural(n) -> str:
    return "s" if n != 1 else ""


def memory_documents(insights, show_source, left_out, mount, tools) -> str:
    out = ["<memory_documents>\n"]
    out += [_shown(text) + "\n" for text in insights]
    if left_out:
        n, more = _shown(left_out), _plural(left_out)
        if show_source:
            m, t = _shown(mount), _shown(tools)
            out.append(f'<left_out count="{n}">{n} more insight{more} did not fit in this message. They are in '
                       f"{m}/insight/ (titles by task type in {m}/insight/_index.md); search them with "
                       f'`{t}/grep PATTERN --layer insight` or `grep -ril "PATTERN" {m}/insight`.</left_out>\n')
        else:
            out.append(f'<left_out count="{n}">{n} more insight{more} were left out for length.</left_out>\n')
    out.append("</memory_documents>\n")
    return "".join(out)


def similar_past_runs(runs) -> str:
    if not runs:
        return ""
    out = ["<similar_past_runs>\nPractice runs on tasks that resemble this one, each with the titles of the "
           "insights it produced (their full text opens this message).\n\n"]
    for k, run in enumerate(runs):
        out.append(f"### {_shown(run['step'])} ({_shown(run['outcome'])})\n"
                   f"Task: {_shown(_oneline(run['instruction']))}\n")
        if run["insights"]:
            out.append("Insights from this run:\n")
            out += [f"- {_shown(ins['id'])}: {_shown(_oneline(ins['title']))}\n" for ins in run["insights"]]
        else:
            out.append("No insights were drawn from this run.\n")
        if k < len(runs) - 1:
            out.append("\n")
    out.append("</similar_past_runs>\n")
    return "".join(out)


def insight(ins: dict, show_source: bool) -> str:
    """agent/_insight.md.j2's macro, as render_insights keeps it (blank lines around it cut)."""
    out = [f'<insight id="{_shown(ins["id"])}">', f"- **Title:** {_shown(_oneline(ins['title']))}"]
    if ins["task_type"]:
        out.append(f"- **Task type:** {_shown(ins['task_type'])}")
    elif ins["apps"]:
        out.append(f"- **Apps:** {_shown(', '.join(map(str, ins['apps'])))}")
    out.append(f"- **Insight:** {_shown(_oneline(ins['guideline']))}")
    out.append(f"- **Applicability:** {_shown(_oneline(ins['applicability']))}")
    if ins["evidence"]:
        out.append(f"- **Evidence:** {_shown(_oneline(ins['evidence']))}")
    also = ins["also"]
    if also:
        out.append(f"- **Learned from:** {len(also) + 1} runs ({_shown(ins['id'])}"
                   + "".join(f", {_shown(a['id'])}" for a in also) + ")")
    if ins["usage"]:
        episodes = ins["usage"]["episodes"]
        out.append(f"- **Cited in:** {_shown(episodes)} recorded episode{_plural(episodes)}, "
                   f"{_shown(ins['usage']['succeeded'])} succeeded")
    others = "".join(f", {_shown(a['source_step'])} ({_shown(a['source_outcome'])})" for a in also)
    if show_source and ins["sources"]:
        listed = ", ".join(f"{_shown(s['step'])} ({_shown(s['outcome'])})" for s in ins["sources"])
        more = f" and {_shown(ins['more_sources'])} more" if ins["more_sources"] else ""
        out.append(f"- **Source:** {listed}{more}{others}")
    elif show_source:
        out.append(f"- **Source:** {_shown(ins['source_step'])} ({_shown(ins['source_outcome'])}){others}")
    out.append("</insight>")
    return "\n".join(out)


_BLOCKS = {"agent/memory_documents.md.j2": memory_documents, "agent/similar_past_runs.md.j2": similar_past_runs}


def render(name: str, templates: str | Path | None = None, **context) -> str:
    """``templates.render`` for the agent templates: in plain Python when no folder
    overrides them, else (or for a template not written out here) through jinja2."""
    if templates is None:
        block = _BLOCKS.get(name)
        text = block(**context) if block is not None else fill_in(name, context)
        if text is not None:
            return text
    from ..templates import render as render_template

    return render_template(name, templates, **context)
