"""What a verdict rested on: the run's last call gave a label of the task's closed answer set
(``is_verdict``: SUPPORTS, REFUTES, ...), and the reasoning the log records with it quotes, or
does not quote, words a look-up returned. The lesson (``verdict|<tool>``), taught by the runs
that quoted, says which look-up held the quoted words; its pattern counts those runs, so the page
contrasts them by outcome. The page note beside a verdict says what it quoted, or that it quoted
none and what each look-up returned.
Nothing here knows a benchmark: the answer set is the run's own, quotes are the reasoning's own.
"""

from __future__ import annotations

import re

from .insight_parts import kind_of_tasks, make_insight
from .insight_words import free_form, is_verdict, join
from .reading import Call, Reading
from .schema import CandidateInsight
from .text import clip

_QUOTED = re.compile("\"([^\"\n]{3,200})\"|\u201c([^\u201d\n]{3,200})\u201d")


def _fold(text: str) -> str:
    return " ".join((text or "").split()).casefold()


def _closed_set(r: Reading, answer: str) -> bool:
    """A label of an answer set the log states apart from the question: recorded by the importer
    (``answer_labels``) or named by the system prompt. A question's own upper-case name (an
    acronym the task asks about) is an answer, not a verdict."""
    labels = (r.run.task.metadata or {}).get("answer_labels")
    if isinstance(labels, list):
        return answer in {str(x).strip() for x in labels}
    told = (r.system.content if r.system is not None else None) or ""
    return re.search(rf"(?<![\w]){re.escape(answer)}(?![\w])", told) is not None


def verdict_call(r: Reading) -> Call | None:
    """The run's last call that went through, when it gave a verdict of the task's answer set."""
    writes = [c for c in r.calls if c.writes and not c.error]
    last = writes[-1] if writes else None
    if last is None or free_form(last) is None:
        return None
    answer = str(last.turn.arguments).strip()
    return last if is_verdict(r, answer) and _closed_set(r, answer) else None


def quoted_sources(r: Reading, c: Call) -> list[tuple[str, Call]]:
    """Each phrase the reasoning with the verdict quotes, with the latest earlier look-up whose
    answer holds it (whitespace and case folded); phrases no answer holds are left out."""
    out = []
    for m in _QUOTED.finditer(c.turn.reasoning or ""):
        phrase = " ".join((m.group(1) or m.group(2)).split())
        source = next((x for x in reversed(r.calls) if x.n < c.n and not x.error and not x.writes
                       and _fold(phrase) in _fold(x.turn.result)), None)
        if source is not None:
            out.append((phrase, source))
    return out


def _asked(c: Call) -> str:
    args = c.turn.arguments
    return f"{c.name}[{clip(' '.join(args.split()), 40)}]" if isinstance(args, str) else c.name


def _returned(c: Call) -> str:
    """What a look-up returned, in a phrase: a short answer quoted whole, a longer one counted."""
    text = " ".join((c.turn.result or "").split())
    if c.error:
        return "answered with an error"
    if not text:
        return "returned nothing"
    if len(text) <= 60 and '"' not in text:
        return f"returned \"{text}\""
    return f"returned {len(text.split())} words"


def _lookups(r: Reading, c: Call) -> str:
    """``Search[X] returned 40 words (turn 1) and Lookup[y] returned "No more results." (turn 2)``."""
    said = [f"{_asked(x)} {_returned(x)} (turn {x.n})" for x in r.calls if x.n < c.n and not x.writes]
    return join(said, 3) if said else "no look-up"


def verdict_pattern(r: Reading) -> str | None:
    """``verdict|<tool>``: the reasoning with the run's verdict quoted words a look-up returned."""
    c = verdict_call(r)
    return f"verdict|{c.name}" if c is not None and quoted_sources(r, c) else None


def verdict_insight(r: Reading) -> CandidateInsight | None:
    """The lesson of a run that ended with a verdict whose reasoning quoted a look-up's words:
    quote the words the verdict rests on; the detail says what it quoted and from where. A run
    that quoted nothing teaches no such lesson: on logs whose reasoning never quotes, the lesson
    would stand on every run with no run that did it."""
    c = verdict_call(r)
    if c is None or not (c.turn.reasoning or "").strip():
        return None
    quoted = quoted_sources(r, c)
    if not quoted:  # a run that quoted nothing shows nothing of quoting: its page note says what it read
        return None
    given = clip(str(c.turn.arguments).strip(), 40)
    said = "; ".join(f"its reasoning quoted \"{clip(p, 80)}\" from {_asked(x)}'s answer (turn {x.n})"
                     for p, x in quoted[:2])
    return make_insight(f"verdict|{c.name}", f"Quote the look-up words a {c.name} verdict rests on",
                        f"Before a {c.name} verdict, find in the look-ups' answers the sentence that each part of the "
                        "claim turns on and quote it in the reasoning; a part no returned sentence speaks to is not "
                        "settled by the look-ups: search for it (another page, the part's own key words) before the "
                        "verdict.", f"In {kind_of_tasks(r)} that end with a {c.name} verdict.",
                        f"turn {c.n}: gave {given}; {said}", r.run.outcome.success)


def verdict_note(r: Reading, c: Call) -> list[str]:
    """Beside the verdict on the page: the reasoning the log records with it, and the look-up whose
    answer holds the words it quoted, or that it quoted none and what the look-ups returned."""
    reasoning = " ".join((c.turn.reasoning or "").split())
    if c is not verdict_call(r) or not reasoning or "\u201d" in reasoning:
        return []
    head = f"The reasoning given with it: \u201c{clip(reasoning, 240)}\u201d; "
    quoted = quoted_sources(r, c)
    if not quoted:
        return [head + f"it quotes no words of a look-up's answer; before it: {_lookups(r, c)}."]
    return [head + "; ".join(f"it quotes \"{clip(p, 80)}\", which {x.name} returned at turn {x.n}"
                             for p, x in quoted[:2]) + "."]
