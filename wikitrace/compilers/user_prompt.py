"""The LLM compiler's user prompt (``prompts/compile.user.j2``) written in plain Python.

The template engine made a pass per turn and per field of every run: about a tenth
of the run reader's CPU on the LLM path (it renders each run's prompt beside the
build). The bundled template stays the definition of the prompt: a ``--templates``
folder that brings its own ``prompts/compile.user.j2`` is rendered with the engine,
and the tests hold this module to the template's bytes turn shape by turn shape.
As the engine's ``finalize`` does, every printed string is shown visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..controls import visible

TEMPLATE = "prompts/compile.user.j2"


def overridden(templates: str | Path | None) -> bool:
    """Whether a ``--templates`` folder brings its own user prompt."""
    return templates is not None and (Path(templates) / TEMPLATE).is_file()


def _shown(value: Any) -> str:
    """A printed value as the engine prints it (its ``finalize``, then ``str``)."""
    return visible(value) if isinstance(value, str) else str(value)


def _turn(t: dict[str, Any], out: list[str]) -> None:
    kind = t["kind"]
    if kind == "action":
        out += ["[turn ", _shown(t["number"]), "] action: ", _shown(t["name"]), "(", _shown(t["arguments"]), ")\n"]
        if t["reasoning"]:
            out += ["reasoning: ", _shown(t["reasoning"]), "\n"]
        out += ["observation", " (error)" if t["is_error"] else "", ": ",
                _shown(t["observation"] if t["observation"] else "(none)"), "\n"]
    elif kind == "solver_prompt":
        out += ["[turn ", _shown(t["number"]), "] system: (the agent's instructions, shown above)\n"]
    elif kind == "message":
        out += ["[turn ", _shown(t["number"]), "] ", _shown(t["role"]), ": ", _shown(t["text"]), "\n"]
    elif kind == "answer":
        out += ["[turn ", _shown(t["number"]), "] final answer: ", _shown(t["text"]), "\n"]
    elif kind == "episode_over":
        out += ["[turn ", _shown(t["number"]), "] episode over"]
        if t["ended_by"]:
            out += [" (ended by: ", _shown(t["ended_by"]), ")"]
        if t["text"]:
            out += [": ", _shown(t["text"])]
        out.append("\n")  # the template's block tag ends the line; the blank line after it is this break


def render(task: dict[str, Any], turns: list[dict[str, Any]], clip_limit: int | None, outcome: Any,
           ended_by: str) -> str:
    """What ``compile.user.j2`` renders for these values (``prompt_views.build_prompt``'s)."""
    out = ["<task>\nInstruction: ", _shown(task["instruction"]), "\n"]
    if task["task_type"]:
        out += ["Task type: ", _shown(task["task_type"]), "\n"]
    if task["apps"]:
        out += ["Apps: ", _shown(", ".join(map(str, task["apps"]))), "\n"]
    if task["initial_observation"]:
        out += ["Initial observation:\n", _shown(task["initial_observation"]), "\n"]
    out += ["</task>\n\n<trajectory>\n", _shown(len(turns)), " turns, each headed [turn N]; cite these numbers.\n"]
    if clip_limit:
        out += ["Texts longer than ", _shown(clip_limit),
                " characters are cut in the middle; \"[... K characters clipped ...]\" marks each cut.\n"]
    for t in turns:
        out.append("\n")
        _turn(t, out)
    out += ["</trajectory>\n\n<execution_outcome>\nResult: ", _shown(outcome.label),
            "\nSteps (tool calls): ", _shown(outcome.steps), "\n"]
    if outcome.score is not None:
        out += ["Score: ", _shown(outcome.score), "\n"]
    success = outcome.success
    out += ["Ended by: ", _shown(ended_by), "\n</execution_outcome>\n\nCompile this ",
            "successful" if success else "failed", " run. Every ", "key decision" if success else "failure cause",
            " must cite the [turn N] numbers it rests on.\n"]
    return "".join(out)
