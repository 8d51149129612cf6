"""A rule with one case per kind of record whose kind the run never learned before the change.

A policy often gives a count per case ("If the booking user is a regular member, 1 free checked bag
…", "If … a silver member, 2 …", "If … a gold member, 3 …"). Where a change sent a wrong count and
no answer or user message before it named any of the cases, the deciding fact is that the run never
found out which case applied: the rule itself cannot be quoted at a case (rule_reasons.py quotes
nothing then), but that it went unlearned can be said, and checked.

Read by structure: the one block of the prompt whose label names the argument's thing holds two
or more rule sentences that are the same words but for one word each (numbers aside); those words
are the cases. Nothing is said when any answer or user message before the call names one of them.
"""

from __future__ import annotations

import re

from .insight_words import join
from .reading import Call, Reading, t_is_user
from .rule_blocks import _blocks, _loosely_names
from .text import clip_words

_WORD = re.compile(r"[a-z][a-z-]*")
_WIDTH = 140


def _words(text: str) -> list[str]:
    """The sentence's words, a plain plural "s" dropped ("bags" and "bag" alike)."""
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in _WORD.findall(text.lower())]


def _cases(sentences: list[str]) -> list[tuple[str, str]] | None:
    """(case word, sentence) for sentences alike but for one word each; None when they are not."""
    sets = [set(_words(s)) for s in sentences]
    out = []
    for i, s in enumerate(sentences):
        others = set().union(*(w for k, w in enumerate(sets) if k != i))
        own = sets[i] - others
        if len(own) != 1 or any(len(sets[i] ^ sets[k]) > 2 for k in range(len(sets)) if k != i):
            return None
        word = own.pop()
        written = next((w for w in _WORD.findall(s.lower()) if w == word or w == word + "s"), word)
        out.append((written, s))
    return out


def _alike(rules: list[str]) -> list[tuple[str, str]] | None:
    """The longest run of consecutive sentences alike but for one word each, as ``_cases``."""
    for size in range(len(rules), 1, -1):
        for start in range(len(rules) - size + 1):
            found = _cases(rules[start:start + size])
            if found:
                return found
    return None


def unlearned(r: Reading, c: Call, key: str, head: frozenset[str]) -> tuple[str, list[int], list[str]] | None:
    """The sentence saying the rule on ``key`` turns on cases no turn before the call named, with
    its turns and the cases' words; None when the prompt has no such rule or a turn named a case."""
    if r.system is None or not head:
        return None
    with_cases = [found for b in _blocks(r.system.content or "")
                  if b.label and _loosely_names(b.label_words, head) and (found := _alike([s.text for s in b.sentences
                                                                                          if s.rule]))]
    if len(with_cases) != 1:
        return None  # no block on the thing has cases, or two do: which rule governs is not settled
    found = with_cases[0]
    names = [w for w, _s in found]
    pattern = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    for t in r.facts:
        if t.turn >= c.n:
            break
        said = (t.content or "") if t_is_user(t) else (t.result or "") if t.type == "function_call" else ""
        if pattern.search(said.lower()):
            return None  # the run had a case in hand: which one applied is not what it missed
    quote = clip_words(found[0][1], _WIDTH)
    cases = join(['"' + w + '"' for w in names], 4)
    text = (f"The system prompt's rule on `{key}` (turn {r.system.turn}) has a case for each of {cases} (the first: "
            f"\"{quote}\"), and no answer or user message before this call named any of them: the run sent `{key}` "
            "without learning which case applied.")
    return text, [r.system.turn], names
