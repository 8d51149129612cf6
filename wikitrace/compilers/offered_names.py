"""Names a QA run was offered and never looked up, said as the deciding fact of a failed run:

- a look-up tool that never got past its errors, while those errors listed names ("Similar:
  ['A', 'B']") the run never sent on their own (none of them, or not those made only of the
  question's or the failed query's words);
- an expected answer that stood as one item of a list a look-up returned ("worked with A, B,
  C and D"), which the run never looked up (said with the items it did look up).

Both need only the turns they name: the listed names, what each call sent. A name counts as
tried when a call sent it as its whole text, quote marks aside (a name packed with others into
one call is not a look-up of it).
"""

from __future__ import annotations

import re

from .. import lazy_re
from .insight_words import expected_answer, is_verdict, join
from .near_words import main_words
from .page_notes import listed_names
from .text import TITLE_KIND, folded_words
from .reading import Call, Reading
from .schema import KeyFact

_MARKS = " \"'\u201c\u201d\u2018\u2019`"


def _fold(text: str) -> str:
    return " ".join(str(text or "").split()).strip(_MARKS).casefold()


def _sent(r: Reading) -> dict[str, Call]:
    """Each text a call sent on its own (folded), with the first call that sent it."""
    out: dict[str, Call] = {}
    for c in r.calls:
        if isinstance(c.turn.arguments, str) and not c.writes:
            out.setdefault(_fold(c.turn.arguments), c)
    return out


def _shown(names: list[str], limit: int = 3) -> str:
    return join([f"\"{n}\"" if "'" in n else f"'{n}'" for n in names], limit)


def unsent_listed(r: Reading, name: str, errs: list[Call]) -> KeyFact | None:
    """For a tool's errors that no later call of it got past: the names those errors listed
    and no call sent on its own, when the run sent none of them, or left unsent a name made
    only of the question's words or the failed query's. Said with counts, those names first."""
    if r.run.outcome.success:
        return None
    sent = _sent(r)
    listing, listed, fitting = [], [], []
    question = set(main_words(r.run.task.instruction or ""))
    for e in errs:
        names = listed_names(e.turn.result or "")
        if names:
            listing.append(e)
        own = question | set(main_words(str(e.turn.arguments)))
        for n in names:
            if n not in listed:
                listed.append(n)
            words = set(main_words(n))  # its bracket too: "Julian (emperor)" is no page of a film "Julian (2012)"
            if words and words <= own and n not in fitting:
                fitting.append(n)  # made of the question's words or the failed query's
    if not listed:
        return None
    tried = [n for n in listed if _fold(n) in sent]
    untried = [n for n in listed if _fold(n) not in sent]
    fitting = sorted((n for n in fitting if n in untried),  # the question's own names first
                     key=lambda n: not set(main_words(n)) <= question)
    if not untried or (tried and not fitting):
        return None
    ns = [str(e.n) for e in listing]
    where = f"The error at turn {ns[0]}" if len(ns) == 1 else f"The errors at turns {join(ns, 6)}"
    count = f"{len(listed)} name{'s' if len(listed) > 1 else ''}"
    if not tried:
        said = (f"{where} listed {count}, and no call sent any of them on its own"
                if len(listed) > 1 else f"{where} listed {count}, and no call sent it on its own")
    else:
        marked = [n for n in tried if _fold(n) != " ".join(str(sent[_fold(n)].turn.arguments).split()).casefold()]
        before = all(sent[_fold(n)].n < int(ns[0]) for n in tried)
        said = (f"{where} listed {count}, and the run sent {len(tried)} of them "
                f"({_shown(tried, 2)}{' in quote marks' if marked == tried else ''}, "
                f"turn {join([str(sent[_fold(n)].n) for n in tried], 3)}{(', before the error' + ('s' if len(ns) > 1 else '')) if before else ''})")
    if fitting:
        said += (f"; never {_shown(fitting)}, made of the question's or the failed query's words"
                 if tried else f" ({_shown(fitting)} {'is' if len(fitting) == 1 else 'are'} made of the question's or the failed query's words)")
    elif not tried:
        said += f" ({_shown(untried)})"
    return KeyFact(said + f": when {name} fails, send it the listed name that fits the question, as the list writes it, "
                   "before rewording the query.", [int(n) for n in ns[:3]] + [sent[_fold(n)].n for n in tried[:2]],
                   "offered-names", [name])


# --- an expected answer that stood in a list a look-up returned ---------------------------------------

_NAME = r"[A-Z][\w.'\u2019-]*(?:\s+[A-Z][\w.'\u2019-]*)*"
_WHOLE = lazy_re.compile(_NAME)
_HEAD = lazy_re.compile(_NAME)
_TAIL = lazy_re.compile(_NAME + "$")


def _list_items(sentence: str, item: str) -> list[str] | None:
    """The items of a comma list in ``sentence`` that holds ``item`` as one of them ("such as A,
    B, C and D"), each a capitalised name; None unless there are three or more. The run of
    capitalised items may stop short of the list's own ends ("Ben 10"): a count of at least."""
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", sentence)]
    at = next((i for i, p in enumerate(parts) if p == item or p.endswith(" " + item)), None)
    if at is None:
        return None
    items = [item]
    for p in reversed(parts[:at] if parts[at] == item else []):  # words before it: it opens the list
        if _WHOLE.fullmatch(p):
            items.insert(0, p)
            continue
        if m := _TAIL.search(p):
            items.insert(0, m.group(0))
        break
    for p in parts[at + 1:]:
        m = _HEAD.match(p)
        if m:
            items.append(m.group(0))
        if not m or m.group(0) != p:
            break
    items = list(dict.fromkeys(items))
    return items if len(items) >= 3 else None


def unchecked_candidate(r: Reading, answer: Call) -> KeyFact | None:
    """A wrong answer where the expected one stood as an item of a list a look-up returned
    before it, and no call of the run sent the expected one (whichever others it looked up)."""
    gold = expected_answer(r)
    if r.run.outcome.success or not gold or is_verdict(r, gold):
        return None
    gold = " ".join(gold.split())
    if set(folded_words(gold)) <= set(folded_words(str(answer.turn.arguments))):
        return None  # the answer holds the expected one: the run had found it
    sent = _sent(r)
    if _fold(gold) in sent:
        return None
    for c in r.calls:
        if c.n >= answer.n or c.error or c.writes or not c.turn.result or gold not in c.turn.result:
            continue
        for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])|\n+", c.turn.result):
            if gold not in sentence:
                continue
            items = _list_items(" ".join(sentence.split()).rstrip("."), gold)
            if items is None or gold not in items:
                continue
            looked = [x for x in items if _fold(x) in sent and sent[_fold(x)].n > c.n]
            shown = (f"looked up {'only ' if len(looked) == 1 else ''}{_shown(looked, 2)} of them (turn "
                     f"{join([str(sent[_fold(x)].n) for x in looked], 3)})" if looked else "looked up none of them")
            return KeyFact(f"The expected \"{gold}\" stood among at least {len(items)} names what {c.name} returned at turn "
                           f"{c.n} listed together, and the run {shown} before answering: check each listed candidate "
                           f"against every condition of the question before answering.",
                           [c.n] + [sent[_fold(x)].n for x in looked[:2]] + [answer.n], "unchecked-candidates",
                           [answer.name])
    return None


# --- kept for the other trials of the task -----------------------------------------------------------


def unsent_offers(r: Reading) -> dict[str, list]:
    """Each name an error's list offered that no call sent on its own (folded -> [the name as
    listed, the turn of the first error that listed it, that error's tool]): a failed trial's
    page sets these against the look-up a successful trial of its task found the answer with."""
    sent = _sent(r)
    out: dict[str, list] = {}
    for c in r.calls:
        if c.error and not c.writes:
            for n in listed_names(c.turn.result or ""):
                if _fold(n) and _fold(n) not in sent:
                    out.setdefault(_fold(n), [n, c.n, c.name])
    return out


def naming_page(r: Reading, c: Call) -> Call | None:
    """The latest look-up before ``c`` whose text names what ``c`` sent (its name as whole
    words, a title's bracket aside), when that name is not all the question's words: the page
    the run took its next query from."""
    query = " ".join(str(c.turn.arguments or "").split()).strip(_MARKS)
    name = TITLE_KIND.sub("", query)
    if not isinstance(c.turn.arguments, str) or not main_words(name) \
            or set(folded_words(name)) <= set(folded_words(r.run.task.instruction or "")):
        return None
    word = re.compile(r"(?<![\w])" + re.escape(name) + r"(?![\w])", re.IGNORECASE)
    return next((x for x in reversed(r.calls) if x.n < c.n and not x.error and not x.writes and x.turn.result
                 and word.search(" ".join(x.turn.result.split()))), None)
