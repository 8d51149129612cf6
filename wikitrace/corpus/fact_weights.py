"""How the successful runs' counts weigh a checked fact the failed runs of a lesson share.

checked_facts.lead picks the fact a lesson leads with; a fact that does not separate the outcomes
is still said, with the successful runs' count of the same thing and the one-sided Fisher test's p
for "failed runs met it more often", so the reader weighs it. For a change's arguments or a change
made or missed, successful runs count only where their fact is on a tool the failed runs' facts name.
"""

from __future__ import annotations

from collections import Counter

from . import fact_leads, run_counts
from .fisher import ALPHA, fisher_tails

NAMES_ITEMS = ("arguments", "unexpected-change", "missed-change")
# kinds the compiler checks only on a failed run's answer (compilers/qa_facts.py): a successful run
# never holds one, so a count of successful runs showing it would say nothing
FAILED_ONLY = frozenset({"one-sided", "planned-look-up", "reflected-answer", "opening-form", "named-comparison",
                         "unsupported-comparison", "unread-edit"})


def item_words(about: str) -> str:
    """"seats of book_trip" of "book_trip.seats"; a tool's name as it is."""
    tool, _, arg = about.partition(".")
    return f"{arg} of {tool}" if arg else tool


def leans_to_failure(hit: list[dict], won_hit: list[dict], failed: list[dict], won_runs: list[dict], item: str,
                      kind: str) -> bool:
    """Whether failed runs showed the fact (for ``item``, where the kind names one) in a larger
    share than the successful runs did: only then may it lead unproven."""
    if item and kind in NAMES_ITEMS:
        hit, won_hit = with_item(hit, kind, item), with_item(won_runs, kind, item)
    return len(hit) * len(won_runs) > len(won_hit) * len(failed)


def with_item(runs: list[dict], kind: str, item: str) -> list[dict]:
    """The runs whose facts of ``kind`` name ``item`` (a tool, or tool.argument)."""
    return [r for r in runs if any(fact_leads.group(f) == kind and item in {a.split("@")[0] for a in f.get("about") or []}
                                   for f in r.get("facts") or [])]


def _p_more_in_failed(a: int, b: int, failed: int, succeeded: int) -> str:
    """The one-sided test of the direction a lead claims (failed runs meet it more often), said
    with that direction, whichever way the counts happen to lean."""
    up, _down = fisher_tails(a, b, failed, succeeded)
    return f"one-sided Fisher p = {float(f'{up:.2g}'):g} for \"failed runs met it more often\""


# who ``among`` names when the contrast is with every successful run of the task type (corpus/insights.py)
TYPE_WIDE = "runs of this task type"


def weak_note(hit: list[dict], failed: list[dict], won_hit: list[dict], won_runs: list[dict], among: str,
               item: str, kind: str, minority: bool = False, failed_met: int = 0) -> tuple[str, bool]:
    """How strongly the counts support a lead that does not separate the outcomes, and whether the
    successful runs' count sets it apart after all (the commonest fact can): the same
    fact among the successful runs (for the same argument or tool, where the lead names one).
    ``minority``: the fact covers fewer than half of the failed runs, so it is said as the
    commonest one, and a kind checked only on failed runs is said to have no count to weigh.
    ``failed_met``: the failed runs of the population ``won_runs`` is drawn from (every run that met
    the page's pattern, not only its sources): the test sets like against like, the failed runs
    beyond the sources counted as not showing the fact, which can only raise p."""
    if fact_leads.kind_of(kind) in FAILED_ONLY:
        head = ("It is the commonest checked fact among these failed runs" if minority
                else "It is one run's fact" if len(failed) == 1 else "It is the fact these failed runs share")
        return (f"{head}, not a proven cause: it is checked only on failed runs, so no successful run is counted "
                "against it."), False
    what = ""
    if item and kind in NAMES_ITEMS:
        hit, won_hit, what = with_item(hit, kind, item), with_item(won_runs, kind, item), f" for {item_words(item)}"
    n = len(won_runs)
    total = len(failed) if among == TYPE_WIDE else max(len(failed), failed_met)
    up, _down = fisher_tails(len(hit), len(won_hit), total, n)
    apart = up < ALPHA and len(hit) > 1  # one run is no count
    head = ("The successful runs set it apart" if apart
            else "It is the commonest checked fact among these failed runs, not a proven cause" if minority
            else "It is one run's fact, not a proven cause" if len(failed) == 1
            else "It is the most specific fact these failed runs share, not a proven cause")
    if among == TYPE_WIDE:  # every success of the type: its total and the p move with any added run
        return f"{head}: {run_counts.runs_of(won_hit, 'successful runs of this task type', paren=True)} showed the same{what}.", apart
    p = f" ({_p_more_in_failed(len(hit), len(won_hit), total, n)})" if apart else ""
    return f"{head}: of the {run_counts.count(n, n, 'successful ' + among)}, {len(won_hit)} showed the same{what}{p}.", apart


def aside_note(kind: str, hit: list[dict], failed: list[dict], said: str, won_hit: list[dict], won_runs: list[dict],
                among: str, also: tuple[str, ...] = ()) -> str:
    """A fact most failed runs share that does not lead, with the successful runs' count of it. For
    a change's arguments or a change made or missed, successful runs count only where their fact is
    on a tool the failed runs' facts name (a hand-off summary worded otherwise is no difference in a
    booking's arguments), and the page says which tools. ``also``: other kinds of fact the same runs
    hold, said in ``said`` too; the tools named are those of every kind."""
    tools = sorted(set().union(*(_tools_of(hit, k) for k in (kind, *also) if k in NAMES_ITEMS)))
    won_hit = on_same_tools(hit, won_hit, kind)
    on = f" on {_and(tools)}" if tools else ""
    up, _down = fisher_tails(len(hit), len(won_hit), len(failed), len(won_runs))
    p = "" if among == TYPE_WIDE else f" ({_p_more_in_failed(len(hit), len(won_hit), len(failed), len(won_runs))})"
    if up < ALPHA and len(hit) > 1:  # counted on the same tools only, it may separate after all
        verdict_said = f"it sets them apart{p}, though another fact leads the advice"
    else:  # said plainly: a p-value of a fact that does not separate gives a reader nothing to act on
        verdict_said = "not shown to set failed runs apart"
    if among == TYPE_WIDE:  # every success of the type: its total and the p move with any added run
        return (f"In {run_counts.part_of(hit, failed)} {said}; the same kind of fact{on} held in "
                f"{run_counts.runs_of(won_hit, 'successful runs of this task type', paren=True)}: {verdict_said}.")
    return (f"In {run_counts.part_of(hit, failed)} {said}; the same kind of fact{on} held in "
            f"{run_counts.part_of(won_hit, won_runs, 'successful ' + among, '')}: {verdict_said}.")


def on_same_tools(hit: list[dict], won_hit: list[dict], kind: str) -> list[dict]:
    """The successful runs whose fact of ``kind`` is on a tool the failed runs' facts name, for the
    kinds that name tools; all of ``won_hit`` for the others."""
    tools = _tools_of(hit, kind) if kind in NAMES_ITEMS else set()
    if not tools:  # the facts name no tool: nothing to match them on
        return won_hit
    return [r for r in won_hit if _tools_of([r], kind) & tools]


def _tools_of(runs: list[dict], kind: str) -> set[str]:
    """The tools the runs' facts of ``kind`` name (``tool.argument@place`` or ``tool``)."""
    return {a.split("@")[0].split(".")[0] for r in runs for f in r.get("facts") or []
            if fact_leads.group(f) == kind for a in f.get("about") or []}


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + f" or {names[-1]}"


def top_item(named: Counter | None) -> str:
    """The argument or tool named most often (the first by name on a tie), or ""."""
    return min(named, key=lambda a: (-named[a], a)) if named else ""


def shared_item(named: Counter | None, hit: list[dict]) -> str:
    """The argument or tool named most often when more than half of ``hit`` name it, or ""."""
    top = top_item(named)
    return top if top and 2 * named[top] > len(hit) else ""
