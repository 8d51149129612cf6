"""A failed run's file-edit lesson when the file was the right one.

The lesson a file edit that went through in a failed run teaches by default asks to check the
file first. Where every failed run of the page changed a file the task text or an earlier answer
named, or the same files as the successful trials of its own task, that advice misreads them:
the file was right and what the edit wrote was not. The page then says so; its cases show what a
successful trial wrote in the same file that the failed run did not (fact_cases.py).
"""

from __future__ import annotations

from collections import Counter

from ..compilers.call_kinds import FILE_EDIT
from ..compilers.ending_words import TESTED
from ..compilers.failing_end import FAILING_END
from . import layout
from .trial_edits import changed_files

_FILE_CHECK = ("check that the file it changes is the one the task is about (named by the task text, or found "
               "by a search or a failing test's trace) and read the changed lines back")


def _trial_files(entry: dict, trials) -> list[dict]:
    """The successful trials of ``entry``'s task that changed the same files it did."""
    task = trials.group(entry) if trials is not None else None
    mine = set(changed_files(entry))
    return [w for w in (trials.by_task.get(task, {}).get("success", []) if task is not None else [])
            if mine and set(changed_files(w)) == mine]


def _named(entry: dict) -> bool:
    """Every file the run changed was one the task text or an earlier answer named."""
    places = [p.rsplit("|", 1)[1] for p in entry.get("patterns") or [] if p.startswith("edited|")]
    return bool(places) and all(p in ("task", "shown") for p in places)


def right_file(entry: dict, members: list[tuple[dict, dict]] = (), trials=None) -> None:
    """Replace the file check of a ``went-through|a file edit`` page by the check of what the
    edit writes, when none of its failed runs changed a wrong file."""
    if entry["key"] != f"went-through|{FILE_EDIT}" or _FILE_CHECK not in entry["guideline"]:
        return
    failed = [e for e, _l in members if e["outcome"] == "failure"]
    same = {e["step"]: _trial_files(e, trials) for e in failed}
    if not failed or not all(same[e["step"]] or _named(e) for e in failed):
        return
    one = len(failed) == 1
    their = "its" if one else "their"
    by = (f"the same files as the successful trials of {their} task" if all(same.values()) else
          "a file the task text or an earlier answer named" if not any(same.values()) else
          f"a file the task text or an earlier answer named, or the one the successful trials of {their} task changed")
    reran = all(FAILING_END in (e.get("patterns") or ()) for e in failed)
    entry["title"] = ("Before a file edit, check what it writes; after it, fix what the tests still report" if reran
                      else "Before a file edit, check what it writes and rerun the tests that passed")
    # runs that did rerun the tests and settled with them failing lacked no rerun: what they lacked was acting on it
    then = ("then, when the tests run after it still fail (or fail where they passed before), change the edit "
            "until they pass before settling" if reran else
            "then run the failing check again together with the tests that passed before it")
    entry["guideline"] = entry["guideline"].replace(
        _FILE_CHECK, "read the lines it takes out and the lines it puts in against what the task asks, "
        f"{then} (the failed {'run here' if one else 'runs here'} changed {by}"
        + (f"{', and ran the tests after its edit' if one else ', and each ran the tests after its edit'})" if reran
           else ")"))


def check_without(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """A change page whose failed runs mostly could not run the programs that test a change (the
    shell found no ``javac``, no ``mvn``: ``missing|<program>`` patterns) says how to check it
    without them, as the environment lesson does: its "check the change" cannot be done by a test."""
    from ..compilers.insight_words import join

    if not entry["key"].startswith("went-through|"):
        return
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    lacking = [e for e in failed if any(p.startswith("missing|") for p in e.get("patterns") or ())]
    if not failed or 2 * len(lacking) <= len(failed):
        return
    met = Counter(p.split("|", 1)[1] for e in lacking for p in set(e.get("patterns") or ()) if p.startswith("missing|"))
    these = "the one failed run here" if len(failed) == 1 else f"{len(lacking)} of the {len(failed)} failed runs here"
    # each program with the runs that lacked it: not every run lacked every one
    named = join([f"{p} ({n} run{'s' if n != 1 else ''})" if len(lacking) > 1 else p
                  for p, n in sorted(met.items(), key=lambda kv: (-kv[1], kv[0]))], 4)
    entry["guideline"] = (f"{entry['guideline'].rstrip()} In {these} the shell could not find {named}: "
                          "where the shell lacks the programs that run the tests, check the change "
                          "by reading the lines around each edit, searching that every name it writes is defined as "
                          "written, and working the task's example through the changed lines by hand.")


def rerun_lead(entry: dict, members: list[tuple[dict, dict]] = (), trials=None) -> None:
    """A way of settling the task that ends with the failing test command passing (``+tested``),
    taught by successful runs whose task has failed trials that ran the tests after their last edit
    and ended with them still failing: that rerun, not the steps the failed trials shared, is what
    set them apart, so What to do leads with it and names those trials."""
    from .advice_cut import KEPT, sentences

    if not (entry["key"].startswith("procedure|") and entry["key"].endswith(TESTED)) or trials is None:
        return
    failed = {}
    for e, _lesson in members:
        task = trials.group(e) if e["outcome"] == "success" else None
        for f in trials.by_task.get(task, {}).get("failure", []) if task is not None else ():
            if FAILING_END in (f.get("patterns") or ()):
                failed[f["step"]] = f
    if not failed:
        return
    steps = sorted(failed, key=layout.id_number)
    tasks = {trials.group(f) for f in failed.values()}
    their = "their tasks" if len(tasks) > 1 else "its task" if sum(e["outcome"] == "success" for e, _l in members) == 1 \
        else "their task"
    lead = (f"After your last edit, run the test command that failed before it again and settle only once it passes: "
            f"the failed {'trial' if len(steps) == 1 else 'trials'} of {their} ({', '.join(steps)}) ran it after "
            f"{'its' if len(steps) == 1 else 'their'} last edit and ended with it still failing.")
    kept = [lead, *sentences(entry.get("advice") or "")]
    entry["advice"] = " ".join(kept[:KEPT])
    if kept[KEPT:]:
        entry["more_advice"] = [*kept[KEPT:], *(entry.get("more_advice") or [])]
