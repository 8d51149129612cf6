"""The words a run was given before its first call: the task statement, and with it whatever else
the agent was handed (a retry's reflections on earlier trials). Where a query's or an answer's words
came from is told against both, by the patterns, the trial record and the lessons alike.
"""

from __future__ import annotations

from .reading import Reading
from .text import folded_words


def given_words(r: Reading) -> tuple[set[str], set[str]]:
    """The words of the task statement, and those of everything the agent was given before its
    first call (the statement, a retry's reflections on earlier trials): where a query's or an
    answer's words came from is told against both. Once per run (the patterns and the trial
    record both ask); callers only read the sets."""
    if "given_words" in r.memo:
        return r.memo["given_words"]
    statement = set(folded_words(r.run.task.instruction or ""))
    task_words = set(statement)
    for t in r.run.turns:  # the prompt the agent was given (a retry's reflections too) is its task text
        if t.is_action:
            break
        if t.type == "message" and t.role == "user" and t.content:
            task_words.update(folded_words(t.content))
    r.memo["given_words"] = statement, task_words
    return statement, task_words


def answer_origin(r: Reading, answer: str) -> str | None:
    """Where an answer's words stood before any look-up: "question" when the task statement holds
    them all (one of the two it asks between), "given" when only the rest of what the run was given
    does (a retry's reflection named it), else None."""
    statement, given = given_words(r)
    words = set(folded_words(answer))
    if not words:
        return None
    return "question" if words <= statement else "given" if words <= given else None
