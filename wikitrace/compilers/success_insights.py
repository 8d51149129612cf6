"""The lessons a successful run teaches: the way it settled its task (``procedure|…``), or how it
passed without a change (``answer-from``: a question, a refusal; ``direct``: an answer needing no
call), plus the first error it got past, the confirmation rule it kept and a program it worked
without (the environment fact failed runs met too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .error_insights import error_insight, missing_programs
from .expected_calls import expected_changes, expected_lookups, unasked_hand_off
from .insight_parts import kind_of_tasks, lookups_before, make_insight, verb
from .insight_words import is_hand_off, join, last_said
from .option_choices import option_insight
from .procedure_lessons import procedure_insight, procedure_key
from .reading import Reading
from .rule_lessons import confirmation, hand_off_insight
from .rules import has_rules
from .schema import CandidateInsight
from .verdict_evidence import verdict_insight

if TYPE_CHECKING:
    from .page_causes import Item


def _answered(r: Reading) -> list:
    """The agent's messages a person's reply came right after (none in a log without a person in it)."""
    if not r.has_interlocutor:
        return []
    return [t for t in r.run.turns if t.type == "message" and t.role == "assistant" and t not in r.harness
            and isinstance(t.content, str) and t.turn + 1 in r.replies]


def _asked_the_user(r: Reading) -> int:
    """The agent's answered messages that hold a question."""
    return sum("?" in t.content for t in _answered(r))


def _passed_by_asking(r: Reading) -> bool:
    """A run that looked nothing up and changed nothing, and either asked the user or had a task
    whose expected calls were look-ups only: it passed because the task needed no change. Its log
    shows no step another run could copy, and what the task's failed trials broke is on their own
    pages; a lesson drawn from it ("ask, and change nothing") would be contradicted by its own
    counts, as failed runs ended just so as often."""
    return bool(_asked_the_user(r)) or (bool(expected_lookups(r)) and expected_changes(r) == [])


def unchanged(r: Reading) -> bool:
    """A run that got no change through but hand-offs its task did not expect: it passed or failed
    by what it said, as one that changed nothing (its source line names the hand-off)."""
    return all(not c.writes or c.error or unasked_hand_off(r, c) for c in r.calls)


def silent(r: Reading) -> bool:
    """A run that changed nothing (``unchanged``) and looked nothing up: read as one that made no call."""
    return unchanged(r) and all(c.writes for c in r.calls)


def success_insights(r: Reading, chosen: list["Item"]) -> list[CandidateInsight]:
    """What a successful run teaches: how it settled the task (or that it needed no change), the
    error it got past, the rule it kept, and the missing program it worked without."""
    quiet = silent(r)
    handed = [c for c in r.calls if c.writes and not c.error and is_hand_off(c)]
    also = (f"; handed off with {handed[-1].name} at turn {handed[-1].n}, which the task did not expect"
            if handed else "")
    if quiet and _passed_by_asking(r):
        return []
    if quiet:
        return [make_insight("direct", "Answer directly when nothing needs checking",
                        "When the request needs nothing from the environment, answer it directly.",
                        f"In {kind_of_tasks(r)} that ask nothing of the tools.",
                        f"answered without {'a look-up' if r.calls else 'a tool call'}{also}" + last_said(r), True)]
    out: list[CandidateInsight] = []
    writes = [c for c in r.calls if c.writes and not c.error]
    if writes and all(unasked_hand_off(r, w) for w in writes):
        writes = []  # hand-offs the task's expected calls do not hold: it passed by changing nothing
    if writes and is_hand_off(writes[-1]):
        out.append(hand_off_insight(r, writes[-1], True))
    elif writes:
        # a name no look-up held and the task text never gave passed, but the log shows no way to it another
        # run could copy (a guess, or what the model knew): failed runs ending so teach the check, this run
        # no procedure
        if not (procedure_key(r) or "").endswith(":own"):
            out.append(procedure_insight(r))
    else:
        # a success whose every call failed still names the tools it used; a hand-off is no look-up (a run
        # with none is ``silent`` above)
        reads = [c for c in r.calls if not c.writes]
        looks = sorted(lookups_before(r, None) or dict.fromkeys(verb(c) for c in reads))[:3]
        # a success that changed nothing: a question, or a change the rules ruled out (both end here)
        # a refusal needs rules to rest on and a person to tell: a coding or QA log without them hears of neither
        guideline = (f"When the look-ups show the request needs no change (a question) or allows none (a change "
                     f"the rules rule out), answer from what {join(looks, 3)} returned, say why when it is a "
                     "refusal, and change nothing." if r.has_interlocutor and has_rules(r) else
                     f"When the look-ups show the request needs no change (a question), answer from what "
                     f"{join(looks, 3)} returned and change nothing.")
        out.append(make_insight("answer-from", f"Answer from {join(looks, 2)} when nothing should change",
                           guideline, f"In {kind_of_tasks(r)} that are settled without a change.",
                           f"answered after {len(reads)} look-up call{'s' if len(reads) != 1 else ''}" + also
                           + last_said(r), True))
    option = option_insight(r, True) or verdict_insight(r)  # the options it chose; the words a verdict quoted
    if option is not None and writes:
        out.append(option)
    # a way that ends on the failing test command passing (``+tested``) is the fix-and-rerun loop already
    rerun = any(i.key.startswith("procedure|") and i.key.endswith("+tested") for i in out)
    for i in chosen:  # the first error the run got past
        if i.kind == "recovery" and i.call is not None:
            err = next((c for c in reversed(r.calls) if c.n < i.call.n and c.error and c.name == i.call.name), None)
            if err is not None:
                lesson = error_insight(r, err)
                if not (rerun and lesson.key.endswith("|failing tests")):
                    out.append(lesson)
                break
    for w in reversed(writes):
        insight = confirmation(r, w)
        if insight:
            out.append(insight)
            break
    missing = next((c for c in r.calls if c.error and missing_programs(c)), None)
    if missing is not None:  # the environment fact the failed runs met too: its page counts both
        out.append(error_insight(r, missing))
    return out
