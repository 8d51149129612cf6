"""One jinja2 environment for every document and prompt wikitrace renders.

Templates ship in the package (``corpus_templates/``); a user folder given with
``--templates DIR`` is searched first, so any single template can be overridden
by a file of the same name.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .controls import visible

if TYPE_CHECKING:
    import jinja2

_HERE = Path(__file__).resolve().parent


def bundled_dir(name: str) -> Path:
    """A data folder shipped in the wheel, or at the repo top in a source checkout."""
    for candidate in (_HERE / name, _HERE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"wikitrace's {name}/ folder is missing from the installation")


def _oneline(value) -> str:
    """Fold any value onto one line (lists and dicts as compact JSON)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        import json

        value = json.dumps(value, ensure_ascii=False, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
    return " ".join(value.split())


# a bracket, backtick or angle bracket; or a backslash that would escape the next character
_MD_ESCAPE = re.compile(r"[\[\]`<>]|\\(?=[!-/:-@\[-`{-~])")


def md_text(value) -> str:
    """Run or model text made safe to place in a page: brackets, backticks and angle
    brackets are backslash-escaped, so a viewer shows ``[g](docs/guide.md)`` or a
    backticked path as the text it is, never as a link or code the page did not write
    (and ``wikitrace check`` judges only the links the templates wrote). A backslash
    that would escape the next character is doubled so it stays visible."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    # most texts hold nothing to escape: a search in C, not a substitution through the template
    return _MD_ESCAPE.sub(r"\\\g<0>", text) if _MD_ESCAPE.search(text) else text


_MD_ESCAPED = re.compile(r"\\([\[\]`<>\\])")


def md_plain(text: str) -> str:
    """``md_text`` undone: a phrase escaped for one page, as plain text for a page whose template
    escapes what it places (an insight's advice)."""
    return _MD_ESCAPED.sub(r"\1", text)


def fence(value) -> str:
    """``value`` in a fenced code block longer than any backtick run inside it, so a
    viewer shows the text exactly and nothing in it can become a link."""
    text = "" if value is None else str(value)
    # the longest run is the longest string of backticks the text holds: a substring search
    # or two, not a regex list of every run (the same policy text is on every turns page)
    longest = 0
    while "`" * (longest + 1) in text:
        longest += 1
    marks = "`" * max(3, longest + 1)
    return f"{marks}text\n{text.rstrip(chr(10))}\n{marks}"


CAP_LINES, CAP_CHARS = (30, 10), (3000, 1000)  # the agent tool `turn` cuts fields the same way


def cap_text(text: str, step: str, turn: int) -> str:
    """A long field as its head and tail with a line saying what was cut and how to see it."""
    (head_lines, tail_lines), (head_chars, tail_chars) = CAP_LINES, CAP_CHARS
    if len(text) <= head_chars + tail_chars and text.count("\n") < head_lines + tail_lines:
        return text
    lines = text.split("\n")
    if len(lines) > head_lines + tail_lines:
        head, tail = "\n".join(lines[:head_lines]), "\n".join(lines[-tail_lines:])
    else:
        head, tail = text, ""
    if len(head) + len(tail) > head_chars + tail_chars:
        head, tail = head[:head_chars], (tail or text)[-tail_chars:]
    cut_lines = text.count("\n") - head.count("\n") - (tail.count("\n") + 1 if tail else 0)
    what = f"{cut_lines} lines" if cut_lines > 1 else f"{len(text) - len(head) - len(tail)} characters"
    return f"{head}\n… {what} cut — `turn {step} {turn} --full`\n{tail}"


def _visible(value):
    """Control characters in a rendered value shown as escapes (``controls``)."""
    if isinstance(value, str):
        return visible(value)
    return value


# The options below decide the compiled code; the bytecode cache keys its entries by them.
_SETTINGS = "StrictUndefined keep_trailing_newline trim_blocks lstrip_blocks no-autoescape finalize=_visible"


@lru_cache(maxsize=8)
def environment(override: str | None = None) -> "jinja2.Environment":
    import jinja2  # here, not above: the pages written in plain Python need only the filters

    from .template_cache import bytecode_cache

    dirs = ([override] if override else []) + [str(bundled_dir("corpus_templates"))]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # templates do not change during a build: no stat per render
        bytecode_cache=bytecode_cache(_SETTINGS),  # compiled once per user, not once per process
    )
    env.filters["oneline"] = _oneline
    env.filters["md"] = md_text
    env.filters["fence"] = fence
    env.finalize = _visible  # every value a template prints: run content and model text alike
    return env


def render(name: str, override: str | Path | None = None, **context) -> str:
    env = environment(str(override) if override else None)
    return env.get_template(name).render(**context)
