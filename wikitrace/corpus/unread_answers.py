"""The successful runs of an "answer no look-up held" ending whose answer no look-up of theirs returned.

Such a page teaches answering only with a verdict the look-ups support, and searching a name
first; yet a success of this kind often gave a name from what the agent knew or from a reflection,
and passed. The page says how many of its own runs did so, and which, so a reader does not take
their procedure for one that checked the name (each run's record: compilers/trial_record.py).
"""

from __future__ import annotations

from . import layout

SHOWN = 12  # runs named


def say_unread(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """Adds to a free-text ending's guideline, for the ``:own`` source, the successful runs whose
    answer no look-up returned, no question named and that is no verdict or yes/no."""
    fields = entry["key"].split("|")
    if fields[0] != "procedure" or len(fields) < 2 or not fields[1].split("+")[0].endswith(":own"):
        return
    won = [e for e, _l in members if e["outcome"] == "success"]
    unread = []
    for e in won:
        answer = (e.get("decisive") or {}).get("answer") or {}
        if answer and not answer.get("found") and not answer.get("chosen") and not answer.get("in_question"):
            unread.append(e)
    if not unread:
        return
    steps = sorted((e["step"] for e in unread), key=layout.id_number)
    given = sum(bool(e["decisive"]["answer"].get("given")) for e in unread)
    named = ", ".join(steps[:SHOWN]) + (f" and {len(steps) - SHOWN} more" if len(steps) > SHOWN else "")
    entry["guideline"] = (
        f"{entry['guideline'].rstrip()} {len(unread)} of the {len(won)} successful runs here gave a name no look-up "
        f"of theirs returned and the question does not name ({named})"
        + (f", {given} of them one a reflection they were given had named" if given else "")
        + ": they passed, but nothing in their logs checked that name.")
