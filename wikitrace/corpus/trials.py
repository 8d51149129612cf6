"""Trials of one task set against each other: what the successful trials did that a failed one did not.

Benchmarks run each task several times (tau-bench's trials, Reflexion's retries), and
when the outcomes are mixed, the decision that differed is the lesson a reader can act
on. Each run records what it decided (compilers/run_patterns.decisions_of: the tools that
answered, where a free-text look-up's words came from, each state-changing argument as
digests of its scalars, how many changes of each tool went through). Here the runs of
one task and outcome are summarised once, and each insight source is compared with the
summary of the other outcome, so the work stays linear in the runs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

SHOWN = 5  # differences shown on a page (each names every run of the page it holds for)

# "the task text it was given": the words of the messages the run was given before its first call
# (a retry's reflections on earlier trials among them), as run_patterns.decisions_of reads them; "the
# task statement": the task's instruction alone
WORDS_FROM = {"task": "whose words all came from the task statement",
               "given": "whose words beyond the task statement all came from the rest of the task text it was given "
                        "(a retry's reflections on earlier trials among it)",
               "shown": "whose words beyond the task text it was given all came from earlier answers (following a look-up)",
               "own": "with words that neither the task text it was given nor any earlier answer held"}

# only a retry is given text beyond the statement (reflections on its earlier trials), and retries fail
# more often for being retries: across runs this source measures the retry, not the choice, so it is
# never contrasted across runs (the comparison of trials of one task still says it)
RETRY_ONLY = "given"

FROM_WORDS = {"reply": "from what the user said in reply", "task": "from the task statement alone",
              "picked": "unasked among several values one answer listed", "shown": "from an earlier answer",
              "none": "from no earlier answer, user message or call"}  # where a change's argument came from (run_patterns.argument_sources)
EDITED = {"task": "changed a file the task text names", "shown": "changed a file an earlier call's answer named",
          "new": "changed a file neither the task text nor an earlier answer named"}  # run_patterns: edited|<tool>|<place>
RETRIED = {"same": "with the same arguments", "listed": "with a value the error's text named",
           "other": "with other values, none of them named by the error"}  # how a retry after an error differed


@dataclass
class Decisions:
    """What one run decided, read from its patterns."""

    did: set[str] = field(default_factory=set)  # tools that answered without an error; query|/said|<tool>|<where>
    values: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (tool, key) -> value digests
    counts: dict[str, int] = field(default_factory=dict)  # change tool -> calls that went through
    sources: set[tuple[str, str, str]] = field(default_factory=set)  # (tool, key, where its value came from)

    @property
    def written(self) -> set[str]:
        return {t for t, _k in self.values}


def decisions(entry: dict) -> Decisions:
    """A success's change with a tool its task expected none of (its record's ``unasked``: a hand-off
    no one asked for) is left out: it is not what the success did that its failed trials did not."""
    d = Decisions()
    unasked = set((entry.get("decisive") or {}).get("unasked") or ())
    for p in entry.get("patterns") or []:
        if p.startswith("did|"):
            if p[4:] in unasked:
                continue
            d.did.add(p[4:])
        elif p.startswith(("query|", "said|")):
            d.did.add(p)
        elif p.startswith("set|"):
            _, tool, key, digest = p.split("|", 3)
            d.values.setdefault((tool, key), set()).add(digest)
        elif p.startswith("from|"):
            _, tool, rest = p.split("|", 2)
            key, _, where = rest.rpartition(":")
            d.sources.add((tool, key, where))
        elif p.startswith("count|"):
            _, tool, n = p.rsplit("|", 2)
            d.counts[tool] = int(n)
    return d


@dataclass
class Summary:
    """The trials of one task with one outcome, summarised once: what all of them did, what
    any of them did, and the range of their change counts."""

    did_all: set[str]
    did_any: set[str]
    written_all: set[str]
    written_any: set[str]
    values_any: dict[tuple[str, str], set[str]]  # union of the digests by (tool, key)
    keys_all: set[tuple[str, str]]  # (tool, key) every trial set
    counts: dict[str, tuple[int, int]]  # tool every trial changed with -> (fewest, most) calls
    sources_all: set[tuple[str, str, str]]  # (tool, key, where) every trial showed
    sources_any: set[tuple[str, str, str]]
    changed_all: bool = False  # every trial had some change go through


def summarise(runs: list[Decisions]) -> Summary:
    values: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in runs:
        for tk, digests in r.values.items():
            values[tk] |= digests
    counted = set.intersection(*(set(r.counts) for r in runs))
    return Summary(
        did_all=set.intersection(*(r.did for r in runs)), did_any=set().union(*(r.did for r in runs)),
        written_all=set.intersection(*(r.written for r in runs)), written_any=set().union(*(r.written for r in runs)),
        values_any=dict(values), keys_all=set.intersection(*(set(r.values) for r in runs)),
        counts={t: (min(r.counts[t] for r in runs), max(r.counts[t] for r in runs)) for t in counted},
        sources_all=set.intersection(*(r.sources for r in runs)), sources_any=set().union(*(r.sources for r in runs)),
        changed_all=all(r.written for r in runs))


def _same_value(a: str, b: str) -> bool:
    """Two value fingerprints name the same choice when one's scalars all occur in the other."""
    x, y = set(a.split(".")), set(b.split("."))
    return a == b or (not a.startswith("*") and not b.startswith("*") and (x <= y or y <= x))


def _any_same(mine: set[str], theirs: set[str]) -> bool:
    return any(_same_value(a, b) for a in mine for b in theirs)


# a coding call by its kind (compilers/call_kinds.did_token), as a sentence says it was done
# (a search is grep's kind and ls's alike: a run that listed folders searched as much as one that grepped)
_KIND_DONE = {"@edit": "changed a file", "@search": "searched the code or listed its folders without an error",
              "@test": "ran a test command that passed as a whole", "@submit": "submitted its changes",
              "@view": "viewed a file"}


def did_phrase(tool: str) -> str:
    """``called X without an error`` for a tool; for a coding call, what its kind did (``viewed
    A.java``, ``ran mvn without an error``): agents name the same act by other tools."""
    if tool.startswith("@view:"):
        return f"viewed {tool[6:]}"
    if tool.startswith("@run:"):
        return f"ran {tool[5:]} without an error"
    return _KIND_DONE.get(tool, f"called {tool} without an error")


def _called(tool: str, them: str) -> str:
    if tool.startswith(("query|", "said|")):
        kind, name, where = tool.split("|")
        what = f"sent a {name}" if kind == "query" else f"gave a {name} answer"
        return f"{what} {WORDS_FROM[where]}, which {them} never did"
    return f"{did_phrase(tool)}, which {them} never did"


def _span(low: int, high: int) -> str:
    return f"{low}" if low == high else f"{low} to {high}"


def differences(wins: Summary, fails: Summary, them: str) -> list[str]:
    """What the successful side did that the failed side did not, each a phrase that follows
    "they": a tool every successful run called and no failed run got an answer from, change
    counts whose ranges do not overlap, a change tool no successful run got through and every
    failed one did, and for a tool both changed with, an argument whose values match none of
    the other side's (neither holds the other's scalars) or one set on one side only. Either
    side may be one run (a summary of one) or several."""
    answered = {t.split("|")[1] for t in wins.did_any if t.startswith("said|")}  # a tool the answer was given with
    out = [f"answered with {t}, which {them} never did" if t in answered else _called(t, them)
           for t in sorted(wins.did_all - fails.did_any)]
    for tool in sorted(set(wins.counts) & set(fails.counts)):
        (low, high), (flow, fhigh) = wins.counts[tool], fails.counts[tool]
        if high < flow or low > fhigh:
            out.append(f"made {_span(low, high)} {tool} call{'s' if high != 1 else ''} that went through, "
                       f"where {them} made {_span(flow, fhigh)}")
    if not wins.written_any and fails.changed_all:  # whatever each failed one changed: the task wanted no change
        out.append(f"made no change that went through, where {them} made one")
    out += [f"had no {t} call go through, where {them} had one" for t in sorted(fails.written_all - wins.written_any)]
    both = wins.written_any & fails.written_all
    for tool, key in sorted(set(wins.values_any) | set(fails.values_any)):
        if tool not in both:
            continue
        mine, theirs = wins.values_any.get((tool, key), set()), fails.values_any.get((tool, key), set())
        if mine and (tool, key) in fails.keys_all and not _any_same(mine, theirs):
            out.append(f"gave {tool} another value of {key}")
        elif mine and not theirs:
            out.append(f"set {key} in {tool}, which {them} left out")
        elif not mine and (tool, key) in fails.keys_all:
            out.append(f"left {key} out of {tool}, which {them} set")

    # where a value came from, when every successful trial took it so and the other side never did
    out += [f"took `{key}` of {tool} {FROM_WORDS.get(where, where)}, which {them} never did"
            for tool, key, where in sorted(wins.sources_all - fails.sources_any)
            if tool in both and where in ("reply", "task", "shown")]
    return out


def failed_against(failed: Decisions, wins: Summary, them: str = "the failed run") -> list[str]:
    """What the successful trials did that one failed run did not."""
    return differences(wins, summarise([failed]), them)


def success_against(won: Decisions, fails: Summary) -> list[str]:
    """What one successful trial did that every failed trial of its task did not."""
    return differences(summarise([won]), fails, "each failed trial of its task")


def trial_differences(failed: dict, successes: list[dict]) -> list[str]:
    """``failed_against`` from run entries (the successes summarised here)."""
    return failed_against(decisions(failed), summarise([decisions(s) for s in successes]))


class Trials:
    """Every run entry grouped by task (``group``: the key naming a run's task, None when it has
    none), each task's outcomes summarised on first use."""

    def __init__(self, runs: list[dict], group):
        self.group = group
        self.by_task: dict[tuple, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
        for r in runs:
            key = group(r)
            if key is not None:
                self.by_task[key][r["outcome"]].append(r)
        self.summaries: dict[tuple, Summary] = {}
        self.read: dict[str, Decisions] = {}

    def _decisions(self, entry: dict) -> Decisions:
        if entry["step"] not in self.read:
            self.read[entry["step"]] = decisions(entry)
        return self.read[entry["step"]]

    def _summary(self, task, outcome: str) -> Summary | None:
        runs = self.by_task.get(task, {}).get(outcome)
        if not runs:
            return None
        if (task, outcome) not in self.summaries:
            self.summaries[(task, outcome)] = summarise([self._decisions(r) for r in runs])
        return self.summaries[(task, outcome)]

    def compare(self, members: list[dict]) -> dict | None:
        """An insight's sources set against the other trials of their own task: each failed source
        against the successful trials, or, when no failed source has one, each successful source
        against the failed trials (what made it work). Phrases counted over the sources."""
        for side, other in (("failure", "success"), ("success", "failure")):
            mine = [e for e in members if e["outcome"] == side]
            by_step = {e["step"]: e for e in mine}
            found: dict[str, list[str]] = defaultdict(list)
            compared: list[str] = []  # the sources that have a trial to compare with, named on the page
            for e in mine:
                task = self.group(e)
                summary = self._summary(task, other) if task is not None else None
                if summary is None:
                    continue
                compared.append(e["step"])
                phrases = (failed_against(self._decisions(e), summary) if side == "failure"
                           else success_against(self._decisions(e), summary))
                for phrase in dict.fromkeys(phrases):
                    found[phrase].append(e["step"])
            if compared and (found or side == "success"):
                ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
                return {"side": side, "members": len(mine), "compared": len(compared), "compared_steps": compared,
                        "differences": [{"text": t, "runs": len(steps), "steps": steps,
                                         "tasks": len({self.group(by_step[s]) for s in steps})}
                                        for t, steps in ranked[:SHOWN]]}
        return None


# what the other side did, as an instruction: each phrase ``differences`` writes, by its shape
_DO = [
    (r"called (\S+) without an error, which .+ never did", r"call \1 and get its answer"),
    (r"answered with (\S+), which .+ never did", r"give an answer with \1 before the run ends"),
    (r"ran (\S+) without an error, which .+ never did", r"run \1 and get its output"),
    (r"viewed (\S+), which .+ never did", r"read \1 before changing it"),
    (r"ran a test command that passed as a whole, which .+ never did", r"run the tests and see them pass before settling"),
    (r"searched the code or listed its folders without an error, which .+ never did",
     r"search the code for the place to change"),
    (r"changed a file, which .+ never did", r"change the code the task is about"),
    (r"submitted its changes, which .+ never did", r"submit the change"),
    (r"sent a (\S+) whose words beyond the task text it was given all came from earlier answers \(following a look-up\), which .+",
     r"build the \1 query from a name an earlier answer showed"),
    (r"sent a (\S+) whose words all came from the task statement, which .+", r"build the \1 query from the task's own words"),
    (r"sent a (\S+) whose words beyond the task statement all came from the rest .+",
     r"build the \1 query from the words of the task text you were given"),
    (r"sent a (\S+) with words that neither .+", r"word the \1 query in words of your own"),
    (r"gave a (\S+) answer whose words beyond the task text it was given all came from earlier answers \(following a look-up\), which .+",
     r"give the \1 answer in words an earlier answer showed"),
    (r"gave a (\S+) answer whose words all came from the task statement, which .+", r"give the \1 answer in the task's own words"),
    (r"gave a (\S+) answer whose words beyond the task statement all came from the rest .+",
     r"give the \1 answer in words of the task text you were given"),
    (r"gave a (\S+) answer with words that neither .+", r"work the \1 answer out from what the look-ups returned"),
    (r"made (.+) (\S+) calls? that went through, where .+", r"make \1 \2 call(s) that go through"),
    (r"made no change that went through, where .+", r"make a change only where the request calls for one and the rules allow it"),
    (r"had no (\S+) call go through, where .+", r"make sure the request calls for a change with \1 at all"),
    (r"gave (\S+) another value of (\S+)", r"check the value of \2 for \1 against the request"),
    (r"set (\S+) in (\S+), which .+", r"set \1 in \2"),
    (r"left (\S+) out of (\S+), which .+", r"leave \1 out of \2"),
    (r"took `(\S+)` of (\S+) (.+), which .+", r"take `\1` of \2 \3"),
]


_COUNTED = re.compile(r"made .+ calls? that went through, where .+")


def one_task_count(difference: dict) -> bool:
    """A number of calls that only the trials of one task show ("made 5 update_reservation_flights
    calls"): that task needed that many, which is no practice to carry to another task."""
    return difference.get("tasks", 2) < 2 and bool(_COUNTED.fullmatch(difference["text"]))


def instruction(text: str) -> str:
    """A difference the trials showed, said as what to do ("" for a shape not listed)."""
    for shape, do in _DO:
        if re.fullmatch(shape, text):
            return re.sub(shape, do, text)
    return ""


def advice(entry: dict) -> str:
    """The decision the insight's runs most often took otherwise than the other trials of their
    task, as an instruction with its count, when it holds for at least two runs and for most
    of those compared (empty otherwise: one run's difference is shown in the list, not advised).
    A rule's page advises what the rule asks: the trials' other differences are listed only."""
    st = entry.get("same_task") or {}
    if not st.get("differences") or st.get("advised") or (entry.get("key") or "").startswith("rule|"):
        return ""
    top = st["differences"][0]
    if top["runs"] < 2 or one_task_count(top) or 2 * top["runs"] <= st["compared"]:
        return ""  # one run is no pattern
    do = instruction(top["text"])
    fields = (entry.get("key") or "").split("|")
    if len(fields) > 1 and do == f"call {fields[1].split(':')[0]} and get its answer":
        do = ""  # the page is about calling that tool already: saying so again is no advice
    if not do and (st.get("side") == "success" or not st.get("instead")):
        return ""  # with no instruction it would only repeat the list of differences under it
    if st.get("side") == "success":
        return ((f"In a run like these, {do}: w" if do else "W") + "hat set these successful runs apart from the failed "
                f"trials of the same task: most of them {top['text']} ({top['runs']} of {st['compared']} compared).")
    instead = f" What they did instead: {'; '.join(st['instead'])}." if st.get("instead") else ""
    return ((f"In a run like these, {do}: where" if do else "Where")
            + f" a failed run here has a successful trial of the same task, for most of them ({top['runs']} of "
            f"{st['compared']} compared) the successful trials {top['text']}"
            + ("." if do else ": weigh that step before ending a run like these.") + instead)
