"""Progress for long commands (``compile``, ``dialogue compile``), always on stderr.

On a terminal: a bar with the count, the total, the elapsed time and an ETA. In a
log (not a terminal): one plain line every few seconds and one at the end, so a CI
log shows the build moving without a wall of redraws. ``--quiet`` shows nothing.
Lines are never wrapped: a path is one searchable line in a log.
"""

from __future__ import annotations

import time
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

PLAIN_EVERY_S = 5.0


def console(quiet: bool = False):
    """The stderr console every human-facing line goes through (no wrapping, no markup
    surprises from paths that contain brackets)."""
    from rich.console import Console

    return Console(stderr=True, soft_wrap=True, highlight=False, markup=False, quiet=quiet)


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _clock(seconds: float) -> str:
    seconds = int(max(0, seconds))
    return f"{seconds // 60}:{seconds % 60:02d}" if seconds < 3600 else \
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """``for item in progress.track(items, total, "compiling", "runs")``: reports as it goes.

    Also usable as the ``batch_progress`` of a build (``add_task``/``update``/``advance``
    like rich's Progress), so one object serves every phase.
    """

    def __init__(self, con, quiet: bool = False, plain_every: float = PLAIN_EVERY_S):
        self.con = con
        self.quiet = quiet
        self.plain_every = plain_every
        self._bar = None
        if not quiet and con.is_terminal:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)

            self._bar = RichProgress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                     TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                                     console=con, transient=True)
        self._plain: dict[int, dict] = {}

    # -- context ---------------------------------------------------------------------
    def __enter__(self) -> "Progress":
        if self._bar is not None:
            self._bar.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._bar is not None:
            self._bar.__exit__(*exc)

    # -- rich-like task API (used by the batch phase) -------------------------------
    def add_task(self, description: str, total: float | None = None, **_) -> int:
        if self._bar is not None:
            return self._bar.add_task(description, total=total)
        task = len(self._plain)
        self._plain[task] = {"what": description, "total": total, "done": 0, "start": time.monotonic(),
                             "said": time.monotonic()}
        return task

    def update(self, task: int, completed: float | None = None, total: float | None = None,
               description: str | None = None, **_) -> None:
        if self._bar is not None:
            self._bar.update(task, completed=completed, total=total, description=description)
            return
        state = self._plain.get(task)
        if state is None:
            return
        if total is not None:
            state["total"] = total
        if description is not None:
            state["what"] = description
        if completed is not None:
            state["done"] = completed
        self._maybe_say(state)

    def advance(self, task: int, amount: float = 1) -> None:
        if self._bar is not None:
            self._bar.advance(task, amount)
            return
        state = self._plain.get(task)
        if state is not None:
            state["done"] += amount
            self._maybe_say(state)

    def _maybe_say(self, state: dict, final: bool = False) -> None:
        now = time.monotonic()
        if self.quiet or (not final and now - state["said"] < self.plain_every):
            return
        state["said"] = now
        done, total = int(state["done"]), state["total"]
        elapsed = now - state["start"]
        text = f"{state['what']}: {done}"
        if total:
            text += f"/{int(total)} ({100 * done // max(1, int(total))}%)"
        text += f", {_clock(elapsed)} elapsed"
        if total and done and not final and done < total:
            text += f", about {_clock(elapsed / done * (total - done))} left"
        self.con.print(text)

    # -- the common case ------------------------------------------------------------
    def track(self, items: Iterable[T], total: int | None, description: str) -> Iterator[T]:
        task = self.add_task(description, total=total)
        for item in items:
            yield item
            self.advance(task)
        if self._bar is None and task in self._plain:
            state = self._plain[task]
            if state["done"]:
                self._maybe_say(state, final=True)

