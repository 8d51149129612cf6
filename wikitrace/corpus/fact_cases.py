"""A lesson's cases: what the pages of a few of its runs established, in their words.

A lesson's advice is a generalisation; the reader acts on it sooner with the run it came from in
view: "book_reservation at turn 21 sent `nonfree_baggages` 1 where the task expected 0. The system
prompt's rule on `nonfree_baggages`: …". Each failed run's page opens with the facts the compiler
checked against its log (compilers/in_short.py), most telling first. A run entry keeps, for each of
its lessons, the first of those facts that is about the lesson (lesson_fact says how). The insight
page shows them for the first failed run of up to three tasks (three trials of one task would show
one mistake three times). A successful run's page leads with what it did that decided it, against the
failed trials of its task where there are some ("Send `payment_methods` … as this run did: 2 of the 3
failed trials sent other …"): the same facts, kept the same way, show what worked; a page shows them
after its failed runs' (one at least when it has any), so a lesson both outcomes taught shows each.
Lessons whose answers have their own cases (answer_cases.py) keep those.
"""

from __future__ import annotations

import re
from functools import lru_cache

from types import SimpleNamespace

from ..compilers.harness_facts import HARNESS_STOPPED, HELD_UNGIVEN
from ..compilers.in_short import NOTHING_SETTLED
from ..compilers.schema import KeyFact
from ..compilers.text import clip, named_turns
from ..compilers.rule_lessons import rule_opening
from ..compilers.run_insights import STOPPED_LOOKING
from ..templates import md_plain
from . import layout
from .advice_cut import KEPT, sentences
from .applies import key_tool, kind_of, task_of

SHOWN = 3  # cases per page
WIDTH = 600  # characters of a fact kept
_FAILING = re.compile(r"\b(?:fail(?:ed|s)?|errors?)\b", re.I)  # a fact about a call failing
_FIRST_MET = re.compile(r"\bfirst met at turn (\d+)")
_FAILED_AT = re.compile(r"\bfailed at turns? \d")  # a call failing, not a failed trial: "cd (mvn) failed at turn 5"
_CLAIM = "user-claim"  # the agent took the user's word where a record said otherwise: it bears on any change made
_UNSETTLED = frozenset(NOTHING_SETTLED.values())  # a page's word that nothing is established: no case
# lessons only successful runs teach, on how they ended: every fact such a page leads with is about that
_ENDING = ("procedure", "answer-from", "direct")
_LINK = re.compile(r"(?<!\\)\[(step-[^\]/]+)\]\(step-[^)/]*\.md\)")  # a line's link to another trial's page


def lesson_fact(comp, lesson) -> dict:
    """The checked fact of a run's page that is about ``lesson`` (a CandidateInsight), as its run
    entry keeps it (``fact``: its words, ``fact_kind``: its kind when counted); {} when none is.
    About it means: naming its tool, or the user's word the run took against a record (for an error,
    only a fact saying a call of the tool failed, citing the turn the lesson's detail says the error
    was first met, and quoting no other message of its kind; for a class of error with no tool,
    such as a program missing, one saying a call failed on a turn the detail names); for a change
    the task expected and never got, a fact of that kind; for a rule, quoting it; for any other
    lesson, on a turn the lesson's detail names. On a successful run's page an error's fact may be
    any naming its tool when none says it failed there (what the run did once past it, not another
    call failing), a call may be named by the program it ran ("Bash python": python), and a lesson
    on how the run ended (one naming no tool, or the call that ended it with what it gave) takes
    the page's first fact: the page leads with what decided the run."""
    key, outcome = lesson.key, getattr(comp, "outcome", "")
    if outcome not in ("failure", "success") or not key:
        return {}
    every = [f for f in getattr(comp, "in_short", ()) or () if f.text not in _UNSETTLED]
    facts = every
    tool, kind = key_tool(key), key.split("|", 1)[0]
    turns = set(named_turns(lesson.detail or ""))
    if kind == "error" and key.count("|") == 1:  # a class of error (a program missing): no tool to name
        # the turn it was first met, not any the detail names: a later edit's turn ends another error's fact
        first = _first_met(lesson.detail or "")
        facts = [f for f in facts if first in f.turns and _FAILED_AT.search(f.text)]
    elif tool:
        shape = key.split("|")[2] if kind == "error" and key.count("|") > 1 else ""
        named = [f for f in facts if (kind != "error" and f.kind == _CLAIM) or any(
            _naming(word).search(f.text) for word in _call_words(key, tool, outcome))]
        first = _first_met(lesson.detail or "")
        facts = [f for f in named if kind != "error" or first in f.turns and _FAILING.search(f.text)
                 and not _other_message(f.text, shape)]
        if not facts and outcome == "success":  # what the run did with the tool once past the error, not
            facts = [f for f in named if kind != "error" or first in f.turns or not _FAILED_AT.search(f.text)]
            # another error of the same tool it got past
        if not facts and outcome == "success" and kind == "procedure" and ":" in key:
            facts = every[:1]  # procedure|<ending call>:<what it gave>: the whole way to the end
    elif kind == "idle" and (lesson.detail or "").endswith(STOPPED_LOOKING):  # looking until the limit
        facts = [f for f in facts if f.text.startswith(HARNESS_STOPPED)]
    elif kind == "missed":  # a change never made: what a failed run lacked
        facts = [f for f in facts if f.kind == "missed-change" and outcome == "failure"]
    elif kind == "rule":
        opening = rule_opening(lesson.title)
        facts = [f for f in facts if opening and opening in f.text]
    else:
        facts = [f for f in facts if turns & set(f.turns)]
        if not facts and outcome == "success" and kind in _ENDING:
            facts = every[:1]
    if not facts:
        return {}
    return {"fact": clip(facts[0].text, WIDTH), **({"fact_kind": facts[0].kind} if facts[0].kind else {})}


def _first_met(detail: str) -> int | None:
    """The turn an error lesson's detail says the run first met it: "turn 32 (first met at turn 30):
    …" -> 30, "turn 20: got past it at turn 23 …" -> 20 (later turns name other calls)."""
    m = _FIRST_MET.search(detail)
    return int(m.group(1)) if m else next(iter(named_turns(detail)), None)


def _call_words(key: str, tool: str, outcome: str) -> list[str]:
    """The words a fact about the key's call may name it by: its tool, and on a successful run's page
    the program a shell call ran too ("Bash python" -> Bash, python), which its facts name alone."""
    if outcome != "success":
        return [tool]
    call = key.split("|")[1].split(":", 1)[0].split()
    return [tool, *call[1:2]]


@lru_cache(maxsize=512)
def _naming(tool: str) -> re.Pattern:
    """A tool's name as a whole word (not inside `a.tool` or `tool_x`)."""
    return re.compile(rf"(?<![\w.]){re.escape(tool)}(?!\w)")


def _other_message(text: str, shape: str) -> bool:
    """Whether a fact quotes a message that opens like the lesson's error and is another one
    ("Error: gift card balance …" on a lesson about "Error: certificate cannot be used …")."""
    head = shape.split("…")[0].strip()
    if not head:
        return False
    first = head.split()[0]
    alike = [q for q in re.findall(r'"([^"]+)"', text) if q.split()[:1] == [first]]
    return bool(alike) and not any(q.startswith(head) or head.startswith(q.rstrip("…")) for q in alike)


def annotate(out: list[dict], groups: dict[str, list[tuple[dict, dict]]], trials=None, memo=None) -> None:
    """Sets ``cases`` on the entries without answer cases whose runs kept a fact for them: the failed
    runs' first, those What to do counts (``mistake_runs``: the argument it names differed), then
    those of the kind the lesson leads with (``checked``), then runs stopped while they held the
    expected answer, before the others, so the cases show what its advice is about; then the successful runs' (``outcome``: success), at
    least one where any kept a fact, those set against failed trials of their task first; one run per
    task on each side.
    A successful run set against failed trials of its task (``trials``: corpus/trials.Trials) shows
    the line its page leads with, where that line is about the lesson: its own fact gave way to it.
    ``memo``: a same_task_memo.SameTaskMemo keeping each task's lines between commands."""
    lines = _TrialLines(trials, memo)
    for entry in out:
        if entry["key"].startswith("procedure|") and not (entry.get("counts") or {}).get("failure"):
            apart_lead(entry, groups[entry["id"]], lines)
        if entry.get("cases"):
            if not entry["counts"]["failure"]:
                _paired_first(entry, groups[entry["id"]], lines)
            else:  # an answer's case: what the successful trial of its task answered, where one did
                _answered_instead(entry, groups[entry["id"]], lines)
            continue
        lead = (entry.get("checked") or {}).get("kind")
        named = set((entry.get("mistake_runs") or {}).get("steps") or ())  # the runs What to do's count is of
        members = groups[entry["id"]]
        # then runs the harness stopped while they held the expected answer: what was in hand and never given
        members = sorted(members, key=lambda m: (m[0]["step"] not in named, bool(lead) and m[1].get("fact_kind") != lead,
                                                 HELD_UNGIVEN not in (m[1].get("fact") or "")))
        side: dict[str, list[dict]] = {"failure": [], "success": []}
        tasks: dict[str, set] = {"failure": set(), "success": set()}
        # a successful source's task: its case sets it against its failed trials already
        won = {task_of(e) for e, _l in members if e["outcome"] == "success"}
        about_change = entry["key"].split("|", 1)[0] in _ABOUT_THE_CHANGE
        for e, lesson in members:
            task = task_of(e)
            if e["outcome"] != "failure" or len(side["failure"]) == SHOWN or task in tasks["failure"]:
                continue
            text = lesson.get("fact") or _counted_fact(e, entry)
            if about_change and (text or task not in won):
                text = " ".join(filter(None, (text, lines.against_success(e))))
            if text:
                tasks["failure"].add(task)
                side["failure"].append({"step": e["step"], "text": text, "checked": True})
        # a success set against its failed trials first (its page's line on the lesson), then one that only
        # did what the page says (its own fact); each pass stops once the side is full
        for said in (lambda e, lesson: lines.about(e, lesson), lambda e, lesson: lines.still_shown(e, lesson.get("fact"))):
            for e, lesson in members:
                task = task_of(e)
                if len(side["success"]) == SHOWN:
                    break
                if e["outcome"] != "success" or task in tasks["success"]:
                    continue
                text = said(e, lesson)
                if text:
                    tasks["success"].add(task)
                    side["success"].append({"step": e["step"], "text": text, "checked": True, "outcome": "success"})
        failed = side["failure"][:SHOWN - 1 if side["success"] else SHOWN]
        cases = failed + side["success"][:SHOWN - len(failed)]
        if cases:
            entry["cases"] = cases


def _counted_fact(run: dict, entry: dict) -> str:
    """For a failed run the page's lead counts (``checked``: the fact its What to do leads with) that
    kept no fact for this lesson, its fact on the lesson's tool kept for another of its lessons: an
    error whose advice is the check of the change's arguments shows the change that check is about."""
    tool = key_tool(entry["key"])
    if not tool or run["step"] not in ((entry.get("checked") or {}).get("steps") or ()):
        return ""
    return next((f for f in (lesson.get("fact") or "" for lesson in run.get("lessons") or ())
                 if re.search(rf"(?<![\w.]){re.escape(tool)}(?![\w])", f)), "")


# lessons on the change a run made or how it ended it: what a successful trial of its task did instead
# (wrote in the same file, made, answered) belongs in their case
_ABOUT_THE_CHANGE = ("went-through", "ended", "stopped", "missed", "tests-only")

PAIRED = 2  # cases set against a failed trial, on a page of a way that worked

# a step a success took that its task's failed trials did not (corpus/trial_success.py), in words
# any task of the type fits; "{0}" and "{1}": the tool and the argument its shape names
APART = {"full": "give the answer in full, as the look-up wrote it",
         "alone": "give the answer alone, without the words around it",
         "only": "give only the answer asked for, nothing beside it",
         "read": "answer from what the look-up returned",
         "bare": "send a name without quote marks",
         "listed": "search next for a name the error listed",
         "followed": "search next for the name a page already read gave, and answer from that page",
         "look-up": "look up each name the question gives and answer from the page that holds the answer",
         "args": "check `{1}` for {0} against the request",
         "make": "make the {0} change the request calls for",
         "none": "make no {0} change the request does not call for"}


def apart_lead(entry: dict, members: list[tuple[dict, dict]], lines: "_TrialLines") -> None:
    """A way of settling the task that only successful runs taught: what those that have failed
    trials of their task did that the trials did not, counted by kind of step, one run per task;
    the commonest, where two tasks or more show it, leads What to do. The procedure itself,
    which failed runs followed too, is no contrast."""
    tasks: dict[str, dict[tuple, str]] = {}  # shape -> task -> its first run's step
    for e, _lesson in members:
        shape = lines.shape(e)
        if shape is not None:
            tasks.setdefault(shape, {}).setdefault(task_of(e), e["step"])
    ranked = sorted(tasks, key=lambda sh: (-len(tasks[sh]), sh))
    if not ranked or len(tasks[ranked[0]]) < 2:
        return
    said = []
    for sh in ranked[:3]:
        kind, *names = sh.split("|")
        steps = sorted(tasks[sh].values(), key=layout.id_number)
        said.append(f"{APART[kind].format(*names)} in {len(steps)} of their tasks ({', '.join(steps)})")
    kind, *names = ranked[0].split("|")
    do = APART[kind].format(*names)
    entry["counted"] = [*(entry.get("counted") or []),
                        "Where a successful run here has failed trials of its task, what it did that they did not, "
                        f"one run per task: {'; '.join(said)}."]
    kept = [f"{do[0].upper()}{do[1:]}: successful runs here did so where the failed trials of their own tasks did not.",
            *sentences(entry.get("advice") or "")]
    entry["advice"] = " ".join(kept[:KEPT])
    if kept[KEPT:]:  # what What to do has no room for stays among the other advice
        entry["more_advice"] = [*kept[KEPT:], *(entry.get("more_advice") or [])]


def _answered_instead(entry: dict, members: list[tuple[dict, dict]], lines: "_TrialLines") -> None:
    """Each failed run's answer case gains the line its page leads with against a successful trial
    of its task ("The successful trial S of its task answered "Tybalt" at its turn 3; …"): the
    answer that worked beside the one that failed."""
    failed = {e["step"]: e for e, _l in members if e["outcome"] == "failure"}
    for case in entry["cases"]:
        e = failed.get(case["step"])
        said = lines.against_success(e) if e is not None else ""
        if said:
            case["text"] = f"{case['text']}. {said}"


def _paired_first(entry: dict, members: list[tuple[dict, dict]], lines: "_TrialLines") -> None:
    """On a page only successful runs taught (a way of settling the task), the answer cases of runs
    set against failed trials of their task give way to the lines their pages lead with: what the
    success did and what the failed trial did instead, a worked pair, not one more run that did the
    same. Up to ``PAIRED`` of them, one per task in step order; the answer cases of other tasks fill
    the rest."""
    paired, tasks = [], set()
    for e, lesson in members:
        if len(paired) == PAIRED:
            break
        if task_of(e) in tasks:
            continue
        text = lines.about(e, lesson)
        if text:
            tasks.add(task_of(e))
            paired.append({"step": e["step"], "text": text, "checked": True, "outcome": "success"})
    if not paired:
        return
    by_step = {e["step"]: task_of(e) for e, _l in members}
    rest = [c for c in entry["cases"] if by_step.get(c["step"]) not in tasks]
    entry["cases"] = paired + rest[:max(0, SHOWN - len(paired))]


class _TrialLines:
    """The line a successful run's page leads with against the failed trials of its task
    (corpus/trial_contrast.py, as the page writer puts it), worked out once per task."""

    def __init__(self, trials, memo=None):
        self.trials = trials
        self.memo = memo
        self.by_task: dict[tuple, dict] = {}
        self.shapes: dict[str, str] = {}  # step -> the shape of what it did that its failed trials did not

    def shape(self, entry: dict) -> str | None:
        """The shape of the step ``entry``'s line says to copy (corpus/trial_success.py), or None."""
        self._lines(entry)
        return self.shapes.get(entry["step"])

    def _lines(self, entry: dict) -> dict:
        task = self.trials.group(entry) if self.trials is not None else None
        if task is None:
            return {}
        if task not in self.by_task:
            from .trial_contrast import lines

            runs = self.trials.by_task.get(task, {})
            every = sorted([*runs.get("success", ()), *runs.get("failure", ())],
                           key=lambda r: layout.id_number(r["step"]))
            if not runs.get("failure") or len(every) < 2:
                self.by_task[task] = {}
            elif self.memo is None:
                self.by_task[task] = lines(every, self.shapes)
            else:
                def make(every=every):
                    shapes: dict[str, str] = {}
                    return lines(every, shapes), shapes

                self.by_task[task], shapes = self.memo.task_lines(kind_of(every[0]), every, make)
                self.shapes.update(shapes)
        return self.by_task[task]

    def still_shown(self, entry: dict, fact: str | None) -> str:
        """``fact``, unless it restates what the success did and its page's line against the failed
        trials of its task took its place there (corpus/trial_pages.py): a case quotes its page."""
        if not fact:
            return ""
        made = self._lines(entry).get(entry["step"])
        restated = {text for _i, text, _turns in (entry.get("decisive") or {}).get("restates") or ()}
        return "" if made is not None and made[2] and fact in restated else fact

    def against_success(self, entry: dict) -> str:
        """The line the failed run ``entry``'s page leads with against a successful trial of its task,
        as plain text with the run named by its step; "" when its page has none."""
        made = self._lines(entry).get(entry["step"])
        if made is None:
            return ""
        text = md_plain(_LINK.sub(r"\1", made[0]))
        if not text.startswith("The successful trial "):
            return ""
        return clip(text.replace("this run", entry["step"]).replace(" of this task ", " of its task "), WIDTH)

    def about(self, entry: dict, lesson: dict) -> str:
        """The line of ``entry``'s page, as plain text (links to other trials' pages by their step),
        when it is about ``lesson`` as ``lesson_fact`` reads a fact; else ""."""
        made = self._lines(entry).get(entry["step"])
        if made is None:
            return ""
        text = md_plain(_LINK.sub(r"\1", made[0]))
        said = SimpleNamespace(outcome="success", in_short=[KeyFact(text, sorted(set(made[1])), "")])
        kept = lesson_fact(said, SimpleNamespace(key=lesson.get("key"), title=lesson.get("title", ""),
                                                 detail=lesson.get("detail", "")))
        return kept.get("fact", "")
