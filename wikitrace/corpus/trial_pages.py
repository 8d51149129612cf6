"""The line against the other trials of a task (corpus/trial_contrast.py), put on the pages.

A line depends on every trial of its task, and trials arrive in any order, so the page
writer (corpus/pages.py) holds the compilation pages of a command's runs until every run is
compiled; it then gets the trials of each task (``trial_groups``), works out each page's line
(``written_lines``) and writes each page once, line and all. A success's line comes first and takes the place of the facts that only restated the
run, a failure's comes second. The pages of other trials already in the corpus (not written by
this command: an ``add`` or ``forget`` changed their task) are read back and set here
(``set_on_disk``), so ``add`` and ``forget`` leave what ``compile`` of the same runs writes.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ..controls import visible
from ..templates import md_text
from . import layout
from .applies import trial_task
from .trial_contrast import lines

_MARK = re.compile(r"\]\(step-[^)/]*\.md\)")  # a line linking another compilation page: one of these lines
_HEAD = "\n## In short\n"
# trial_contrast.lines: (line, turns it cites, first: a success's line takes the place of restating facts; a
# failure's leads the page, when it says what its edits wrote against a successful trial's)
Made = tuple[str, list[int], bool]


def _bullet(text: str, turns: list[int], turns_link: str, escaped: bool) -> str:
    """One "In short" line as the page writes it (corpus/plain_pages.py)."""
    body = text if escaped else visible(md_text(text))
    if turns:
        body += (f" (turn{'s' if len(turns) > 1 else ''} "
                 + ", ".join(f"[{n}]({turns_link}#turn-{n})" for n in turns) + ")")
    return f"- {body}\n"


def _section(page: str) -> tuple[str, list[str], str | None, str] | None:
    """The page around its "In short" lines: (text before them, the lines of the run itself,
    the line against other trials or None, text after them); None without such a section."""
    start = page.find(_HEAD)
    if start < 0:
        return None
    body_at = start + len(_HEAD)
    end = page.find("\n## ", body_at)
    end = len(page) if end < 0 else end + 1
    body = page[body_at:end].splitlines(keepends=True)
    at = [i for i, ln in enumerate(body) if ln.startswith("- ")]
    if not at:
        return None
    lines = body[at[0]:at[-1] + 1]
    marked = [ln for ln in lines if _MARK.search(ln)]
    return (page[:body_at] + "".join(body[:at[0]]), [ln for ln in lines if not _MARK.search(ln)],
            marked[0] if marked else None, "".join(body[at[-1] + 1:]) + page[end:])


def _restating(step: str, restates: list | None) -> list[tuple[int, str]]:
    turns_link = layout.Linker(layout.compilation_doc(step), "/").rel(layout.raw_turns(step))
    return sorted((i, _bullet(t, turns, turns_link, False)) for i, t, turns in restates or [])


def _compose(parts, step: str, outcome: str, line: str | None, supersedes: bool, restates: list | None) -> str:
    before, own, _old, after = parts
    bullets = list(own)
    restating = _restating(step, restates)
    for i, b in restating:  # a restating fact an earlier line took the place of comes back
        if b not in bullets:
            bullets.insert(min(i, len(bullets)), b)
    if line is not None:
        if supersedes and outcome == "success":
            gone = {b for _i, b in restating}
            bullets = [b for b in bullets if b not in gone]
        bullets.insert(0 if outcome == "success" or supersedes else min(1, len(bullets)), line)
    return before + "".join(bullets) + after


def set_in_short(page: str, step: str, outcome: str, made: Made | None, restates: list | None) -> str:
    """The page with its "In short" set for ``made`` (None: none), whatever line it had before."""
    parts = _section(page)
    if parts is None:
        return page
    turns_link = layout.Linker(layout.compilation_doc(step), "/").rel(layout.raw_turns(step))
    line = _bullet(made[0], sorted(set(made[1])), turns_link, True) if made is not None else None
    return _compose(parts, step, outcome, line, bool(made and made[2]), restates)


def _groups(runs: list[dict], touched: set[str], dropped: list[dict]) -> tuple[dict[tuple, list[dict]], set]:
    """The runs (entries now) of every task that ``touched`` (steps written by this command) or
    ``dropped`` (entries the corpus held before this command: runs it no longer holds, and the
    earlier entries of runs compiled again) has a run of, by task; and the tasks of ``dropped``."""
    by_step = {r["step"]: r for r in runs}
    every = any("task_id" not in d for d in dropped)  # an entry the manifest kept only the ids of
    before = {trial_task(d) for d in dropped}
    tasks = {trial_task(by_step[s]) for s in touched if s in by_step} | before
    tasks.discard(None)
    group: dict[tuple, list[dict]] = defaultdict(list)
    for r in runs:
        t = trial_task(r)
        if t is not None and (every or t in tasks):
            group[t].append(r)
    return group, before


TRIAL_FIELDS = ("step", "outcome", "decisive", "facts")  # what trial_contrast.lines reads of an entry


def trial_groups(runs: list[dict], touched: set[str], dropped: list[dict], templates=None) -> list[list[dict]]:
    """The trials of each task with a page this command writes (``touched``) that had or has
    another trial, each entry cut to ``TRIAL_FIELDS``: what ``written_lines`` needs, small
    enough to send to the page writer process, which works out the lines beside this one."""
    from . import plain_pages

    if plain_pages.overridden(templates, plain_pages.COMPILATION_TEMPLATE):
        return []  # a page of the user's own shape: its "In short" is not ours to find
    group, before = _groups(runs, touched, dropped)
    return [[{k: r[k] for k in TRIAL_FIELDS if k in r} for r in members] for task, members in group.items()
            if (len(members) > 1 or task in before) and any(r["step"] in touched for r in members)]


def written_lines(groups: list[list[dict]]) -> dict[str, Made | None]:
    """step -> its "In short" line against the other trials of its task (None: it has none now,
    and any restating facts stay), for every trial of ``groups`` (``trial_groups``); a page
    written by this command whose step is not here is written as its run alone gives it."""
    out: dict[str, Made | None] = {}
    for members in groups:
        made = lines(members)
        out.update((r["step"], made.get(r["step"])) for r in members)
    return out


def set_on_disk(pub, runs: list[dict], touched: set[str], dropped: list[dict], templates=None) -> int:
    """Set the "In short" of every page in the corpus not written by this command (not in
    ``touched``) whose task ``touched`` or ``dropped`` (see ``_groups``) has a run of, from
    ``runs`` (every entry now). Returns the pages rewritten."""
    from . import plain_pages

    if plain_pages.overridden(templates, plain_pages.COMPILATION_TEMPLATE):
        return 0
    if not dropped and len(touched) == len(runs):
        return 0  # a first compile: this command wrote every page
    group, _before = _groups(runs, touched, dropped)
    written = 0
    for members in group.values():
        kept = [r for r in members if r["step"] not in touched]
        if not kept:
            continue  # every page of the task is written by this command, line and all
        made = lines(members)
        for r in kept:
            rel = layout.compilation_doc(r["step"])
            try:
                page = (pub.root / rel).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            new = set_in_short(page, r["step"], r["outcome"], made.get(r["step"]),
                               (r.get("decisive") or {}).get("restates"))
            # recorded even when the disk has these bytes already: a command killed after it
            # replaced the page and before its record was saved left the record out of date
            pub.write(rel, new.encode("utf-8"))
            written += new != page
    return written
