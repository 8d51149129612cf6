"""Names a file edit wrote that no earlier turn of the log showed: a field, a constant or a method the
agent may have made up.

An edit that calls ``_paddingOptional`` or ``Padding.OPTIONAL`` when no file view, search result or
task text before it held that name rests on the agent's guess that the name exists; a reader
copying the edit copies the guess. Only names shaped like code are read (an underscore inside, a
dot between two names, a lower-case letter followed by a capital), so English words in comments
and strings are not; a dotted name counts as seen when any part of it was (``seg.replace`` calls
a method on a value the log showed).
"""

from __future__ import annotations

import re

from .edit_lines import edit_lines
from .insight_parts import edits_of
from .insight_words import join
from .reading import Call, Reading
from .schema import KeyFact

SHOWN = 3  # names told per edit
_NAME = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")
_CAMEL = re.compile(r"[a-z][A-Z]")


def _code_like(name: str) -> bool:
    core = name.strip("_")
    return len(name) >= 4 and ("_" in core or "." in name or bool(_CAMEL.search(name)) or name.startswith("_"))


def unseen_names(r: Reading, c: Call) -> list[str]:
    """The code-shaped names the edit ``c`` put in that neither the task text, any earlier turn nor
    the lines it took out held, in the order written (at most SHOWN)."""
    lines = edit_lines(r, c)
    if lines is None:
        return []
    removed, added = lines
    seen = "\n".join([r.run.task.instruction or "", *removed] + [
        "\n".join(str(x) for x in (t.content, t.arguments, t.result) if x) for t in r.run.turns if t.turn < c.n])
    out: list[str] = []
    for m in _NAME.finditer("\n".join(added)):
        name = m.group(0)
        if not _code_like(name) or name in out:
            continue
        if not any(re.search(r"(?<![\w])" + re.escape(part) + r"(?![\w])", seen) for part in name.split(".")):
            out.append(name)
    return out[:SHOWN]


def unseen_edit_names(r: Reading) -> list[tuple[Call, list[str]]]:
    """Each file edit of the run that wrote names no earlier turn showed, with those names."""
    return [(c, names) for c, _e in edits_of(r) if (names := unseen_names(r, c))]


def unseen_names_fact(r: Reading) -> list[KeyFact]:
    """The In short fact of the run's first edit that wrote names no earlier turn held."""
    found = unseen_edit_names(r)
    if not found:
        return []
    c, names = found[0]
    one = len(names) == 1
    shown = join([f"`{n}`" for n in names], SHOWN)
    tail = ("; the run succeeded with " + ("it" if one else "them") + ", but nothing before the edit showed "
            + ("it" if one else "them") if r.run.outcome.success else
            ": nothing in the log shows " + ("it exists" if one else "they exist") + " as written. Search the code for "
            "a name before writing it")
    return [KeyFact(f"The edit at turn {c.n} wrote {shown}, {'a name' if one else 'names'} no earlier turn of this log "
                    f"held (the task text, a file view, a search){tail}.", [c.n])]
