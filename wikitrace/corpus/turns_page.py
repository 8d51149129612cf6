"""A run's turns page (``raw/step-NNNN/turns.md``) written in one pass of plain Python.

It is the largest page of a run and the template engine spent most of a page
writer's time on it: a template pass per turn and per field, and each argument
object dumped by ``json.dumps(indent=2)``, which has no C encoder. The bundled
``raw_turns.md.j2`` stays the definition of the page (a ``--templates`` folder
that overrides it is rendered with the engine, as every other page); this
module writes the same bytes without the engine, which the tests check turn
shape by turn shape against the template.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from pathlib import Path

from ..controls import visible
from ..fsio import dump_frontmatter
from ..templates import cap_text, fence, md_text
from . import layout

TEMPLATE = "raw_turns.md.j2"
_INDENT = "  "


class _NotPlainJSON(Exception):
    """A value this encoder leaves to ``json.dumps`` (a non-string key, another type)."""


def _floatstr(value: float) -> str:
    if value != value:
        return "NaN"
    if value == float("inf"):
        return "Infinity"
    if value == float("-inf"):
        return "-Infinity"
    return float.__repr__(value)


def _emit(value, out: list, newline: str) -> None:
    """Append ``value`` as indented JSON; ``newline`` is the line break and indent of its level."""
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(_floatstr(value))
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + _INDENT
        out.append("[")
        for item in value:
            out.append(inner)
            _emit(item, out, inner)
            out.append(",")
        out[-1] = newline + "]"
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        if not all(isinstance(key, str) for key in value):
            raise _NotPlainJSON
        inner = newline + _INDENT
        out.append("{")
        for key, item in sorted(value.items()):
            out.append(inner)
            out.append(encode_basestring(key))
            out.append(": ")
            _emit(item, out, inner)
            out.append(",")
        out[-1] = newline + "}"
    else:
        raise _NotPlainJSON


def indented_json(value) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)``, the same text,
    built with the C string encoder: the values of a turn log are plain JSON."""
    out: list[str] = []
    try:
        _emit(value, out, "\n")
    except (_NotPlainJSON, RecursionError):
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)
    return "".join(out)


def turn_fields(turn, step: str) -> list[tuple[str, str]]:
    """(label, text) of each field a turn shows, long ones cut to their head and tail."""
    fields = []
    for label, value in (("reasoning", turn.reasoning), ("content", turn.content), ("arguments", turn.arguments),
                         ("observation", turn.result)):
        if value is None or value == "":
            continue
        text = value if isinstance(value, str) else indented_json(value)
        fields.append((label, cap_text(text, step, turn.turn)))
    return fields


def frontmatter(run, step: str) -> str:
    return dump_frontmatter({"type": "raw-turns", "step_id": step, "run_id": run.run_id, "turns": len(run.turns),
                             "aliases": [f"{step} turns"]})  # a vault's title for one of many turns.md


def overridden(templates: Path | None) -> bool:
    """Whether a ``--templates`` folder brings its own turns page."""
    return templates is not None and (Path(templates) / TEMPLATE).is_file()


def _shown(value) -> str:
    """A printed value as the template engine prints it (its ``finalize``, then ``str``)."""
    return visible(value) if isinstance(value, str) else str(value)


def render(run, step: str, mount: str) -> str:
    """The page ``raw_turns.md.j2`` renders, every printed value shown visible as there."""
    link = layout.Linker(layout.raw_turns(step), mount)
    step_v = visible(step)
    out = ["---\n", visible(frontmatter(run, step)), "---\n# ", step_v, " turns: run ", visible(md_text(run.run_id)),
           " (task ", visible(md_text(run.task.id)), ")\n\nEvery turn of [", step_v, "](",
           visible(link.rel(layout.raw_metadata(step))), "), readable in an editor. The log itself is `",
           visible(link.abs(layout.raw_log(step))), "` (one JSON object per turn); an agent reads a turn with `turn ",
           step_v, " N`. Fields longer than a screen show their head and tail.\n"]
    for t in run.turns:
        out += ["\n## Turn ", _shown(t.turn), "\n\n*", _shown(t.type)]
        if t.role:
            out += [", ", _shown(t.role)]
        if t.name:
            out += [": ", visible(md_text(t.name))]
        if t.is_error:
            out.append(" (error)")
        out.append("*\n")
        for label, text in turn_fields(t, step):
            out += ["\n**", label, "**\n\n", visible(fence(text)), "\n"]
    return "".join(out)
