"""The system prompt's own rule on the argument a lesson's advice tells the agent to check, quoted
in What to do.

Advice like "check `cabin` before update_reservation_flights" says where to look, not what decides
the value; the rule that does is usually a sentence of the runs' system prompt
(compilers/field_rules.py keeps it per run and argument). It is quoted when the argument the advice says to
check (else the first one it names in a code span) is one of a tool the advice names too, and every source run of the lesson kept the
same sentence (or two) for that pair, which What to do does not quote yet: a rule that differs between the runs, or that some run's
prompt lacks, is not the lesson's rule. Logs without a system prompt keep none, so nothing is
added to their lessons.
"""

from __future__ import annotations

import re

_SPAN = re.compile(r"`([^`\s]+)`")
_CHECK = re.compile(r"\bcheck (?:the )?`([^`\s]+)`")  # this package's own "check the `cabin` you send"
LEAD = "The system prompt says: "
_OPENING = 6  # words of a rule that, quoted, show the page already quotes it (perhaps cut short)


def rules_of(run: dict) -> dict[tuple[str, str], tuple[str, ...]]:
    """(tool, argument) -> the prompt's rule sentences on it that the run kept, in their order."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for tool, name, value, sentence in run.get("value_rules") or ():
        if value == "":
            out[(tool, name)] = out.get((tool, name), ()) + (sentence,)
    return out


def quote_rule(entry: dict, members: list[tuple[dict, dict]], of_run: dict[str, dict]) -> None:
    """Adds the shared rule sentence on the argument the advice names to ``entry["advice"]``.
    ``of_run``: run step -> rules_of(run), made once per run for the whole gather."""
    advice = entry.get("advice") or ""
    found = _CHECK.search(advice) or _SPAN.search(advice)
    if not found:
        return
    name = found.group(1)  # the argument the advice is about: the one it says to check, else the first it names
    runs = [of_run.get(r["step"], {}) for r, _l in members]
    for tool in sorted({t for t, f in runs[0] if f == name}):
        if not re.search(rf"\b{re.escape(tool)}\b", advice):
            continue
        said = {rules.get((tool, name)) for rules in runs}
        if len(said) != 1 or None in said:
            return
        quotes = [s for s in said.pop() if not _quoted(s, advice)]
        if quotes:
            entry["advice"] = f"{advice} {LEAD}" + " ".join(f'"{q}"' for q in quotes)
        return


def _quoted(sentence: str, text: str) -> bool:
    """Whether ``text`` already quotes the sentence, whole or cut short after its opening words."""
    opening = " ".join(sentence.split()[:_OPENING])
    return f'"{opening}' in text or sentence in text
