"""What the successful runs of a task type did, for advice that names a change or a look-up.

A lead that says "the task expected a change the run never made" helps only when it says which
change, and how the runs that succeeded made it: how many successful runs (and distinct tasks)
made that change, and the look-ups most of them made before it. A lead that says the failed
runs made no call at all helps only with what the successful runs called. Both are read from
the run entries' patterns alone (``went-through|<tool>``, ``before|<tool>|<look-up>``,
``did|<tool>``), indexed once per task type, so ``add`` and ``forget`` give the same words as
a full compile.
"""

from __future__ import annotations

from collections import Counter

from . import run_counts

NAMED = 2  # look-ups named per sentence, most often first (each is counted)


class SuccessWays:
    """The successful runs of one task type, indexed by the changes that went through and the
    look-ups made before each change's first call."""

    def __init__(self, successes: list[dict]):
        self.runs = successes
        self.made: dict[str, list[dict]] = {}  # change tool -> successful runs where it went through
        self.before: dict[str, Counter] = {}  # change tool -> look-up -> those runs that made it first
        self.did: Counter = Counter()  # tool -> successful runs that called it without an error
        self.writes: set[str] = set()  # tools some run changed something with
        self.repeated: dict[str, list[dict]] = {}  # change tool -> successful runs where two or more went through
        for r in successes:
            for p in r.get("patterns") or ():
                kind, _, rest = p.partition("|")
                if kind == "went-through":
                    self.made.setdefault(rest, []).append(r)
                    self.writes.add(rest)
                elif kind == "before":
                    tool, _, look = rest.partition("|")
                    self.before.setdefault(tool, Counter())[look] += 1
                elif kind == "did":
                    self.did[rest] += 1
                elif kind == "count":
                    tool, _, n = rest.rpartition("|")
                    if n.isdigit() and int(n) > 1:
                        self.repeated.setdefault(tool, []).append(r)

    def lookups_before(self, tool: str) -> str:
        """", after get_reservation_details (in 5 of them) and get_user_details (in 4)": the
        look-ups more than half of the runs that made ``tool`` had made before it."""
        runs = len(self.made.get(tool, ()))
        counts = self.before.get(tool, Counter())
        common = sorted((k for k, n in counts.items() if 2 * n > runs), key=lambda k: (-counts[k], k))[:NAMED]
        if not common:
            return ""
        said = [k if runs == 1 else f"{k} (in {counts[k]} of them)" if i == 0 else f"{k} (in {counts[k]})"
                for i, k in enumerate(common)]
        return ", calling " + " and ".join(said) + " before it"

    def how_made(self, tool: str, again: bool = False) -> str:
        """How the successful runs of the task type made ``tool``'s change, counted; ``again``: the
        failed runs made one such change and missed another, so say how many made several."""
        made = self.made.get(tool, [])
        if not made:
            return f"no successful run of this task type made a {tool} change, so none shows how"
        said = f"{run_counts.runs_of(made, 'successful runs', paren=True)} of this task type made it"
        if again:
            several = self.repeated.get(tool, [])
            said += f" ({len(several)} of them more than one {tool} change)"
        return said + self.lookups_before(tool)

    def first_lookups(self) -> str:
        """"get_user_details in 80 and get_reservation_details in 61 of the 84 successful runs
        (36 tasks)": the tools no run changed anything with that most successful runs called."""
        total = len(self.runs)
        looks = sorted((k for k, n in self.did.items() if k not in self.writes and 2 * n > total),
                       key=lambda k: (-self.did[k], k))[:NAMED]
        if not looks:
            return ""
        said = " and ".join(f"{k} in {self.did[k]}" for k in looks)
        return f"{said} of the {total}"


def no_call_lead(entry: dict, members: list[tuple[dict, dict]], ways: SuccessWays) -> None:
    """Leads a lesson whose failed runs mostly made no tool call at all with that fact, how many
    successful runs of the task type did the same, and the look-ups most of them made."""
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    idle = [e for e in failed if "idle|none" in (e.get("patterns") or ())]
    looks = ways.first_lookups()
    if not looks or 2 * len(idle) <= len(failed):
        return
    also = sum("idle|none" in (r.get("patterns") or ()) for r in ways.runs)
    entry["guideline"] = (
        f"In {run_counts.part_of(idle, failed)} the agent answered without a single tool call "
        f"({also} of the {len(ways.runs)} successful runs of this task type did so too): look the request's "
        f"records up before answering, as most successful runs did: {looks}. {entry['guideline']}")
