"""Where a failed trial had in view the look-up its task's successful trial found the answer
with: the way out its own log shows, said on the failure's page after the contrast line.

Two leads, each read from the two trials' entries (compilers/trial_record.py), never guessed:

- the failed trial's own error listed that very name ("Similar: ['A', 'B']") and no call of it
  sent it;
- the successful trial took the name from a page a look-up returned, and the failed trial made
  that same look-up (the same tool with the same words) and never sent the name.

Each is said with what to do in a new question of the kind; nothing is said when neither holds.
"""

from __future__ import annotations

from ..compilers.offered_names import TITLE_KIND
from ..compilers.trial_record import looked_up
from ..controls import visible
from ..templates import md_text


def _t(text: str) -> str:
    return visible(md_text(text))


def _quoted(name: str) -> str:
    return f"\"{name}\"" if "'" in name else f"'{name}'"


def missed_lead(entry: dict, found: dict) -> tuple[str, list[int]] | None:
    """(the clause, this run's turns it cites) for a failure whose successful trial answered from
    ``found`` (its answer's look-up: tool, query, turn and ``named_by``, the page that named the
    query), when this run never made that look-up; None when its log shows no lead to it."""
    record = entry.get("decisive") or {}
    query = looked_up(found["tool"], found["query"])
    answered = bool(record.get("answer"))
    for tool, name, turn in record.get("offered") or ():
        if looked_up(tool, name) == query:
            return (f", though the error at turn {turn} had listed {_t(_quoted(name))} and no call of this run sent "
                    f"it: when an error's list offers a name, search the one that fits the question's next step "
                    f"{'before answering from another page' if answered else 'before rewording the query'}"), [turn]
    named = found.get("named_by") or {}
    if named.get("query") and looked_up(named["tool"], named["query"]) in (record.get("lookups") or ()):
        page = _t(f"{named['tool']}[{named['query']}]")
        name = TITLE_KIND.sub("", found["query"])
        said = "it" if name == found["query"] else f"\"{_t(name)}\""
        return (f"; the successful trial searched \"{_t(found['query'])}\" after {page} had named {said} at its turn "
                f"{named['turn']}, a look-up this run made too: when a page names the thing the question asks about "
                f"next, search that name {'before answering' if answered else 'next'}"), []
    return None
