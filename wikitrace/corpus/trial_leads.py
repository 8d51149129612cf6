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

from ..compilers.text import TITLE_KIND
from ..compilers.trial_record import looked_up
from ..controls import visible
from . import layout
from ..templates import md_text


# how a failure line that carries a lead ends (its advice), with or without an answer given
LEAD_ENDS = ("before answering from another page.", "before rewording the query.", "before answering.",
             "search that name next.")


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
    paged = bool((record.get("answer") or {}).get("found"))  # its answer came from a page: another one
    for tool, name, turn in record.get("offered") or ():
        if looked_up(tool, name) == query:
            when = ("before answering from another page" if paged else "before answering" if answered
                    else "before rewording the query")
            return (f", though the error at turn {turn} had listed {_t(_quoted(name))} and no call of this run sent "
                    f"it: when an error's list offers a name, search the one that fits the question's next step "
                    f"{when}"), [turn]
    named = found.get("named_by") or {}
    if named.get("query") and looked_up(named["tool"], named["query"]) in (record.get("lookups") or ()):
        page = _t(f"{named['tool']}[{named['query']}]")
        name = TITLE_KIND.sub("", found["query"])
        said = "it" if name == found["query"] else f"\"{_t(name)}\""
        return (f"; the successful trial searched \"{_t(found['query'])}\" after {page} had named {said} at its turn "
                f"{named['turn']}, a look-up this run made too: when a page names the thing the question asks about "
                f"next, search that name {'before answering' if answered else 'next'}"), []
    return None


def held_elsewhere(entry: dict, members: list[dict], holders: list[dict], link) -> str | None:
    """For a failure no look-up of which returned the expected answer, in a task no trial
    solved: the earliest other trial whose look-up did return it, when this run never got that
    look-up through (the page that held the answer, which a new attempt can look up); said
    otherwise when that trial is one of ``holders``, the trials that gave this run's answer."""
    record = entry.get("decisive") or {}
    if record.get("expected_seen") != {}:
        return None  # this run saw it (or the log gives no expected answer): nothing to point to
    asked = record.get("lookups")
    if asked is None:
        return None
    for m in sorted(members, key=lambda m: layout.id_number(m["step"])):
        held = (m.get("decisive") or {}).get("expected_seen") or {}
        if m["step"] == entry["step"] or not held.get("query"):
            continue
        if looked_up(held["tool"], held["query"]) in asked:
            return None  # the same look-up went through here: its answer is no page this run never read
        said = (f"What {_t(held['tool'] + '[' + held['query'] + ']')} returned in [{m['step']}]({link(m['step'])}) at "
                f"its turn {held['turn']} held the expected answer, a look-up that never went through in this run")
        if any(h["step"] == m["step"] for h in holders):  # that trial read it and gave this answer all the same
            return (f"{said}, and that trial gave this answer all the same: when a page you read may hold the answer, "
                    "read it for exactly what the question asks before answering.")
        return (f"{said}: when the trials of a question keep giving one wrong answer, look up the pages the other "
                "trials read before giving it again.")
    return None
