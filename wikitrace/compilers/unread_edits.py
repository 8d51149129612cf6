"""A file edit made before the run had seen the lines it replaced: no view of the file went through
and no earlier answer held any of them (where the edit's lines are unknown: no command naming the
file answered either). Such an edit was written from
memory or from the task's words; on a failed run it is a step a reader can check in any new task
(read the lines an edit replaces first). Said only where the log shows every part.
"""

from __future__ import annotations

from ..runs.tool_kinds import EDIT, VIEW
from .call_kinds import FILE_EDIT, base, call_kind
from .reading import Call, Reading, command_of
from .edit_lines import edit_lines
from .insight_parts import edits_of
from .schema import KeyFact
from .text import clip

_LONG = 10  # a replaced line shorter than this ("}", "else:") stands in most files


def _fold(text: str) -> str:
    return " ".join(text.split())


def _showed(r: Reading, c: Call, name: str, lines: list[str] | None) -> bool:
    """Whether a call that went through showed the file ``name``: a view of it, an answer holding a
    line the edit replaced, or, where the edit's lines are unknown, a command naming it that
    answered something."""
    if c.error or not (c.turn.result or "").strip():
        return False
    k = call_kind(r, c)
    if k is not None and k.kind == VIEW and k.target and base(k.target) == name:
        return True
    if lines is None:
        return (k is None or k.kind != EDIT) and name in (command_of(c.turn) or str(c.turn.arguments or ""))
    answer = _fold(c.turn.result)
    return any(_fold(x) in answer for x in lines)


def unread_edit_fact(r: Reading) -> list[KeyFact]:
    """The In short fact of a failed run's first edit of a file nothing before it showed."""
    if r.run.outcome.success:
        return []
    for c, e in edits_of(r):
        got = edit_lines(r, c)
        if got is not None and not got[0]:
            continue  # nothing taken out (a new file, a whole file written): nothing to have read first
        lines = None if got is None else [x.rstrip("\u2026") for x in got[0] if len(x) >= _LONG]
        if lines == []:
            continue  # only short lines replaced ("}", "else:"): any answer may have held them
        name = base(e.file)
        if any(_showed(r, x, name, lines) for x in r.calls if x.n < c.n):
            continue
        if lines is None:
            said = (f"The edit at turn {c.n} changed `{name}`, which no call before it had shown: no view of it went "
                    "through and no command naming it answered.")
        else:
            said = (f"The edit at turn {c.n} replaced {'a line' if len(lines) == 1 else 'lines'} of `{name}` no call "
                    f"before it had shown: no view of the file went through, and no earlier answer held "
                    f"{'the line' if len(lines) == 1 else 'any line'} it replaced (`{clip(lines[0], 80)}`).")
        # about the kind of call, as a lesson on edits names it: counted only on such a lesson (corpus/checked_facts.py)
        return [KeyFact(said + " Read the lines an edit replaces before writing it.", [c.n], "unread-edit", [FILE_EDIT])]
    return []
