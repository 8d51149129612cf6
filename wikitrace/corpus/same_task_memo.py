"""Trial comparisons of insight groups kept between commands of one corpus.

Comparing an insight's sources with the other trials of their tasks (``Trials.compare``)
reads the patterns of every run of those tasks: on a task type of 10,000 runs it is most
of gathering the insight layer again, which every ``add`` does for the added run's type.
Most groups' comparisons do not change when one run is added (only groups that gain it,
or whose sources share its task). So each result is kept under a digest of everything it
reads: each source's step, outcome, task and patterns, every run of those tasks (step,
outcome, patterns), and the comparing code itself. A result is reused only when that
digest is the same, so nothing stale can be served, whatever happened between commands
(a run forgotten, compiled again, a corpus.json rewritten, another wikitrace).

Kept in ``.wikitrace/same-task.json``, outside the corpus's published files: a missing,
unreadable or foreign file only means every comparison is made again. Each save keeps
the results the last gather used for each task type it gathered (a type not gathered
keeps its results), so the file does not grow with a corpus's history.

The lines a task's trials give their pages (corpus/trial_contrast.lines), which the insight
cases quote, are kept the same way (``task_lines``), under a digest of what ``lines`` reads of
every trial of the task (corpus/trial_pages.TRIAL_FIELDS).
"""

from __future__ import annotations

import hashlib
import json
import marshal
from pathlib import Path

from ..code_digest import code_digest
from .pattern_tally import patterns_digest

FILE = "same-task.json"
_FORMAT = "wikitrace-same-task/4"  # 2: digests of marshalled data; 3: a run's patterns by their hex digest; 4: lines
_LINES = "lines:"  # a task's trial lines, beside the comparisons under its type: their digests are apart


def _serial(value) -> bytes:
    """The bytes digested for plain JSON data (strings, numbers, lists, tuples): marshal's first
    format, which writes each string with its length (unambiguous), and no references or interning
    marks (the same bytes whatever the objects' history), in C."""
    return marshal.dumps(value, 0)


class SameTaskMemo:
    """``Trials.compare`` with results from an earlier gather reused by digest."""

    def __init__(self, known: dict[str, dict[str, str]] | None = None):
        self.known = known or {}  # task type -> digest -> the result as JSON text
        self.used: dict[str, dict[str, str]] = {}  # the same, of this gather: for the next command
        self.patterns: dict[str, str] = {}  # step -> digest of its patterns, as the gather's tallies hold them
        self._tasks: dict[tuple, bytes] = {}  # task -> digest of its runs

    def _of_patterns(self, entry: dict) -> str:
        found = self.patterns.get(entry["step"])
        if found is None:
            found = self.patterns[entry["step"]] = patterns_digest(entry.get("patterns") or [])
        return found

    def _of_task(self, trials, task: tuple) -> bytes:
        found = self._tasks.get(task)
        if found is None:
            of = self._of_patterns
            found = self._tasks[task] = hashlib.sha256(_serial(
                [(outcome, r["step"], of(r)) for outcome, runs in sorted(trials.by_task.get(task, {}).items())
                 for r in runs])).digest()
        return found

    def digest(self, trials, members: list[dict]) -> str:
        """Everything ``trials.compare(members)`` reads, as one digest."""
        of, group = self._of_patterns, trials.group
        rows = [(e["step"], e["outcome"], group(e), of(e)) for e in members]
        tasks = dict.fromkeys(task for _s, _o, task, _p in rows if task is not None)
        h = hashlib.sha256(code_digest().encode())
        h.update(_serial(rows))
        h.update(_serial([(task, self._of_task(trials, task)) for task in tasks]))
        return h.hexdigest()

    def compare(self, trials, members: list[dict]) -> dict | None:
        from .insights import kind_of

        kind = kind_of(members[0]) if members else ""
        key = self.digest(trials, members)
        text = self.known.get(kind, {}).get(key)
        try:
            result = json.loads(text) if text is not None else None  # a fresh object: the rewrites edit it in place
        except ValueError:  # a damaged entry is only a comparison to make again
            text = None
        if text is not None and result is not None and not isinstance(result, dict):
            text = None  # of another shape (a hand-edited file): made again
        if text is None:
            result = trials.compare(members)
            text = json.dumps(result)
            result = json.loads(text)  # the same shape a kept result has (tuples as lists)
        self.used.setdefault(kind, {})[key] = text
        return result

    def task_lines(self, kind: str, entries: list[dict], make) -> tuple[dict, dict]:
        """``make()`` -> (step -> line, step -> shape) for the trials ``entries`` of one task, or the
        result an earlier gather kept for trials that read the same (lines as lists, not tuples)."""
        from .trial_pages import TRIAL_FIELDS

        h = hashlib.sha256(code_digest().encode())
        h.update(_serial([[e.get(k) for k in TRIAL_FIELDS] for e in entries]))
        key = _LINES + h.hexdigest()
        text = self.known.get(kind, {}).get(key)
        try:
            made = json.loads(text) if text is not None else None
        except ValueError:
            made = None
        if not _lines_shape(made):  # missing, cut short or damaged: a result only to make again
            text = json.dumps(make())
            made = json.loads(text)
        self.used.setdefault(kind, {})[key] = text
        return made[0], made[1]


def _lines_shape(made) -> bool:
    """Whether a kept result reads as ``task_lines`` hands it out: step -> [line, turns, restates],
    step -> shape; anything else (a hand-edited or damaged file) is made again, never read."""
    if not (isinstance(made, list) and len(made) == 2 and all(isinstance(m, dict) for m in made)):
        return False
    lines, shapes = made
    return all(isinstance(v, list) and len(v) == 3 and isinstance(v[0], str) and isinstance(v[1], list)
               and all(isinstance(t, int) for t in v[1]) for v in lines.values()) \
        and all(isinstance(v, str) for v in shapes.values())


def load(root: Path) -> SameTaskMemo:
    try:
        raw = json.loads((Path(root) / ".wikitrace" / FILE).read_bytes())
    except (OSError, ValueError):
        return SameTaskMemo()
    if not isinstance(raw, dict) or raw.get("format") != _FORMAT or raw.get("code") != code_digest():
        return SameTaskMemo()
    entries = raw.get("entries")
    if not isinstance(entries, dict):
        return SameTaskMemo()
    return SameTaskMemo({kind: {k: v for k, v in results.items() if isinstance(k, str) and isinstance(v, str)}
                         for kind, results in entries.items() if isinstance(results, dict)})


def save(root: Path, memo: SameTaskMemo, kinds: set[str], gathered: set[str]) -> None:
    """Keep, for each task type in ``kinds`` (the corpus's), the results of this gather when
    it gathered the type (``gathered``), else those it had (written whole, renamed into place)."""
    from ..fsio import write_atomic

    entries = {kind: dict(sorted((memo.used if kind in gathered else memo.known).get(kind, {}).items()))
               for kind in sorted(kinds)}
    try:
        write_atomic(Path(root) / ".wikitrace" / FILE, json.dumps(
            {"format": _FORMAT, "code": code_digest(), "entries": {k: v for k, v in entries.items() if v}}) + "\n",
            mode=0o644)
    except OSError:
        pass  # only a speed-up for the next command: without it every comparison is made again
