"""The harness's limit in calls, counted over the runs it stopped, for the lesson of runs it stopped.

"Answer before the harness stops the run" leaves a new run guessing how long it has. A harness that
stops runs after a fixed number of tool calls shows it in its logs: most of the runs it stopped made
the same number of calls. When more than half of them did, the page says so, with the number of
calls the successful runs of the type made, so a run knows by which call its answer has to come. A
limit of cost or context stops runs at differing counts, and nothing is said of it.
"""

from __future__ import annotations

from collections import Counter

KEYS = ("idle|", "stopped|")  # the lessons of runs that ended without settling, stopped by a limit


# the lesson that tells a run to go on looking before it answers (compilers/insight_words.WHY_WRONG
# "not-found", whoever wrote its words): the limit bounds how long it may
KEEP_LOOKING = "|not-found"


def stopped_at(entry: dict, runs: list[dict]) -> None:
    """Adds the calls the stopped runs of the type made, and the successful runs', to the guideline
    of a lesson about runs a harness stopped (``runs``: every corpus entry of its task type); to a
    lesson that says to keep looking, the limit that bounds it."""
    looking = entry["key"].startswith("answer|") and entry["key"].endswith(KEEP_LOOKING)
    if not entry["key"].startswith(KEYS) and not looking:
        return
    stopped = [r["steps"] for r in runs if (r.get("decisive") or {}).get("stopped") and isinstance(r.get("steps"), int)]
    if len(stopped) < 2:
        return
    calls, n = max(Counter(stopped).items(), key=lambda kv: (kv[1], -kv[0]))
    if 2 * n <= len(stopped) or calls < 2:
        return  # no one count: a limit on cost or context, not on calls
    if looking:
        which = _ORDINALS[calls - 1] if calls <= len(_ORDINALS) else "last"
        entry["guideline"] = (f"{entry['guideline']} Keep looking only while calls are left: the harness stopped {n} of "
                              f"the {len(stopped)} runs of this task type it stopped after exactly {calls} tool calls, "
                              f"so give the best-supported answer by the {which} call.")
        return
    wins = Counter(r["steps"] for r in runs if r.get("outcome") == "success" and isinstance(r.get("steps"), int))
    said = (f"The harness stopped {n} of the {len(stopped)} runs of this task type it stopped after exactly {calls} "
            f"tool calls")
    if wins:
        low, high = min(wins), max(wins)
        common = max(wins.items(), key=lambda kv: (kv[1], -kv[0]))[0]
        span = f"{low}" if low == high else f"{low} to {high}"
        total = sum(wins.values())
        said += f", and the {total} successful run{'s' if total != 1 else ''} made {span} (most often {common})"
    # the call said in words where it is short: What to do keeps sentences free of digits (advice_cut.py).
    # The stopped runs' last call was carried out, so a call settling the task there would have been too.
    which = f"by the {_ORDINALS[calls - 1]} call" if calls <= len(_ORDINALS) else "by the call the limit falls on"
    entry["guideline"] = f"{entry['guideline']} {said}: settle the task {which} at the latest."


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth", "twentieth")
