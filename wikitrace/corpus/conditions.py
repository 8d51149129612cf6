"""When successful runs made a state-changing call and when they withheld it, learned from the
records they acted on.

A cancellation, a flight change or a refund is right for one reservation and wrong for another,
and what decides it is a field of the record (its class, its insurance, how long ago it was
made), which the run looked up before deciding. Each run keeps the plain fields of the records
it looked up or acted on (compilers/record_facts.py). For a change tool T, a task "considered" T
on a record when some trial of the task made T on it; each trial of that task that looked the
record up then either made T on it or withheld it. Counted over distinct (task, record) cases,
trials of one task being one case:

- *made*: a successful trial made T on the record;
- *withheld*: a successful trial looked it up and made no T on it;
- *made against a success*: a failed trial made T where a successful trial withheld it.

A field value separates when it is more common on one side than the other by the one-sided
Fisher exact test (corpus/fisher.py, p < ALPHA) and its side spans two tasks at least (one task
cannot teach a condition). The lowest p wins; on a tie, a value marking the withheld side (what
failed runs ignored), then the field name. Nothing is fitted: no
field, value or cut-off is named here.
"""

from __future__ import annotations

from collections import Counter, defaultdict
import dataclasses
import json
from dataclasses import dataclass

from ..compilers.run_insights import GENERIC_CHECK
from . import layout, run_counts
from .applies import Openings, task_of
from .fisher import ALPHA, fisher_tails

MIN_TASKS = 2  # distinct tasks the separating side must span
SHOWN = 3  # failed runs named per lesson


@dataclass
class Condition:
    """What the records one change tool's argument points at show about making or withholding it."""

    tool: str
    key: str  # the argument naming the record
    made: int  # distinct (task, record) cases a successful trial made the change on
    withheld: int  # ... a successful trial looked up and did not make it on
    against: int  # withheld cases a failed trial made it on anyway
    against_runs: int  # those failed runs
    against_steps: list[str] = dataclasses.field(default_factory=list)  # the first of them, named on the page
    tasks: int = 0  # distinct tasks behind the made and withheld cases
    field: str | None = None  # the field value most unequal between the sides (shown or not)
    value: str | None = None
    side: str | None = None  # "withheld" (the value marks the records it was not made on) or "made"
    made_with: int = 0  # made cases holding the value
    made_shown: int = 0  # made cases whose record has the field at all
    withheld_with: int = 0  # withheld cases holding the value
    withheld_shown: int = 0
    against_with: int = 0  # made-against cases holding the value
    p: float | None = None
    separates: bool = False  # p < ALPHA and the value's side spans MIN_TASKS tasks
    rule: str = ""  # the prompt's rule sentence naming the value, in its section on the tool's thing


_READ = ("rec|", "acted|", "named|")  # the patterns of the records a run looked up, changed, or was given


def _read(runs: list[dict]):
    """Each run's changes, records and user-given ids, from one pass over its patterns: step ->
    tool|key -> record digests changed, step -> digest -> field -> value, step -> key -> digests
    the user's words gave (runs that changed or kept no record are left out)."""
    acted: dict[str, dict[str, set[str]]] = {}
    recs: dict[str, dict[str, dict[str, str]]] = {}
    named: dict[str, dict[str, set[str]]] = {}
    parsed: dict[str, dict[str, str]] = {}  # a record's fields as written -> as read: trials look the same records up
    for r in runs:
        a: dict[str, set[str]] = {}
        rec: dict[str, dict[str, str]] = {}
        said: dict[str, set[str]] = {}
        for p in r.get("patterns") or ():
            if not p.startswith(_READ):
                continue
            head, _, rest = p.partition("|")
            if head == "rec":
                d, _, text = rest.partition("|")
                fields = parsed.get(text)
                if fields is None:
                    fields = parsed[text] = {}
                    for name, value in json.loads(text):
                        fields.setdefault(name, value)  # a field written twice: its first value
                mine = rec.get(d)
                if mine is None:
                    rec[d] = fields  # shared between the runs that read the same record, never changed
                else:  # the record read again with other fields: a merged copy, the first value of each
                    rec[d] = mine = dict(mine)
                    for name, value in fields.items():
                        mine.setdefault(name, value)
            elif head == "acted":
                tool, key, d = rest.split("|", 2)
                a.setdefault(f"{tool}|{key}", set()).add(d)
            else:
                key, d = rest.split("|", 1)
                said.setdefault(key, set()).add(d)
        if a or rec:
            acted[r["step"]], recs[r["step"]], named[r["step"]] = a, rec, said
    return acted, recs, named


def _cases(runs: list[dict], openings: Openings | None = None, kind: str = ""):
    """(tool|key, side) -> {(task, record digest): that record's fields}, the failed made-against
    cases by tool, and the failed runs behind each.

    A task considered a change on a record when one of its trials made it there, or when its
    first message says the change's cue word (corpus/applies.py: the tool's action word, said by
    the tasks the change was made in more often than by the others, by the same Fisher test) and
    the user's own words gave the record's id: a successful trial that looked such a record up and did not
    make the change withheld it. ``openings``: the task type's (``kind``), when the caller has them."""
    if openings is None:
        openings, kind = Openings(runs, lambda _r: ""), ""
    acted, recs, named = _read(runs)
    tasks = [task_of(r) for r in runs]
    made_on: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))  # task -> tool|key -> digests
    for r, task in zip(runs, tasks):
        for pair, ds in acted.get(r["step"], {}).items():
            made_on[task][pair].update(ds)
    pairs = sorted({pair for by_pair in made_on.values() for pair in by_pair})
    members_of: dict[str, list[dict]] = {pair: [] for pair in pairs}  # the runs of the tasks it was made in
    for r, task in zip(runs, tasks):
        for pair in made_on.get(task, ()):
            members_of[pair].append(r)
    asked: dict[str, set[str]] = {}
    for pair in pairs:  # the cue word of the tasks the change was made in, by applies.Openings.cues' own test
        cue = openings.cues(kind, members_of[pair], f"went-through|{pair.split('|', 1)[0]}")[0]
        asked[pair] = openings.holding(kind, cue[0]) if cue else set()  # the tasks whose first message says it
    sides: dict[tuple[str, str], dict[tuple[str, str], dict[str, str]]] = defaultdict(dict)
    failed_made: dict[str, set[tuple[str, str]]] = defaultdict(set)
    failed_runs: dict[tuple[str, tuple[str, str]], set[str]] = defaultdict(set)
    for r, task in zip(runs, tasks):
        step = r["step"]
        if step not in acted:
            continue
        rec, changed = recs[step], acted[step]
        if r["outcome"] != "success":  # a failed run made the change on a record whether or not it looked it up
            for pair, ds in changed.items():
                for d in ds:
                    failed_made[pair].add((task, d))
                    failed_runs[(pair, (task, d))].add(step)
            continue
        made_here = made_on.get(task, {})
        for pair in pairs:
            considered = made_here.get(pair, ())
            if task in asked[pair]:
                considered = named[step].get(pair.split("|", 1)[1], set()).union(considered)
            for d in sorted(rec.keys() & considered):
                made = d in changed.get(pair, ())
                sides[(pair, "made" if made else "withheld")].setdefault((task, d), rec[d])
    return sides, failed_made, failed_runs


def learn(runs: list[dict], openings: Openings | None = None, kind: str = "") -> dict[str, list[Condition]]:
    """Change tool -> what the records of each of its id arguments show, for the runs of one task
    type (``kind``, whose first messages ``openings`` holds when the caller made them already)."""
    sides, failed_made, failed_runs = _cases(runs, openings, kind)
    said = _rules_said(runs)
    out: dict[str, list[Condition]] = defaultdict(list)
    for pair in sorted({t for t, _s in sides} | set(failed_made)):
        tool, key = pair.split("|", 1)
        made, withheld = sides.get((pair, "made"), {}), sides.get((pair, "withheld"), {})
        against = {c: withheld[c] for c in sorted(failed_made.get(pair, ())) if c in withheld}
        steps = sorted(set().union(*(failed_runs[(pair, c)] for c in against)) if against else set(),
                       key=layout.id_number)
        cond = Condition(tool, key, len(made), len(withheld), len(against), len(steps), steps[:SHOWN],
                         len({t for t, _d in [*made, *withheld]}))
        out[tool].append(cond)
        if made and withheld:
            _best_field(cond, made, withheld, against)
            if cond.field is not None:
                cond.rule = said.get((tool, cond.field, cond.value), "")
    return dict(out)


def _rules_said(runs: list[dict]) -> dict[tuple[str, str, str], str]:
    """(tool, field, value) -> the prompt's rule sentence naming the value (compilers/value_rules.py),
    from the first run that kept one."""
    out: dict[tuple[str, str, str], str] = {}
    for r in runs:
        for tool, name, value, sentence in r.get("value_rules") or ():
            out.setdefault((tool, name, value), sentence)
    return out


def _indexed(cases: dict) -> tuple[dict, Counter]:
    """(field, value) -> the cases whose record holds it, in case order; field -> the cases whose
    record has it at all. One pass over the cases, not one per value."""
    by: dict[tuple[str, str], list] = {}
    has: Counter = Counter()
    for c, fields in cases.items():
        has.update(fields.keys())
        for fv in fields.items():
            by.setdefault(fv, []).append(c)
    return by, has


def _best_field(cond: Condition, made: dict, withheld: dict, against: dict) -> None:
    """The field value whose share differs most between made and withheld records (lowest p), and
    whether it separates them."""
    best = None
    (w_by, w_has), (m_by, m_has) = _indexed(withheld), _indexed(made)
    for f, v in sorted(w_by.keys() | m_by.keys()):
        w_cases, m_cases = w_by.get((f, v), []), m_by.get((f, v), [])
        # only the cases whose record has the field count: a record without it says nothing of it
        w_n, m_n = w_has[f], m_has[f]
        if not w_n or not m_n:
            continue
        up, down = fisher_tails(len(w_cases), len(m_cases), w_n, m_n)
        for p, side, cases in ((up, "withheld", w_cases), (down, "made", m_cases)):
            spans = len({t for t, _d in cases}) >= MIN_TASKS
            shown = p < ALPHA and spans
            if not spans:
                continue
            rank = (not shown, p, side != "withheld", f, v)  # on a tie, the value that marks where not to make it
            if best is None or rank < best[0]:
                best = (rank, side, len(m_cases), m_n, len(w_cases), w_n)
    if best is None:
        return
    (unshown, p, _, f, v), side, cond.made_with, cond.made_shown, cond.withheld_with, cond.withheld_shown = best
    cond.field, cond.value, cond.side, cond.p, cond.separates = f, v, side, float(f"{p:.2g}"), not unshown
    cond.against_with = sum(fields.get(f) == v for fields in against.values())


def chosen(conds: list[Condition]) -> Condition | None:
    """The argument whose records say most about the tool: one that separates, else the one with
    the most cases on both sides, else the one with the most cases."""
    if not conds:
        return None
    return min(conds, key=lambda c: (not c.separates, not (c.made and c.withheld), -(c.made + c.withheld), c.key))


def _every(c: Condition) -> bool:
    """The value held for every case of its side (MIN_TASKS at least): what successful runs met
    each time, worth naming with its counts even where the test does not show it decides."""
    here, there = ((c.withheld_with, c.withheld_shown), (c.made_with, c.made_shown))[:: 1 if c.side == "withheld" else -1]
    # a value every record of both sides holds (a status all share) tells nothing apart
    return c.field is not None and here[1] >= MIN_TASKS and here[0] == here[1] and there[0] < there[1]


def hint(c: Condition) -> bool:
    """The page names the field as the check to make: it separates the sides, or the prompt's own
    rule names the value every case of its side held."""
    return c.separates or (bool(c.rule) and _every(c))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def advice(c: Condition) -> str:
    """What to do with a separating value, with the share of the records holding it on each side."""
    f, v, t = f"`{c.field}`", f"\"{c.value}\"", c.tool
    held = c.withheld_with + c.made_with
    if c.side == "withheld":
        return (f"Where it has {f} {v}, make {t} only where a rule gives the request a reason: successful runs "
                f"did not make it on {c.withheld_with} of the {held} such records.")
    return (f"Where it has {f} {v}, successful runs made {t} on {c.made_with} of the {held} such records; "
            "elsewhere make it only where a rule gives the request a reason.")


def sentence(c: Condition) -> str:
    """What the records show about making ``c.tool``, with the counts; "not shown" where they do not."""
    t, rec = c.tool, f"the record `{c.key}` points at"
    if not c.made and not c.withheld:
        return (f"When to make {t} is not shown: no successful trial of these tasks made it, or looked up "
                f"{rec} and did not make it.")
    if not c.withheld or not c.made:
        done = (f"made it on {_plural(c.made, 'record')} they had looked up" if c.made
                else f"looked up {_plural(c.withheld, 'record')} and made it on none")
        return (f"When to make {t} is not shown: successful runs of these tasks {done}, so nothing sets the "
                "records it was made on apart from the others.")
    f, v = f"`{c.field}`", f"\"{c.value}\""
    both = (f"successful runs made {t} on {_plural(c.made, 'record')} and looked up {_plural(c.withheld, 'record')} "
            f"without making it ({_plural(c.tasks, 'task')})")
    held = f"in {c.withheld_with} of the {c.withheld_shown} they did not make it on"
    made = f"in {c.made_with} of the {c.made_shown} they made it on"
    found = f"{f} was {v} {held} and {made}" if c.side == "withheld" else f"{f} was {v} {made} and {held}"
    test = f"one-sided Fisher p = {c.p:.2g}" if c.p is not None else ""
    named = c.separates or _every(c)
    if c.rule and named:  # the prompt's words on the value decide it; the counts show the runs kept to them
        said = (f"Before {t}, look up {rec} and check {f}: the system prompt's rule naming {v} says \"{c.rule}\" "
                f"In these tasks {both}; {found} ({test}).")
    elif c.separates:
        said = f"Before {t}, look up {rec} and check {f}: {both}; {found} ({test}). {advice(c)}"
    elif named:
        said = f"Which field of {rec} decides {t} is not shown ({test}): {both}; {found}."
    else:
        said = f"Which field of {rec} decides {t} is not shown: {both}, and no field value is shown to separate them."
    if c.against:
        said += (f" Failed runs made {t} on {_plural(c.against, 'record')} that a successful trial of the same "
                 f"task did not make it on ({_plural(c.against_runs, 'run')}: {run_counts.named(c.against_steps, c.against_runs)}"
                 + (f"; {c.against_with} of those records had {f} {v})." if named else ")."))
    return said


# the went-through lesson's quote of the system prompt's rules on the call (compilers/run_insights):
# a restatement the agent already reads in its own prompt, replaced by what the records show
_RESTATED = "hold the call against what the system prompt's rules say of it: "
_AFTER = GENERIC_CHECK.split(":", 1)[0]


def state(entry: dict, by_tool: dict[str, list[Condition]]) -> None:
    """A change's lessons say what the records show about making it: the lesson of failed runs
    whose change went through leads with it in place of the rule it quoted; a successful recipe
    says what its look-ups were checked for, where a field is named."""
    kind, _, rest = entry["key"].partition("|")
    tool = rest.split("|", 1)[0]
    c = chosen(by_tool.get(tool, []))
    if kind not in ("went-through", "procedure") or c is None:
        return
    said = sentence(c)
    entry.pop("unshown", None)
    g = entry["guideline"]
    if kind == "went-through":
        head = f"Before {tool}, {_RESTATED}"
        at = g.find(head)
        end = g.find(_AFTER, at) if at != -1 else -1
        if at != -1 and end != -1:
            g = g[:at] + g[end:]
        g = g.strip()
        if hint(c):  # the field leads the advice
            entry["guideline"] = f"{said} {g}".strip()
            entry["title"] = f"Before {tool}, check the {c.field} of the record it acts on"
        else:  # what was not shown is no advice: the counts stand under Evidence
            entry["guideline"] = g
            entry["unshown"] = said
    elif hint(c):  # the recipe: what its look-ups were checked for
        why = (f"the system prompt's rule naming \"{c.value}\" says \"{c.rule}\"" if c.rule else
               f"(one-sided Fisher p = {c.p:.2g}, {_plural(c.tasks, 'task')}). {advice(c)}")
        entry["guideline"] = f"{g} Check `{c.field}` in the record `{c.key}` points at before {tool}{':' if c.rule else ''} {why}"
