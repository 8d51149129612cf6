"""The look-up a page cites for an expected answer: the first whose text names it on its own,
not only as the head of a longer name ("Stone Brewing" inside "Stone Brewing Co."), so the
turn cited is the one that shows the answer in the form the task wanted."""

from __future__ import annotations

import re

from .arguments import yes_or_no
from .reading import Call, Reading


def _flat_text(text: str) -> str:
    return " ".join(str(text or "").split())


# letters re.IGNORECASE matches to an ASCII one that lower() does not turn into it ("ſ" is an "s"):
# in a text with none, an ASCII word is there in any case exactly when lower() finds it
_ODD_FOLDS = ("\u0130", "\u0131", "\u017f", "\u212a")


def _stands_alone(text: str, name: str) -> bool:
    """Whether ``text`` holds ``name`` with no capitalised word right after it (the name is not
    the head of a longer one: "Stone Brewing" in "Stone Brewing Co." is)."""
    name = _flat_text(name)
    head = name.split(" ", 1)[0]  # every match holds it as written in ``text``, whitespace aside
    if head.isascii() and not any(ch in text for ch in _ODD_FOLDS) and head.lower() not in text.lower():
        return False  # not there in any case: the page is neither folded nor scanned
    flat = _flat_text(text)
    for m in re.finditer(r"(?<!\w)" + re.escape(name) + r"(?!\w)", flat, re.IGNORECASE):
        after = flat[m.end():m.end() + 40].split()[:1]
        if not (after and after[0][:1].isupper()):
            return True
    return False


def named_source(r: Reading, gold: str, before: Call | None) -> Call | None:
    """The first look-up before ``before`` whose text holds ``gold`` as a name of its own (not
    the head of a longer name), when one does; never for a yes or a no, which no look-up returns."""
    if yes_or_no(gold):
        return None
    return next((c for c in r.calls if (before is None or c.n < before.n) and not c.error and not c.writes
                 and c.turn.result and _stands_alone(c.turn.result, gold)), None)
