"""Names a file edit wrote that the log only showed spelt otherwise: a field or a constant the agent
misremembered.

An edit that reads ``_paddingOptional`` or ``Padding.OPTIONAL`` when the code the agent had searched
wrote ``PADDING_OPTIONAL`` rests on a name that may not exist; a reader copying the edit copies the
slip. Only names shaped like code are read (an underscore inside, a dot between two names, a
lower-case letter followed by a capital), so English words in comments and strings are not; a
dotted name counts as seen when any part of it was (``seg.replace`` calls a method on a value the
log showed). A name no turn shows in any spelling (a standard library's) is left alone: the log
cannot tell whether it exists.
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


def _words(name: str) -> tuple[str, ...]:
    """A name's words, lower case, in order: ``_paddingOptional``, ``PADDING_OPTIONAL`` and
    ``Padding.OPTIONAL`` are all (padding, optional)."""
    return tuple(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name))


def unseen_names(r: Reading, c: Call) -> list[tuple[str, str]]:
    """(name, the name the log showed) for each code-shaped name the edit ``c`` put in that neither
    the task text, any earlier turn nor the lines it took out held, while one of them held a name of
    the same words spelt otherwise: the edit wrote a name the agent misremembered, in the order
    written (at most SHOWN). A name no turn shows in any spelling (a standard library's
    ``Long.MIN_VALUE``) is not told: the log cannot say whether it exists. Read once per edit: the
    page's fact and the run's record (compilers/trial_record.py) both ask."""
    memo = r.memo.setdefault("unseen_names", {})
    if c.n not in memo:
        memo[c.n] = _unseen(r, c)
    return memo[c.n]


def _unseen(r: Reading, c: Call) -> list[tuple[str, str]]:
    lines = edit_lines(r, c)
    if lines is None:
        return []
    removed, added = lines
    seen = "\n".join([r.run.task.instruction or "", *removed] + [
        "\n".join(str(x) for x in (t.content, t.arguments, t.result) if x) for t in r.run.turns if t.turn < c.n])
    spelt: dict[tuple[str, ...], str] = {}
    out: list[tuple[str, str]] = []
    for m in _NAME.finditer("\n".join(added)):
        name = m.group(0)
        if not _code_like(name) or any(name == n for n, _s in out):
            continue
        if any(re.search(r"(?<![\w])" + re.escape(part) + r"(?![\w])", seen) for part in name.split(".")):
            continue
        if not spelt:  # the log's own names, by their words, read once some name is unseen
            for x in _NAME.finditer(seen):
                if _code_like(x.group(0)):
                    spelt.setdefault(_words(x.group(0)), x.group(0))
        other = spelt.get(_words(name))
        if other is not None and len(_words(name)) > 1:
            out.append((name, other))
    return out[:SHOWN]


def unseen_edit_names(r: Reading) -> list[tuple[Call, list[str]]]:
    """Each file edit of the run that wrote names no earlier turn showed, with those names."""
    return [(c, names) for c, _e in edits_of(r) if (names := unseen_names(r, c))]


def unseen_names_fact(r: Reading) -> list[KeyFact]:
    """The In short fact of the run's first edit that wrote a name the log only showed spelt otherwise."""
    found = unseen_edit_names(r)
    if not found:
        return []
    c, names = found[0]
    one = len(names) == 1
    shown = join([f"`{n}` (the log showed `{other}`)" for n, other in names], SHOWN)
    # said as what the log shows, with no advice: a successful trial may have written such a name too
    tail = ("; the run succeeded with " + ("it" if one else "them") + ", but no turn before the edit showed "
            + ("it" if one else "them") + " so written" if r.run.outcome.success else "")
    return [KeyFact(f"The edit at turn {c.n} wrote {shown}, {'a name' if one else 'names'} no earlier turn of this log "
                    f"held as written{tail}.", [c.n])]
