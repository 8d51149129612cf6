"""Whether a look-up's text holds a value as a whole phrase once case, punctuation and spacing
are set aside: an expected answer written '"Read It and Weep" (2006)' stands in a page that says
'Read It and Weep (2006),'. A page saying no look-up returned the answer must have looked this
way in every observation the run got, or it says something the log contradicts."""

from __future__ import annotations

import re

from .reading import Call, Reading

_WORD = re.compile(r"[^\W_]+")


def words_of(text: str) -> str:
    """The text's letters and digits as lower-case words, one space apart and one at each end,
    so a phrase is found whole with a plain ``in``."""
    return " " + " ".join(_WORD.findall(str(text or "").casefold())) + " "


def holds_phrase(text: str, phrase: str) -> bool:
    """Whether ``text`` holds ``phrase`` word for word, case, punctuation and spacing aside."""
    needle = words_of(phrase)
    return needle.strip() != "" and needle in words_of(text)


def observation_words(r: Reading, c: Call) -> str:
    """``words_of`` a call's observation, worked out once per run."""
    key = f"phrase-words:{c.n}"
    if key not in r.memo:
        r.memo[key] = words_of(c.turn.result or "")
    return r.memo[key]


def phrase_span(text: str, phrase: str) -> tuple[int, int] | None:
    """Where in ``text`` (as written) the words of ``phrase`` stand in a row, case and the marks
    between them aside: from the first word's start to the last word's end."""
    want = _WORD.findall(str(phrase or "").casefold())
    if not want:
        return None
    found = list(_WORD.finditer(str(text or "")))
    folded = [m.group(0).casefold() for m in found]
    size = len(want)
    for i in range(len(found) - size + 1):
        if folded[i] == want[0] and folded[i:i + size] == want:
            return found[i].start(), found[i + size - 1].end()
    return None


def name_with_middle(text: str, name: str) -> str | None:
    """The span of ``text`` writing a two-word ``name`` with one or two capitalised words between
    its two, as a page about a person writes the name ("Kent Lex Baer" for "Kent Baer"), or None."""
    words = name.split()
    if len(words) != 2:
        return None
    first, last = (re.escape(w) for w in words)
    m = re.search(rf"(?<!\w){first}(?:\s+[A-Z][\w.'-]*){{1,2}}\s+{last}(?!\w)", " ".join(str(text or "").split()))
    return m.group(0) if m else None
