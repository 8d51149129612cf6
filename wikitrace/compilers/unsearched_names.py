"""A name the agent gave the thing a question describes, just before a wrong answer, and never looked up.

A question about "the trophy given to the winner" has the agent write "the trophy … is the Little
Brown Stein" and answer about the trophy without ever opening its page. The name in its last
thought, in no call it sent, is the step it skipped: a reader can check for it in any new task.
Said only for a name of two words or more, no figure in it, that neither the question nor the
answer holds, written in the thought that came with the answer call where a sentence of it says
the thing the question describes is that name ("… is the Little Brown Stein.", two of the
question's main words in that sentence), with the page that had returned it, if one had.
"""

from __future__ import annotations

import re

from .answer_case import window
from .near_words import main_words
from .qa_reasons import _flat, question_names
from .reading import Call, Reading
from .record_words import sentences
from .schema import KeyFact

_SHOWN = 160  # characters of the agent's thought quoted around the name
_IS = r"\b(?:is|was|are|were)\s+(?:the\s+|an?\s+)?"
_ENDS = r"(?=\s*(?:[.,;:!?]|$|\s(?:and|which|who|that)\b))"


def named_unsearched(r: Reading, answer: Call) -> KeyFact | None:
    """The first such name in a failed run's thought beside its answer call, with the look-up that
    returned it; None when there is none."""
    if r.run.outcome.success:
        return None
    thought = _flat(answer.turn.reasoning)
    if not thought:
        return None
    question, given = _flat(r.run.task.instruction).casefold(), _flat(answer.turn.arguments).casefold()
    sent = [_flat(c.turn.arguments).casefold() for c in r.calls]
    asked = set(main_words(question))
    for name in question_names(thought):
        low = name.casefold()
        if len(name.split()) < 2 or any(ch.isdigit() for ch in name) or low in question or low in given \
                or given in low or any(low in s for s in sent):
            continue
        # said to be the thing the question describes ("the trophy given to the winner … is the Little Brown
        # Stein."): the name ends its phrase (not "a South Korean film"), in a sentence holding two of the
        # question's main words at least
        said = next((x for x in sentences(thought) if re.search(_IS + re.escape(name) + _ENDS, x)), "")
        if len(asked & set(main_words(said)) - set(main_words(name))) < 2:
            continue
        source = next((c for c in r.calls if c.n < answer.n and not c.error and not c.writes
                       and low in _flat(c.turn.result).casefold()), None)
        where = (f"which the look-up at turn {source.n} had returned and no call of the run looked up" if source else
                 "which no page the run read held and no call of the run looked up")
        return KeyFact(f"Before answering at turn {answer.n} the agent wrote \"{window(thought, name, _SHOWN)}\": it "
                       f"names \"{name}\" for what the question describes, {where}. Look up the thing the question "
                       "describes by its name before answering about it.",
                       ([source.n] if source else []) + [answer.n])
    return None
