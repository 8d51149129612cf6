"""The rewrite of an error lesson whose advice is how its runs got past the error, when its
failed runs did just that and still failed: getting a call through is no fix the outcomes back.
"""

from __future__ import annotations

import re
from collections import Counter

from ..compilers.error_insights import DEAD_END
from . import run_counts


# how error_insights words a retry that got past an error, in a source's detail
_GOT_PAST = re.compile(r"^turn \d+: got past it at turn \d+ \((?:with (.+?) (?:changed|taken from what the error listed)"
                       r"(?: from .+)?"
                       r"|with the amounts in .+|as .+)\)(?:; the message named the (.+?) values? sent)?"
                       r"(?:; " + re.escape(DEAD_END) + r")?$")
NOT_ENOUGH = "Getting the call through is not enough"  # opens the count of runs that got past it and failed
_STUCK = "never got past it"  # compilers/error_insights.py: the run called again and the error held
UNPROVEN = "unproven_retry"  # set on an entry whose retry advice no run backs; read (and dropped) by advice_cut.cut
_NAMED = re.compile(r"; the message named the (.+?) values? sent$")


def untested_fix(entry: dict, members: list[tuple[dict, dict]] = (), by_step: dict | None = None) -> None:
    """An error lesson whose advice is how its runs got past the error, when the failed runs did
    just that: every run got past it and failed, or most failed runs (two at least) got past it
    and still failed. A retry that went through is then no fix the outcomes back (a cabin changed
    to get past a payment error gets past it and fails the task). The page says to replace the
    value the message names (the argument whose value its text holds, when the runs' details say
    which), or, for a figure the amounts must add up to, to check the figure against the request
    first; and it counts the retries. A single run is no count: its retry is not written. When no
    successful run that met the error got a call of its tool through (``by_step``: every run entry,
    for the successful runs the contrast counts beyond the page's own), telling the user comes first:
    a value swapped in got the failed runs past it, and what the successful runs did was stop."""
    if not entry["key"].startswith("error|") or not members:
        return
    failed = [(e, l) for e, l in members if e["outcome"] == "failure"]
    changed, named = Counter(), Counter()
    got_past = []  # the failed runs that got past it
    for e, lesson in failed:
        m = _GOT_PAST.match(lesson.get("detail") or "")
        if m is not None and m.group(1):  # named arguments changed (a free-text retry is judged by its own rule)
            changed[m.group(1)] += 1
            got_past.append(e)
    for _e, lesson in members:
        n = _NAMED.search(lesson.get("detail") or "")
        if n is not None:
            named[n.group(1)] += 1
    runs = sum(changed.values())
    mixed = entry["counts"]["success"] > 0
    if not changed or " again with " not in entry["guideline"] or mixed and (runs < 2 or 2 * runs <= len(failed)):
        return
    head = entry["guideline"].split(", call ", 1)[0]
    tool = entry["key"].split("|")[1].split(" ")[0]
    ways = "; ".join(f"{what} changed: {n} run{'s' if n != 1 else ''}" for what, n in
                     sorted(changed.items(), key=lambda kv: (-kv[1], kv[0])))
    what = min(named, key=lambda k: (-named[k], k)) if named else ""
    naming = [e for e, lesson in members if (n := _NAMED.search(lesson.get("detail") or "")) and n.group(1) == what]
    seen = (f" (in {run_counts.part_of(naming, [e for e, _l in members], 'runs', inner=True)})"
            if what and len(members) > 1 else "")
    if " adding up to the figure the error names" in entry["guideline"]:
        said = (f"do not just pay the figure the error names: check it against what the request should cost, and "
                f"when it differs from what you worked out, check the call's other arguments against the request "
                f"before calling {tool} again")
    elif what and _past(members):
        said = _past_advice(what, seen, tool, _past(members), members)
    elif what and (stopped := _stopped_successes(entry, members, by_step or {}, tool)):
        said = (f"tell the user it cannot be done rather than calling {tool} again with another {what} value: "
                f"the {run_counts.runs_of(stopped, 'successful runs', paren=True)} of this task type that met it "
                f"got no {tool} call through after it; send another value only where a look-up shows one that "
                "can work and the request allows it")
    else:
        if what:
            said = (f"replace the {what} value the message names{seen} with one a look-up shows can work, or tell the "
                    f"user it cannot be done, before calling {tool} again")
        else:
            # the message names no value of the call: what to recheck is the call itself, not a value to swap
            said = (f"check the call's arguments against the request and the records looked up before calling {tool} "
                    "again, or tell the user it cannot be done")
        # a retry no run shows working, and no failed run that called again stuck at the error: what their
        # pages show went wrong leads (advice_cut.cut); a run that retried and never got past keeps it second
        if runs > 1 and not any(_STUCK in (lesson.get("detail") or "") for _e, lesson in failed):
            entry[UNPROVEN] = True
    if runs == 1:
        entry["guideline"] = f"{head}, {said}."
        return
    entry["guideline"] = (f"{head}, {said}. {NOT_ENOUGH}: "
                          + (f"{run_counts.part_of(got_past, [e for e, _l in failed])} got past it and still failed "
                             f"({ways})" if mixed else
                             f"the {run_counts.runs_of(got_past, paren=True)} here that got past it all failed ({ways})")
                          + f"{_failed_elsewhere(got_past, tool)}.")


def _stopped_successes(entry: dict, members, by_step: dict[str, dict], tool: str) -> list[dict]:
    """Every successful run of the task type that met the error, when none got a ``tool`` call
    through at any turn; [] when one did, when the contrast does not name them all, or when a
    failed run here had a ``tool`` call its task expected (missed, or sent otherwise): for that task
    the call was to be made, and "tell the user" would point its reader the wrong way."""
    counted = ((entry.get("contrast") or {}).get("counted") or {}).get("success") or {}
    if counted.get("more"):
        return []
    if any(e["outcome"] == "failure" and (run_counts.expected_tool(e, tool) or any(
            f.get("kind") == "missed-change" and tool in (f.get("about") or ()) for f in e.get("facts") or ()))
           for e, _l in members):
        return []
    won = list({e["step"]: e for e in [*(e for e, _l in members if e["outcome"] == "success"),
                                       *(by_step[s] for s in counted.get("steps") or () if s in by_step)]}.values())
    through = f"went-through|{tool}"
    return won if won and not any(through in (e.get("patterns") or ()) for e in won) else []


def _failed_elsewhere(runs: list[dict], tool: str) -> str:
    """"; in each, the call that got through was the one the task expected, and a change it expected
    never went through (…)" when every run's checked facts show no difference on ``tool`` and some
    expected change missing: the retry was right, and the failure lies in what the run left undone."""
    missed: Counter = Counter()
    for e in runs:
        facts = e.get("facts") or ()
        if any(f.get("kind") in ("arguments", "unexpected-change") and any(
                a.split("@")[0].split(".")[0] == tool for a in f.get("about") or ()) for f in facts):
            return ""
        unmade = {a for f in facts if f.get("kind") == "missed-change" for a in f.get("about") or ()}
        if not unmade:
            return ""
        missed.update(unmade)
    listed = ", ".join(f"{t} in {n}" for t, n in sorted(missed.items(), key=lambda kv: (-kv[1], kv[0])))
    return (f"; in each, the {tool} call that got through was the one the task expected, and a change it expected "
            f"never went through ({listed})")


def _past(members) -> list[dict]:
    """The runs whose refused change sent a date the error named, already past by the current
    time the system prompt states (compilers/record_claims.py ``past_dates``)."""
    return [e for e, _l in members if any(f.get("kind") == "past-date" for f in e.get("facts") or ())]


def _past_advice(what: str, seen: str, tool: str, past: list[dict], members) -> str:
    """A refused value dated before the stated now is a part already used (a flight flown): no
    other value replaces it, so "replace the refused value" would send the reader the wrong way.
    Where every run shows it, only the date check is said; else it comes first, the rest after."""
    runs = [e for e, _l in members]
    where = ("there" if len(runs) == 1 else "in all of them" if len(past) == len(runs) else
             f"in {run_counts.part_of(past, runs, 'runs')}")
    said = (f"compare the dates a change sends with the current time the system prompt states first, and for a "
            f"part already past tell the user it cannot be changed rather than sending another value: {where} the "
            f"refused call sent a date the error named that was already past by that time, and the message names "
            f"the {what} value it refused{seen}")
    if len(past) < len(runs):
        said += f"; otherwise replace the value with one a look-up shows can work before calling {tool} again"
    return said
