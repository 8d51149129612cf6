"""How often the garbage collector looks for reference cycles in a command's processes.

A build makes and drops millions of small acyclic objects (turns, page lines, JSON
values). At Python's default the collector passes over the young ones every 700 new
objects and finds almost nothing: about 4% of a build's CPU. Set by the command and
by the build's helper processes, never on import (a program using the package as a
library keeps its own setting).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

_command_process = False  # collect_less was called: this process is a command's, and ends with it


def collect_less() -> None:
    """Look for cycles among young objects ten times less often (every 7,000 new objects)."""
    import gc

    global _command_process
    _command_process = True
    gc.set_threshold(7000, 10, 10)


def keep_for_good() -> None:
    """In a command's own process (``collect_less`` was called): no collection walks the objects
    made so far again. Meant right after a large import (the model client: a few hundred
    thousand objects, the SDK's typed models, none of them garbage), whose objects live until
    the process ends: the first collection after it walked them all (about 50 ms of CPU, on the
    way to the first model request) and each collection of an older generation walked them
    again. A library caller's collector is left as it is."""
    if _command_process:
        import gc

        gc.freeze()


_pause_lock = threading.Lock()
_pauses = 0  # pauses in progress, on any thread
_enable_after = False  # turn the collector on when the last of them ends


@contextmanager
def paused(keep_off: bool | None = None):
    """No cycle collection while a command holds a whole corpus in memory.

    ``add`` reads corpus.json and the manifest (millions of objects, none of them in
    a cycle) and then makes a few more; the collections walk them again and again,
    about a tenth of an add's CPU on 10,000 runs. The collector is set back as it was
    afterwards (a library caller keeps its own setting), and the next collection finds
    the cycles made meanwhile (a few per run added: an add of thousands of runs holds
    them until it ends). In a command's own process (``collect_less`` was called) the
    collector stays off: the process ends with the command, and the first collection
    after re-enabling would walk every object of the corpus just dropped or about to be.
    ``keep_off=False`` sets it back in any process (a pause for a while, not for the command).

    Pauses overlap (the model client is imported on a thread while ``add`` holds its own):
    the collector comes back on only when the last of them ends, only if it was on when the
    first began, and never once any of them kept it off."""
    import gc

    global _pauses, _enable_after
    if keep_off is None:
        keep_off = _command_process
    with _pause_lock:
        if _pauses == 0:
            _enable_after = gc.isenabled()
        _pauses += 1
        gc.disable()
    try:
        yield
    finally:
        with _pause_lock:
            _pauses -= 1
            if keep_off:
                _enable_after = False
            if _pauses == 0 and _enable_after:
                gc.enable()
