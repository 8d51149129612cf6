"""The offline compilation of a run on the LLM path, made where it costs the build least.

The LLM path needs a run's offline compilation too: a model's lessons are grouped
under the offline lessons' keys (corpus/update.py), and a run the model could not
answer falls back to it. Made in the build's main process, it was about a fifth of
that process's CPU, the process every model request waits on. When the input is
read in a helper process (runs/read_helper.py), this module is that helper: it
compiles each run offline as it reads it and sends the compilation along with the
run, so the main process only picks it up (``offline_compilation``).
"""

from __future__ import annotations

import sys

from ..runs.model import Run
from .schema import Compilation
from .offline import compile_offline

_KEY = "_wikitrace_offline_compilation"  # in the run's __dict__: not a field, so never hashed or written


def precompile(run: Run, task_type: str | None = None) -> None:
    """Compile ``run`` offline and keep the result with it. ``task_type`` is the build's
    ``--task-type``, applied as the build applies it before compiling (lessons use it)."""
    if task_type and not run.task.task_type and not run.task.apps:
        run.task.task_type = task_type
    run.__dict__[_KEY] = compile_offline(run)


def offline_compilation(run: Run) -> Compilation:
    """The run's offline compilation: the one made beside the build (taken, so it is
    used once), or made now."""
    made = run.__dict__.pop(_KEY, None)
    return made if made is not None else compile_offline(run)


if __name__ == "__main__":
    import signal

    from ..runs.read_helper import serve

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer, each=precompile))
