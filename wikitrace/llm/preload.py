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
        from ..gc_policy import keep_for_good, paused

        # The import makes a few hundred thousand objects (the SDK's typed models), none of them
        # garbage: the cycle collector passing over them again and again was a fifth of its CPU,
        # and no request leaves before it is done. Set back as it was at the end, unless a pause
        # of the command's own (``add``) began meanwhile and keeps it off.
        with paused(keep_off=False):
            try:
                import openai  # noqa: F401
            except Exception:  # imported again where the client is made, and any failure reported there
                return
            keep_for_good()  # nor walked by any collection after: they live as long as the command

    # not a daemon: a command ending meanwhile waits for the import rather than cutting it short
    threading.Thread(target=load, name="wikitrace-import-openai").start()


def import_client_for_compile(offline: bool, model: str | None, base_url: str | None, cache_dir, read_cache: bool,
                              quiet: bool) -> bool:
    """``wikitrace compile``: start importing ``openai`` as soon as the options are parsed, when
    the build will ask a model (the same cases where the build makes its client ahead: a build
    that announces what it read, or one whose first answer cannot come from the response
    cache). The import costs about three quarters of a CPU-second, and until it is done no
    request can leave; begun here it runs beside the import of the build itself and the
    start of its reader, rather than after them. Settings that do not resolve are left for
    the build to report. True: the build will take the model's path."""
    if offline:
        return False
    from .config import resolve

    try:
        config = resolve(model, base_url)
    except Exception:  # the build resolves them again and says what is wrong
        return False
    if config is None:
        return False
    if quiet and read_cache:
        from .cache import ResponseCache

        if ResponseCache(cache_dir).holds_mode(FIRST_MODE):
            return True  # a rebuild answered from the cache may never need the client
    import_client_ahead()
    return True


FIRST_MODE = "json_schema"  # the response mode a compile asks in first (compilers/llm.py RESPONSE_MODES[0])
