"""The first step a failed QA run took on a name nothing had given it: a look-up whose query named
something (a capitalised word, a number) that neither the task text the run was given nor any
answer before it held, from which the run's wrong answer then came. A multi-step question breaks
where the chain leaves what the pages said; the final answer only repeats that break, so the page
names the step where it happened and the agent's own words that made it.

Said only where the log shows each part: the name stood in no earlier text (a near spelling of a
word that did, a typo or a plural, is no new name), the answer stood in what that look-up or a
later one returned and in nothing before it, and the expected answer stood in none of them.
"""

from __future__ import annotations

import difflib
import re

from .answer_case import window
from .insight_words import expected_answer
from .qa_reasons import _flat, _holds
from .reading import Call, Reading
from .task_words import given_words
from .schema import KeyFact
from .text import clip_words, folded_words

_TOKEN = re.compile(r"[^\W_]+")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def _is_name(token: str) -> bool:
    return token[:1].isupper() or any(ch.isdigit() for ch in token)


def _new_names(query: str, known: set[str]) -> list[str]:
    """The name words of a query that no known word is, or is a near spelling of."""
    out = []
    for token in _TOKEN.findall(query):
        word = token.casefold()
        if not _is_name(token) or word in known or word in out:
            continue
        if not any(ch.isdigit() for ch in word) and difflib.get_close_matches(word, known, n=1, cutoff=0.8):
            continue  # "Sayrevill" for "Sayreville", "Americans" for "American": the same name
        out.append(token)
    return out


def _thought(r: Reading, look: Call, names: list[str]) -> str | None:
    """The agent's latest sentence, at the look-up's turn or before it, that wrote one of the new
    names: the words that made the step."""
    for c in reversed([c for c in r.calls if c.n <= look.n and c.turn.reasoning]):
        for sentence in _SENTENCES.split(_flat(c.turn.reasoning)):
            if any(_holds(sentence, n) for n in names):
                return sentence
    return None


def unfounded_name(r: Reading, answer: Call) -> KeyFact | None:
    """The fact above, for a failed run's free-text answer; None where any part is unsure."""
    gold = expected_answer(r)
    given = _flat(answer.turn.arguments)
    if gold is None or not given or _holds(gold, given) and _holds(given, gold):
        return None
    _statement, known = given_words(r)
    known = set(known)
    looks = [c for c in r.calls if c.n < answer.n and not c.writes and isinstance(c.turn.arguments, str)]
    for i, c in enumerate(looks):
        names = _new_names(c.turn.arguments, known)
        if names:
            break
        known.update(folded_words(c.turn.result or ""))  # an error's answer lists names too
    else:
        return None
    before, after = looks[:i], looks[i:]
    found = [x for x in after if not x.error and _holds(x.turn.result or "", given)]
    if not found or any(not x.error and _holds(x.turn.result or "", given) for x in before):
        return None  # the answer came from before the step, or from no look-up at all
    if any(not x.error and _holds(x.turn.result or "", gold) for x in after):
        return None  # the branch held the expected answer too: the step did not lose it
    look, source = c, found[0]
    said = " and ".join(f'"{n}"' for n in names[:3])
    thought = _thought(r, look, names)
    why = f' (the agent\'s words: "{window(thought, names[0], 160)}")' if thought else ""
    came = ("what that look-up returned" if source is look else
            f"what {source.name}[{clip_words(_flat(source.turn.arguments), 60)}] returned at turn {source.n}")
    return KeyFact(f"{look.name} at turn {look.n} sent \"{clip_words(_flat(look.turn.arguments), 70)}\", and "
                   f"{said} stood in neither the task text it was given nor any answer before it{why}; the answer "
                   f"\"{clip_words(given, 60)}\" came from {came}, and no look-up from turn {look.n} on held the "
                   f"expected \"{clip_words(gold, 60)}\": take each next name from the question or a look-up's "
                   "text, and search for the link itself before building on a name from memory.",
                   sorted({look.n, source.n, answer.n}), "unfounded-name", [look.name])
