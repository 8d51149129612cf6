"""Whether a free-text value no earlier turn holds word for word is close to what one turn said:
most of its main words (four characters or more, or with a digit) occur there, a plural or
possessive read as its word. An answer copied from a page with a word added or dropped is the
agent's rewording of that page, not a value from nowhere."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from ..runs.model import Turn
from .reading import Call, Reading, looks_like_error, t_is_user

_TOKEN = re.compile(r"[^\W_]+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def _stem(word: str) -> str:
    """A word without an English plural or possessive ending, the way renderings.py reads a
    word's forms as one value."""
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]  # classes, boxes, churches
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]  # magazines, songs; not class
    return word


def main_words(text: str) -> list[str]:
    """The distinct main words of a text, stemmed, in order: four characters or more, or with a digit."""
    low = text.lower().replace("\u2019", "'")
    words = [_stem(w) for w in re.findall(r"[^\W_]+(?:'s)?", low) if len(w) >= 4 or any(ch.isdigit() for ch in w)]
    return list(dict.fromkeys(words))


def near_words(r: Reading, value, before: int) -> tuple[Turn, int, int] | None:
    """For a text value of two main words or more: the earliest turn before ``before`` (a user
    message or an answer) one sentence of which holds more than half of them, and the most of any,
    with that count and the value's count; None when no turn comes so close."""
    if not isinstance(value, str):
        return None
    wanted = main_words(value)
    if len(wanted) < 2:
        return None
    span = len(_TOKEN.findall(value)) + 2  # the value's own words and two more
    best: tuple[Turn, int, int] | None = None
    for t in r.facts:
        if t.turn >= before:
            break
        low = r.lower(t).replace("\u2019", "'")
        if not any(w in low for w in wanted):
            continue
        # within one sentence: a long prompt holds most words somewhere, scattered
        shared = max((sum(1 for w in wanted if w in words) for words in _sentence_words(low)), default=0)
        if len(wanted) <= SHORT and shared:  # a short value's words, near each other: "Palace" and
            # "Westminster" in "St James's Palace, in the City of Westminster" name another place
            shared = max((_in_reach(tokens, wanted, span) for tokens in _sentence_tokens(low)), default=0)
        if 2 * shared > len(wanted) and (best is None or shared > best[1]):
            best = (t, shared, len(wanted))
    return best


SHORT = 3  # main words of a value whose words must stand near each other to be close to a sentence


def _in_reach(tokens: tuple[str, ...], wanted: list[str], span: int) -> int:
    """The most of ``wanted`` a run of ``span`` tokens of the sentence holds."""
    best = 0
    for i, tok in enumerate(tokens):
        if tok in wanted:
            best = max(best, len(set(tokens[i:i + span]) & set(wanted)))
    return best


@lru_cache(maxsize=1024)
def _sentence_tokens(low: str) -> tuple[tuple[str, ...], ...]:
    """Each sentence of a turn's text as its stemmed words in order (for a short value's reach)."""
    return tuple(tuple(_stem(x) for x in _TOKEN.findall(sentence)) for sentence in _SENTENCE.split(low))


@lru_cache(maxsize=1024)
def _sentence_words(low: str) -> tuple[frozenset[str], ...]:
    """Each sentence of a turn's text as its set of stemmed words: made once per text, where each
    value asked about split and stemmed every sentence again for each of its words."""
    return tuple(frozenset(_stem(x) for x in _TOKEN.findall(sentence)) for sentence in _SENTENCE.split(low))


def place_words(t: Turn) -> str:
    """Where the close words were: a user message, what a call returned, or the error it answered, with its turn."""
    if t_is_user(t):
        return f"the user message at turn {t.turn}"
    # an error's text lists names it could not find: it returned no page (step-0051's Similar list)
    return f"the error {t.name} answered at turn {t.turn}" if looks_like_error(t) else f"what {t.name} returned at turn {t.turn}"


def near_look_up(r: Reading, value: str, before: int | None) -> tuple[Call, list[str], int] | None:
    """For an expected answer of two main words or more that no look-up returned as written: the
    first look-up that went through (before ``before``, when given) one sentence of which holds
    more than half of its main words, with the words held and the answer's count. A page that
    named "the Stedelijk Museum" for "Stedelijk Museum Amsterdam" had the answer in another form,
    which "no look-up had returned it" would hide."""
    wanted = main_words(value)
    if len(wanted) < 2:
        return None
    own = {}
    for w in re.findall(r"[^\W_]+", value.lower().replace("\u2019", "'")):
        own.setdefault(_stem(w), w)
    for c in r.calls:
        if before is not None and c.n >= before:
            break
        if c.error or not c.turn.result:
            continue
        for sentence in _SENTENCE.split(c.turn.result.replace("\u2019", "'")):
            as_written: dict[str, str] = {}  # each main word as the sentence wrote it, its own form first
            for x in _TOKEN.findall(sentence):
                stem = _stem(x.lower())
                if stem not in as_written or x.lower() == own.get(stem):
                    as_written[stem] = x
            held = [as_written[w] for w in wanted if w in as_written]
            if 2 * len(held) > len(wanted):
                return c, held, len(wanted)
    return None


def near_phrase(found: tuple[Call, list[str], int]) -> str:
    """``, though Search's answer at turn 1 held 2 of its 3 main words in one sentence ("Stedelijk", "Museum")``."""
    c, held, count = found
    return (f", though {c.name}'s answer at turn {c.n} held {len(held)} of its {count} main words in one sentence "
            f"({', '.join(json.dumps(w, ensure_ascii=False) for w in held)})")
