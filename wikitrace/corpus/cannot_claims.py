"""An agent that tells the user it cannot see or do something, in a run that made no call at all,
while the successful trials of the same task called look-ups it never made.

"I'm unable to access your balances" ends many chat runs that made no call at all. The lesson
a new run needs is not "check with the environment" but that claim, in the agent's own words and
turn, beside the look-ups the successful trials of the same task made and this run did not: the
log then shows a tool for it existed. Read once per run (its first such sentence, only in a run
that made no tool call: after a look-up, "I cannot" may be the rules speaking) and once per lesson; said only where a successful trial of the run's own
task called a look-up the run never called.
"""

from __future__ import annotations

from ..compilers.cannot_said import first_cannot
from . import run_counts

SHOWN = 1  # claims quoted per lesson (what to do stays short)


def entry_field(run, called: bool) -> dict:
    """{"said_cannot": {"turn": n, "said": sentence}}: the agent's first message sentence saying it
    cannot do or see something, in a run that made no tool call (``called`` False); {} otherwise."""
    found = None if called else first_cannot(run)
    return {"said_cannot": {"turn": found[0], "said": found[1]}} if found else {}


def _reads(run: dict) -> set[str]:
    return set(((run.get("decisive") or {}).get("reads")) or ())


def claims(members: list[tuple[dict, dict]], trials, writes: set[str], called: dict[str, int],
           total: int) -> tuple[str, dict]:
    """(the sentence, {"steps": the failed runs it counts, "said": what they did}) for a lesson whose failed runs told the user they
    could not do something while a successful trial of their task called a look-up they never
    made, or (its task having no successful trial) a look-up most of the ``total`` successful runs
    of the task type made; ("", {}) when no failed run here did. ``writes``: the tools some run
    changed things with; ``called``: tool -> successful runs of the task type that called it."""
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    common = [k for k in sorted(called, key=lambda k: (-called[k], k)) if k not in writes]
    found = []  # (run, the look-ups it never made, who made them)
    for e in failed:
        said = e.get("said_cannot")
        task = trials.group(e) if said else None
        won = trials.by_task.get(task, {}).get("success", []) if task is not None else []
        theirs = (set.intersection(*(_reads(w) for w in won)) - _reads(e) - writes) if won else set()
        if theirs:
            found.append((e, sorted(theirs, key=lambda k: (-called.get(k, 0), k))[:2], "the successful trials of its task"))
        elif said and not won and (mine := [k for k in common if 2 * called[k] > total and k not in _reads(e)][:2]):
            found.append((e, mine, "most successful runs of this task type"))
    if not found:
        return "", {}
    found.sort(key=lambda f: f[2] != "the successful trials of its task")  # a run's own task first
    quoted = "; ".join(f"{e['step']} said \"{e['said_cannot']['said']}\" (turn {e['said_cannot']['turn']}) with no "
                       f"call made, while {who} called {' and '.join(tools)}" for e, tools, who in found[:SHOWN])
    runs = [e for e, _t, _w in sorted(found, key=lambda f: f[0]["step"])]
    # the example before the count: the count's runs are listed under Evidence, not in this sentence
    return (f"Before telling the user you cannot see or do something, call the look-ups that could show it: "
            f"{quoted}; the agent said so without a call in {run_counts.part_of(runs, failed)}."), \
        {"steps": [e["step"] for e in runs], "said": "the agent told the user it could not see or do something "
                                                      "and made no call, while a look-up it never made was made "
                                                      "by successful runs"}
