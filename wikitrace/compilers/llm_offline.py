"""What the LLM path makes of a run before asking the model, made where it costs the build least.

The LLM path needs a run's offline compilation too: a model's lessons are grouped
under the offline lessons' keys (corpus/update.py), and a run the model could not
answer falls back to it. It also renders the run's prompt (task, turn log, outcome).
Made in the build's main process, the two were about a third of that process's CPU,
the process every model request waits on. When the input is read in a helper
process (runs/read_helper.py), this module is that helper: it makes both for each
run as it reads it and sends them along with the run, so the main process only
picks them up (``offline_compilation``, ``prompt_for``).
"""

from __future__ import annotations

import sys
from json.encoder import encode_basestring

from ..runs.model import Run
from .schema import Compilation, KeyFact
from .in_short import NOTHING_SETTLED
from .offline import compile_offline
from .prompt_views import Prompt, build_prompt

# Kept in the run's __dict__: not fields, so never hashed, compared or written.
_KEY = "_wikitrace_offline_compilation"
_PROMPT = "_wikitrace_prompt"
# The prompt's limits unless a caller sets others (LLMCompiler's defaults).
PROMPT_LIMITS = {"clip_limit": 2000, "trajectory_budget": 60_000, "solver_prompt_limit": 8_000}


def precompile(run: Run, task_type: str | None = None, templates: str | None = None) -> None:
    """Compile ``run`` offline and render its prompt (default limits, ``templates``), and keep
    both with it. ``task_type`` is the build's ``--task-type``, applied as the build applies
    it before compiling (lessons and the prompt use it)."""
    if task_type and not run.task.task_type and not run.task.apps:
        run.task.task_type = task_type
    run.__dict__[_KEY] = compile_offline(run)
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


def offline_compilation(run: Run) -> Compilation:
    """The run's offline compilation: the one made beside the build (taken, so it is
    used once), or made now."""
    made = run.__dict__.pop(_KEY, None)
    return made if made is not None else compile_offline(run)


def offline_decisive(run: Run) -> dict:
    """The decisive calls of the run's offline compilation (compilers/trial_record.py): read from
    the log, so the same whichever compiler writes the page. Call after ``offline_facts``."""
    made = run.__dict__.get(_KEY)
    return dict(made.decisive) if made is not None else compile_offline(run).decisive


def offline_facts(run: Run) -> list[KeyFact]:
    """The "In short" facts of the run's offline compilation, for a model's page: checked
    against the log, so they hold whatever the model wrote. The compilation stays kept with
    the run for its other uses in the build (the lessons' keys, a fallback's page)."""
    made = run.__dict__.get(_KEY)
    if made is None:
        made = run.__dict__[_KEY] = compile_offline(run)
    return [f for f in made.in_short if f.text not in NOTHING_SETTLED.values()]


if __name__ == "__main__":
    import signal

    from ..helper_process import exit_now
    from ..runs.read_helper import serve

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    exit_now(serve(sys.stdin.buffer, sys.stdout.buffer, each=precompile))
