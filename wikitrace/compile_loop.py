"""The event loop of a build: runs in, up to ``concurrency`` compiled at once, results out in input order.

The runs come from a blocking iterator (a pipe from the reader process, or parsing in
this process). Iterated on the loop, every wait for the next run stopped the loop too:
replies sat unread and no request went out while the reader caught up, and a build
read a whole window of runs before its first request left. So the runs are taken from
the iterator on a thread (``RunFeed``: a few runs ahead, never more) and each run's
compile starts as soon as the run is there.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from typing import Any, Awaitable, Callable, Iterable

from .compilers.base import Compiler
from .corpus.update import REUSED, Reuse
from .runs._common import Carried
from .runs.model import Run, content_hash

_END = object()


class RunFeed:
    """The items of a blocking iterator, taken on a thread and awaited on the running loop.

    At most ``ahead`` items are taken and not yet awaited, so a large input is never
    read into memory ahead of the build. What the iterator raises is raised by
    ``next`` in its place, after the items before it."""

    def __init__(self, items: Iterable[Any], ahead: int):
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue = asyncio.Queue()
        self._room = threading.Semaphore(ahead)
        self._stopping = False
        self._thread = threading.Thread(target=self._pump, args=(iter(items),), name="wikitrace-runs", daemon=True)
        self._thread.start()

    def _pump(self, items) -> None:
        while True:
            self._room.acquire()
            if self._stopping:
                return
            try:
                item = next(items)
            except StopIteration:
                item = (_END, None)
            except BaseException as exc:  # raised on the loop, where the build handles it
                item = (_END, exc)
            else:
                item = (item, None)
            try:
                self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
            except RuntimeError:  # the loop is gone: the build stopped
                return
            if item[0] is _END:
                return

    async def next(self) -> Any:
        """The next item, or ``_END`` once the iterator is done."""
        item, exc = await self._queue.get()
        if item is _END:
            if exc is not None:
                raise exc
            return _END
        self._room.release()
        return item

    def close(self) -> None:
        """Take no more items (the thread stops at its next one; a daemon, it never holds up exit)."""
        self._stopping = True
        self._room.release()


async def compile_in_order(runs: Iterable[Run | Carried], compiler: Compiler, concurrency: int, on_done,
                           errors: list[str], reuse: Reuse, then: Callable[[], Awaitable[None]] | None = None) -> None:
    """Compile with bounded concurrency; hand results to ``on_done`` in input order; then
    await ``then()`` (on this loop, before the compiler's client is closed)."""
    # Twice as many compiles as requests: a model compiler holds its requests in flight
    # to ``concurrency`` itself (llm/transport.py), and the second half waits for a slot
    # with its request made, so a request leaves as soon as a reply is read rather than
    # after that reply's checks. Replies of a wave no longer hold the next wave back.
    sem = asyncio.Semaphore(concurrency * 2)

    async def one(run: Run, digest: str):
        if reuse.entry(run, digest) is not None:
            return REUSED
        async with sem:
            try:
                return await compiler.compile(run)
            except Exception as exc:  # a compiler bug must not sink the build
                if compiler.name == "offline":
                    errors.append(f"run {run.run_id!r}: offline compiler failed ({type(exc).__name__}: {exc}); skipped")
                    return None
                from .compilers.offline import compile_offline  # only when a compile fails

                comp = compile_offline(run)
                comp.compiler = "offline-fallback"
                comp.fallback_reason = f"internal error: {type(exc).__name__}: {exc}"
                compiler.stats().count_fallback(comp.fallback_reason)  # counted with the LLM's own fallbacks
                return comp

    window: collections.deque = collections.deque()
    feed = RunFeed(runs, ahead=concurrency)
    try:
        while (run := await feed.next()) is not _END:
            digest = None if isinstance(run, Carried) else content_hash(run)
            window.append((run, digest, asyncio.ensure_future(one(run, digest))))
            # let the new run's compile start (its request goes out) before the next run is taken
            await asyncio.sleep(0)
            while len(window) > concurrency * 4:
                r, d, task = window.popleft()
                on_done(r, d, await task)
        while window:
            r, d, task = window.popleft()
            on_done(r, d, await task)
        if then is not None:
            await then()
    finally:  # also when interrupted: an open HTTP session would be reported at exit
        feed.close()
        for _, _, task in window:
            task.cancel()
        close = getattr(compiler, "aclose", None)
        if close is not None:
            await close()
