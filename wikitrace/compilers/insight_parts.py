"""What every insight of a run is built from: the tool (and command word) a call names, an
error answer with what is particular to the run masked, the system prompt's rules on a call
(worked out once per call), and the record itself."""

from __future__ import annotations

import hashlib
import re

from .changes import Edit, diff_files, edit_of, what_ran
from .reading import Call, Reading, _occurs, command_of, runs_a_command
from .rules import rules_for
from .schema import CandidateInsight
from .text import clip, first_line, generic

_QUOTED = re.compile(r"\"[^\"]*(?:\"|$)|'[^']*(?:'|$)|`[^`]*(?:`|$)|\[[^\]]*(?:\]|$)|\([^)]*(?:\)|$)|\{[^}]*(?:\}|$)")
# a path, its masked parts included: first_line has already masked a name holding a digit
# ("Base64.java" -> "….java"), and the rest of the path must not stay behind to tell two runs apart
_PATH = re.compile(r"(?:[\w.~…-]*/)+[\w.…-]*|(?<![\w…])[\w…-]+\.[A-Za-z]{1,5}\b")
_WORD = re.compile(r"[A-Za-z][\w.+-]{0,29}")


def verb(c: Call) -> str:
    """The tool, and for a shell or editor call the command word it ran: ``bash mvn``; a command
    the importer saw submit the run is named for what it did: ``submit``."""
    if c.turn.extra.get("submits"):
        return "submit"
    if not runs_a_command(c.turn):
        return c.name
    command = re.sub(r"^\s*cd\s+\S+\s*(?:&&|;)\s*", "", command_of(c.turn) or "")
    m = _WORD.match(command.strip())
    head = m.group(0) if m else ""
    if head and c.name.lower() == "cd":  # SWE-agent names ``cd /r && pytest`` by its first word: the program says it
        return head
    return c.name if not head or head.lower() == c.name.lower() else f"{c.name} {head}"


def shape(c: Call) -> str:
    """What an error answer says with everything particular to the episode masked."""
    line = first_line(c.turn.result, 200)
    if line.startswith("[") and "]" not in line[:-1]:  # a harness note in brackets is the message itself
        line = line[1:].removesuffix("]")
    line = _QUOTED.sub("…", line)
    line = _PATH.sub("…", line)
    line = re.sub(r"…(?:[\s,;:/.-]*…)+", "…", generic(line))
    return clip(line, 80).replace('"', "'")


def rules_once(r: Reading, c: Call):
    """rules_for(r, c), computed once per call of the run (the lessons and the patterns both ask)."""
    key = f"insights.rules:{c.n}"
    if key not in r.memo:
        r.memo[key] = rules_for(r, c)
    return r.memo[key]


def short_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()[:10]


def lookups_before(r: Reading, before: Call | None) -> list[str]:
    return list(dict.fromkeys(verb(c) for c in r.calls
                              if not c.writes and not c.error and (before is None or c.n < before.n)))


def kind_of_tasks(r: Reading) -> str:
    t = r.run.task
    kind = t.task_type or (", ".join(t.apps) if t.apps else "")
    return f"{kind} tasks" if kind else "tasks of this kind"


def make_insight(key: str, title: str, guideline: str, applicability: str, detail: str, worked: bool) -> CandidateInsight:
    return CandidateInsight(title=title, guideline=guideline, applicability=applicability, key=key,
                            detail=detail.replace("\n", " "), worked=worked)


def edits_of(r: Reading) -> list[tuple[Call, Edit]]:
    """The run's calls that changed a file it names (``changes.edit_of``), with the edit, in order.
    When the run submitted a patch (a call answered with a git diff), a file the patch leaves out
    was scratch (SWE-agent's ``reproduce.py``), not a change to the code: its edits are left out."""
    key = "insights.edits"
    if key not in r.memo:
        edits = [(c, e) for c in r.calls if not c.error and (e := edit_of(c.turn)) is not None]
        patch = next((diff_files(c.turn.result) for c in reversed(r.calls) if not c.error and c.turn.result
                      and "diff --git" in c.turn.result), [])
        if patch:
            paths = ["/" + p.lstrip("/") for p, _new in patch]
            edits = [(c, e) for c, e in edits if any(("/" + e.file.lstrip("/")).endswith(p) for p in paths)]
        r.memo[key] = edits
    return r.memo[key]


def _names_of_file(path: str) -> list[str]:
    """How a text may name a file: its base name, its stem when that is a word of four letters
    or more (``JsonWriter`` for ``JsonWriter.java``, the class an issue names), and its module path
    with up to three folders (``tally.stats`` for ``tally/stats.py``: ``tally.stats.median``)."""
    parts = [p for p in path.strip("/").split("/") if p]
    base = parts[-1] if parts else path
    stem = base.rsplit(".", 1)[0]
    names = [base.lower()] + ([stem.lower()] if stem != base and len(stem) >= 4 and re.fullmatch(r"\w+", stem) else [])
    # its module path, as code names it ("tally.stats" for tally/stats.py, "acme.io.Parser" for acme/io/Parser.java)
    folders = parts[:-1]
    for k in range(1, min(3, len(folders)) + 1):
        if stem != base and all(re.fullmatch(r"\w+", p) for p in folders[-k:] + [stem]):
            names.append(".".join(folders[-k:] + [stem]).lower())
    return names


def edit_place(r: Reading, c: Call, path: str) -> tuple[str, Call | None]:
    """Where the run found the file an edit changed: ``task`` the task text names it (its base
    name or its stem as a whole word), ``shown`` an earlier call's answer named it while that
    call's own arguments did not (a search's listing, a failing test's trace, error or not: the place was
    found, not typed), ``new`` neither (a file the agent made or named itself). With the call
    whose answer showed it first (worked out once per edit: the patterns and the lessons both ask)."""
    key = f"insights.edit-place:{c.n}:{path}"
    if key not in r.memo:
        r.memo[key] = _edit_place(r, c, path)
    return r.memo[key]


def _edit_place(r: Reading, c: Call, path: str) -> tuple[str, Call | None]:
    names = _names_of_file(path)
    task = (r.run.task.instruction or "").lower()
    if any(_occurs(n, task) for n in names):
        return "task", None
    for x in r.calls:
        if x.n >= c.n:
            break
        said = (command_of(x.turn) or str(x.turn.arguments or "")).lower()  # a command, not its description
        if x.turn.result and not any(_occurs(n, said) for n in names) \
                and any(_occurs(n, r.lower(x.turn)) for n in names):  # r.lower: each answer lowered once per run
            return "shown", x
    return "new", None


def tested_after(r: Reading, last_edit: Call) -> str | None:
    """The program a command ran after the run's last edit without an error, having answered with
    an error before it (a failing test run, then the edit, then the same test passing)."""
    failed = {what_ran(c.turn) for c in r.calls if c.n < last_edit.n and c.error and runs_a_command(c.turn)}
    return next((what_ran(c.turn) for c in r.calls if c.n > last_edit.n and not c.error and runs_a_command(c.turn)
                 and what_ran(c.turn) in failed), None)


PLACE_RANK = ("task", "shown", "new")  # the place that says most about how the run found what to change


def main_edit(r: Reading) -> tuple[Call, Edit, str, Call | None] | None:
    """The run's edit that says most about how it found what to change: of a file the task names
    first, else of one an earlier answer showed, else the first; with its place and the call that
    showed the file."""
    key = "insights.main-edit"
    if key not in r.memo:
        placed = [(c, e, *edit_place(r, c, e.file)) for c, e in edits_of(r)]
        r.memo[key] = min(placed, key=lambda x: (PLACE_RANK.index(x[2]), x[0].n)) if placed else None
    return r.memo[key]
