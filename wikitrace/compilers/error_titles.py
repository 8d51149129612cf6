"""An error lesson's title says what to do when the error comes, not only which error it is.

The title is the first clause of the lesson's own advice, after the error it answers: a prompt
or an index that shows titles alone then still says the action. It is made from the guideline
the page shows, so the rewrites at the insight layer (which may change the advice) retitle it.
"""

from __future__ import annotations

import re

from .text import clip

# where the action of an advice sentence ends: its reasons, counts and alternatives follow
_CLAUSE_END = re.compile(r": |; |\. |, (?:or|then|before|and|never|not) ")
_ASIDE = re.compile(r" \([^()]*(?:\([^()]*\)[^()]*)*\)")  # a parenthesis, one level of nesting inside
QUOTED = 60  # characters of the error's line a title quotes


def named_title(tool: str, said: str) -> str:
    """The title that names the error alone, for an advice with no clause to lead with."""
    return f"{tool} answers \"{clip(said, QUOTED)}\""


def error_title(tool: str, said: str, guideline: str) -> str:
    """``When <tool> answers "<error>", <what to do>``: the advice's first clause, the tool
    said as "it" where the advice names it again."""
    head = f"When {tool} answers \"{said}\", "
    at = guideline.find(head)
    advice = guideline[at + len(head):] if at >= 0 else guideline
    action = _CLAUSE_END.split(_ASIDE.sub("", advice), 1)[0].strip().rstrip(".")
    if not action:
        return named_title(tool, said)
    first = action.split(" ", 1)[0]
    if first[:1].isupper() and first[1:].islower() and f" {first}" not in f" {guideline[1:]}":
        action = first.lower() + action[len(first):]  # a sentence's capital, not a name's
    action = re.sub(rf"\b(call|calling|send|sending) {re.escape(tool)} again\b", r"\1 it again", action)
    return f"When {tool} answers \"{clip(said, QUOTED)}\", {action}"


def retitle(entry: dict) -> None:
    """An offline error lesson's page title, from the guideline its page shows."""
    if not entry["key"].startswith("error|") or entry.get("compiler", "offline") != "offline":
        return
    parts = entry["key"].split("|", 2)
    if len(parts) < 3:  # a lesson of its own title (a missing program, a path not there)
        return
    tool, said = parts[1:]
    if entry["title"] == named_title(tool, said) or entry["title"].startswith(f"When {tool} answers \""):
        entry["title"] = error_title(tool, said, entry["guideline"])
