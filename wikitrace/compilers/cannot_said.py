"""The agent's first sentence telling the user it cannot see or do something, said before any
tool call.

"I'm unable to access your balances" ends many chat runs before any call is made: the claim, in
the agent's own words and turn, is what such a run failed on, since its tools were never tried.
Read only before the run's first call: after a look-up, "I cannot" may be the rules speaking.
"""

from __future__ import annotations

import re

from ..runs.model import Run
from .expected_calls import only_arithmetic
from .insight_words import join
from .reading import Reading

CLIP = 140  # characters of the agent's sentence quoted
# a first-person sentence saying the agent cannot do, see or reach something
_CANNOT = re.compile(r"\bI(?:['’]m| am) (?:unable|not able) to\b|\bI (?:can['’]t|cannot|can not)\b"
                     r"|\bI (?:don['’]t|do not) have (?:access|the ability|a way)\b", re.I)
_SENTENCE = re.compile(r"[^.!?\n]*[.!?]?")


def first_cannot(run: Run) -> tuple[int, str] | None:
    """(turn, sentence) of the agent's first message sentence saying it cannot do or see
    something, clipped; None when there is none. The caller checks that the run made no call."""
    for t in run.turns:
        if t.type != "message" or t.role != "assistant" or not t.content:
            continue
        m = _CANNOT.search(t.content)
        if m is None:
            continue
        start = max(t.content.rfind(ch, 0, m.start()) for ch in ".!?\n") + 1
        said = _SENTENCE.match(t.content, start).group(0).strip()
        if len(said) > CLIP:
            said = said[:CLIP].rsplit(" ", 1)[0] + "…"
        return t.turn, said
    return None


def said_before_looking(r: Reading) -> tuple[int, str, str] | None:
    """(turn, sentence, what the run called) when the agent told the user it cannot see or do
    something before any tool call, and the run looked nothing up at any turn (its calls, if any,
    only worked out sums or made changes): what it said instead of trying a tool. None otherwise."""
    found = first_cannot(r.run)
    if found is None or any(c.n < found[0] or not c.writes and not only_arithmetic(c.turn.arguments) for c in r.calls):
        return None
    made = ("the run made no call at all" if not r.calls else
            f"the run looked nothing up: its only call{'s were' if len(r.calls) > 1 else ' was'} "
            + join([f"{c.name} at turn {c.n}" for c in r.calls], 3))
    return found[0], found[1], made

