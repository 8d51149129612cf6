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


def _visible(value):
    """Control characters in a rendered value shown as escapes (``controls``)."""
    if isinstance(value, str):
        from .controls import visible

        return visible(value)
    return value


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
    env.finalize = _visible  # every value a template prints: run content and model text alike
    return env


def render(name: str, override: str | Path | None = None, **context) -> str:
    env = environment(str(override) if override else None)
    return env.get_template(name).render(**context)
