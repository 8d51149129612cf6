"""One run's final answer as a case an insight page can show: what was answered, what the task
expected when the log records it, and what the look-ups before the answer had shown.

The record is kept beside the lesson about the answer (corpus.json), so the insight layer
shows concrete pairs ("answered X, expected Y; turn 2's look-up held Y") and counts, across
the runs of a lesson, how the answer differed from the expected one, without reading any
run again. Every field is read from the log itself; nothing depends on one data set's words.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .arguments import is_verdict
from .error_listings import listed_as_title, listed_in_errors
from .insight_words import answer_seen_in, expected_answer, followed, gives_answer
from .phrase_match import phrase_span
from .reading import Call, Reading, _occurs
from .text import clip_words, folded_words, signature

# the separators that join items of a list written as text: a comma, a semicolon, "and", "&", "/"
_ITEMS = re.compile(r"\s*(?:[,;&/]|\band\b)\s*", re.I)
SHOWN = 110  # characters of an answer or of a look-up's text kept on a case


def relation(given: str, expected: str) -> str:
    """How the answer's words stand to the expected answer's: "more" (every expected word and
    others), "less" (only some of the expected words, nothing else), "same" (the same words),
    or "other"."""
    said, wanted = set(folded_words(given)), set(folded_words(expected))
    if not said or not wanted:
        return "other"
    if said == wanted:
        return "same"
    if wanted < said:
        return "more"
    if said < wanted:
        return "less"
    return "other"


def shape(expected: str) -> str:
    """What kind of value the expected answer is, read from the value alone: a yes or no, a
    number (a year, a count, a date written with digits), a name (its first word and every word
    longer than three letters capitalised: "Bank of the North"), or a phrase."""
    low = expected.strip().casefold()
    if low in ("yes", "no"):
        return "yes/no"
    if re.search(r"\d", low) and len(folded_words(low)) <= 3:
        return "number"
    ws = [w for w in re.findall(r"\S+", expected) if w[0].isalpha()]
    if ws and ws[0][0].isupper() and all(w[0].isupper() for w in ws if len(w) > 3):
        return "name"
    return "phrase"


def items(text: str) -> int:
    """How many list items the text holds, joined by commas, semicolons or "and"."""
    return len([p for p in _ITEMS.split(text.strip()) if p.strip()])


def window(text: str, needle: str, width: int = SHOWN) -> str:
    """The look-up's words around the first place ``needle`` occurs (case folded), cut at word
    ends: what the reader needs to see of a page that held the answer."""
    flat = " ".join((text or "").split())
    at = flat.casefold().find(needle.casefold())
    if at < 0:  # held with other marks or spacing (phrase_match): centre on it as the page wrote it
        span = phrase_span(flat, needle)
        if span is None:
            return clip_words(flat, width)
        at, needle = span[0], flat[span[0]:span[1]]
    room = max(0, width - len(needle)) // 2
    start, end = max(0, at - room), min(len(flat), at + len(needle) + room)
    if start > 0:
        space = flat.find(" ", start, at)
        start = space + 1 if space >= 0 else start
    if end < len(flat):
        space = flat.rfind(" ", at + len(needle), end)
        end = space if space >= 0 else end
    return ("…" if start > 0 else "") + flat[start:end].strip() + ("…" if end < len(flat) else "")


def followed_any(r: Reading, final: Call) -> bool:
    """Whether a look-up before the final call searched a name an earlier answer had shown (asked
    by the procedure's key and by the answer's case: worked out once per run)."""
    key = f"followed-any:{final.n}"
    if key not in r.memo:
        r.memo[key] = any(followed(r, c) is not None for c in r.calls if c.n < final.n and not c.writes)
    return r.memo[key]


def named(text: str) -> bool:
    """A name, a number or a phrase: one lower-case word ("no", a common noun) occurs in most pages
    by chance, so only these are said to stand in a look-up."""
    return len(text.split()) > 1 or any(ch.isdigit() or ch.isupper() for ch in text)


def _latest_holding(r: Reading, text: str, final: Call) -> Call | None:
    """The latest call before ``final`` whose answer holds ``text`` as whole words."""
    low = text.lower()
    return next((c for c in reversed(r.calls) if c.n < final.n and not c.error and c.turn.result
                 and _occurs(low, c.turn.result.lower())), None)


def _where(c: Call) -> dict:
    return {"turn": c.n, "call": f"{c.name}[{clip_words(str(c.turn.arguments or ''), 60)}]"}


def answer_case(r: Reading, final: Call) -> dict:
    """The case of a run's final free-text call: given and expected answer, how they differ,
    the first look-up that held the expected answer or else the one that held the answer given,
    or else the last look-up and the start of what it returned; the distinct look-ups sent and
    answered before it, and whether one searched a name an earlier answer showed."""
    given = " ".join(str(final.turn.arguments or "").split())
    before = [c for c in r.calls if c.n < final.n and not c.writes]
    case: dict = {"turn": final.n, "tool": final.name, "given": clip_words(given, SHOWN),
                  "lookups": len({signature(c.turn) for c in before}),
                  "answered": len({signature(c.turn) for c in before if not c.error}),
                  "followed": followed_any(r, final)}
    gold = expected_answer(r)
    # a label of the task's closed answer set (a verdict) is chosen, not read off a page; a click or a
    # move ends a run without giving an answer: for neither is a look-up said to have held it
    chosen = is_verdict(r, gold or given) or not gives_answer(r, final)
    if chosen:
        case["chosen"] = True
    if gold:
        case["expected"] = clip_words(" ".join(gold.split()), SHOWN)
        case["relation"] = relation(given, gold)
        case["shape"] = shape(gold)
        case["in_task"] = _occurs(gold, (r.run.task.instruction or "").lower())  # one of the options the task named
        extra = set(folded_words(given)) - set(folded_words(gold))
        if case["relation"] == "more":
            case["extra_in_task"] = extra <= set(folded_words(r.run.task.instruction or ""))
            case["joined"] = items(given) > items(gold)
        # a failure: the first look-up that had returned it (it was there to read); a success: the
        # latest before the answer, where it was read (a year can stand on an earlier page by chance)
        # "yes" or "no" stands on most pages by chance: worked out, never read off one
        seen = None if chosen or case["shape"] == "yes/no" else (
            _latest_holding(r, gold, final) if r.run.outcome.success else answer_seen_in(r, gold, final))
        if seen is not None:
            case["seen"] = {**_where(seen), "text": window(seen.turn.result or "", gold)}
        elif not chosen and case["shape"] != "yes/no" and not r.run.outcome.success:
            # no look-up returned it, but an error's list of near names may have offered it (as itself or a title)
            listed = listed_in_errors(r, gold, final.n)
            titled = None if listed else listed_as_title(r, gold, final.n)
            if listed or titled:
                first = (listed or titled[0]).errors[0]
                case["listed"] = {**_where(first), "name": titled[1] if titled else case["expected"]}
    # whether the pages were searched for the answer at all (a "no", a chosen label: never)
    if not chosen and (gold and case["shape"] != "yes/no" or named(given)):
        case["looked"] = True
    held = (_latest_holding(r, given, final) if named(given) and not chosen and given.casefold() != (gold or "").casefold()
            else None)
    if held is not None:
        case["held"] = {**_where(held), "text": window(held.turn.result or "", given)}
    # what it had read: its look-ups; before a chosen label or a click, every earlier call that answered (an
    # item's page is the answer to a click)
    answered = [c for c in (r.calls if chosen else before) if c.n < final.n and not c.error and c.turn.result]
    if "seen" not in case and "held" not in case and answered:
        last = answered[-1]
        case["last"] = {**_where(last), "text": clip_words(last.turn.result or "", SHOWN),
                        # a later call failed: "the last look-up" would name that one
                        **({"through": True} if any(last.n < c.n < final.n and c.error for c in before) else {})}
        # an answer no look-up held as written was worked out: from which look-ups, and the agent's words on it
        case["asked"] = [_where(c)["call"] for c in dict((signature(c.turn), c) for c in answered).values()][:3]
        if (final.turn.reasoning or "").strip():
            case["thought"] = clip_words(final.turn.reasoning, SHOWN)
    score = r.run.outcome.score
    if isinstance(score, (int, float)) and not isinstance(score, bool):
        case["score"] = score
    return case


def _stem(word: str) -> str:
    """A word without a plural or possessive ending, so "magazines" meets "magazine"."""
    for end in ("'s", "’s", "s"):
        if len(word) > len(end) + 2 and word.endswith(end) and not word.endswith("ss"):
            return word[: -len(end)]
    return word


_TOKEN = re.compile(r"[\w'’]+")


@lru_cache(maxsize=512)
def _answer_words(text: str) -> tuple[tuple[tuple[int, int], ...], tuple[str, ...]]:
    """An answer's words as (start, end) spans and as stems: once per answer text, not once per
    free-text value compared with it."""
    raw = tuple(m.span() for m in _TOKEN.finditer(text))
    return raw, tuple(_stem(text[a:b].casefold()) for a, b in raw)


def near_words(r: Reading, c: Call, width: int = SHOWN) -> tuple[Call, str] | None:
    """For a free-text value no earlier turn holds as written: the earlier answer holding most of
    the value's words (the latest on a tie), when all but one of them, plurals and possessives
    folded, stand within a stretch at most two words longer than the value; quoted from the first
    to the last of them.
    A value copied with a plural added, an "and" dropped or one word changed is then named as
    close to what it copied; a value of fewer than four distinct words is never matched so loosely."""
    tokens = _TOKEN.findall(str(c.turn.arguments or "").casefold())
    wanted = {_stem(w) for w in tokens}
    if len(wanted) < 4:
        return None
    span, need = len(tokens) + 2, len(wanted) - 1
    found = None  # (words held, the call, its stretch): the answer holding most, the latest on a tie
    for x in reversed(r.calls):
        if x.n >= c.n or x.error or not x.turn.result:
            continue
        raw, stems = _answer_words(x.turn.result)
        best = None  # (-words held, length, start, end): the stretch holding most of the words, then the shortest
        for i, s in enumerate(stems):
            if s not in wanted:
                continue
            got: set[str] = set()
            for k in range(i, min(len(stems), i + span)):
                if stems[k] in wanted and stems[k] not in got:
                    got.add(stems[k])
                    if len(got) >= need and (best is None or (-len(got), k - i) < best[:2]):
                        best = (-len(got), k - i, i, k)
        if best is not None and (found is None or -best[0] > found[0]):
            text = x.turn.result[raw[best[2]][0]:raw[best[3]][1]]
            found = (-best[0], x, clip_words(text, width))
    return (found[1], found[2]) if found else None
