"""A run's calls by kind (runs/tool_kinds.py), as the patterns and lessons name them: runs of
different coding agents are compared by what their calls did and the file they aimed at, never
by the names their agents give their tools."""

from __future__ import annotations

from ..runs.tool_kinds import EDIT, SEARCH, SHELL, SUBMIT, TEST, VIEW, Kind, kind_of
from .changes import what_ran
from .reading import Call, Reading

# what a kind of call is, as a step of a lesson ("view the file", "search the code")
STEP = {VIEW: "view the file", SEARCH: "search the code", EDIT: "change the file", TEST: "run the tests",
        SUBMIT: "submit"}


def call_kind(r: Reading, c: Call) -> Kind | None:
    """The kind of a call (worked out once per call)."""
    memo = r.memo.setdefault("call_kinds", {})
    if c.n not in memo:
        memo[c.n] = kind_of(c.turn, r.run.source.get("format"))
    return memo[c.n]


def base(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def did_token(r: Reading, c: Call) -> str | None:
    """What a call that went through did, as trials compare it (``@view:A.java``, ``@test``,
    ``@run:mvn``); None for a call of no kind (a chat tool keeps its name)."""
    k = call_kind(r, c)
    if k is None:
        return None
    if k.kind == VIEW and k.target:
        return f"@view:{base(k.target)}"
    if k.kind == SHELL:
        return f"@run:{what_ran(c.turn)}"
    return f"@{k.kind}"


def is_edit(r: Reading, c: Call) -> bool:
    k = call_kind(r, c)
    return k is not None and k.kind == EDIT


FILE_EDIT = "a file edit"  # a change made by any agent's editor, as a went-through lesson names it


def changed_with(r: Reading, c: Call) -> str:
    """What a change that went through is named by in its lesson's key: a file edit whatever
    editor made it, any other change by its tool (``verb``)."""
    from .insight_parts import verb

    return FILE_EDIT if is_edit(r, c) else verb(c)
