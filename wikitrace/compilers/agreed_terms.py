"""What the user said yes to, set against what the change then sent or charged.

A yes covers the terms the agent had just put to the user. When that message named money
amounts and the change then paid (its arguments' ``amount`` values) or charged (a new entry
of a list in the record it returned, holding an ``amount``, that the same record looked up
before did not hold) a total none of those amounts makes and no message of the agent had
named, the yes was to other terms: "after the user agreed" would hide the deciding fact, so
the page says what was put and what was sent. Codes the call sent of the same shape as those
the message named, and which it did not name (more flights than it listed), are said with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations

from .arguments import _NOT_JSON, _parsed
from .consent import AGREES, answer_kind
from .insight_words import hands_off
from .reading import Call, Reading, leaves
from .rules import sentences
from .schema import KeyFact
from .stems import stem
from .text import clip_words

_MONEY = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?!\d|,\d)")
_AMOUNT_KEY = re.compile(r"(?:^|[.\]_])amount$")
_CODE = re.compile(r"(?<![\w-])(?=[A-Za-z0-9]*[A-Za-z])(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{4,12}(?![\w-])")
_NAMED_MAX = 8  # amounts of a message tried in sums; a message naming more is a price list, left out
_ROUND = 0.005
_NAMING_WIDTH = 160  # the sentence naming an amount (characters), quoted so a reader sees what it was an amount of


def money_in(text: str) -> list[float]:
    """The money amounts a text writes with a currency sign, in order, each once."""
    out: list[float] = []
    for m in _MONEY.finditer(text or ""):
        v = float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else ""))
        if v not in out:
            out.append(v)
    return out


def _money(v: float) -> str:
    return f"${v:,.2f}".replace(".00", "")


def _paid(c: Call) -> float | None:
    """The total a change's arguments pay: the sum of their ``amount`` numbers, or None."""
    paid = [v for path, v in leaves(c.turn.arguments) if _AMOUNT_KEY.search(path)
            and isinstance(v, (int, float)) and not isinstance(v, bool)]
    return float(sum(paid)) if paid else None


def _same_record(before: dict, after: dict) -> bool:
    """Two answers hold one record when a top-level ``…id`` field holds the same value in both."""
    return any(k.lower().endswith("id") and isinstance(v, str) and v and after.get(k) == v for k, v in before.items())


def charged(r: Reading, c: Call) -> tuple[float, str] | None:
    """(total, where it shows) a change that went through charged: what its arguments paid, or
    else the ``amount`` of list entries its answer holds that the same record, looked up earlier
    in the run, did not ("the new `payment_history` entry of its answer")."""
    paid = _paid(c)
    if paid is not None:
        return paid, ""
    after = _parsed(c.turn.result or "") if not c.error else _NOT_JSON
    if not isinstance(after, dict):
        return None
    before = next((b for x in reversed(r.calls) if x.n < c.n and not x.error
                   and isinstance(b := _parsed(x.turn.result or ""), dict) and _same_record(b, after)), None)
    if before is None:
        return None
    for key, entries in after.items():
        old = before.get(key)
        if not isinstance(entries, list) or not isinstance(old, list):
            continue
        new = [e for e in entries if isinstance(e, dict) and e not in old]
        amounts = [v for e in new for k, v in e.items() if _AMOUNT_KEY.search(k)
                   and isinstance(v, (int, float)) and not isinstance(v, bool)]
        if new and amounts and len(new) == len(entries) - len(old):
            return float(sum(amounts)), f"the new `{key}` entr{'y' if len(new) == 1 else 'ies'} of its answer"
    return None


_PER = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?(?!\d|,\d)\s*(?:per\b|each\b|a piece\b|/)", re.I)


def _per_unit(text: str) -> set[float]:
    """The amounts a text gives for one of several ("$240 per passenger", "$50 each")."""
    return {float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else "")) for m in _PER.finditer(text)}


def _makes(total: float, named: list[float], per: set[float] = frozenset()) -> bool:
    """Whether the amounts a message named make ``total``: one of them, a sum of some of them, an
    amount it gave per one of several times a small count (a fare times the passengers), or the
    difference of two (a balance less what is left)."""
    if any(abs(total - v * k) < _ROUND for v in per for k in range(1, 10)):
        return True
    for size in range(1, min(len(named), 4) + 1):
        if any(abs(total - sum(part)) < _ROUND for part in combinations(named, size)):
            return True
    return any(abs(total - abs(a - b)) < _ROUND for a, b in combinations(named, 2))


def _shape(code: str) -> str:
    return re.sub(r"\d", "9", re.sub(r"[A-Za-z]", "A", code))


@dataclass(frozen=True)
class OtherTerms:
    """A change made after a yes to terms that named only smaller amounts than the change's."""
    call: Call
    agreed_at: int  # the user's yes
    put_at: int  # the agent's message that yes answered
    named: tuple[float, ...]  # the amounts that message named
    total: float  # what the change paid or charged
    where: str  # "" (its arguments paid it) or the answer's new entries that show the charge
    unnamed: tuple[str, ...]  # codes the call sent, shaped like those the message named, that it did not name
    naming: str = ""  # the message's first sentence naming an amount: a balance left is no price

    def _named(self) -> str:
        shown = [_money(v) for v in self.named[:3]]
        return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]

    def phrase(self) -> str:
        """Said in place of ", after the user agreed" in a decision."""
        return (f", after the user said yes (turn {self.agreed_at}) to the agent's message at turn {self.put_at}, "
                f"which named {self._named()}, not the {_money(self.total)} the call {self._verb()}")

    def _verb(self) -> str:
        return "charged" if self.where else "paid"

    def fact(self) -> KeyFact:
        c = self.call
        also = (f" It also sent {', '.join(self.unnamed[:3])}{' and more' if len(self.unnamed) > 3 else ''}, which "
                f"that message did not name." if self.unnamed else "")
        shown = f" ({self.where})" if self.where else ""
        naming = f" (\"{self.naming}\")" if self.naming else ""
        return KeyFact(f"{c.name} at turn {c.n} {self._verb()} {_money(self.total)}{shown}; the user's yes (turn {self.agreed_at}) "
                       f"answered the agent's message at turn {self.put_at}, which named {self._named()}{naming}, and no message "
                       f"of the agent had put {_money(self.total)} to the user.{also} Put the total the call will "
                       "charge to the user, and get a yes to that total, before making the change.",
                       [self.put_at, self.agreed_at, c.n], "agreed-other", [c.name])


def other_terms(r: Reading, c: Call) -> OtherTerms | None:
    """The yes before ``c`` was to other amounts than ``c`` paid or charged, or None. Once per call."""
    memo = r.memo.setdefault("agreed_terms", {})
    if c.n not in memo:
        memo[c.n] = _other_terms(r, c)
    return memo[c.n]


def _said(r: Reading, c: Call) -> list:
    return [t for t in r.run.turns if t.type == "message" and t.role == "assistant" and t.turn < c.n and t.content]


def put_to_user(r: Reading, c: Call) -> tuple[int, list[float]] | None:
    """(turn, the money amounts it named) of the agent's message the user's yes before ``c``
    answered, when the yes covers ``c`` and that message named one to a few amounts; else None."""
    if not c.confirmed or c.agreed_at is None or c.error or not r.has_interlocutor:
        return None
    put = next((t for t in reversed(_said(r, c)) if t.turn < c.agreed_at), None)
    named = money_in(put.content) if put is not None else []
    return (put.turn, named) if named and len(named) <= _NAMED_MAX else None


_NAME_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])")
_WORD = re.compile(r"[a-z]+")


def _put_since_agreeing(r: Reading, yes: int) -> list:
    """The agent's messages the user's yes at turn ``yes`` answers: those since the user's last
    message before it, and further back while that message agreed too ("I'd like to proceed with
    these changes. Could the fee be waived?", then a yes to going ahead): one agreement, asked twice."""
    out = []
    changed = {x.n for x in r.calls if x.writes and not x.error}
    for t in reversed([t for t in r.run.turns if t.turn < yes]):
        if t.turn in changed:
            break  # a change went through: what was put before it was agreed to and used
        if t.type != "message" or not t.content:
            continue
        if t.role == "assistant":
            out.append(t)
        elif t.role == "user" and (not out or answer_kind(t.content) != AGREES):
            break
    return out


def yes_to_another_thing(r: Reading, c: Call) -> int | None:
    """The turn of the agent's message the user's yes before ``c`` answered, when the messages that
    yes answers named no value ``c`` sent, no word of one and no word of its tool's name: the yes was
    to something else (to try a certificate again, and the agent then cancelled a booking). None
    when they named the change, or no yes covers ``c``."""
    if not c.confirmed or c.agreed_at is None or not r.has_interlocutor:
        return None
    put = _put_since_agreeing(r, c.agreed_at)  # the latest first
    if not put:
        return None  # the yes followed no message of the agent's
    said_as_written = " ".join(t.content for t in put)
    text = said_as_written.lower()
    # a hand-off sends a summary of the talk, whose words any message about the request shares: only
    # a message naming the hand-off itself put it to the user
    values = [] if hands_off(c.name or "") else [
        str(v).strip().lower() for _p, v in leaves(c.turn.arguments) if not isinstance(v, bool)]
    # a value the text does not hold at all needs no pattern compiled for it
    if any(len(v) >= 3 and v in text and re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", text) for v in values):
        return None
    named = money_in(said_as_written)
    if any(isinstance(v, (int, float)) and not isinstance(v, bool) and any(abs(v - m) < _ROUND for m in named)
           for _p, v in leaves(c.turn.arguments)):
        return None  # an amount it paid, put to the user with its currency sign
    said = {stem(w) for w in _WORD.findall(text)}
    # the words of its name and of the values it sent ("credit_card_4421" is a credit card)
    words = [w for w in _NAME_WORD.findall(c.name or "") if len(w) >= 3] + [
        w for v in values for w in _WORD.findall(v) if len(w) >= 3]  # "to" of transfer_to_human_agents names nothing
    if any(stem(w.lower()) in said for w in words):
        return None
    # a count it sent, written as a word ("Add One Checked Bag" for nonfree_baggages 1): the claim that the
    # yes was to something else is made only when nothing of the change stands there at all
    counts = {v for _p, v in leaves(c.turn.arguments) if isinstance(v, int) and not isinstance(v, bool)}
    if counts & {_COUNT_WORDS[w] for w in _WORD.findall(text) if w in _COUNT_WORDS}:
        return None
    return put[0].turn


_COUNT_WORDS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten".split())}


def _other_terms(r: Reading, c: Call) -> OtherTerms | None:
    found = put_to_user(r, c)
    if found is None:
        return None
    put_at, named = found
    said = _said(r, c)
    put = next(t for t in said if t.turn == put_at)
    got = charged(r, c)
    if got is None:
        return None
    total, where = got
    per = _per_unit(put.content)
    if total <= max(named) + _ROUND or _makes(total, named, per) or any(
            abs(total - v) < _ROUND for t in said for v in money_in(t.content)):
        return None  # within what was named (or a refund), made from it, or named to the user at some point
    parts = [float(v) for path, v in leaves(c.turn.arguments) if _AMOUNT_KEY.search(path)
             and isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(parts) > 1 and all(_makes(p, named, per) for p in parts):
        return None  # each part is one the message named
    codes = _CODE.findall(put.content)
    shapes = {_shape(x) for x in codes}
    told = {x.casefold() for x in codes}
    unnamed = tuple(dict.fromkeys(v for _p, v in leaves(c.turn.arguments) if isinstance(v, str)
                                  and _CODE.fullmatch(v) and _shape(v) in shapes and v.casefold() not in told))
    naming = next((x for x in sentences(put.content) if money_in(x)), "")
    return OtherTerms(c, c.agreed_at, put_at, tuple(named), total, where, unnamed, clip_words(naming, _NAMING_WIDTH))
