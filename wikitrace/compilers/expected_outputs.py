"""What the task expected the agent to tell the user, and whether it did.

Chat benchmarks judge a run by its final records and by the values the agent had to say (tau-bench
keeps them as ``info.task.outputs``; the importer puts them in ``task.metadata["expected_outputs"]``).
A run can make every expected change and still fail because it never said the total the user asked
for; a trial with the same changes then succeeds only by saying it. So the deciding fact is read
from the log itself: each expected value, the first agent message that stated it as a term of its
own (a number in any of its usual spellings: "23,553", "$23553.00"), and, for one never said, the
first tool answer that held it (the run had the value and did not give it). A log that records no
expected outputs gets nothing here.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache

from ..runs.model import Turn
from .insight_words import join
from .reading import Reading, is_harness_turn
from .schema import KeyFact

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_GROUPED = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


@dataclass(frozen=True)
class Told:
    value: str
    turn: int | None  # the first agent message that said it; None when none did
    held: tuple[str, int] | None = None  # (tool, turn) of the first answer that held a value never said


def expected_outputs(r: Reading) -> list[str] | None:
    """The values the log records the task expected the agent to say, or None when it records none."""
    raw = (r.run.task.metadata or {}).get("expected_outputs")
    try:
        values = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if not isinstance(values, list) or not values or not all(isinstance(v, str) and v.strip() for v in values):
        return None
    return [v.strip() for v in values]


@lru_cache(maxsize=256)  # a task's few values, asked of every message of its trials
def _pattern(value: str) -> re.Pattern:
    """The value as a term of its own: a number with or without trailing zero decimals and not
    inside a longer number; a text as whole words."""
    if _NUMBER.fullmatch(value):
        whole, _, decimals = value.partition(".")
        tail = r"(?:\.0+)?" if not decimals.strip("0") else r"\." + re.escape(decimals) + r"0*"
        return re.compile(r"(?<![\d.])" + re.escape(whole) + tail + r"(?!\.?\d)")
    return re.compile(r"(?<!\w)" + re.escape(value.casefold()) + r"(?!\w)")


def _says(text: str | None, value: str) -> bool:
    return bool(text) and _pattern(value).search(_GROUPED.sub("", text.casefold())) is not None


def _agent_said(t: Turn) -> bool:
    return t.type == "message" and t.role == "assistant" and not is_harness_turn(t)


def told(r: Reading) -> list[Told]:
    """Each expected value with where the run said it, or held it without saying it."""
    values = expected_outputs(r)
    if values is None:
        return []
    memo = r.memo.get("expected_outputs.told")
    if memo is not None:
        return memo
    out = []
    for v in values:
        said = next((t.turn for t in r.run.turns if _agent_said(t) and _says(t.content, v)), None)
        held = None if said is not None else next(
            ((c.name or "a tool", c.n) for c in r.calls if not c.error and _says(c.turn.result, v)), None)
        out.append(Told(v, said, held))
    r.memo["expected_outputs.told"] = out
    return out


def told_values(r: Reading) -> list[str]:
    """The expected values the run said, in the task's order (what a trial record keeps)."""
    return [t.value for t in told(r) if t.turn is not None]


def untold_fact(r: Reading) -> KeyFact | None:
    """A failed run's fact: the expected values no agent message said, where the run had them."""
    found = told(r)
    missing = [t for t in found if t.turn is None]
    if not missing:
        return None
    one = len(missing) == 1
    text = (f"The task expected the agent to tell the user {join([t.value for t in missing], 4)} (the log records "
            f"{'it' if one else 'them'} among the task's expected outputs); no agent message of the run wrote "
            f"{'it' if one else 'them'}")
    turns = []
    said = [t for t in found if t.turn is not None]
    if said:
        text += f", though it wrote {join([f'{t.value} (turn {t.turn})' for t in said], 3)}"
        turns += [t.turn for t in said]
    held = [t for t in missing if t.held is not None]
    if held:
        text += "; " + "; ".join(f"{t.held[0]}'s answer at turn {t.held[1]} held {t.value}" for t in held[:3])
        turns += [t.held[1] for t in held[:3]]
    # words the agent sent beside a call (a chat message holding a tool call) are not a message the user reads
    beside = next(((c, t.value) for t in missing for c in r.calls if _says(c.turn.reasoning, t.value)), None)
    if beside is not None:
        c, value = beside
        text += (f"; the words it sent beside its {c.name} call at turn {c.n} gave {value}, but words sent beside a "
                 "call are no message to the user")
        turns.append(c.n)
    other = other_figures(r, missing)
    if other is not None:  # it told a figure, a wrong one: the changes or the sum behind it differed
        text += f"; its report at turn {other[0]} gave {join(other[1], 2)} instead"
        turns.append(other[0])
    # counted across runs (corpus/untold_counts.py): had it in a tool's answer, told another figure, or neither
    about = [w for w, hit in (("held", held), ("other", other is not None)) if hit]
    return KeyFact(text + ".", sorted(set(turns)), UNTOLD_FACT, about)


UNTOLD_FACT = "untold"  # the kind of ``untold_fact``'s fact


_FIGURE = re.compile(r"\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")  # a whole word: not HAT311, not 2024-05-15


def other_figures(r: Reading, missing: list) -> tuple[int, list[str]] | None:
    """(turn, figures) of the agent's report after its last call when it wrote other figures of the
    size of a number the task expected it to say (a tenth to ten times it): the run told the user a
    total, a wrong one, rather than none."""
    from .insight_words import report_message

    plain = [str(t.value).replace(",", "") for t in missing]
    wanted = [float(v) for v in plain if re.fullmatch(r"-?\d+(?:\.\d+)?", v)]
    said = report_message(r) if wanted else None
    if said is None:
        return None
    figures = []
    for word in (said.content or "").split():
        word = word.strip(".,;:!?()\"'*")
        if not _FIGURE.fullmatch(word):
            continue
        x = float(word.lstrip("$").replace(",", ""))
        if any(w and x != w and 0.1 * abs(w) <= abs(x) <= 10 * abs(w) for w in wanted) and word not in figures:
            figures.append(word)
    return (said.turn, figures[:2]) if figures else None
