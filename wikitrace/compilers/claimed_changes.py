"""An agent telling the user that a change was made that no call of the run made.

Read off the log alone: an agent message states a thing "has been <done>" (a past participle
after "has been"/"have been", in a plain statement, not a question, a condition or a negation),
the words before it name what an expected change's tool acts on (``bag`` for
``update_reservation_baggages``), and no call of that tool went through in the run. Where the
thing is one several known tools act on (a reservation is booked and cancelled), the done word
must share its start with the tool's own action word. Only on logs that record expected calls
and have a person who answers: the claim is put to a user, and the missing change is one the
task expected.

A report need not say "has been": "updated with the new return flights and one checked bag", or a
list under "the following changes". So the agent's report after the run's last call, where that
call is a change that went through, counts too when one of its sentences names what a missed
change's tool acts on and the made change's tool name does not (bags, beside
update_reservation_flights): that message reports the change just made, so a thing it names
beside it is reported with it. The page quotes the sentence and does not judge its verb.
"""

from __future__ import annotations

import re

from .. import lazy_re
from .consent import acted_on, names_thing
from .expected_calls import expected_changes
from .insight_words import is_hand_off, report_message
from .reading import Reading
from .schema import KeyFact
from .text import clip_words

_DONE = lazy_re.compile(r"\b(?:has|have)\s+(?:now\s+|also\s+|already\s+|successfully\s+)*been\s+"
                        r"(?:successfully\s+)?([a-z]{3,}ed)\b", re.I)
_SENTENCE = lazy_re.compile(r"[^.!?\n]+[.!?]?")
_HEDGED = lazy_re.compile(r"^\s*(?:if|once|when|after|before|until|as soon as)\b|\bnot\b|n't|\b(?:will|would|can|could)\b",
                          re.I)
_WORD = lazy_re.compile(r"[a-z]+")


def _action(tool: str) -> str:
    return (_WORD.findall(tool.lower()) or [""])[0]


def unmade_claims(r: Reading) -> list[KeyFact]:
    """The first agent message claiming a change whose tool no call of the run got through."""
    expected = expected_changes(r)
    if not expected or not r.has_interlocutor:
        return []
    made = {c.name for c in r.calls if c.writes and not c.error}
    missing = list(dict.fromkeys(e["name"] for e in expected if e["name"] not in made))
    if not missing:
        return []
    known = {c.name for c in r.calls} | {e["name"] for e in expected}
    for t in r.run.turns:
        if t.type != "message" or t.role != "assistant" or not t.content or "been" not in t.content:
            continue
        for m in _SENTENCE.finditer(t.content):
            sentence = " ".join(m.group(0).split())
            done = _DONE.search(sentence)
            if done is None or sentence.endswith("?") or _HEDGED.search(sentence[:done.start()]):
                continue
            subject = " ".join(sentence[:done.start()].split()[-4:])
            for tool in missing:
                word = names_thing(subject, tool)
                if word is None:
                    continue
                sharing = [k for k in known if acted_on(k) == acted_on(tool)]
                if len(sharing) > 1 and not done.group(1).lower().startswith(_action(tool)[:4]):
                    continue
                return [_fact(f"The agent told the user at turn {t.turn} that the {word} had been "
                              f"{done.group(1).lower()}", sentence, tool, t.turn,
                              "Tell the user only what a call's answer shows was done.")]
    return _reported(r, missing)


def _fact(said: str, sentence: str, tool: str, turn: int, do: str) -> KeyFact:
    return KeyFact(f"{said} (\"{clip_words(sentence, 100)}\"), but no {tool} call went through in this run, and the "
                   f"task expected one. {do}", [turn], "missed-change", [tool])  # counted as a change never made


def _reported(r: Reading, missing: list[str]) -> list[KeyFact]:
    """The report after the run's last change naming what a missed change acts on (the module's
    docstring), as the fact ``unmade_claims`` gives."""
    last = r.calls[-1] if r.calls else None
    if last is None or not last.writes or last.error or is_hand_off(last):
        return []
    report = report_message(r)
    if report is None or not isinstance(report.content, str):
        return []
    made = {w.lower() for w in _WORD.findall(last.name.lower())}
    # the missed tools whose thing the made change's name does not name (baggages beside flights)
    tools = [tool for tool in missing if (thing := acted_on(tool)) and not any(
        w.startswith(thing) or thing.startswith(w) for w in made if len(w) >= 3)]
    for m in _SENTENCE.finditer(report.content):
        sentence = " ".join(m.group(0).replace("**", "").split()).strip(" -")
        for tool in tools:
            word = names_thing(sentence, tool)
            if word is not None:
                return [_fact(f"The agent's report after its last change ({last.name}, turn {last.n}) named the "
                              f"{word.lower()} at turn {report.turn}", sentence, tool, report.turn,
                              "Before the report, make every change the request calls for.")]
    return []
