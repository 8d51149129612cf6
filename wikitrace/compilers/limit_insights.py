"""The lesson of a failed run that a harness limit (steps, cost, context) ended after it edited a file.

An edit is settled later (a submission, the harness collecting the patch); a run stopped before
that did not fail by what its edit wrote but by running out, so an edit-checking lesson misreads
it: what it can teach is where its calls went before the limit (calls that answered with an
error, look-ups, the edit coming late) and that the call settling the task never came. A change
that takes effect when made (a booking, a cancellation) is settled by the call itself, and a
patch the harness submitted was collected: a limit after those ended nothing left undone, so
their lesson stays the check before the change.
"""

from __future__ import annotations

from ..runs.harness import AUTOSUBMITTED
from .changes import edit_of
from .insight_parts import kind_of_tasks, make_insight, verb
from .insight_words import join
from .reading import Call, Reading, harness_reason
from .schema import CandidateInsight
from .text import clip

LIMIT_CHANGED = "stopped|changed"  # also the run pattern its contrast is counted on (run_patterns)


def unsettled_edit(r: Reading, writes: list[Call]) -> bool:
    """The harness stopped the run after its last change, a file edit, without collecting it."""
    reason = harness_reason(r)
    return (reason is not None and bool(writes) and AUTOSUBMITTED not in reason
            and edit_of(writes[-1].turn) is not None)


def _names(calls: list[Call]) -> str:
    return join(list(dict.fromkeys(verb(c) for c in calls)), 3)


def spent_detail(r: Reading, writes: list[Call]) -> str:
    """Where the run's calls went: those before its first change that went through, split into
    errors and look-ups, and what came after its last change."""
    first, last = writes[0], writes[-1]
    before = [c for c in r.calls if c.n < first.n]
    errors = [c for c in before if c.error]
    looks = [c for c in before if not c.error and not c.writes]
    parts = ([f"{len(errors)} answered with an error ({_names(errors)})"] if errors else []) + (
        [f"{len(looks)} looked something up ({_names(looks)})"] if looks else [])
    after = [c for c in r.calls if c.n > last.n]
    n = len(r.calls)
    text = (f"stopped by the harness ({clip(harness_reason(r) or '', 80)}) after {n} call{'s' if n != 1 else ''}; "
            f"{len(before)} came before its first change ({verb(first)}, turn {first.n})"
            + (": " + ", ".join(parts) if parts else ""))
    if not after:
        return text + f"; it made no call after its last change (turn {last.n})"
    return text + (f"; {len(after)} call{'s' if len(after) != 1 else ''} after its last change (turn {last.n}), "
                   f"none of them a change that went through")


# the clause blaming the calls spent: the insight layer drops it where the runs' logs show their
# successful trials made as many model calls, each cheaper (corpus/stop_counts.py)
WASTED_CALLS = " instead of spending calls on commands that fail or on looking around"


def limit_insight(r: Reading, writes: list[Call]) -> CandidateInsight:
    """A failed run the harness stopped after ``writes`` (its calls that went through and changed state)."""
    return make_insight(
        # the calls before the change are where such runs lost their budget as often as those after it
        LIMIT_CHANGED, "Reach the change early and settle it before the harness stops the run",
        "A harness limit (steps, cost or context) ends a run whether or not its task is settled: go to what the "
        f"task names early (search for it when its place is not known){WASTED_CALLS}, and once the change is "
        "made and checked, make the call that settles the task instead of looking further.",
        f"In {kind_of_tasks(r)} that a harness stops at a limit (steps, cost or context), from the first call on.",
        spent_detail(r, writes), False)
