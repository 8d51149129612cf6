"""The offline build's reader: every other run is compiled where it is read.

An offline build's main process compiled every run itself, most of its CPU, while the reader
process beside it (runs/read_helper.py) only parsed and redacted. Compiling a run needs the
run alone, so this reader compiles one run in two right after reading it and sends the
compilation along with the run (``_Shipped`` keeps it beside the run's own bytes); the build's
OfflineCompiler takes it instead of compiling again. One in two, not all: compiling them all
here made this process the one the build waited on, as the main process had been; halved, the
reader and the main process (with the page writer) each keep a core busy. A run whose compile
fails here is sent without one: the build compiles it and reports the failure as it always did.
"""

from __future__ import annotations

import itertools
import sys

from ..runs.model import Run
from .offline import PRECOMPILED, compile_offline


_read = itertools.count()  # the runs read so far


def precompile(run: Run, task_type: str | None = None) -> None:
    """Compile ``run`` offline and keep the compilation with it, for every other run read.
    ``task_type`` is the build's ``--task-type``, applied as the build applies it before compiling."""
    if task_type and not run.task.task_type and not run.task.apps:
        run.task.task_type = task_type
    if next(_read) % 2:
        return  # the build's to compile
    try:
        run.__dict__[PRECOMPILED] = compile_offline(run)
    except Exception:  # the build compiles it again and names the failure
        pass


if __name__ == "__main__":
    import signal

    from ..helper_process import exit_now
    from ..runs.read_helper import serve

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    exit_now(serve(sys.stdin.buffer, sys.stdout.buffer, each=precompile))
