"""Claims a run's own words make that the log can check: a comparison of two numbers the agent
wrote (checked by arithmetic), a money limit the user gave and a sum of the run above it, a count
the user gave for what a record already shown lists. Parsing is claim_checks.py's; here each is
set against the run. Only what the log settles is said; anything unsure yields nothing.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .agreed_terms import charged, other_terms, put_to_user
from .answer_case import window
from .insight_words import join
from .arguments import _NOT_JSON, _parsed
from .claim_checks import _COUNT_CUE, _COUNT_WORDS, comparisons, money_limits, stated_count, wrong_phrase
from .page_items import answered_nothing
from .reading import Call, Reading, leaves, t_is_user
from .record_words import sentences
from .schema import KeyFact
from .text import clip, clip_words

# --- the agent's own words -----------------------------------------------------------------


def _own_words(r: Reading) -> list[tuple[int, str]]:
    """(turn, text) of what the agent wrote itself: its messages, the reasoning kept with a call,
    and the text of a call that answered nothing (a think tool). Gathered once per run (its memo):
    each kind of claim reads them all."""
    found = r.memo.get("claim_facts.own_words")
    if found is None:
        found = r.memo["claim_facts.own_words"] = _gather_own_words(r)
    return found


def _gather_own_words(r: Reading) -> list[tuple[int, str]]:
    harness = {t.turn for t in r.harness}
    silent = {c.n for c in r.calls if answered_nothing(c)}
    out = []
    for t in r.run.turns:
        if t.turn in harness:
            continue
        if t.type == "message" and t.role == "assistant" and t.content:
            out.append((t.turn, t.content))
        elif t.type == "function_call":
            if t.reasoning:
                out.append((t.turn, t.reasoning))
            if t.turn in silent:
                out += [(t.turn, v) for _, v in leaves(t.arguments) if isinstance(v, str)]
    return out


def wrong_comparisons(r: Reading) -> list[KeyFact]:
    """Comparisons of two numbers the agent wrote that do not hold."""
    out = []
    for turn, text in _own_words(r):
        for c in comparisons(text):
            if not c.holds:
                out.append(KeyFact(f"The agent's comparison at turn {turn} is wrong: {wrong_phrase(c)} "
                                   f"(it wrote \"{clip(c.text, 100)}\").", [turn], about=[wrong_phrase(c)]))
    return out


# --- a limit or a count the user gave ----------------------------------------------------------


_EXPRESSION = re.compile(r"[\d\s.+\-*/()]+")
_QUOTED = 200  # characters of the user's sentence with a limit, quoted whole when no longer


def _user_texts(r: Reading) -> list[tuple[int | None, str]]:
    """(turn, text) of what the user said, with the task's instruction first (turn None) when a
    person (a simulated user) answered the agent: that instruction is the user's own brief."""
    out: list[tuple[int | None, str]] = [(None, r.run.task.instruction or "")] if r.has_interlocutor else []
    return out + [(t.turn, t.content or "") for t in r.facts if t.type == "message"]


def _amounts(r: Reading) -> list[tuple[Call, float, str]]:
    """(call, amount, how) for what the run computed with a calculator (an arithmetic expression
    answered with a number) and for what each change that went through paid in all (its
    ``amount`` values)."""
    out = []
    for c in r.calls:
        if c.error:
            continue
        if c.writes:
            got = charged(r, c)  # what its arguments paid, or the charge its answer's record shows
            if got is not None:
                out.append((c, got[0], f"charged:{got[1]}" if got[1] else "paid"))
            continue
        sent = [v for _, v in leaves(c.turn.arguments) if isinstance(v, str)]
        if len(sent) == 1 and _EXPRESSION.fullmatch(sent[0]) and re.search(r"\d\s*[-+*/]\s*\(?\d", sent[0]):
            try:
                out.append((c, float((c.turn.result or "").strip()), "computed"))
            except ValueError:
                continue
    return out


def _money(v: float) -> str:
    return f"${v:,.2f}".replace(".00", "")


def limit_facts(r: Reading) -> list[KeyFact]:
    """A money limit the user gave (one limit, stated once or again with the same value) and an
    amount of the run above it."""
    limits: dict[float, tuple[int | None, str]] = {}
    for turn, text in _user_texts(r):
        for v in money_limits(text):
            limits.setdefault(v, (turn, text))
    if len(limits) != 1:
        return []
    (limit, (said, text)), = limits.items()
    # the user's sentence with the limit: what it bounds (a total, the extra cost) is the reader's to weigh
    sentence = next((x for x in sentences(text) if limit in money_limits(x)), "")
    where = (f"the user gave at turn {said}" if said is not None else "the task's instruction gives the user") + (
        f" (\"{sentence if len(sentence) <= _QUOTED else window(sentence, '$', _QUOTED)}\")" if sentence else "")
    amounts = _amounts(r)
    for i, (c, amount, how) in enumerate(amounts):
        if amount <= limit or (said is not None and c.n < said):
            continue
        later = next((w for w in r.calls if w.n > c.n and w.writes and not w.error), None)
        if how == "computed" and any(x is not c and h == "computed" and x.n > c.n and (later is None or x.n < later.n)
                                     for x, _, h in amounts[i + 1:]):
            continue  # a later sum before the same change (or the end) is the one the run went on with
        if how != "computed":
            # a yes to a message naming other amounts is said as what it answered, never as agreeing to this one
            put = put_to_user(r, c)
            agreed = ("" if not c.confirmed or c.agreed_at is None or other_terms(r, c) is not None else
                      f" (the user agreed at turn {c.agreed_at})" if put is None or any(
                          abs(amount - v) < 0.005 for v in put[1]) else
                      f" (the user's yes at turn {c.agreed_at} answered the agent's message at turn {put[0]}, which "
                      f"named {join([_money(v) for v in put[1]], 3)})")
            verb = (f"paid {_money(amount)} in all" if how == "paid" else
                    f"charged {_money(amount)} ({how.split(':', 1)[1]})")
            return [KeyFact(f"{c.name} at turn {c.n} {verb}, above the {_money(limit)} limit "
                            f"{where}{agreed}.", [c.n] + ([said] if said is not None else []))]
        if later is not None:
            continue  # what the change then paid is not in the log: the sum may be one the user turned down
        told = _told_and_answered(r, c.n, amount)
        return [KeyFact(f"The {c.name} call at turn {c.n} gave {_money(amount)[1:]}, above the {_money(limit)} limit "
                        f"{where}; no change went through after it"
                        + (f": the agent put {_money(amount)} to the user at turn {told[0]}, and the user replied at "
                           f"turn {told[1]}: \"{told[2]}\"" + ("" if told[2].endswith((".", "!", "?", "\u2026")) else ".")
                           if told else "."),
                        [c.n] + ([said] if said is not None else []) + (list(told[:2]) if told else []))]
    return []


def _told_and_answered(r: Reading, after: int, amount: float) -> tuple[int, int, str] | None:
    """(turn, reply turn, reply) of the first agent message after turn ``after`` that states
    ``amount``, and the user's reply right after it, quoted: what the user made of the figure,
    in their words."""
    whole, cents = f"{amount:.2f}".split(".")
    figure = re.compile(r"(?<![\d.,])\$?" + re.escape(f"{int(whole):,}").replace(",", ",?")
                        + (r"(?:\.00)?" if cents == "00" else r"\." + cents) + r"(?![\d,]|\.\d)")
    turns = r.run.turns
    for i, t in enumerate(turns):
        if t.turn > after and t.type == "message" and t.role == "assistant" and t not in r.harness \
                and figure.search(t.content or ""):
            reply = turns[i + 1] if i + 1 < len(turns) else None
            if reply is not None and t_is_user(reply) and (reply.content or "").strip():
                return t.turn, reply.turn, clip_words(" ".join(reply.content.split()), 160)
            return None
    return None


def _lists(r: Reading, c: Call) -> dict[str, int]:
    """Each list-valued field of a JSON answer (at any depth), by its key: its length, or -1
    where records of the answer disagree."""
    return _lists_in(c.turn.result or "")


@lru_cache(maxsize=512)
def _lists_in(text: str) -> dict[str, int]:
    """Once per answer text, from its parse the argument checks share: trials of a task look up
    the same records."""
    parsed = _parsed(text)
    if parsed is _NOT_JSON:
        return {}
    out: dict[str, int] = {}
    stack = [parsed]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, list) and re.fullmatch(r"[a-z]{4,}s", k):
                    out[k] = len(v) if out.get(k, len(v)) == len(v) else -1
                stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return out


def _states(text: str, noun: str, n: int) -> bool:
    """Whether a message gives ``n`` of the things ``noun`` names ("only one passenger", "2 passengers")."""
    forms = rf"(?:{re.escape(noun)}|{re.escape(noun[:-1])})" if noun.endswith("s") else re.escape(noun)
    said = "|".join([str(n)] + [w for w, v in _COUNT_WORDS.items() if v == n] + (["a single"] if n == 1 else []))
    return re.search(rf"\b(?:{said})\s+(?:[a-z]+\s+)?{forms}\b", text, re.IGNORECASE) is not None


def count_facts(r: Reading) -> list[KeyFact]:
    """A count the user gave for something the records already shown hold as a list ("there were
    3" passengers) when every record shown before that message lists another number of them."""
    if not r.has_interlocutor or not any(t.turn in r.replies and _COUNT_CUE.search(t.content or "")
                                         for t in r.facts if t.type == "message"):
        return []  # no message of the user asserts a count: no record need be read
    seen: dict[str, tuple[int, Call]] = {}  # key -> (length, the last look-up that showed it); -1: records differ
    calls = iter(c for c in r.calls if not c.error and not c.writes and (c.turn.result or "").lstrip()[:1] in "{[")
    pending = next(calls, None)
    for t in r.facts:
        while pending is not None and pending.n < t.turn:
            for k, n in _lists(r, pending).items():
                seen[k] = (n if seen.get(k, (n,))[0] == n else -1, pending)
            pending = next(calls, None)
        if t.type != "message" or t.turn not in r.replies or not seen:
            continue
        for key, (length, source) in seen.items():
            said = stated_count(t.content or "", key)
            if said is None or length < 0 or said == length:
                continue
            reply = next((x for x in r.run.turns if x.turn > t.turn and x.type == "message" and x.role == "assistant"),
                         None)
            if reply is not None and _states(reply.content or "", key, length):
                continue  # the agent set the user right at once: the record's count, not the user's, went on
            return [KeyFact(f"The user put the number of {key} at {said} (turn {t.turn}); every record looked up "
                            f"before that lists {length} (the last: {source.name} at turn {source.n}).",
                            [t.turn, source.n])]
    return []
