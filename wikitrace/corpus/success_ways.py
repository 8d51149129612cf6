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
from .applies import key_tool, trial_key
from .fisher import ALPHA, fisher_tails
from .trials import RETRIED, RETRY_ONLY, WORDS_FROM, did_phrase

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
        self.choices: Counter = Counter()  # a choice pattern (did|, query|, retry|, said|) or what it is among -> runs
        self.memo: dict[str, frozenset[str]] = {}  # step -> its choices (_choices), for any run a lead reads
        self._by_task: dict[str, list[dict]] | None = None  # task id -> its successful runs, made on first use
        for r in successes:
            self.choices.update(_choices(r, self.memo))
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

    def made_without(self, runs: list[dict], tool: str) -> bool:
        """Whether a successful run of the task of one of ``runs`` never had a ``tool`` call go
        through: an expected change its task's success did without did not decide a failure."""
        if self._by_task is None:
            self._by_task = {}
            for r in self.runs:
                if trial_key(r) is not None:
                    self._by_task.setdefault(trial_key(r), []).append(r)
        return any(f"did|{tool}" not in (w.get("patterns") or ()) for r in runs if trial_key(r) is not None
                   for w in self._by_task.get(trial_key(r), ()))

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
        """"get_user_details in 80 and get_reservation_details in 61": the tools no run changed
        anything with that most successful runs called (counted in successful runs; the type's
        total is left off the page, where any added run would change it)."""
        return " and ".join(f"{k} in {self.did[k]}" for k in self.lookup_names())

    def lookup_names(self) -> list[str]:
        """The tools no run changed anything with that most successful runs called, most often first."""
        total = len(self.runs)
        return sorted((k for k, n in self.did.items() if k not in self.writes and 2 * n > total),
                      key=lambda k: (-self.did[k], k))[:NAMED]


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
        f"({also} successful run{'s' if also != 1 else ''} of this task type did so too): look the request's "
        f"records up with {' and '.join(ways.lookup_names())} before answering, as most successful runs did "
        f"({looks}). {entry['guideline']}")


# lessons about how a failed run ended (a wrong answer, no answer before a limit), which name no
# call of their own to act on: the choices that set their runs apart are what they can teach
ENDINGS = ("answer", "idle", "stopped")

# what a run chose, by the kind of its pattern: among which runs it is counted (every run, or
# those that faced the same choice: sent such a query, met an error and called again) and how
# a sentence says it. A tool's name fills {t}; where the words came from fills {w}.
_CHOSE = {"did": ("", "called {t} without an error"), "query": ("sent a {t} query", "sent a {t} query {w}"),
          "said": ("gave a {t} answer", "gave a {t} answer {w}"),
          "retry": ("called {t} again after it answered with an error", "retried {t} {w}")}
_WHERE = {"query": WORDS_FROM, "said": WORDS_FROM, "retry": RETRIED}


_CHOICE_KINDS = ("did|", "query|", "said|", "retry|")
_CHANGE_KINDS = ("@edit", "@submit")  # a coding run's changes by kind: the outcome itself, not a way to it


def _choices(run: dict, memo: dict[str, frozenset[str]] | None = None) -> frozenset[str]:
    """The choice patterns of a run, and ``faced|<kind>|<tool>`` for each choice it faced;
    ``memo``: step -> those, so a gather reads each run's patterns once."""
    got = memo.get(run["step"]) if memo is not None else None
    if got is not None:
        return got
    out = set()
    for p in run.get("patterns") or ():
        if not p.startswith(_CHOICE_KINDS):
            continue
        fields = p.split("|")
        if fields[0] == "did" and len(fields) == 2:
            out.add(p)
        elif fields[0] in _WHERE and len(fields) == 3 and fields[2] in _WHERE[fields[0]]:
            # words only a retry's reflections gave are no choice across runs, but the run did send the
            # query: it stays among the runs that faced the choice ("62 that sent a query" beside 64 is false)
            out.add(f"faced|{fields[0]}|{fields[1]}")
            if fields[2] != RETRY_ONLY:
                out.add(p)
    got = frozenset(out)
    if memo is not None:
        memo[run["step"]] = got
    return got


def _said(pattern: str) -> str:
    kind, tool, *where = pattern.split("|")
    if kind == "did":
        return did_phrase(tool)
    return _CHOSE[kind][1].format(t=tool, w=_WHERE[kind][where[0]] if where else "")


def differences_lead(entry: dict, members: list[tuple[dict, dict]], ways: SuccessWays) -> None:
    """Leads a lesson on how failed runs ended (``ENDINGS``) that no checked fact leads with the
    choice its failed runs differ most on from the successful runs of the task type, counted on both sides: a choice most of its failed runs
    made that the successful runs made less often, or one most successful runs made that most of
    its failed runs did not. Each is counted among the runs that faced it (a retry only among runs
    that met an error), tested one-sided (Fisher) in the direction it is said, and only a
    p < ALPHA leads; the page says it is a difference, not a proven cause, since the best of many
    was picked. The threshold is the conventional ALPHA and the "most of" rule every lead uses;
    nothing is fitted to a data set."""
    failed = list({e["step"]: e for e, _l in members if e["outcome"] == "failure"}.values())
    if entry.get("checked") or not failed or not ways.runs or entry["key"].split("|", 1)[0] not in ENDINGS:
        return
    best = _most_different(failed, ways.choices, len(ways.runs), exclude={key_tool(entry["key"]), *ways.writes},
                           memo=ways.memo)
    if best is None:
        return
    p_value, side, pattern, hit, faced, b, s_all = best
    # the type's totals and the p move with any added run: the page gives the count, the verdict stays
    theirs = f"{b} successful run{'s' if b != 1 else ''} of this task type{_among(pattern, ' that ')}"
    mine = f"{run_counts.part_of(hit, faced, 'failed runs here' + _among(pattern, ' that '), '')}"
    what = _said(pattern)
    head = (f"Where these failed runs differ most from the successful ones: {mine} {what}, against {theirs}"
            if side == 0 else f"What most successful runs did and these failed runs did not: {theirs} {what}, "
                              f"against {mine}")
    entry["guideline"] = f"{head} (the largest such difference, not a proven cause). {entry['guideline']}"


def _among(pattern: str, lead: str) -> str:
    """" that sent a Search query": the runs a choice is counted among, or "" for every run."""
    kind, tool = pattern.split("|")[:2]
    return f"{lead}{_CHOSE[kind][0].format(t=tool)}" if _CHOSE[kind][0] else ""


def _most_different(group: list[dict], theirs: Counter, n_theirs: int, exclude: set[str], answered: str = "",
                    memo: dict | None = None):
    """The choice ``group`` differs most on from ``others`` (the smaller one-sided p, then the
    pattern), when p < ALPHA and the side said covers most of both the runs it is said of:
    (p, 0 if the group made it more often else 1, pattern, the group's runs that made it, the
    group's runs that faced it, the others' runs that made it, the others' runs that faced it).
    ``theirs``: the others' ``_choices`` counted (made once per task type), ``n_theirs`` their runs;
    ``answered``: a tool whose answer's source the lesson is defined by, so not a difference.
    A choice most of ``group`` never faced is not weighed; a call of a tool in ``exclude`` (a
    change, the answer) is the outcome itself, not a way to it."""
    mine: Counter = Counter()
    chose: dict[str, list[dict]] = {}
    for e in group:
        for p in _choices(e, memo):
            mine[p] += 1
            chose.setdefault(p, []).append(e)
    best = None
    for p in sorted(set(mine) | set(theirs)):
        kind, tool = p.split("|")[:2]
        if kind == "faced" or kind == "did" and (tool in exclude or tool in _CHANGE_KINDS) or kind == "said" and tool == answered:
            continue
        among = f"faced|{kind}|{tool}" if _CHOSE[kind][0] else None
        g_all = mine[among] if among else len(group)
        o_all = theirs[among] if among else n_theirs
        a, b = mine[p], theirs[p]
        if not g_all or not o_all or 2 * g_all <= len(group):
            continue
        up, down = fisher_tails(a, b, g_all, o_all)
        if up < ALPHA and 2 * a > g_all:
            cand = (up, 0, p)
        elif down < ALPHA and 2 * b > o_all and 2 * a < g_all:
            cand = (down, 1, p)
        else:
            continue
        if best is None or cand < best[:3]:
            best = (*cand, chose.get(p, []), chose.get(among, group) if among else group, b, o_all)
    return best


def success_differences(entry: dict, members: list[tuple[dict, dict]], failed_same: list[dict],
                        ways: SuccessWays) -> None:
    """Leads a lesson successful runs teach about how they settled the task (``procedure|``) with
    the choice they differ most on from the failed runs that settled it the same way, counted on
    both sides and tested as ``differences_lead`` does: what made the same ending work."""
    won = list({e["step"]: e for e, _l in members if e["outcome"] == "success"}.values())
    if not won or not failed_same or not entry["key"].startswith("procedure|"):
        return
    theirs: Counter = Counter()
    for r in failed_same:
        theirs.update(_choices(r, ways.memo))
    tool = key_tool(entry["key"]) or ""  # procedure|<tool>:<where its answer came from>: that is the lesson itself
    best = _most_different(won, theirs, len(failed_same), exclude={tool}, answered=tool, memo=ways.memo)
    if best is None:
        return
    p_value, side, pattern, hit, faced, b, f_all = best
    what = _said(pattern)
    mine = run_counts.part_of(hit, faced, "successful runs here" + _among(pattern, " that "), "")
    theirs_said = f"{b} failed run{'s' if b != 1 else ''} of this task type that ended this way{_among(pattern, ' and ')}"
    head = (f"What these successful runs did more often than the failed runs that ended the same way: {mine} {what}, "
            f"against {theirs_said}" if side == 0 else
            f"Where the failed runs that ended the same way differ from these: {theirs_said} {what}, against {mine}")
    entry["guideline"] = f"{head} (the largest such difference, not a proven cause). {entry['guideline']}"
