"""The lesson of a successful coding run (one that changed files): where it found the file it
changed (the task text, an earlier call's answer), the edit, the test it saw pass after it (a
command that had failed before), and the call it ended with; and the changed files with their
functions, as a source line beside the run."""

from __future__ import annotations

import re

from ..runs.tool_kinds import EDIT, SEARCH, VIEW
from .call_kinds import STEP, call_kind
from .changes import edit_of, what_ran
from .insight_parts import (PLACE_RANK, edit_place, edits_of, kind_of_tasks, lookups_before, main_edit, make_insight,
                            tested_after, verb)
from .insight_words import join
from .reading import Call, Reading, command_of, runs_a_command
from .schema import CandidateInsight
from .text import base_name


def last_edit(r: Reading) -> Call:
    return edits_of(r)[-1][0]


# how a coding run found the file it changed (insight_parts.edit_place) -> (title phrase, step)
_LOCATED = {
    "task": ("Change the file the task names", "find the file the task text names (and in it the function, or the "
             "line of a trace, the task names when it names one)"),
    "shown": ("Find the file to change in an earlier answer", "find the file to change in what an earlier call "
              "returned (a listing or a trace that names it)"),
    "new": ("", ""),
}


def edit_detail(r: Reading) -> str:
    """``a.py (in f), a file the task names and b.py, found in find_file's answer (turn 2)``."""
    files: dict[str, tuple[int, str, str]] = {}  # file -> (place rank, function, how it was found)
    for c, e in edits_of(r):
        place, shown = edit_place(r, c, e.file)
        said = (", a file the task names" if place == "task" else
                f", found in {what_ran(shown.turn)}'s answer (turn {shown.n})" if shown is not None else "")
        rank, function, how = files.get(e.file, (PLACE_RANK.index(place), "", said))
        files[e.file] = (rank, function or e.function or "", how)
    ordered = sorted(files.items(), key=lambda kv: kv[1][0])  # stable: first edited first within a place
    return join([f + (f" (in {fn})" if fn else "") + how for f, (_r, fn, how) in ordered], 3)


# SWE-agent's edit command: "edit 571:571" replaces lines 571 to 571 of the open file
_EDIT_RANGE = re.compile(r"^\s*edit\s+(\d+):(\d+)\b")


def task_points(r: Reading) -> str:
    """``; the task's trace names line 571 of A.java, which the edit at turn 3 changed`` or ``; the
    task names findNamespace, the function the edit at turn 3 changed``: what the task text says of
    the place a successful edit changed, beyond the file (the first edit that shows it)."""
    task = r.run.task.instruction or ""
    for c, e in edits_of(r):
        base = base_name(e.file)
        m = _EDIT_RANGE.match(command_of(c.turn) or (c.turn.arguments if isinstance(c.turn.arguments, str) else ""))
        if m:
            lo, hi = int(m.group(1)), int(m.group(2))
            for n in re.findall(rf"(?<![\w.]){re.escape(base)}(?::|\", line )(\d+)", task):
                if lo <= int(n) <= hi:
                    return f"; the task's trace names line {n} of {base}, which the edit at turn {c.n} changed"
        if e.function and re.search(rf"(?<!\w){re.escape(e.function)}(?!\w)", task):
            return f"; the task names {e.function}, the function the edit at turn {c.n} changed"
    return ""


def coding_procedure(r: Reading, final: Call, looks: list[str], detail: str, key: str) -> CandidateInsight:
    """A success that changed files: where it found the file it changed, the edit, the test it saw
    pass after the edit (a command that had failed before it), and the call it ended with."""
    v = verb(final)
    _c, _e, place, shown = main_edit(r)
    title, locate = _LOCATED[place]
    before = set(lookups_before(r, last_edit(r)))  # a look-up after the last edit did not lead to it
    looks = [x for x in looks if x in before and (shown is None or x != verb(shown))]  # the finder is the step before
    # by kind where the format says it (runs/tool_kinds.py): another agent's tools have other names
    kinds = {verb(c): k.kind for c in r.calls if (k := call_kind(r, c)) is not None}
    told = [STEP[kinds[x]] for x in looks if kinds.get(x) in (VIEW, SEARCH)]
    looked = (join(sorted(set(told)), 3) if told and len(told) == len(looks) else
              f"look {'at it ' if locate else ''}with {join(sorted(looks), 3)}" if looks else "")
    editors = list(dict.fromkeys(verb(c) for c, _e in edits_of(r)))
    tested = tested_after(r, last_edit(r))
    steps = [x for x in (locate, looked) if x]
    by_kind = all(kinds.get(x) == EDIT for x in editors)
    steps.append(f"change {'it' if locate else 'the code'}" + ("" if by_kind else f" with {join(editors, 3)}"))
    ends_with_test = runs_a_command(final.turn) and what_ran(final.turn) == tested
    ends_with_edit = edit_of(final.turn) is not None  # no submit step: the last edit settled it
    if tested:
        steps.append(f"run the {tested} command that failed before the change again and see it pass")
    if not (ends_with_test or ends_with_edit):
        steps.append(f"call {v}")
    # a title says what to do, never only which tools ran ("Settle with Bash python after Read")
    head = title or ("Read the code, then change it" if looks else "Change the code")
    if ends_with_test or (tested and ends_with_edit):
        head += f", then see the failing {tested} command pass"
    elif not ends_with_edit:  # a test seen passing before the submit is part of the lesson (its key says so too)
        head += (f", see the failing {tested} command pass" if tested else "") + f", then {v}"
    return make_insight(key, head, "To settle the task: " + ", then ".join(steps) + ".",
                        f"In {kind_of_tasks(r)} that end with {v}.", detail + task_points(r), True)
