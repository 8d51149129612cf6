"""An error every failed run got past is not what those runs failed on.

An error lesson's own advice says how to get past the error. When each failed run that taught
it did get past it and failed all the same, that advice is true and beside the point: the
checked fact those runs share (a rule they broke, a change they never made, one the task did
not ask for) is what a reader needs first. So the page then opens with that fact's instruction,
said as what to do when the error comes, and keeps the error's own advice after it. A fact only
on other tools than the error's (a bag change never made, beside a payment error) is another
lesson: it stays a finding there (corpus/checked_facts.py).
"""

from __future__ import annotations

from .retry_advice import NOT_ENOUGH

LEAD = "passed_lead"  # a working field of an entry, from ``guideline`` to ``merge``: never written


def got_past(entry: dict, members: list[tuple[dict, dict]]) -> bool:
    """Whether every failed run that taught this error lesson got past the error for good (its
    lesson ``worked``: compilers/error_insights.py)."""
    if not entry["key"].startswith("error|") or len(entry["key"].split("|", 2)) < 3:
        return False
    failed = [lesson for e, lesson in members if e["outcome"] == "failure"]
    return bool(failed) and all(lesson.get("worked") for lesson in failed)


def instruction(do: str, tool: str) -> str:
    """A fact's instruction said after "When <tool> answers …, ": the call is already named, and
    "before ending" goes after what is to be done."""
    do = do[:1].lower() + do[1:]
    for lead in (f"before {tool}, ", "before calling it, "):
        if do.startswith(lead):
            return do[len(lead):]
    if do.startswith("before ending, "):
        what, colon, how = do[len("before ending, "):].partition(": ")
        return f"{what} before ending{colon}{how}"
    return do


def guideline(entry: dict, do: str, share: str, finding: str, note: str, rest: str, failed: int) -> str:
    """The page's advice: the fact's instruction when the error comes, that the failed runs got
    past the error and what they showed (unless the retry's own count says so already), how
    strongly it is counted, then the error's own advice. The opening sentence is kept (``LEAD``)
    for ``merge``."""
    _kind, tool, said = entry["key"].split("|", 2)
    rest = rest.removeprefix(f"When {tool} answers \"{said}\", ")
    if rest[:1].isupper() and rest[1:2].islower():  # a sentence's capital, not a name's
        rest = rest[0].lower() + rest[1:]
    entry[LEAD] = _sentence(f"When {tool} answers \"{said}\", {instruction(do, tool)}")
    past = ("" if NOT_ENOUGH in rest else
            f"The one failed run here got past this error and failed all the same: {finding}." if failed == 1 else
            f"Every failed run here got past this error and failed all the same; in {share}, {finding}.")
    return " ".join(p for p in (entry[LEAD], past, note, f"To get past the error itself, {rest}" if rest else "")
                    if p)


def merge(entry: dict, mistake: str) -> str:
    """The counted mistake sentence (logged_mistake.mistake) said as what to do when the error
    comes, in place of the opening ``guideline`` wrote from the same fact: one instruction, said
    once, with its count. Returns the mistake as What to do is to lead with it."""
    lead = entry.pop(LEAD, "")
    if not (lead and mistake and lead in entry["guideline"]):
        return mistake
    _kind, tool, said = entry["key"].split("|", 2)
    entry["guideline"] = " ".join(entry["guideline"].replace(lead, "", 1).split())
    return f"When {tool} answers \"{said}\", {instruction(mistake, tool)}"


def _sentence(text: str) -> str:
    return text if text.endswith((".", ".\"")) else text + "."
