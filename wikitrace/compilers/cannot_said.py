"""The agent's first sentence telling the user it cannot see or do something, in a run that made
no tool call at all.

"I'm unable to access your balances" ends many chat runs before any call is made: the claim, in
the agent's own words and turn, is what such a run failed on, since its tools were never tried.
Read only in a run that made no tool call: after a look-up, "I cannot" may be the rules speaking.
"""

from __future__ import annotations

import re

from ..runs.model import Run

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
