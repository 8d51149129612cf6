"""Page items the offline compiler adds beside the calls it ranks (offline.py): what a call's
diff answer changed, a program the environment lacks, and the text of a call that answered
nothing (a note the agent wrote to itself reads as its reasoning before the next change).

Each phrase states what the log shows, so it holds whatever the format: a diff's file
headers, the shell's "not found" line, an empty answer to a call that sent text.
"""

from __future__ import annotations

import json
from functools import lru_cache

from .arguments import _parsed
from .changes import diff_files
from .error_insights import missing_programs
from .insight_words import expected_answer, join
from .page_notes import reason_note
from .reading import Call, Reading, _occurs, command_of, full_arguments, harness_reason, runs_a_command
from .schema import Evidence
from .text import clip, quote_of, signature

DIFF_FILES_SHOWN = 4


def diff_phrase(c: Call) -> str:
    """``, which answered with a diff of `a.py` (new file) and `b.py``` when the call's answer is a
    git diff (a submit), else empty: the files are what the run handed in."""
    files = diff_files(c.turn.result)
    if not files:
        return ""
    named = [f"`{path}`" + (" (new file)" if new else "") for path, new in files]
    return ", which answered with a diff of " + join(named, DIFF_FILES_SHOWN)


def lacking_support(c: Call, changes_above: bool) -> str | None:
    """The support of an error saying the shell has no such program, or None for any other error.
    A missing program is a fact of the machine the run ran on (runs that succeeded may meet it
    too), so a failure page ranks the run's own changes above it and says so."""
    programs = missing_programs(c)
    if not programs:
        return None
    return (f"The shell could not find {join([f'`{p}`' for p in programs])}: {clip(c.turn.result)}"
            + (" A program the environment lacks says where the run ran, not what it changed, so the run's "
               "changes are ranked above it." if changes_above else ""))


def _text_sent(c: Call) -> str | None:
    """The one piece of text a call sent: its plain-string argument, or the only string value of
    its arguments; None for a command line or a call with several values."""
    if runs_a_command(c.turn):
        return None
    args = c.turn.arguments
    if isinstance(args, dict) and len(args) == 1:
        args = next(iter(args.values()))
    if not isinstance(args, str) or not args.strip():
        return None
    return args


def answered_nothing(c: Call) -> bool:
    """A call that sent text and got nothing back (a ``think`` tool): its text is all it holds."""
    return not c.error and not c.writes and not (c.turn.result or "").strip() and _text_sent(c) is not None


def silent_items(r: Reading) -> list[tuple[Call, str, str, str]]:
    """(call, decision, support, quote) for the last call that answered nothing before each change
    (and before the end), quoting what it sent and naming that change: what the agent wrote itself
    before acting."""
    out, silent = [], [c for c in r.calls if answered_nothing(c)]
    for i, c in enumerate(silent):
        nxt = next((w for w in r.calls if w.n > c.n and w.writes and not w.error), None)
        later = silent[i + 1] if i + 1 < len(silent) else None
        if later is not None and (nxt is None or later.n < nxt.n):
            continue  # of the notes before one change (or the end), the last one is what the agent acted on
        out.append((c, f"Called {c.name} at turn {c.n}, which returned nothing"
                    + (f"; the next change that went through was {nxt.name} at turn {nxt.n}." if nxt
                       else "; no change went through after it."),
                    "Its text, quoted below, is all the call holds: what the agent wrote there before going on.",
                    quote_of(_text_sent(c), 240)))
    return out


FIELDS_WIDTH = 320


@lru_cache(maxsize=256)  # trials of a task get the same answers to the same look-ups
def shown_answer(result: str | None) -> str:
    """What a call returned, in a phrase: for a JSON object its plain top-level fields (the cabin,
    the status, the insurance a rule hinges on sit after long nested lists, past any clipped
    head), else the clipped text."""
    parsed = _parsed(result or "")  # the argument checks' parse of the same answer
    if isinstance(parsed, dict):
        plain = {k: v for k, v in parsed.items() if isinstance(v, (str, int, float, bool)) or v is None}
        kept: dict = {}
        width = 2  # of json.dumps(kept): the braces, each field as "key": value, ", " between fields
        for k, v in plain.items():
            width += len(json.dumps({k: v}, ensure_ascii=False)) - 2 + (2 if kept else 0)
            if width > FIELDS_WIDTH:
                break
            kept[k] = v
        if kept:
            which = "its plain top-level fields" if len(kept) == len(plain) else "the first of its plain top-level fields"
            return f"an object; {which}: {json.dumps(kept, ensure_ascii=False)}"
    return clip(result)


def short_call(call: Call, limit: int = 100) -> str:
    return f"{call.name}({clip(full_arguments(call.turn), limit)})"


def label(call: Call, limit: int = 100) -> str:
    """A call as a reader knows it: a shell command as itself, any other call with its arguments."""
    command = command_of(call.turn)
    if command is not None and runs_a_command(call.turn):
        return f"`{clip(command, limit)}`"
    return short_call(call, limit)


FOUND_SHOWN = 4
FOUND_NEAR_ANSWER = 3


def looked_up(r: Reading, before: int) -> list[Call]:
    """The look-ups before a turn that went through and returned something, each distinct call once
    (its first time), in order."""
    found = [c for c in r.calls if c.n < before and not c.error and not c.writes and (c.turn.result or "").strip()]
    return list({signature(c.turn): c for c in reversed(found)}.values())[::-1]


def found_notes(calls: list[Call]) -> list[str]:
    """What look-ups returned, each from its start: the pages an answer rests on, or the facts a
    stopped run already held."""
    return [f"{label(c, 60)} at turn {c.n} returned: \"{quote_of(c.turn.result, 240)}\"" for c in calls]


def halted_evidence(r: Reading, writes: list[Call]) -> Evidence | None:
    """A run the harness ended before any change (an answer, a booking) went through: the ending,
    with what the look-ups that went through had returned by then, so a reader sees whether
    the run already held what it needed and what it was doing when stopped."""
    reason = harness_reason(r)
    if reason is None or writes or not r.calls:
        return None
    last = r.calls[-1]
    every = looked_up(r, last.n + 1)
    gold = (expected_answer(r) or "").lower()
    # the first pages, what it had learnt before it got stuck, and any that held the expected answer
    found = [c for k, c in enumerate(every) if k < FOUND_SHOWN or gold and _occurs(gold, c.turn.result.lower())]
    notes = found_notes(found)
    listed = ("What the look-ups that went through returned, each from its start, is listed below."
              if len(found) == len(every) else
              f"What {len(found)} of the {len(every)} look-ups that went through returned (the first "
              f"{FOUND_SHOWN}{', and each that held the expected answer' if len(found) > FOUND_SHOWN else ''}), "
              "each from its start, is listed below.")
    return Evidence(
        decision=f"The harness ended the run after {len(r.calls)} call{'s' if len(r.calls) != 1 else ''}, "
                 + ("before any answer was given." if expected_answer(r) is not None
                    else "before any state-changing call went through."),
        support=f"The harness stopped the run: {reason}. "
                + (listed if found else "No look-up had gone through."),
        turns=[c.n for c in found if c is not last] + [last.n], notes=notes + reason_note(r, last))
