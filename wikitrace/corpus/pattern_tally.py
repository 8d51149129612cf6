"""A task type's pattern counts, kept between commands of one corpus.

Gathering the insight layer counts, per task type, the runs of each outcome that met each
pattern (with the choices they faced, corpus/choices.py), in the order the patterns were
first met, lists the runs (and the distinct tasks) that met the patterns lessons are about
(the failed runs among them are named on the insight pages, run_counts.counted_runs), and collects the words of each task's first messages (corpus/applies.py ``Openings``) and the values the records its runs looked up hold (corpus/rule_quote.py ``held``), and each run's patterns digest (the same-task memo's key, corpus/same_task_memo.py). Counted again from
every run, that is a pass over every pattern of every run of the type, which every ``add``
would pay for one new run. Here the counts are kept in ``.wikitrace/pattern-tally.json``
beside the corpus.json they were counted from (its sha256), and an add counts only its new
runs on top of them.

Kept counts are used only when they are exactly what counting again would give: the file
belongs to the corpus.json the command started from, the code that counted is this code,
the runs counted are the type's first runs (in step order) and all of them are carried over
unchanged, every other run of the type comes after them, and the patterns whose runs are
listed include every one asked for now. Anything else (a run compiled again or forgotten, a
new lesson key, a corpus.json another command rewrote, a damaged file) counts the type
again from its runs. The file holds only what corpus.json holds already (patterns and step
ids), and each command that rewrites corpus.json after gathering writes it anew.
"""

from __future__ import annotations

import hashlib
import json
import marshal
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..code_digest import code_digest
from . import choices, layout
from .applies import task_of
from .rule_quote import hold

FILE = "pattern-tally.json"
_FORMAT = "wikitrace-pattern-tally/3"  # 2: the values the records hold; 3: each run's pattern digest


def patterns_digest(patterns: list[str]) -> str:
    """A run's patterns as one digest (marshal's first format: each string with its length, no
    references), which the same-task memo keys its comparisons by: made once per run here and
    kept for the runs an ``add`` carries over."""
    return hashlib.sha256(marshal.dumps(patterns, 0)).hexdigest()


@dataclass
class KindTally:
    """One task type's counts: outcome -> pattern -> runs, the patterns in the order first met,
    and the steps (in step order) of the successful runs that met each ``wanted`` pattern, of
    the other runs that met each wanted procedure, and of the failed runs that met each wanted
    pattern."""

    wanted: frozenset[str]
    counted: dict[str, Counter] = field(default_factory=dict)
    first_met: dict[str, None] = field(default_factory=dict)
    won: dict[str, list[str]] = field(default_factory=dict)
    lost: dict[str, list[str]] = field(default_factory=dict)
    failed: dict[str, list[str]] = field(default_factory=dict)  # wanted -> steps of the failed runs meeting it
    asks: dict[str, set[str]] = field(default_factory=dict)  # task -> words of its trials' first messages
    requests: dict[str, str] = field(default_factory=dict)  # step -> its first message (applies.Openings)
    tasks_met: dict[str, dict[str, set[str]]] = field(default_factory=dict)  # wanted -> outcome -> tasks meeting it
    held: dict[str, set[str]] = field(default_factory=dict)  # field -> values its records hold (rule_quote.held)
    digests: dict[str, str] = field(default_factory=dict)  # step -> its patterns' digest (same_task_memo)
    runs: int = 0
    last: int = -1  # id number of the last step counted
    ending: frozenset[str] = field(init=False)  # the wanted procedures: the other runs are listed for these

    def __post_init__(self):
        self.ending = frozenset(p for p in self.wanted if p.startswith("procedure|"))

    def add(self, run: dict) -> None:
        patterns = run.get("patterns") or []
        task = task_of(run)
        hold(run, self.held)
        self.digests[run["step"]] = patterns_digest(patterns)
        self.asks.setdefault(task, set()).update(p[5:] for p in patterns if p.startswith("asks|"))
        if not self.wanted.isdisjoint(patterns):  # trials of one task count once
            for p in patterns:
                if p in self.wanted:
                    self.tasks_met.setdefault(p, {}).setdefault(run["outcome"], set()).add(task)
        said = next((p[8:] for p in patterns if p.startswith("opening|")), "")
        if said:
            self.requests[run["step"]] = said
        shown = [*patterns, *sorted(choices.faced(patterns))]
        self.runs += 1
        self.last = layout.id_number(run["step"])
        if not shown:
            return
        outcome = run["outcome"]
        (self.counted.get(outcome) or self.counted.setdefault(outcome, Counter())).update(shown)
        self.first_met.update(dict.fromkeys(shown))
        success = outcome == "success"
        want = self.wanted if success else self.ending
        if want and not want.isdisjoint(shown):
            by = self.won if success else self.lost
            for p in shown:
                if p in want:
                    by.setdefault(p, []).append(run["step"])
        if outcome == "failure" and not self.wanted.isdisjoint(shown):  # each pattern once, however often met
            for p in sorted(self.wanted.intersection(shown)):
                self.failed.setdefault(p, []).append(run["step"])

    def met(self) -> dict[str, Counter]:
        """pattern -> outcome -> runs, in first-met order."""
        counted = self.counted
        return {p: Counter({outcome: n[p] for outcome, n in counted.items() if p in n}) for p in self.first_met}

    def narrowed(self, wanted: frozenset[str]) -> "KindTally":
        """The same counts listing only the runs of ``wanted`` (a subset of this tally's)."""
        return KindTally(wanted, self.counted, self.first_met, {p: s for p, s in self.won.items() if p in wanted},
                         {p: s for p, s in self.lost.items() if p in wanted},
                         {p: s for p, s in self.failed.items() if p in wanted}, self.asks, self.requests,
                         {p: t for p, t in self.tasks_met.items() if p in wanted}, self.held, self.digests, self.runs,
                         self.last)

    def as_json(self) -> dict:
        return {"wanted": sorted(self.wanted), "counted": {o: dict(c) for o, c in self.counted.items()},
                "first_met": list(self.first_met), "won": self.won, "lost": self.lost, "failed": self.failed,
                "asks": {task: sorted(words) for task, words in self.asks.items()}, "requests": self.requests,
                "tasks_met": {p: {o: sorted(tasks) for o, tasks in by.items()} for p, by in self.tasks_met.items()},
                "held": {f: sorted(values) for f, values in self.held.items()}, "digests": self.digests,
                "runs": self.runs, "last": self.last}

    @classmethod
    def from_json(cls, raw: dict) -> "KindTally":
        return cls(frozenset(raw["wanted"]), {o: Counter(c) for o, c in raw["counted"].items()},
                   dict.fromkeys(raw["first_met"]), {p: list(s) for p, s in raw["won"].items()},
                   {p: list(s) for p, s in raw["lost"].items()}, {p: list(s) for p, s in raw["failed"].items()},
                   {t: set(w) for t, w in raw["asks"].items()},
                   {st: str(said) for st, said in raw["requests"].items()},
                   {p: {o: set(tasks) for o, tasks in by.items()} for p, by in raw["tasks_met"].items()},
                   {f: set(values) for f, values in raw["held"].items()},
                   {st: str(d) for st, d in raw["digests"].items()}, int(raw["runs"]), int(raw["last"]))


class PatternTally:
    """The kept tallies of a corpus's task types, and the ones this gather counted.

    ``kept``: task type -> KindTally as the last command left it; ``carried``: the steps of
    the runs this command carries over unchanged (only those can be in a kept tally)."""

    def __init__(self, kept: dict[str, KindTally] | None = None, carried: set[str] | frozenset = frozenset()):
        self.kept = kept or {}
        self.carried = carried
        self.counted: dict[str, KindTally] = {}  # task type -> its tally after this gather
        self.reused: set[str] = set()  # task types whose kept tally was carried on (for the benchmarks and tests)

    def of(self, kind: str, runs: list[dict], wanted: set[str]) -> KindTally:
        """The tally of ``runs`` (every run of the type ``kind``, in step order) listing the runs
        that met ``wanted``: the kept one with the new runs counted on top when it is exactly
        the count of the first runs, else counted from every run."""
        wanted = frozenset(wanted)
        kept = self.kept.get(kind)
        tally = None
        if kept is not None and wanted <= kept.wanted and 0 < kept.runs <= len(runs):
            head = runs[kept.runs - 1]
            if layout.id_number(head["step"]) == kept.last and all(
                    r["step"] in self.carried for r in runs[:kept.runs]) and not any(
                    r["step"] in self.carried for r in runs[kept.runs:]):
                tally = kept.narrowed(wanted)
                for r in runs[kept.runs:]:
                    tally.add(r)
                self.reused.add(kind)
        if tally is None:
            tally = KindTally(wanted)
            for r in runs:
                tally.add(r)
        self.counted[kind] = tally
        return tally

    def keep(self, kinds: set[str]) -> None:
        """Carry the kept tallies of task types this command did not gather (their runs are unchanged)."""
        for kind in kinds:
            if kind in self.kept and kind not in self.counted:
                self.counted[kind] = self.kept[kind]


def load(root: Path, corpus_digest: str | None, carried: set[str]) -> PatternTally:
    """The tallies kept beside the corpus.json whose sha256 is ``corpus_digest``; none when the
    file is missing, damaged, from other code or from another corpus.json."""
    try:
        raw = json.loads((Path(root) / ".wikitrace" / FILE).read_bytes())
        if not (isinstance(raw, dict) and raw.get("format") == _FORMAT and raw.get("code") == code_digest()
                and corpus_digest and raw.get("corpus") == corpus_digest):
            return PatternTally(carried=carried)
        return PatternTally({kind: KindTally.from_json(t) for kind, t in raw["kinds"].items()}, carried)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return PatternTally(carried=carried)


def save(root: Path, tally: PatternTally, corpus_digest: str | None) -> None:
    """Keep this gather's tallies for the corpus.json whose sha256 is ``corpus_digest`` (written
    whole, renamed into place); without a digest the file is removed, so nothing stale stays."""
    from ..fsio import write_atomic

    path = Path(root) / ".wikitrace" / FILE
    try:
        if not corpus_digest or not tally.counted:
            path.unlink(missing_ok=True)
            return
        write_atomic(path, json.dumps({"format": _FORMAT, "code": code_digest(), "corpus": corpus_digest,
                                       "kinds": {k: t.as_json() for k, t in sorted(tally.counted.items())}},
                                      separators=(",", ":")) + "\n", mode=0o644)
    except OSError:
        pass  # only a speed-up for the next command: without it the types are counted again
