"""How an insight page counts runs: always with the distinct tasks behind them when runs repeat
a task. Six failed runs that are one question tried six times are one mistake seen six times,
and a reader weighs "6 of 11" very differently once told so. Every count of runs an insight
page writes goes through here, so the pages say it the same way."""

from __future__ import annotations

from typing import Iterable

from .applies import task_of


def tasks(runs: Iterable[dict]) -> int:
    """Distinct tasks among run entries (trials of one task are one task)."""
    return len({task_of(r) for r in runs})


def _one(noun: str) -> str:
    """"failed runs" -> "failed run", "successful runs of this task type that ..." -> "successful run of ..."."""
    return noun.replace("runs", "run", 1) if "runs" in noun else noun.removesuffix("s")


def _tasks_word(n: int) -> str:
    return f"{n} task{'s' if n != 1 else ''}"


def share(n: int, t: int, total: int, t_all: int, noun: str = "failed runs", where: str = " here") -> str:
    """"6 of the 11 failed runs here (all trials of 1 of their 3 tasks)": ``n`` runs of ``t`` tasks
    among ``total`` runs of ``t_all`` tasks, the tasks said whenever some run repeats another's task."""
    head = f"the one {_one(noun)}{where}" if n == total == 1 else f"{n} of the {total} {noun}{where}"
    if t_all == total or n == 0:  # every run its own task (the runs are the tasks), or none to say
        return head
    if t_all == 1:
        return f"{head} (all trials of 1 task)"
    if t == 1 and n > 1:
        return f"{head} (all trials of 1 of their {_tasks_word(t_all)})"
    if t == t_all:
        return f"{head} (all {t} of their tasks)"
    return f"{head} ({t} of their {_tasks_word(t_all)})"


def count(n: int, t: int, noun: str = "runs") -> str:
    """"6 failed runs, all trials of 1 task" / "6 failed runs of 4 tasks" / "6 failed runs"."""
    head = f"{n} {noun if n != 1 else _one(noun)}"
    if t == n:
        return head
    return f"{head}, all trials of 1 task" if t == 1 else f"{head} of {_tasks_word(t)}"


def part_of(part: list[dict], whole: list[dict], noun: str = "failed runs", where: str = " here") -> str:
    """``share`` of run entries."""
    return share(len(part), tasks(part), len(whole), tasks(whole), noun, where)


def runs_of(runs: list[dict], noun: str = "runs") -> str:
    """``count`` of run entries."""
    return count(len(runs), tasks(runs), noun)
