"""The page of programs the shell could not find: which ones its runs met, and, where most runs of
the task type met them, that the machine lacks them whatever a run does (so a new run should not
spend calls trying them). Read from the runs' ``missing|<program>`` patterns and the page's contrast.
"""

from __future__ import annotations

from ..compilers.error_insights import MISSING_PROGRAM_KEY
from ..compilers.insight_words import join


def name_missing(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """The environment lesson of programs the shell could not find names them, as its runs met them
    (``missing|<program>`` patterns): the fact an agent checks first on a new task of the kind."""
    if entry["key"] != MISSING_PROGRAM_KEY:
        return
    programs = sorted({p.split("|", 1)[1] for e, _l in members for p in e.get("patterns") or [] if p.startswith("missing|")})
    if programs:
        entry["guideline"] = entry["guideline"].replace(
            '("command not found")', f'("command not found"; in these runs: {join(programs, 6)})', 1)
        c = entry.get("contrast") or {}
        met, runs = c.get("failed_met", 0) + c.get("success_met", 0), c.get("failed", 0) + c.get("success", 0)
        if 2 * met > runs:  # most runs of the type met it: the machine lacks it, whatever a run does
            entry["guideline"] += (
                f" In {met} of the {runs} runs of this task type the shell could not find a program it was asked to "
                f"run ({c.get('failed_met', 0)} of the {c.get('failed', 0)} failed, {c.get('success_met', 0)} of the "
                f"{c.get('success', 0)} successful): do not count on {join(programs, 6).replace(' and ', ' or ')} in tasks "
                f"of this kind, and take the way without {'it' if len(programs) == 1 else 'them'} from the first call "
                "rather than trying it.")
