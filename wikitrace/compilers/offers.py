"""An expected change the agent offered the user and then never made.

An agent that puts a change to the user ("Would you like me to issue a $50 certificate?") and
gets no refusal, then lets the talk move on and never comes back to it, loses a change it had
already found due. Read off the log alone: an agent message that puts something to the user
names the thing the expected tool acts on (``certificate`` of ``send_certificate``) and every
number the expected call sends; the user's next message does not open with a refusal; no later
agent message names the thing again; and no call of that tool went through. Only logs with a
user who answers the agent have offers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .consent import _PUTS_TO_USER, AGREES, REFUSES, answer_kind
from .reading import Reading, leaves, t_is_user
from .rules import _stem
from .text import clip_words

_WORD = re.compile(r"[a-z]+")
_NEGATION = re.compile(r"\b(?:not|no|never|cannot|unable)\b|n't\b", re.I)  # an offer says none of these of itself
_NAME_PARTS = re.compile(r"[\W_]+|(?<=[a-z])(?=[A-Z])")


@dataclass
class Offer:
    at: int  # the agent's message that put the change to the user
    thing: str  # the word of that message naming what the tool acts on
    said: str  # its sentence naming the thing
    reply_at: int
    reply: str
    agreed: bool
    first_at: int | None = None  # an earlier offer of it the talk moved on from, when this one came back to it
    ended: bool = False  # the user's reply was the conversation's last turn: the agent had no turn to make it

    def text(self, tool: str) -> str:
        answer = (f"the user agreed at turn {self.reply_at}" if self.agreed
                  else f"the user answered at turn {self.reply_at} (\"{self.reply}\")")
        if self.first_at is not None and self.ended:
            return (f"The agent offered the {tool} change at turn {self.first_at}, let the talk move on, and put it to "
                    f"the user again only at turn {self.at} (\"{self.said}\"); {answer}, in the message that ended "
                    "the conversation, and the run never made that change. Come back to an offered change as soon as "
                    "the user's other questions are answered, while there are turns left to make it.")
        return (f"The agent offered the {tool} change at turn {self.at} (\"{self.said}\"); {answer}; no later agent "
                f"message named the {self.thing} again, and the run never made that change. Come back to a change you "
                "offered until the user takes it or turns it down.")


def _thing(tool: str) -> str | None:
    parts = [w for w in _NAME_PARTS.split(tool or "") if len(w) >= 3]
    return _stem(parts[-1]) if len(parts) >= 2 else None  # a one-word tool names an action, not a thing


def _names(text: str, thing: str) -> bool:
    return any(_stem(w) == thing for w in _WORD.findall(text.lower()))


def _numbers(args) -> list[str]:
    out = []
    for _p, v in leaves(args):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f"{v:g}" if isinstance(v, float) else str(v))
    return out


def _has_number(text: str, n: str) -> bool:
    return re.search(r"(?<![\d.])" + re.escape(n) + r"(?:\.0+)?(?![\d])", text) is not None


def _agent_sentences(r: Reading):
    """(index, turn, its sentences) of each message of the agent, in log order."""
    for i, t in enumerate(r.run.turns):
        if t.type == "message" and t.role == "assistant" and t.content:
            yield i, t, re.split(r"(?<=[.!?])\s+", " ".join(t.content.split()))


def unmade_offer(r: Reading, expected: dict) -> Offer | None:
    """The offer of this expected change that the run let drop, or None."""
    if not r.has_interlocutor:
        return None
    name = expected.get("name") or ""
    thing = _thing(name)
    if thing is None or any(c.name == name and c.writes and not c.error for c in r.calls):
        return None
    numbers = _numbers(expected.get("arguments"))
    turns = r.run.turns
    first_at = None
    for i, t, sentences in _agent_sentences(r):
        # the sentence that puts it to the user names the thing, and says no "not" of it
        asked = next((s for s in sentences if _PUTS_TO_USER.search(s) and _names(s, thing) and not _NEGATION.search(s)),
                     None)
        if asked is None or not all(_has_number(t.content, n) for n in numbers):
            continue
        reply = next((u for u in turns[i + 1:] if t_is_user(u) and u.turn in r.replies), None)
        if reply is None:
            return None
        kind = answer_kind(reply.content or "")
        if kind == REFUSES:
            return None
        if any(u.type == "message" and u.role == "assistant" and _names(u.content or "", thing)
               for u in turns[i + 1:]):
            first_at = t.turn if first_at is None else first_at
            continue  # the agent came back to it: its last offer is the one to read
        word = next(w for w in _WORD.findall(asked.lower()) if _stem(w) == thing)
        priced = next((s for s in sentences if s != asked and numbers and all(_has_number(s, n) for n in numbers)
                       and not all(_has_number(asked, n) for n in numbers)), None)  # what it offered, when apart
        said = f"{clip_words(priced, 120)} {asked}" if priced else asked
        ended = not any(u.turn > reply.turn and (u.type == "function_call" or u.role == "assistant")
                        and u not in r.harness for u in turns)
        if first_at is not None and not ended:
            return None  # offered again and the talk went on: what happened then is another story
        return Offer(t.turn, word, clip_words(said, 240), reply.turn,
                     clip_words(" ".join((reply.content or "").split()), 120), kind == AGREES, first_at, ended)
    return None


@dataclass
class Promise:
    at: int  # the agent's message naming the change and the record it was to act on
    said: str  # its sentence doing so
    reply_at: int  # the user's reply agreeing to it

    def text(self) -> str:
        return (f"The agent's message at turn {self.at} named this change (\"{self.said}\"), and the user agreed at "
                f"turn {self.reply_at}.")


def agreed_unmade(r: Reading, expected: dict) -> Promise | None:
    """The last agent message whose sentence names an expected change's action (``cancel`` of
    ``cancel_reservation``) and a value it was to send ("XEHM4B"), with no "not" in it, that the
    user's reply agreed to: a change the run had put to the user and got a yes for, then never made
    (it made the same kind of change on another record, or none). None otherwise."""
    if not r.has_interlocutor:
        return None
    action = _stem((_WORD.findall((expected.get("name") or "").lower()) or [""])[0])
    values = [str(v) for _p, v in leaves(expected.get("arguments")) if isinstance(v, str) and len(v) >= 4]
    if len(action) < 3 or not values:
        return None
    turns = r.run.turns
    found = None
    for i, t, sentences in _agent_sentences(r):
        said = next((s for s in sentences if not _NEGATION.search(s) and any(v in s for v in values)
                     and any(_stem(w) == action for w in _WORD.findall(s.lower()))), None)
        reply = next((u for u in turns[i + 1:] if t_is_user(u) and u.turn in r.replies), None) if said else None
        if reply is not None and answer_kind(reply.content or "") == AGREES:
            found = Promise(t.turn, clip_words(said, 200), reply.turn)
    return found


# a sentence that suggests or offers, not one that reports: a question, a modal of possibility, or
# one of the phrases that put a change to the user
_SUGGESTS = re.compile(r"\?|\b(?:may|might|could|can|consider|option|options)\b", re.I)


def raised_first(r: Reading, tool: str, before: int) -> tuple[str, list[int]]:
    """Whether the agent brought up the change a call of ``tool`` made: its sentence suggesting the
    action the tool's name opens with (``cancel`` of ``cancel_reservation``), before any user
    message said that word in any form. Said as that: the word, not what the user may have meant
    by others. ("", []) otherwise, and in logs without a user who answers."""
    parts = [w for w in _NAME_PARTS.split(tool or "") if len(w) >= 3]
    if not r.has_interlocutor or len(parts) < 2:
        return "", []
    action = _stem(parts[0].lower())
    for i, t, sentences in _agent_sentences(r):
        if t.turn >= before:
            break
        if any(t_is_user(u) and _names(u.content or "", action) for u in r.run.turns[:i]):
            return "", []  # the user said it first
        said = next((x for x in sentences if _names(x, action) and _SUGGESTS.search(x) and not _NEGATION.search(x)),
                    None)
        if said is None:
            continue
        word = next(w for w in _WORD.findall(said.lower()) if _stem(w) == action)
        took = next((u for u in r.run.turns[i + 1:] if t_is_user(u) and u.turn < before and _names(u.content or "", action)),
                    None)
        head = (f"The agent suggested it at turn {t.turn} (\"{clip_words(said, 200)}\") before any user message said "
                f"\"{word}\" in any form")
        if took is None:
            # the user may have taken it up in other words ("connect me with a human agent"): their yes is told
            reply = next((u for u in r.run.turns[i + 1:] if t_is_user(u) and u.turn < before), None)
            if reply is not None and answer_kind(reply.content or "") == AGREES:
                return (f"{head}; the user agreed in their reply at turn {reply.turn} "
                        f"(\"{clip_words(' '.join((reply.content or '').split()), 120)}\").", [t.turn, reply.turn])
            return f"{head}, and none did before the {tool} call.", [t.turn]
        return f"{head}; the user first did at turn {took.turn}.", [t.turn, took.turn]
    return "", []
