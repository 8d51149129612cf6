"""The runs that never told the user a value their task expected, told apart by what their pages show.

"Tell the user the value as soon as you have it" fits a run that had the value in a tool's answer
and never wrote it in a message; most such runs never had it at all (they made no call, or worked
out another figure), and some told the user a wrong figure. Each failed run's page checks which
(compilers/expected_outputs.py ``untold_fact``: its fact's ``about`` says "held" or "other"); the
lesson on untold values counts its failed runs by that, so its advice is read against what they did.
"""

from __future__ import annotations

from ..compilers.expected_outputs import UNTOLD_FACT
from ..compilers.missed_insight import UNTOLD
from . import run_counts

SHOWN = 3  # runs named per part


def _checked(run: dict) -> set[str] | None:
    """What the run's page found of its untold value ("held", "other"), or None when its page has
    no such fact (a model's page may leave it out)."""
    found = [set(f.get("about") or ()) for f in run.get("facts") or () if f.get("kind") == UNTOLD_FACT]
    return set().union(*found) if found else None


def _steps(runs: list[dict]) -> str:
    return run_counts.named([r["step"] for r in runs[:SHOWN]], len(runs))


def split(entry: dict, failed: list[dict]) -> None:
    """Appends to the untold lesson's guideline how its type's failed runs that met it stand: those
    that had the value in a tool's answer, those that told another figure, those that had it nowhere
    (and how many of these made no call); and, when the last are most of them, to work the value out
    before telling it. ``failed``: the failed runs of the type that met the pattern."""
    if entry["key"] != UNTOLD or len(failed) < 2:
        return
    checked = [(r, _checked(r)) for r in failed]
    held = [r for r, c in checked if c is not None and "held" in c]
    other = [r for r, c in checked if c is not None and "other" in c and "held" not in c]
    rest = [r for r, c in checked if c is not None and not c & {"held", "other"}]
    unchecked = [r for r, c in checked if c is None]
    idle = [r for r in rest if "idle|none" in (r.get("patterns") or ())]
    parts = []
    if held:
        parts.append(f"{run_counts.runs_of(held)} had it in a tool's answer and never wrote it in a message "
                     f"({_steps(held)})")
    if other:
        parts.append(f"{run_counts.runs_of(other)} told the user another figure ({_steps(other)})")
    if rest:
        parts.append(f"{run_counts.runs_of(rest)} had it in no tool's answer ({_steps(rest)})"
                     + (f", {len(idle)} of them with no tool call at all" if idle else ""))
    if unchecked:
        parts.append(f"{run_counts.runs_of(unchecked)} whose page does not say ({_steps(unchecked)})")
    said = (f"Of the {run_counts.runs_of(failed, 'failed runs')} of this task type that never told the user a value "
            f"the task expected, {'; '.join(parts)}.")
    if 2 * len(rest) > len(failed):
        said += (" Before telling a value, work it out from the records looked up, and check it against what the "
                 "request asks: most of these runs never had it to tell.")
    entry["guideline"] = f"{entry['guideline'].rstrip()} {said}"
