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


def share(n: int, t: int, total: int, t_all: int, noun: str = "failed runs", where: str = " here",
          inner: bool = False) -> str:
    """"6 of the 11 failed runs here (all trials of 1 of their 3 tasks)": ``n`` runs of ``t`` tasks
    among ``total`` runs of ``t_all`` tasks, the tasks said whenever some run repeats another's task.
    ``inner``: the phrase stands inside parentheses, so the tasks follow a comma instead."""
    head = f"the one {_one(noun)}{where}" if n == total == 1 else f"{n} of the {total} {noun}{where}"
    if t_all == total or n == 0:  # every run its own task (the runs are the tasks), or none to say
        return head
    tasks = ("all trials of 1 task" if t_all == 1 else f"all trials of 1 of their {_tasks_word(t_all)}" if t == 1 and n > 1
             else f"all {t} of their tasks" if t == t_all else f"{t} of their {_tasks_word(t_all)}")
    return f"{head}, {tasks}" if inner else f"{head} ({tasks})"


def count(n: int, t: int, noun: str = "runs", paren: bool = False) -> str:
    """"6 failed runs, all trials of 1 task" / "6 failed runs of 4 tasks" / "6 failed runs";
    ``paren``: "6 failed runs (all trials of 1 task)" / "6 failed runs (of 4 tasks)", to stand
    before more words."""
    head = f"{n} {noun if n != 1 else _one(noun)}"
    if t == n:
        return head
    tasks = "all trials of 1 task" if t == 1 else f"of {_tasks_word(t)}"
    return f"{head} ({tasks})" if paren else f"{head}, {tasks}" if t == 1 else f"{head} {tasks}"


def part_of(part: list[dict], whole: list[dict], noun: str = "failed runs", where: str = " here",
            inner: bool = False) -> str:
    """``share`` of run entries."""
    return share(len(part), tasks(part), len(whole), tasks(whole), noun, where, inner)


def runs_of(runs: list[dict], noun: str = "runs", paren: bool = False) -> str:
    """``count`` of run entries."""
    return count(len(runs), tasks(runs), noun, paren)


def named(steps: list[str], total: int) -> str:
    """"step-0013, step-0017, step-0027 and 5 more": the runs a count names, with the number left
    unnamed said, so the names and the count add up for a reader."""
    head = ", ".join(steps)
    return f"{head} and {total - len(steps)} more" if total > len(steps) else head


def counted_runs(sources: list[dict], met: dict[str, list[dict]]) -> dict[str, dict]:
    """Which runs a contrast's counts are, per outcome, so a reader can check them: how many of
    them are this page's own Sources (said only when every source of that outcome is one), and the
    others by name, every one in step order (a count the page prints is one a reader can redo)."""
    out = {}
    for outcome, runs in met.items():
        if not runs:
            continue
        steps = [r["step"] for r in runs]
        own = [s["step"] for s in sources if s["outcome"] == outcome]
        mine = set(own)
        inside = len(own) if own and mine.issubset(steps) else 0
        others = [st for st in steps if st not in mine] if inside else steps
        out[outcome] = {"sources": inside, "steps": others, "more": 0}
    return out


def expected_tool(entry: dict, tool: str) -> bool:
    """Whether the task expected a ``tool`` call of the run: a change of it went through as the
    expected call, or differed from the expected call of the same tool in its arguments (the run's
    checked facts)."""
    if any(c["tool"] == tool and c.get("expected") for c in (entry.get("decisive") or {}).get("changes") or ()):
        return True
    return any(f.get("kind") == "arguments" and any(a.split("@")[0].split(".")[0] == tool for a in f.get("about") or ())
               for f in entry.get("facts") or ())


def all_as_expected(entry: dict, tool: str) -> bool:
    """Whether every change ``tool`` made in the run went through as the call the task expected."""
    made = [c for c in (entry.get("decisive") or {}).get("changes") or () if c["tool"] == tool]
    return bool(made) and all(c.get("expected") for c in made)
