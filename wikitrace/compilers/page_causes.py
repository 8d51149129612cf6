"""The items a compilation page ranks (offline.py, failure_items.py), the phrases both outcomes'
items share (a call in full, the edits between two turns, a call that answered nothing), and one
cause made of errors that are copies of one defect: the same tool answered with one error around
whatever each call sent."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .changes import Edit, edit_of
from .page_items import silent_items
from .reading import Call, Reading, full_arguments
from .schema import Evidence
from .text import clip, quote_of


@dataclass
class Item:
    """A candidate decision or cause: the higher ``rank``, the more it says about the outcome."""

    rank: float
    evidence: Evidence
    kind: str  # "write" | "recovery" | "lookup" | "error" | "loop" | "idle"
    call: Call | None = None
    got_past: bool = False  # a failed look-up that a later call of the same tool got past
    never_got_past: bool = False  # an error no later call got past (got_past.py)
    otherwise: bool = False  # an error the run got past with another look-up, then a change (got_past.py)
    covers: tuple[int, ...] = ()  # the turns of calls it sums up without citing each (they are not left out)


def answer_text(c: Call) -> str:
    return " ".join((c.turn.result or "").split())


def _error_form(c: Call) -> str:
    """An error's first sentence with the text the call sent put as …: ``Could not find […].`` for
    every name a search tool could not find, so errors that differ only by what was sent match."""
    answer = answer_text(c)
    first = re.split(r"(?<=[.!?])\s", answer, maxsplit=1)[0]
    sent = " ".join(c.turn.arguments.split()) if isinstance(c.turn.arguments, str) else ""
    return first.replace(sent, "…") if sent.strip() else first


def same_error_once(items: list[Item], afters: dict[int, str]) -> list[Item]:
    """Errors no later call got past, of one tool answered with one error (the same text, or the
    same first sentence around what each sent) but sent with different arguments, told as one
    cause with all their turns: five copies of one defect read as five causes. A shape every
    argument shares is said: the tool's own call form inside it (``Search[``: several calls
    written as one), or quote marks around it."""
    groups: dict[tuple[str, str], list[Item]] = {}
    for i in items:
        if i.kind == "error" and i.call is not None and len(i.evidence.turns) <= 2 and i.never_got_past:
            groups.setdefault((i.call.name, _error_form(i.call)), []).append(i)
    for (name, form), group in groups.items():
        if len(group) < 2:
            continue
        group.sort(key=lambda i: i.call.n)
        ns = [i.call.n for i in group]
        shown = ns if len(ns) <= 6 else ns[:5] + [ns[-1]]
        listed = ", ".join(map(str, ns[:-1])) + f" and {ns[-1]}"
        sent = [i.call.turn.arguments for i in group]
        texts = all(isinstance(a, str) and a.strip() for a in sent)
        packed = next((f"{name}{mark}" for mark in "[(" if texts and all(f"{name}{mark}" in a for a in sent)), None)
        quoted = texts and all(a.strip()[0] in _QUOTES and a.strip()[-1] in _QUOTES and len(a.strip()) > 2
                               for a in sent)
        last = group[-1].call
        same = len({answer_text(i.call) for i in group}) == 1
        notes = [f"Each of these arguments holds `{packed}` itself: several calls were written into one."] if packed \
            else [f"Each of these arguments was sent inside quote marks, as {' '.join(sent[-1].split())}."] if quoted else []
        merged = Item(max(i.rank for i in group), Evidence(
            decision=f"Called {name} {len(ns)} times with different arguments (turns {listed}), and each was "
                     + ("answered with the same error" if same else
                        f"answered with an error that reads {json.dumps(clip(form, 120), ensure_ascii=False)} "
                        "around what it sent") + afters[last.n],
            support=f"The environment answered with an error each time: {clip(last.turn.result)}",
            turns=shown, quote=quote_of(last.turn.result), notes=notes), "error", last, never_got_past=True)
        items = [i for i in items if i not in group] + [merged]
    return items


_QUOTES = "\"'\u201c\u201d\u2018\u2019`"



def _in_quote_marks(text) -> bool:
    return isinstance(text, str) and len(text.strip()) > 2 and text.strip()[0] in _QUOTES and text.strip()[-1] in _QUOTES


def quote_marks_note(err: Call, fix: Call, between: list[Call] = ()) -> list[str]:
    """For a text call that failed and a retry that went through: the failed one sent its text
    inside quote marks and the retry did not (the marks, not the words, may be what the tool
    could not find). Not said when a call that failed between them (``between``) sent none either:
    then the marks were not what the tool refused."""
    if not _in_quote_marks(err.turn.arguments) or not isinstance(fix.turn.arguments, str) \
            or _in_quote_marks(fix.turn.arguments) or any(q in fix.turn.arguments for q in _QUOTES) \
            or any(not _in_quote_marks(c.turn.arguments) for c in between):
        return []
    return [f"The call that failed sent its text inside quote marks, as {' '.join(err.turn.arguments.split())}; "
            "the one that went through sent none."]


def call_line(call: Call) -> str:
    """The call, and when the log kept the text as sent (an action after blank lines) that text
    quoted too: what a harness refused may be its form, not its arguments."""
    sent = call.turn.extra.get("sent")
    return f"{call.name}({full_arguments(call.turn)})" + (f"\nsent as: {json.dumps(sent)}" if isinstance(sent, str) else "")


def edits_between(calls: list[Call], start: int, end: int) -> list[tuple[Call, Edit]]:
    """The file edits that went through between two turns."""
    return [(c, e) for c in calls if start < c.n < end and c.writes and not c.error and (e := edit_of(c.turn))]


def edits_phrase(edits: list[tuple[Call, Edit]]) -> str:
    """``Edit changed `a.py` (in `total`) at turns 6 and 8``: edits of one place told once."""
    places: dict[tuple[str, str], list[int]] = {}
    for c, e in edits:
        places.setdefault((c.name, e.phrase()), []).append(c.n)
    parts = [f"{name} changed {where} at turn{'s' if len(ns) > 1 else ''} "
             + (", ".join(map(str, ns[:-1])) + f" and {ns[-1]}" if len(ns) > 1 else str(ns[0]))
             for (name, where), ns in list(places.items())[:3]]
    return "; ".join(parts) + (f" (and {len(places) - 3} more places)" if len(places) > 3 else "")


def silent(r: Reading, rank: float, context: bool = False) -> list[Item]:
    """Calls that sent text and answered nothing (a think tool), with the text they hold;
    ``context``: on a failure page, shown as context, not as a cause."""
    return [Item(rank + c.n / 10_000, Evidence(decision=decision, support=support, turns=[c.n], quote=quote,
                                               context=context),
                 "note", c) for c, decision, support, quote in silent_items(r)]
