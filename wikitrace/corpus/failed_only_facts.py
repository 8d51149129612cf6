"""Facts a failed run's page checked against its own records, counted on a lesson though they cover
too few of its runs to lead it.

Some checks are made only on failed runs (compilers/shown_conflicts.py, agreed_terms.py,
record_claims.py ``past_dates``): a change on a record whose dates were all past, a payment above the
balance a look-up showed, a yes to other amounts than the change charged. When two or more of a
lesson's failed runs hold one of them on the lesson's own tool, the lesson's other advice can hide
it (checked_facts.py leads with no such kind): a cancel lesson that says
"check the insurance" says nothing of the six runs that cancelled trips already flown, insured or
not. Each such kind is said as its own counted line, with its runs named and the note that no
successful run is counted against it.

A rule of the system prompt the same way: a change that differed from the task's expected one
where a sentence of the prompt decides the value (compilers/rule_reasons.py) is a fact only a
failed run holds (a successful run sent the expected call). Two or more failed runs whose pages
quote the same rule on the lesson's tool get the rule said as what to work the value out by.
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
    "answer-untied": ("{t} gave an answer from a page that held none of some name the question gives",
                      "before {t}, find a page that ties the answer to every name the question gives"),
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
        if not hit or len(hit) < min(2, len(failed)):
            continue  # one run is no count, but on a page of one failed run, where it is all the evidence
        steps = sorted(e["step"] for e in hit)
        lines.append(f"In {run_counts.part_of(hit, failed)}, {what.format(t=tool)} "
                     f"({', '.join(steps)}; each page's \"In short\" gives the fact and its turns; checked only on "
                     f"failed runs, so no successful run is counted against it): {do.format(t=tool)}.")
    lines += _rule_lines(failed, tool, led)
    if lines:
        entry["guideline"] = f"{entry['guideline'].rstrip()} {' '.join(lines)}"


def _rule_lines(failed: list[dict], tool: str, led: str | None) -> list[str]:
    """A counted line per rule of the prompt on ``tool`` that two or more of the failed runs' pages
    quote (the same words), but not most of them (then checked_facts leads with it), commonest first."""
    if led == "rule":
        return []
    quoted: dict[tuple[str, str], list[dict]] = {}
    for e in failed:
        for key in {(f["about"][1], f["about"][2]) for f in e.get("facts") or []
                    if f.get("kind") == "rule" and len(f.get("about") or ()) > 2 and f["about"][0] == tool}:
            quoted.setdefault(key, []).append(e)
    lines = []
    for (on, quote), hit in sorted(quoted.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(hit) < 2 or 2 * len(hit) > len(failed):
            continue
        field = f"`{on}`" if on != tool else "the change"
        do = (f"work out `{on}` for {tool} by the system prompt's rule {quote}" if on != tool else
              f"check the {tool} change against the system prompt's rule {quote}")
        steps = ", ".join(sorted(e["step"] for e in hit))
        lines.append(f"In {run_counts.part_of(hit, failed)}, the {tool} call differed from the task's expected one "
                     f"where the system prompt's rule on {field} decides it ({steps}; "
                     f"each page's \"In short\" quotes the rule and the record it applies to): {do}.")
    return lines


# what the user's last message before a change made without a yes did (compilers/consent.Unagreed,
# kept as the failed run's lesson ``case``), as the confirmation rule's page counts it
_LAST_WORD = (("picked", "picked one of the options the agent had offered"), ("request", "asked for a change"))


def unagreed(entry: dict, members: list[tuple[dict, dict]]) -> None:
    """On a confirmation rule's page: how many of its failed runs made the change right after the
    user picked an offered option or asked for a change, with no yes to its details in between.
    Neither is a yes, and the runs show it is the step agents skip: said as what to do."""
    if not entry["key"].startswith("rule|"):
        return
    said: dict[str, list[str]] = {}
    failed = {e["step"] for e, _l in members if e["outcome"] == "failure"}
    for e, lesson in members:
        kind = (lesson.get("case") or {}).get("unagreed") if e["outcome"] == "failure" else None
        if kind in dict(_LAST_WORD) and e["step"] not in said.get(kind, []):
            said.setdefault(kind, []).append(e["step"])
    if sum(len(v) for v in said.values()) < 2:
        return
    counted = [(len(said[k]), what) for k, what in _LAST_WORD if said.get(k)]
    parts = [f"{n} of the {len(failed)} failed runs here the user's last message before the change {what}" if not i
             else f"in {n} it {what}" for i, (n, what) in enumerate(counted)]
    entry["guideline"] = (f"{entry['guideline'].rstrip()} In {', and '.join(parts)}; each time the agent made the "
                          f"change without putting its details to the user for a yes: put what the call will do to "
                          f"the user and wait for their yes before making it, since a pick or a request is not a yes.")
