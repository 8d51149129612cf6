"""Which errors a run got past, and the call that did: worked out once per run, read by the
failure causes (failure_items.py), the In short facts (in_short.py) and the lessons
(run_insights.py, success_insights.py).

An error is got past when a later call of the same program (or tool) went through: the
command ran, the retry with fixed arguments was accepted. A look-up that failed (a file or
folder that is not there, a shell line that never ran, a search the tool refused) is also got past when the run found its way another way: a later
look-up went through and a change that went through followed it. Such an error ended
nothing, so it ranks below the run's own changes and teaches no lesson of its own. Failing
tests and a program the machine lacks are got past only by that program going through; so is
any error of a call that changes something (a script run, an edit, a booking).
"""

from __future__ import annotations

from dataclasses import dataclass

from .changes import what_ran
from .error_insights import missing_programs, tests_failed
from .page_items import answered_nothing
from .reading import Call, Reading

_MEMO = "got_past"


@dataclass(frozen=True)
class Past:
    """How the run got past one error: ``by`` went through after it; ``then`` is the change that
    followed when ``by`` is a look-up of another program (None when ``by`` ran the same one)."""

    by: Call
    then: Call | None = None

    @property
    def otherwise(self) -> bool:
        return self.then is not None


def _reached_nothing(c: Call) -> bool:
    """A failed look-up (a read, a listing, a search: a call that changes nothing), so another
    look-up may reach what it was for; not a program the machine lacks, nor a test run's report
    of failing tests (the tests' verdict, which only that run passing answers)."""
    return not c.writes and not missing_programs(c) and not tests_failed(c)


def got_past(r: Reading) -> dict[int, Past]:
    """Turn of each error the run got past -> how; one backward pass over the calls."""
    if _MEMO in r.memo:
        return r.memo[_MEMO]
    out: dict[int, Past] = {}
    next_of: dict[str, Call] = {}  # program -> the first later call of it that went through
    look: Call | None = None  # the first later look-up that went through
    change: Call | None = None  # the first later change that went through
    for c in reversed(r.calls):
        ran = what_ran(c.turn)
        if c.error:
            same = next_of.get(ran)
            if same is not None:
                out[c.n] = Past(same)
            elif look is not None and change is not None and look.n < change.n and _reached_nothing(c):
                out[c.n] = Past(look, change)
            continue
        next_of[ran] = c
        if c.writes:
            change = c
        elif not answered_nothing(c):
            look = c
    r.memo[_MEMO] = out
    return out
