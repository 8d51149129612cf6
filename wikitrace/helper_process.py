"""A helper Python process that a build talks to in pickled frames over its stdin/stdout.

A build is plain Python under one interpreter lock; reading runs and writing
pages are work that can run on another core beside the model calls. Both ends
of the pipe are this package, so the pickles are our own, never input data
from elsewhere.
"""

from __future__ import annotations

import collections
import os
import pickle
import struct
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, BinaryIO

_FRAME = struct.Struct("<Q")  # length prefix of one pickled frame
EOF = object()  # what ``receive`` returns when the other end closed without a whole frame


class Pickled:
    """An object pickled once, passed on as its bytes: a run the reader process pickled
    reaches the page writer without the build pickling it a second time."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = data

    def __reduce__(self):
        return (Pickled, (self.data,))

    def load(self) -> Any:
        return pickle.loads(self.data)


class PickledOriginal(Pickled):
    """A run's kept original record (``run.source["original"]``), pickled in the reader
    process and unpickled only where its page is written. Nothing in the build's main
    process reads the record, and it is a tree of small objects as large as the run's
    turns: unpickling it there cost more than the rest of the run. ``suffix`` names the
    page it makes (``txt``, ``jsonl`` or ``json``: corpus/pages.py)."""

    __slots__ = ("suffix",)

    def __init__(self, data: bytes, suffix: str):
        self.data, self.suffix = data, suffix

    def __reduce__(self):
        return (PickledOriginal, (self.data, self.suffix))


# Where a run received from the reader keeps its Pickled form (not a field: never hashed,
# compared or written). Only a run the build does not change is passed on this way.
PICKLED_ATTR = "_wikitrace_pickled"


def child_env() -> dict[str, str]:
    """This environment, with this same wikitrace first on the import path."""
    import wikitrace

    env = dict(os.environ)
    package_root = str(Path(wikitrace.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    return env


# Helpers started before the command knew it would ask for them (``start_early``), by module,
# with the request sent to each already (None: none yet).
_early: dict[str, tuple[subprocess.Popen, Any]] = {}


def start(module: str, request: Any = None) -> subprocess.Popen:
    """The helper ``module``: the one ``start_early`` began, when it is still waiting, else a new one.
    ``request``: sent as its one frame of input (its stdin then closed); one begun early that was
    sent another request already is ended, and a new one started."""
    proc, sent = _early.pop(module, (None, None))
    if proc is not None and proc.poll() is None and (sent is None or sent == request):
        if sent is None and request is not None:
            _ask(proc, request)
        return proc
    if proc is not None:
        stop(proc)
    proc = _spawn(module)
    if request is not None:
        _ask(proc, request)
    return proc


def start_early(module: str) -> None:
    """Begin the helper ``module`` for a later ``start(module)``: a new interpreter and its
    imports take a tenth of a second or more, which then runs on the other core beside the
    command's own imports rather than after them. It waits for its request on stdin; one
    never asked for is ended by ``discard_early``. Not started when this system cannot."""
    if module not in _early:
        try:
            _early[module] = (_spawn(module), None)
        except OSError:
            pass


def waiting_early(module: str) -> bool:
    """A helper ``module`` begun early that no request was sent to yet."""
    return module in _early and _early[module][1] is None


def ask_early(module: str, request: Any) -> None:
    """Send the helper begun early its request now, before the command itself is ready to ask
    (the reader then begins reading while the build is still importing itself). ``start``
    takes the helper only when the command then asks the same."""
    proc, sent = _early.get(module, (None, None))
    if proc is None or sent is not None:
        return
    try:
        _ask(proc, request)
    except OSError:  # stopped: the build starts its own
        del _early[module]
        return
    _early[module] = (proc, request)


def discard_early() -> None:
    """End the helpers begun early that the command did not ask for."""
    while _early:
        stop(_early.popitem()[1][0])


def _ask(proc: subprocess.Popen, request: Any) -> None:
    try:
        send(proc.stdin, request)
        proc.stdin.close()
    except OSError:
        stop(proc)
        raise


def _spawn(module: str) -> subprocess.Popen:
    """``python -m module`` with this same wikitrace importable; stderr is shared. ``-P``: the
    current folder does not go first on the path, where another checkout (or any folder named
    wikitrace) would otherwise shadow the package the build runs."""
    return subprocess.Popen([sys.executable, "-P", "-m", module], env={**child_env(), "WIKITRACE_HELPER_PARENT": str(os.getpid())},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def die_with_parent() -> None:
    """In a helper: be killed when the build that started it dies (even by ``kill -9``), so
    no orphan goes on writing into a corpus that the next build is already updating."""
    parent = int(os.environ.get("WIKITRACE_HELPER_PARENT") or os.getppid())
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL (Linux)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the build died before that took effect
        os._exit(1)


def exit_now(code: int) -> None:
    """End a helper that has answered without the interpreter's teardown: the build waits
    for this process to end (errors.exit_now)."""
    from .errors import exit_now as end

    end(code)


def send(stream: BinaryIO, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(data)))
    stream.write(data)
    stream.flush()


class Sender:
    """Frames written on a thread. A frame of pages is far larger than a pipe holds, so
    writing it blocked the build until the helper had read it, and with it every model
    request and reply in flight. Up to ``depth`` frames wait here instead (or, with
    ``budget``, as many as fit in that many bytes: the reader process reads ahead while the
    build is still starting, however large its runs); a failed write is raised by the next
    ``send`` or by ``close``."""

    def __init__(self, stream: BinaryIO, depth: int = 8, budget: int | None = None):
        self.stream = stream
        self.error: BaseException | None = None
        self._frames: collections.deque = collections.deque()
        self._queued = 0  # bytes in ``_frames``
        self._depth, self._budget = depth, budget
        self._closed = False
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._write, name="wikitrace-helper-pipe", daemon=True)
        self._thread.start()

    def send(self, obj: Any) -> None:
        if self.error is not None:
            raise self.error
        self._put(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))

    def close(self, wait: bool = True) -> None:
        """Send no more; unless ``wait`` is False, wait until every frame is written and raise
        what a write met (a second ``close`` waits)."""
        if not self._closed:
            self._closed = True
            self._put(None)
        if wait:
            self._thread.join()
            if self.error is not None:
                raise self.error

    def _full(self) -> bool:
        if not self._frames:
            return False  # one frame always goes, however large
        return self._queued >= self._budget if self._budget is not None else len(self._frames) >= self._depth

    def _put(self, data: bytes | None) -> None:
        with self._changed:
            while self._full():
                self._changed.wait()
            self._frames.append(data)
            self._queued += len(data or b"")
            self._changed.notify_all()

    def _take(self) -> bytes | None:
        with self._changed:
            while not self._frames:
                self._changed.wait()
            data = self._frames.popleft()
            self._queued -= len(data or b"")
            self._changed.notify_all()
            return data

    def _write(self) -> None:
        while (data := self._take()) is not None:
            if self.error is None:  # after a failure the frames are dropped, so ``send`` never blocks
                try:
                    self.stream.write(_FRAME.pack(len(data)))
                    self.stream.write(data)
                    self.stream.flush()
                except (OSError, ValueError) as exc:
                    self.error = exc


def receive(stream: BinaryIO) -> Any:
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return EOF
    (size,) = _FRAME.unpack(head)
    data = stream.read(size)
    if len(data) < size:
        return EOF
    return pickle.loads(data)


def stop(proc: subprocess.Popen) -> None:
    """End a helper that is no longer wanted (the build failed or stopped reading)."""
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
