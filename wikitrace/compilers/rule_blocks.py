"""The system prompt read as rule blocks: a paragraph or list item, with the heading above it and
the short label that opens it ("Checked bag allowance:"), cut into sentences that state a rule, a
condition or a permission. Read once per distinct prompt (rule_reasons.py quotes from it)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .rules import RULE, _words, sentences

_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,2}[.)])\s+")
_LABEL = re.compile(r"^([A-Za-z][\w '/&-]{1,50}?):\s")
# a sentence that states a condition or a permission is a rule too ("If the user is a gold member, 3
# free bags"; "All reservations can be cancelled within 24 hours"), not only one with "must"
_CONDITION = re.compile(r"\b(?:if|unless|can|may|allowed|eligible|per|each)\b", re.I)
_DURATION = re.compile(r"\b(?:\d+|one|two|three|a|an)\s+(?:hour|day|week)s?\b", re.I)


@dataclass(frozen=True)
class _Sentence:
    text: str
    words: frozenset[str]
    rule: bool  # states a rule, a condition or a permission
    span: bool  # states a span of time ("within 24 hours")


@dataclass(frozen=True)
class _Block:
    heading: frozenset[str]  # stemmed words of the nearest heading above it
    label: str  # the label, lower case ("" for none)
    label_text: str  # the label as written
    label_words: frozenset[str]
    words: frozenset[str]
    sentences: tuple[_Sentence, ...]


@lru_cache(maxsize=16)  # runs of one benchmark share one prompt: it is cut once, not per call
def _blocks(text: str) -> tuple[_Block, ...]:
    out: list[_Block] = []
    heading: frozenset[str] = frozenset()
    current: list[str] = []

    def close():
        body = " ".join(" ".join(current).split())
        current.clear()
        if not body:
            return
        m = _LABEL.match(body)
        label = m.group(1).strip() if m and len(m.group(1).split()) <= 5 else ""
        said = tuple(_Sentence(s, _words(s), bool(RULE.search(s) or _CONDITION.search(s)), bool(_DURATION.search(s)))
                     for s in sentences(body[len(m.group(0)):] if label else body))
        if said:
            label_words = _words(label)
            out.append(_Block(heading, label.lower(), label, label_words, _words(body), said))

    for line in (text or "").splitlines():
        h = _HEADING.match(line)
        if h:
            close()
            heading = _words(h.group(1))  # the nearest heading: a section's name scopes its rules
            continue
        if not line.strip() or _ITEM.match(line):
            close()
        current.append(_ITEM.sub("", line, count=1) if _ITEM.match(line) else line)
    close()
    return tuple(out)


def _loosely_names(label: frozenset[str], subject: frozenset[str]) -> bool:
    """Whether a label's words name the subject, a shorter word standing for a longer one it
    starts (a "bag" label for a ``baggages`` argument): a label is a topic of a few words, not prose."""
    return any(a == b or (min(len(a), len(b)) >= 3 and (a.startswith(b) or b.startswith(a)))
               for a in label for b in subject)
