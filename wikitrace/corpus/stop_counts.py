"""The harness's limit in calls, counted over the runs it stopped, for the lesson of runs it stopped.

"Answer before the harness stops the run" leaves a new run guessing how long it has. A harness that
stops runs after a fixed number of tool calls shows it in its logs: most of the runs it stopped made
the same number of calls. When more than half of them did, the page says so, with the number of
calls the successful runs of the type made, so a run knows by which call its answer has to come. A
limit of cost or context stops runs at differing counts, and nothing is said of that count; where
the logs record what the model calls cost and a run stopped for cost made no more calls than a
successful trial of its task, each dearer, the lesson says that instead of blaming the calls spent.
"""

from __future__ import annotations

from collections import Counter

from ..compilers.limit_insights import WASTED_CALLS
from ..compilers.model_cost import dearer_each
from .applies import trial_key

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
    dearer = _dearer(entry, runs)
    if dearer:
        entry["guideline"] = f"{entry['guideline'].replace(WASTED_CALLS, '')} {dearer}"
        if entry["key"].startswith("stopped|"):  # "reach the change early" is not what set them apart: cost was
            entry["title"] = "Under a cost limit, reach the change and settle it within the first few calls"
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


def _dearer(entry: dict, runs: list[dict]) -> str:
    """When every failed source the harness stopped whose log records its model cost has a
    successful trial of its task that made at least as many model calls for less: the sentence
    saying so (the number of calls did not set them apart, their cost did); "" otherwise."""
    steps = {s["step"] for s in entry.get("sources") or () if s["outcome"] == "failure"}
    stopped = [r for r in runs if r["step"] in steps and (r.get("decisive") or {}).get("stopped")
               and (r.get("decisive") or {}).get("cost")]
    if not stopped:  # no source whose log records its cost: most lessons, and nothing more to read
        return ""
    won: dict[str, list[dict]] = {}
    for r in runs:
        if r.get("outcome") == "success" and (r.get("decisive") or {}).get("cost") and trial_key(r) is not None:
            won.setdefault(trial_key(r), []).append(r)
    pairs = []
    for r in stopped:
        mine = r["decisive"]["cost"]
        theirs = [w for w in won.get(trial_key(r) or "", ()) if w["decisive"]["cost"][1]]
        if not theirs:
            return ""
        best = min(theirs, key=lambda w: (w["decisive"]["cost"][0], w["step"]))
        if not dearer_each(mine, best["decisive"]["cost"]):
            return ""
        (c1, n1), (c2, n2) = mine, best["decisive"]["cost"]
        pairs.append(f"{r['step']}, {c1:g} over {n1} model calls ({c1 / n1:.2g} a call), against {best['step']}, "
                     f"{c2:g} over {n2} ({c2 / n2:.2g} a call)")
    if not pairs:
        return ""
    many = len(pairs) > 1
    return (f"The logs record what the model calls cost: {'; '.join(pairs)}. "
            + ("Each stopped run made no more calls than a successful trial of its task, and each of its calls cost "
               "more" if many else "The stopped run made no more calls than the successful trial of its task, and each "
               "cost more") + ": a limit on cost is met by dearer calls as much as by more, and where each call "
            "costs more, fewer of them fit: spend none on probes, and make the change within the first few calls.")


_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
             "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
             "eighteenth", "nineteenth", "twentieth")
