"""Importing the client ahead of the first request, where a command knows it will make one."""

from __future__ import annotations


def import_client_ahead() -> None:
    """Start importing ``openai`` on a thread once the add knows it has a run to compile and
    the corpus's model to ask it (wikitrace add: an LLM corpus, and not ``--offline``): the half
    second of imports then runs beside carrying the corpus over and compiling the run (what
    of it lets go of the interpreter lock: reading and hashing files) instead of after them,
    at the first request. A new run is rarely in the response cache, so the import is
    almost never wasted; when it is, it costs CPU but no waiting."""
    import sys
    import threading

    if "openai" in sys.modules:
        return

    def load() -> None:
        try:
            import openai  # noqa: F401
        except Exception:  # imported again where the client is made, and any failure reported there
            pass

    # not a daemon: a command ending meanwhile waits for the import rather than cutting it short
    threading.Thread(target=load, name="wikitrace-import-openai").start()
