"""One jinja2 environment for every document and prompt wikitrace renders.

Templates ship in the package (``corpus_templates/``); a user folder given with
``--templates DIR`` is searched first, so any single template can be overridden
by a file of the same name.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

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


_MD_ACTIVE = frozenset("[]`<>")
_MD_PUNCT = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def md_text(value) -> str:
    """Run or model text made safe to place in a page: brackets, backticks and angle
    brackets are backslash-escaped, so a viewer shows ``[g](docs/guide.md)`` or a
    backticked path as the text it is, never as a link or code the page did not write
    (and ``wikitrace check`` judges only the links the templates wrote). A backslash
    that would escape the next character is doubled so it stays visible."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if not any(ch in _MD_ACTIVE or ch == "\\" for ch in text):
        return text
    out = []
    for i, ch in enumerate(text):
        if ch in _MD_ACTIVE:
            out.append("\\" + ch)
        elif ch == "\\" and i + 1 < len(text) and text[i + 1] in _MD_PUNCT:
            out.append("\\\\")
        else:
            out.append(ch)
    return "".join(out)


@lru_cache(maxsize=8)
def environment(override: str | None = None) -> jinja2.Environment:
    dirs = ([override] if override else []) + [str(bundled_dir("corpus_templates"))]
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(dirs),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        auto_reload=False,  # templates do not change during a build: no stat per render
    )
    env.filters["oneline"] = _oneline
    env.filters["md"] = md_text
    return env


def render(name: str, override: str | Path | None = None, **context) -> str:
    env = environment(str(override) if override else None)
    return env.get_template(name).render(**context)
