"""Where a name appeared only in errors (a failed look-up's list of near names), said for every
error that listed it, not for the first alone, and with the call that then sent it, or that none
did: a reader told "only in the error at turn 4" would not know whether the agent took it up."""

from __future__ import annotations

import re
from dataclasses import dataclass

from .insight_words import join
from .text import TITLE_KIND
from .reading import Call, Reading, _occurs


@dataclass
class ErrorListing:
    """The errors before a turn whose text holds a name, and the first call after the first of
    them that sent the name itself."""

    errors: list[Call]
    tried: Call | None
    before: int | None = None  # the turn the search for a call sending the name stopped at (None: the run's end)

    @property
    def turns(self) -> list[int]:
        return [e.n for e in self.errors] + ([self.tried.n] if self.tried is not None else [])

    def where(self, verb: str) -> str:
        """``the error Search answered at turn 4`` or ``the errors Search answered at turns 4, 5
        and 6``, then what the agent did with the name (``; the agent sent it to Search at turn 5,
        which failed too``). ``verb`` is the sentence's own ("answered", "returned")."""
        names = list(dict.fromkeys(e.name for e in self.errors))
        tool = names[0] if len(names) == 1 else join(names, 3)
        ns = [str(e.n) for e in self.errors]
        said = (f"the error {tool} {verb} at turn {ns[0]}" if len(ns) == 1 else
                f"the errors {tool} {verb} at turns {join(ns, 8)}")
        if self.tried is not None:
            said += (f"; the agent sent it to {self.tried.name} at turn {self.tried.n}"
                     + (", which failed too" if self.tried.error else ""))
        else:  # the name was offered and never taken up: the step the run missed
            said += ("; no later call sent it" if self.before is None else
                     f"; no call before turn {self.before} sent it")
        return said


def _beyond_echo(c: Call) -> str:
    """An error's text (lower case) without the words it repeats from its own call ("Could not
    find [X]"): only a name it offered beyond those counts as listed."""
    text = c.turn.result.lower()
    sent = " ".join(str(c.turn.arguments).split()).lower()
    return text.replace(sent, " ") if sent else text


def listed_in_errors(r: Reading, name: str, before: int | None) -> ErrorListing | None:
    """Every error before ``before`` (any turn, when None) whose text holds ``name`` beyond what
    its call sent, and the first later call (before ``before``) whose arguments hold it; None
    when no error holds it."""
    needle = name.lower()
    errors = [c for c in r.calls if c.error and (before is None or c.n < before) and c.turn.result
              and _occurs(needle, _beyond_echo(c))]
    if not errors:
        return None
    tried = next((c for c in r.calls if errors[0].n < c.n and (before is None or c.n < before)
                  and _occurs(needle, str(c.turn.arguments).lower())), None)
    return ErrorListing(errors, tried, before)


_LISTED = re.compile(r"'([^'\n]+)'|\"([^\"\n]+)\"")  # an item of an error's list of near names, as quoted there
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.I)


def _title_key(text: str) -> str:
    return " ".join(TITLE_KIND.sub("", _ARTICLE.sub("", " ".join(text.split()))).casefold().split())


def listed_as_title(r: Reading, name: str, before: int | None) -> tuple[ErrorListing, str] | None:
    """Where errors before ``before`` listed ``name`` only as a page title in another form (its
    leading article dropped, a disambiguator in parentheses added: "Twist (dance)" for "the
    Twist"): those errors with the title as the first listed it, or None. Such a list offered the
    page the answer was on, which "no look-up returned it" alone would hide."""
    want = _title_key(name)
    if not want:
        return None
    errors, title = [], ""
    for c in r.calls:
        if before is not None and c.n >= before:
            break
        if not (c.error and c.turn.result):
            continue
        found = next((item for m in _LISTED.finditer(c.turn.result) if _title_key(item := m.group(1) or m.group(2))
                      == want and item.casefold() not in " ".join(str(c.turn.arguments).split()).casefold()), None)
        if found is not None:
            errors.append(c)
            title = title or found
    if not errors:
        return None
    tried = next((c for c in r.calls if errors[0].n < c.n and (before is None or c.n < before)
                  and title.casefold() in " ".join(str(c.turn.arguments).split()).casefold()), None)
    return ErrorListing(errors, tried, before), title
