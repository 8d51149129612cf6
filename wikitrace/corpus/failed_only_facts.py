"""Facts a failed run's page checked against its own records, counted on a lesson though they cover
too few of its runs to lead it.

Some checks are made only on failed runs (compilers/shown_conflicts.py, agreed_terms.py,
record_claims.py ``past_dates``): a change on a record whose dates were all past, a payment above the
balance a look-up showed, a yes to other amounts than the change charged. When two or more of a
lesson's failed runs hold one of them on the lesson's own tool, but not most (checked_facts.py
leads with a fact only then), the lesson's other advice can hide it: a cancel lesson that says
"check the insurance" says nothing of the six runs that cancelled trips already flown, insured or
not. Each such kind is said as its own counted line, with its runs named and the note that no
successful run is counted against it.
"""

from __future__ import annotations

from . import run_counts

# kind -> (what the failed runs' pages checked, what to do before the tool); "{t}": the lesson's tool
KINDS = {
    "shown-past": ("{t} acted on a record whose dates in an earlier look-up were all before the current time the "
                   "system prompt states", "compare the record's dates with the stated current time before {t}"),
    "past-date": ("{t} failed on a date already past by the current time the system prompt states",
                  "compare the dates {t} sends with the stated current time"),
    "shown-balance": ("{t} paid more than the balance a look-up had shown for its payment method",
                      "check a payment against the balance a look-up showed before {t}"),
    "shown-count": ("{t} failed on an option a look-up had shown without enough of it",
                    "read what the look-up showed for the option before {t}"),
    "agreed-other": ("{t} paid or charged a total that no message had put to the user, after a yes to other amounts",
                     "put the total {t} will charge to the user and get a yes to that total first"),
}


def say(entry: dict, members: list[tuple[dict, dict]], tool: str) -> None:
    """Appends to the lesson's guideline a counted line per failed-only kind held by two or more of
    its failed runs on ``tool``, the lesson's own, that does not already lead it. A lesson on no one
    tool (a rule, a change left unmade) is not about such a change."""
    if not tool:
        return
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    led = (entry.get("checked") or {}).get("kind")
    lines = []
    for kind, (what, do) in KINDS.items():
        if kind == led:
            continue
        hit = [e for e in failed if any(f.get("kind") == kind and tool in (f.get("about") or ())
                                        for f in e.get("facts") or [])]
        if len(hit) < 2 or 2 * len(hit) > len(failed):
            continue  # one run is no count; most of them: checked_facts leads with it
        steps = sorted(e["step"] for e in hit)
        lines.append(f"In {run_counts.part_of(hit, failed)}, {what.format(t=tool)} "
                     f"({', '.join(steps)}; each page's \"In short\" gives the fact and its turns; checked only on "
                     f"failed runs, so no successful run is counted against it): {do.format(t=tool)}.")
    if lines:
        entry["guideline"] = f"{entry['guideline'].rstrip()} {' '.join(lines)}"

