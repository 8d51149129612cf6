"""What the LLM path makes of a run before asking the model, made where it costs the build least.

A model's lessons are grouped under the keys of the run's offline lessons (corpus/update.py),
and a model's page shows the run's offline "In short" facts; the path also renders the run's
prompt (task, turn log, outcome). Made in the build's main process, these were about a third
of that process's CPU, the process every model request waits on. When the input is read in a
helper process (runs/read_helper.py), this module is that helper: it makes them for each run
as it reads it and sends them along with the run, so the main process only picks them up
(``offline_lessons``, ``prompt_for``).

Only the lessons, patterns and facts are made ahead, not the whole offline page (its
description, the notes on where each value came from, the grounding of its quotes): a run
the model answers never shows that page, and it was a quarter of the helper's time per run,
the longest step of a build at low latency. A run that falls back compiles its page then.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from types import SimpleNamespace
from json.encoder import encode_basestring

from ..runs.model import Run
from .prompt_views import Prompt, build_prompt
from .schema import MAX_INSIGHTS, CandidateInsight, KeyFact

# Kept in the run's __dict__: not fields, so never hashed, compared or written. The lessons
# are kept as a plain tuple of OfflineLessons' fields: the run goes on to the page writer
# as the reader pickled it, and unpickling a class of this module there would import the
# whole offline compiler into that process.
_KEY = "_wikitrace_offline_lessons"
_PROMPT = "_wikitrace_prompt"
# The prompt's limits unless a caller sets others (LLMCompiler's defaults).
PROMPT_LIMITS = {"clip_limit": 2000, "trajectory_budget": 60_000, "solver_prompt_limit": 8_000}


@dataclass
class OfflineLessons:
    """The parts of a run's offline compilation a model's page uses (``compile_offline`` makes
    the same ones)."""

    insights: list[CandidateInsight]
    patterns: list[str]
    in_short: list[KeyFact]
    decisive: dict  # the decisive calls other trials of the task are compared on (trial_record.py)
    value_rules: list[list[str]]  # the prompt's rules naming a looked-up record's value (value_rules.py)
    # ``in_short`` less the placeholders that say nothing was settled: the facts a model's page
    # shows, picked where the lessons are made (the main process then never imports in_short)
    shown_facts: list[KeyFact]


# One run in this many is left to the build's main process: made here for every run, they made
# this process the one the build waited on (7.1 CPU-s of 2,000 runs against the main process's 4.8).
LEFT_TO_BUILD = 4
_read = itertools.count()  # the runs read so far


def precompile(run: Run, task_type: str | None = None, templates: str | None = None) -> None:
    """Make ``run``'s offline lessons and render its prompt (default limits, ``templates``), and
    keep both with it, for all but one run in ``LEFT_TO_BUILD``. ``task_type`` is the build's
    ``--task-type``, applied as the build applies it before compiling (lessons and the prompt use it)."""
    if task_type and not run.task.task_type and not run.task.apps:
        run.task.task_type = task_type
    if next(_read) % LEFT_TO_BUILD == LEFT_TO_BUILD - 1:
        return  # the build makes this run's (offline_lessons, prompt_for)
    run.__dict__[_KEY] = _lessons(run)
    settings = (templates, tuple(sorted(PROMPT_LIMITS.items())))
    prompt = build_prompt(run, templates, **PROMPT_LIMITS)
    prompt.user_json = encode_basestring(prompt.user)  # the request and its cache key splice it in
    run.__dict__[_PROMPT] = (settings, prompt)


def prompt_for(run: Run, templates: str | None, **limits: int) -> Prompt:
    """The run's prompt under these settings: the one rendered beside the build when it was
    rendered under the same ones (taken, so it is used once), or rendered now."""
    made = run.__dict__.pop(_PROMPT, None)
    if made is not None and made[0] == (templates, tuple(sorted(limits.items()))):
        return made[1]
    return build_prompt(run, templates, **limits)


def offline_lessons(run: Run) -> OfflineLessons:
    """The run's offline lessons, patterns and facts: the ones made beside the build, or made now."""
    made = run.__dict__.get(_KEY)
    if made is None:
        made = run.__dict__[_KEY] = _lessons(run)
    return OfflineLessons(*made)


def offline_decisive(run: Run) -> dict:
    """The decisive calls of the run's offline compilation (compilers/trial_record.py): read from
    the log, so the same whichever compiler writes the page."""
    return dict(offline_lessons(run).decisive)


def offline_facts(run: Run) -> list[KeyFact]:
    """The "In short" facts of the run's offline compilation, for a model's page: checked
    against the log, so they hold whatever the model wrote."""
    return list(offline_lessons(run).shown_facts)


def _parts() -> tuple:
    """The offline compiler's steps ``_lessons`` runs, imported at the first run made here (the
    reader's, or one the reader did not make): the build's main process imports this module
    before its first request and never needs them. Kept once imported: six imports inside
    ``_lessons`` cost a dozen microseconds a run."""
    global _PARTS
    if _PARTS is None:
        from .in_short import NOTHING_SETTLED, in_short
        from .offline import chosen_items
        from .run_insights import insights_for
        from .run_patterns import patterns_of
        from .trial_record import decisive
        from .value_rules import value_rules

        _PARTS = (NOTHING_SETTLED, in_short, chosen_items, insights_for, patterns_of, decisive, value_rules)
    return _PARTS


_PARTS: tuple | None = None


def _lessons(run: Run) -> tuple:
    """OfflineLessons' fields, made as ``compile_offline`` makes them."""
    NOTHING_SETTLED, in_short, chosen_items, insights_for, patterns_of, decisive, value_rules = _parts()
    reading, chosen = chosen_items(run, with_notes=False)  # the notes are the offline page's alone
    facts = in_short(reading)
    patterns = patterns_of(reading)
    return (insights_for(reading, chosen)[:MAX_INSIGHTS], patterns, facts,
            decisive(reading, SimpleNamespace(in_short=facts)), value_rules(reading, patterns),
            [f for f in facts if f.text not in NOTHING_SETTLED.values()])


if __name__ == "__main__":
    import signal

    from ..helper_process import exit_now
    from ..runs.read_helper import serve

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    # what the first run needs, imported while the build (which may have begun this process
    # early: helper_process.start_early) is still importing itself and sending the request
    import importlib

    for name in ("in_short", "offline", "run_insights", "run_patterns", "trial_record", "value_rules"):
        importlib.import_module(f"{__package__}.{name}")

    exit_now(serve(sys.stdin.buffer, sys.stdout.buffer, each=precompile))
