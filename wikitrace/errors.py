"""One error path for the whole command line.

Library code raises a ``WikitraceError`` (or one of the exceptions below that
already derive from it) saying where, what and what to do; ``cli.main`` catches
it and prints exactly one line::

    wikitrace: error: <file>[:line]: <what> — <what to do>

Exit codes: 2 for a usage or input error (the user must change the command or
the input), 1 for a command that ran and found problems or a build that failed,
130 on Ctrl-C. A closed stdout (``| head``) ends the command quietly. Anything
else is a bug: still one line (the traceback only with WIKITRACE_DEBUG=1).

Every line the command prints passes ``redact.scrub`` (``RedactingStream``): a secret in a
file name, an echoed id or an endpoint's error body never reaches the terminal or a log.

Stdlib only and no imports at module level beyond ``sys``: ``prompt`` and the
agent tools start in a few milliseconds and pay for this module on every call.
"""

from __future__ import annotations

import sys

PREFIX = "wikitrace: error: "
DEBUG_ENV = "WIKITRACE_DEBUG"


class WikitraceError(Exception):
    """A problem the user can fix. ``where`` is a file (or an option) and ``line`` a
    line in it; ``fix`` says what to do. A single message argument is printed as is."""

    exit_code = 2

    def __init__(self, what: str, fix: str | None = None, *, where: object = None, line: int | None = None):
        self.what, self.fix, self.where, self.line = what, fix, where, line
        super().__init__(self.message())

    def message(self) -> str:
        text = self.what
        if self.where is not None:
            text = f"{self.where}{f':{self.line}' if self.line else ''}: {text}"
        if self.fix:
            text = f"{text} — {self.fix}"
        return text


class UsageError(WikitraceError, ValueError):
    """The command line asks for something that cannot be (unknown name, bad value)."""


class InputError(WikitraceError, ValueError):
    """An input file is missing, unreadable or not in the shape the command reads."""


class Failed(WikitraceError):
    """The command ran and failed (a build that published nothing, problems found)."""

    exit_code = 1


_OS_FIXES = {
    "ENOENT": ("no such file or folder", "check the path"),
    "EACCES": ("permission denied", "choose a path you may read or write"),
    "EPERM": ("operation not permitted", "choose a path you may read or write"),
    "EROFS": ("read-only file system", "choose a folder on a writable disk"),
    "EISDIR": ("is a folder, not a file", "give a file, or remove or rename the folder"),
    "ENOTDIR": ("a part of this path is a file, not a folder", "check the path"),
    "ENOSPC": ("no space left on the device", "free some space and run again"),
    "EDQUOT": ("disk quota exceeded", "free some space and run again"),
    "ENAMETOOLONG": ("file name too long", "choose a shorter path"),
}


def from_os_error(exc: OSError) -> WikitraceError:
    """An OSError as one line naming the file; a full disk is a failed run (1), the rest
    are about the path the user gave (2)."""
    import errno

    name = errno.errorcode.get(exc.errno or 0, "")
    what, fix = _OS_FIXES.get(name, (exc.strerror or str(exc), "check the path and run again"))
    where = exc.filename if exc.filename is not None else None
    err = (Failed if name in ("ENOSPC", "EDQUOT", "EIO") else InputError)(what, fix, where=where)
    return err


def report(exc: BaseException) -> int:
    """Print ``exc`` as the one error line; return the exit code it calls for."""
    if isinstance(exc, OSError) and not isinstance(exc, WikitraceError):
        exc = from_os_error(exc)
    if isinstance(exc, WikitraceError):
        line, code = exc.message(), exc.exit_code
    else:
        line = (f"internal error ({type(exc).__name__}: {exc}) — this is a bug in wikitrace; "
                f"run again with {DEBUG_ENV}=1 to see where, and report it")
        code = 1
    from .controls import visible
    from .redact import scrub

    # a name or id the message quotes from an input may hold ESC or a bidi override: shown, not acted on
    sys.stderr.write(PREFIX + visible(scrub(" ".join(str(line).split("\n")))) + "\n")
    return code


class RedactingStream:
    """A text stream whose every line passes ``redact.scrub`` before it reaches ``stream``:
    installed as stdout and stderr for the whole command, so no print, echo, progress line or
    error message can skip it. Text is held until a line ends (or a flush), so a secret
    written in pieces is seen whole; everything else is the wrapped stream's."""

    def __init__(self, stream):
        self._stream = stream
        self._pending = ""

    def write(self, text: str) -> int:
        self._pending += text
        cut = self._pending.rfind("\n")
        if cut >= 0:
            done, self._pending = self._pending[:cut + 1], self._pending[cut + 1:]
            self._emit(done)
        return len(text)

    def _emit(self, text: str) -> None:
        from .redact import scrub

        self._stream.write(scrub(text))

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._pending:
            text, self._pending = self._pending, ""
            self._emit(text)
        self._stream.flush()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def redact_output() -> None:
    """Route sys.stdout and sys.stderr through ``RedactingStream`` (once)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is not None and not isinstance(stream, RedactingStream):
            setattr(sys, name, RedactingStream(stream))


def _quiet_stdout() -> None:
    """After a reader closed the pipe: send what is left to /dev/null so the flush at
    exit does not complain a second time."""
    import os

    if isinstance(sys.stdout, RedactingStream):
        sys.stdout._pending = ""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


_teardown_needed = True


def skip_teardown() -> None:
    """Said by a command that has closed every file it wrote: ``run`` may then end the
    process once the exit handlers have run, without the interpreter's teardown (collecting
    every object a large build left behind costs about a third of a CPU-second)."""
    global _teardown_needed
    _teardown_needed = False


def run(entry, *, process_ends_here: bool = False) -> None:
    """Call ``entry()`` (which returns an exit code or raises SystemExit) under the one
    error path, then exit with the right code. ``process_ends_here``: said only by the
    executable's own entry points; a caller that runs a command inside its own process (a
    test, a notebook) gets SystemExit and its process is never ended from under it."""
    import os

    global _teardown_needed
    _teardown_needed = True
    redact_output()
    try:
        code = entry()
    except SystemExit as exc:
        code = exc.code
        if isinstance(code, str):  # SystemExit("message"): still the one error line
            sys.stderr.write(PREFIX + code + "\n")
            code = 1
    except KeyboardInterrupt:
        sys.stderr.write("\n" + PREFIX + "interrupted\n")
        code = 130
    except BrokenPipeError:
        _quiet_stdout()
        code = 0
    except Exception as exc:
        if os.environ.get(DEBUG_ENV) and not isinstance(exc, WikitraceError):
            raise
        code = report(exc)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
    except (OSError, ValueError):
        pass
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    if process_ends_here and not _teardown_needed and (code is None or isinstance(code, int)):
        _exit_without_teardown(code or 0)
    raise SystemExit(code)


def _exit_without_teardown(code: int) -> None:
    """Exit handlers, then the end of the process; only when no thread is left that the
    interpreter would wait for (else the usual exit does that)."""
    import threading

    if any(not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        return
    exit_now(code)


def exit_now(code: int) -> None:
    """End this process now: exit handlers run and the streams are flushed, but the
    interpreter's teardown (collecting everything the process made) is skipped."""
    import atexit
    import os

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
