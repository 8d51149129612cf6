"""How often the garbage collector looks for reference cycles in a command's processes.

A build makes and drops millions of small acyclic objects (turns, page lines, JSON
values). At Python's default the collector passes over the young ones every 700 new
objects and finds almost nothing: about 4% of a build's CPU. Set by the command and
by the build's helper processes, never on import (a program using the package as a
library keeps its own setting).
"""

from __future__ import annotations

from contextlib import contextmanager

_command_process = False  # collect_less was called: this process is a command's, and ends with it


def collect_less() -> None:
    """Look for cycles among young objects ten times less often (every 7,000 new objects)."""
    import gc

    global _command_process
    _command_process = True
    gc.set_threshold(7000, 10, 10)


@contextmanager
def paused():
    """No cycle collection while a command holds a whole corpus in memory.

    ``add`` reads corpus.json and the manifest (millions of objects, none of them in
    a cycle) and then makes a few more; the collections walk them again and again,
    about a tenth of an add's CPU on 10,000 runs. The collector is set back as it was
    afterwards (a library caller keeps its own setting), and the next collection finds
    the cycles made meanwhile (a few per run added: an add of thousands of runs holds
    them until it ends). In a command's own process (``collect_less`` was called) the
    collector stays off: the process ends with the command, and the first collection
    after re-enabling would walk every object of the corpus just dropped or about to be."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was and not _command_process:
            gc.enable()
