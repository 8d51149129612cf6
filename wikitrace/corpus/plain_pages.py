"""A run's compilation page and metadata page written in one pass of plain Python.

Every run gets both pages, and the template engine's pass per printed value was a
large share of a page writer's time per run. The bundled ``compilation.md.j2`` and
``raw_metadata.md.j2`` stay the definition of the pages: a ``--templates`` folder
that overrides one of them is rendered with the engine, and the tests hold the
text built here to the engine's bytes for the bundled templates.

Each printed value goes through ``_shown``, what the engine's ``finalize`` and
``str`` do to it, so control characters show as escapes here as there.
"""

from __future__ import annotations

from pathlib import Path

from ..controls import visible
from ..templates import _oneline, fence, md_text
from . import layout

COMPILATION_TEMPLATE = "compilation.md.j2"
METADATA_TEMPLATE = "raw_metadata.md.j2"


def overridden(templates: Path | None, name: str) -> bool:
    """Whether a ``--templates`` folder brings its own version of the page ``name``."""
    return templates is not None and (Path(templates) / name).is_file()


def _shown(value) -> str:
    """A printed value as the template engine prints it (its ``finalize``, then ``str``)."""
    return visible(value) if isinstance(value, str) else str(value)


def _md(value) -> str:
    return visible(md_text(value))


def _kind_line(task, label: str) -> str:
    """The apps of an AppWorld-style task, or its task type."""
    if task.apps:
        return f"- {'Apps' if label == 'Task' else 'apps'}: {_md(', '.join(map(str, task.apps)))}\n"
    return f"- {'Task type' if label == 'Task' else 'task_type'}: {_md(task.task_type or 'unspecified')}\n"


def compilation(frontmatter: str, comp, task, outcome, step: str, insights, link: layout.Linker) -> str:
    """The page ``compilation.md.j2`` renders from the same values."""
    out = ["---\n", _shown(frontmatter), "---\n# Compilation (", _shown(comp.outcome), ")\n\n"]
    if comp.compiler == "offline":
        out.append("> Written by the offline compiler: a rule-based reading of the turn log, not a model's judgement.\n")
    elif comp.compiler == "offline-fallback":
        out += ["> The LLM compiler failed (", _md(comp.fallback_reason),
                "); this is the offline compiler's rule-based reading instead.\n"]
    if comp.outcome == "failure":
        out.append("> The causes below are an interpretation of a failed run, not a verified explanation. "
                   "Check them against the raw turns.\n")
        if comp.compiler != "llm":
            out.append("> They are ranked: first a call whose arguments or rules do not check out, then errors "
                       "that no later call of the same program got past (a failed look-up or a program the machine lacks comes after the run's "
                       "own changes), then the other calls.\n")
    step_v = _shown(step)
    turns_link = None
    if comp.in_short:
        turns_link = _shown(link.rel(layout.raw_turns(step)))
        out.append("\n## In short\n")
        if comp.compiler == "llm":
            out.append("> Facts the compiler checked against the turn log, not the model's words.\n\n")
        for fact in comp.in_short:
            out += ["- ", _md(fact.text)]
            if fact.turns:
                out += [" (turn", "s" if len(fact.turns) > 1 else "", " ",
                        ", ".join(f"[{_shown(n)}]({turns_link}#turn-{_shown(n)})" for n in fact.turns), ")"]
            out.append("\n")
    out += ["\n## Task\n- Task id: ", _md(task.id), "\n", _kind_line(task, "Task"),
            "- Instruction: ", _md(_oneline(task.instruction)), "\n",
            "- Outcome: ", _shown(comp.outcome), " after ", _shown(outcome.steps), " tool call",
            "" if outcome.steps == 1 else "s"]
    if outcome.score is not None:
        out += [", score ", _shown("%g" % outcome.score)]
    if outcome.ended_by:
        out += [" (ended by ", _md(outcome.ended_by), ")"]
    out += ["\n- Summary: ", _md(comp.description), "\n\n## ", _shown(comp.evidence_heading), "\n"]
    success = comp.outcome == "success"
    for index, item in enumerate(comp.evidence, 1):
        kind = "Decision" if success else "Context" if item.context else "Cause"
        out += ["\n### ", kind, " ", str(index), "\n**Decision**: ", _md(item.decision), "\n"]
        if item.call:
            out += ["\n", _shown(fence(item.call)), "\n"]
        out += ["\n**Support**: ", _md(item.support), "\n"]
        if item.turns:
            if turns_link is None:
                turns_link = _shown(link.rel(layout.raw_turns(step)))
            out.append("\n**Turns**: ")
            out.append(", ".join(f"[{_shown(n)}]({turns_link}#turn-{_shown(n)})" for n in item.turns))
            out += [" — `turn ", step_v, " ", _shown(item.turns[0])]
            if len(item.turns) > 1:
                out += [" ", _shown(item.turns[-1])]
            out.append("`\n")
        if item.quote:
            out += ["\n> ", _md(item.quote), "\n"]
        if item.notes:
            out.append("\n")
            for note in item.notes:
                out += ["- ", _md(note), "\n"]
    if comp.left_out:
        out += ["\nLeft out: ", _shown(comp.left_out), " more call", "s" if comp.left_out != 1 else "",
                " of this run, at turns not named above; `actions ", step_v, "` lists every call and `turn ",
                step_v, " N` shows one.\n"]
    out.append("\n## Insights from this run\n")
    _insight_lines(out, insights, link, "- [{id}]({rel}) (`{abs}`); " + _OWN_LESSON + ": \"{title}\"\n")
    if not insights:
        out.append("- None: this run's log shows no step another run could copy or avoid.\n")
    out += ["\n## Source\n- Raw trajectory: [", step_v, "](", _shown(link.rel(layout.raw_metadata(step))), ") (`",
            _shown(link.abs(layout.raw_dir(step))), "`)\n"]
    return "".join(out)


# the run's own wording of each lesson it taught: the insight page's title is merged over all its runs
_OWN_LESSON = "the lesson as this run worded it (the insight page's title may differ)"


def _insight_lines(out: list[str], insights, link: layout.Linker, shape: str) -> None:
    """Each insight linked by its id, with the run's own lesson said to be the run's: the insight
    page's title is merged over all its runs and may change when runs are added, and a page of
    this run is rewritten only with this run."""
    for ins in insights:
        out.append(shape.format(id=_shown(ins.id), rel=_shown(link.rel(ins.path)), title=_md(ins.title),
                                abs=_shown(link.abs(ins.path))))


def metadata(frontmatter: str, run, step: str, insights, link: layout.Linker) -> str:
    """The page ``raw_metadata.md.j2`` renders from the same values."""
    task, outcome = run.task, run.outcome
    numbers = [t.turn for t in run.turns] or [0]
    out = ["---\n", _shown(frontmatter), "---\n# ", _shown(step), ": run ", _md(run.run_id), " (task ", _md(task.id),
           ")\n\n", _kind_line(task, "metadata"), "- instruction: ", _md(_oneline(task.instruction)), "\n"]
    if task.initial_observation:
        out += ["- initial_observation: ", _md(_oneline(task.initial_observation)), "\n"]
    out += ["- success: ", _shown(outcome.success), "\n"]
    if outcome.score is not None:
        out += ["- score: ", _shown(outcome.score), "\n"]
    out += ["- steps: ", _shown(outcome.steps), " tool call", "" if outcome.steps == 1 else "s", "\n"]
    if outcome.ended_by:
        out += ["- ended_by: ", _md(outcome.ended_by), "\n"]
    for key, value in _dictsort(task.metadata):
        out += ["- ", _md(key), ": ", _md(_oneline(value)), "\n"]
    compilation_doc = layout.compilation_doc(step)
    out += ["\n## Evidence\n- Turns: [turns.md](", _shown(link.rel(layout.raw_turns(step))), "), ",
            _shown(len(run.turns)), " turns numbered ", _shown(numbers[0]), "–", _shown(numbers[-1]),
            "; the log as JSON lines: `", _shown(link.abs(layout.raw_log(step))), "`\n- Compilation: [", _shown(step),
            "](", _shown(link.rel(compilation_doc)), ") (`", _shown(link.abs(compilation_doc)), "`)\n"]
    _insight_lines(out, insights, link, "- Insight: [{id}]({rel}) (`{abs}`); " + _OWN_LESSON + ": \"{title}\"\n")
    return "".join(out)


def _dictsort(mapping) -> list:
    """jinja2's ``dictsort``: items by key, strings compared without case."""
    return sorted((mapping or {}).items(), key=lambda kv: kv[0].lower() if isinstance(kv[0], str) else kv[0])
