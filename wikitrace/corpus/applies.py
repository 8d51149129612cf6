"""When a lesson applies, in what an agent knows at the start of a new task.

"Tasks that end with update_reservation_baggages" names a lesson by how its runs ended,
which no agent knows when a task begins. What it does know is the first message it is
given (the user's request, the question, the task statement) and the tools it has. Each
run records that message's words (``asks|<word>`` patterns,
compilers/run_patterns.opening_words). A lesson about a tool has a cue when the first
messages of most of its tasks name the tool's action: the first word of the tool's name,
or a longer form of it ("cancel" of cancel_reservation in "cancellation"), that the tasks
of its type without the lesson use less often, by the same one-sided Fisher exact test as
the contrasts, counted over distinct tasks (trials of one task are one task). No word list
and no threshold fitted to a data set: a lesson of one task, or whose tasks' requests do not name its tool, gets no cue and
says when it applies from its own key (the error met, the call about to be made).
"""

from __future__ import annotations

from collections import defaultdict

from ..compilers.cue_words import action_word, same_word
from .fisher import ALPHA, fisher_tails

# lessons named by how their runs ended: their old applicability is replaced, never kept
ENDING = ("procedure", "answer-from")
# lesson kinds whose key's second field is the tool they are about
TOOL_KEYS = ("error", "went-through", "hand-off", "loop", "procedure", "answer")


def request_key(run) -> str | None:
    """For a session whose log names no task but itself (its task id is its run id) and records the
    folder it worked in (a Claude Code or Codex session), a digest of the request it opened with,
    spacing aside, and that folder: the same request in the same folder is the same task. None for
    any other run: a benchmark's run named after its instance has a task id of its own."""
    where = str((run.task.metadata or {}).get("cwd") or "")
    if run.task.id != run.run_id or not where or not (run.task.instruction or "").strip():
        return None
    import hashlib

    said = " ".join(run.task.instruction.split())
    return "request:" + hashlib.sha256(f"{where}\n{said}".encode()).hexdigest()[:16]


def kind_of(entry: dict) -> str:
    """The task type a run entry belongs to (AppWorld-style runs: their apps joined). Here, not
    in insights.py, so the page writer's per-run look-ups need not import the insight layer."""
    return ", ".join(entry["apps"]) if entry.get("apps") else (entry.get("task_type") or "unspecified")


def trial_key(entry: dict) -> str | None:
    """The task a run is a trial of, as trials are grouped: its task id; for a session whose log
    names no task but itself (``request``: ``request_key``), the request it was given where it
    worked, so that two sessions given one request are trials of one task. None without a task id."""
    if entry.get("task_id") is None:
        return None
    return entry.get("request") or str(entry["task_id"])


def trial_task(entry: dict) -> tuple[str, str] | None:
    """(task type, ``trial_key``): the trials of one task within its type, as the insight layer's
    comparisons and the compilation pages' trial lines group them; None for a run of no task."""
    key = trial_key(entry)
    return None if key is None else (kind_of(entry), key)


def task_of(entry: dict) -> str:
    """The task a run is a trial of (``trial_key``), else its instruction, else the run itself."""
    key = trial_key(entry)
    if key is not None:
        return f"id:{key}"
    return f"text:{entry.get('instruction')}" if entry.get("instruction") else f"run:{entry['step']}"


def key_tool(key: str) -> str | None:
    fields = key.split("|")
    if fields[0] not in TOOL_KEYS or len(fields) < 2:
        return None
    return fields[1].split(":", 1)[0].split(" ", 1)[0] or None


EXAMPLES = 2  # requests quoted per lesson without a cue


class Openings:
    """The opening words of every task of each task type."""

    def __init__(self, runs: list[dict], kind_of):
        self.tasks: dict[str, dict[str, set[str]]] = defaultdict(dict)
        self.requests: dict[str, str] = {}
        for r in runs:
            words = {p[5:] for p in r.get("patterns") or [] if p.startswith("asks|")}
            self.tasks[kind_of(r)].setdefault(task_of(r), set()).update(words)  # every trial's wording
            said = next((p[8:] for p in r.get("patterns") or [] if p.startswith("opening|")), "")
            if said:
                self.requests[r["step"]] = said
        self._holding: dict[tuple[str, str], set[str]] = {}  # (type, action word) -> its tasks naming it
        self._said: dict[str, dict[str, set[str]]] = {}  # type -> word of a first message -> tasks saying it

    @classmethod
    def of(cls, tasks: dict[str, dict[str, set[str]]], requests: dict[str, str]) -> "Openings":
        """The openings collected already: task type -> task -> words, step -> first message."""
        made = cls([], None)
        made.tasks.update(tasks)
        made.requests.update(requests)
        return made

    def examples(self, members: list[dict]) -> list[str]:
        """The first messages of the lesson's own runs, the first run of each of its tasks in step order
        (a trial's user may word the request otherwise than another's), each text once."""
        first: dict[str, str] = {}
        for e in members:  # in step order, as gather groups them
            first.setdefault(task_of(e), e["step"])
        return list(dict.fromkeys(self.requests[st] for st in first.values() if st in self.requests))[:EXAMPLES]

    def cues(self, kind: str, members: list[dict], key: str) -> tuple[list[str], int, int, int, int]:
        """(the cue word, tasks of the lesson whose first message holds it, tasks of the lesson, the
        type's other tasks whose first message holds it, the type's other tasks); no word when the
        lesson has no tool, one task only, or its tasks' requests do not name the tool."""
        tasks = sorted({task_of(e) for e in members})
        everyone = self.tasks.get(kind, {})
        n, t = len(everyone), len(tasks)
        tool = key_tool(key)
        if tool is None or t < 2 or n <= t:
            return [], 0, t, 0, n - t
        w = action_word(tool)
        holds = self.holding(kind, w)
        a = sum(task in holds for task in tasks)
        if a < 2 or 2 * a <= t:
            return [], 0, t, 0, n - t
        up, _down = fisher_tails(a, len(holds) - a, t, n - t)
        return ([w], a, t, len(holds) - a, n - t) if up < ALPHA else ([], 0, t, 0, n - t)

    def holding(self, kind: str, word: str) -> set[str]:
        """The tasks of the type whose first messages say ``word`` or a longer form of it (the
        lessons and changes about one tool share its word: the type's tasks are scanned once per word)."""
        holds = self._holding.get((kind, word))
        if holds is None:
            said = self._said.get(kind)
            if said is None:  # each distinct word of the type's first messages once, with the tasks saying it
                said = self._said[kind] = defaultdict(set)
                for task, words in self.tasks.get(kind, {}).items():
                    for x in words:
                        said[x].add(task)
            holds = self._holding[kind, word] = set().union(*(tasks for x, tasks in said.items()
                                                              if word and same_word(word, x)))
        return holds


def label_of(kind: str) -> str:
    return "tasks of this kind" if kind in ("", "unspecified") else f"{kind} tasks"


def applies_when(key: str, applicability: str, kind: str, cues: tuple, examples: list[str] = ()) -> str:
    """The page's "When it applies": what the lesson's own key says an agent meets (an error, a
    call it is about to make), with the cue word of its tasks' first messages; a lesson named
    by how its runs ended says it in that word alone, or by the call it is about to make. With
    no cue, the first messages of the lesson's first tasks (``examples``) are quoted after it,
    so a reader sees what kind of request the lesson comes from. No count is written here (they
    stand under Evidence): the LLM path's merge prompt holds this text, and a run added to the
    lesson must not change it."""
    text = _applies(key, applicability, kind, cues)
    if cues[0] or not examples:
        return text
    said = "; ".join(f'"{x}"' for x in examples)
    whose = ("The first message of its task" if cues[2] <= 1 else "The first messages of its tasks"
             if cues[2] == len(examples) else "The first messages of two of its tasks" if len(examples) == 2
             else "The first message of one of its tasks")
    return f"{text} {whose} said: {said}."


def _applies(key: str, applicability: str, kind: str, cues: tuple) -> str:
    label = label_of(kind)
    head = f"In {label}"
    rest = applicability[len(head):] if applicability.startswith(head) else ""
    words = cues[0]
    cue = f'whose first message says "{words[0]}" or a longer form of it' if words else ""
    kind_of_key = key.split("|", 1)[0]
    if kind_of_key in ENDING:  # said as an agent knows it then (the call it is about to make), not by the outcome
        head = f"{head} {cue}" if cue else head
        if kind_of_key == "answer-from" or "|" not in key:
            return f"{head}, once the look-ups show the request needs no change or allows none."
        return f"{head}, before calling {key.split('|', 1)[1].split(':', 1)[0]}."
    if not cue or not rest.startswith(", "):
        return applicability
    return f"{head} {cue}{rest}"


def successful_cue(entry: dict, members: list[dict], openings: Openings, kind: str) -> None:
    """A hand-off lesson says which first requests its successful hand-offs answered, when the
    cue-word test (``Openings.cues``, Fisher over distinct tasks) separates their tasks from the
    type's other tasks; it says nothing when no word does."""
    if not entry["key"].startswith("hand-off|"):
        return
    won = [e for e in members if e["outcome"] == "success"]
    word, a, t, b, n = openings.cues(kind, won, entry["key"])
    if word:
        entry["guideline"] += (f" The successful hand-offs here answered first messages that say \"{word[0]}\" or a "
                               f"longer form of it ({a} of their {t} tasks; {b} of the type's other {n} tasks).")
