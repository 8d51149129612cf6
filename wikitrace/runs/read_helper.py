"""Reading runs in a helper process, beside the build.

Parsing, redacting and hashing a run costs about a millisecond of Python, a
third of what an LLM build spends per run under one interpreter lock. For large
inputs the build reads through ``python -m wikitrace.runs.read_helper``, which
runs ``load.iter_runs`` with the same arguments and sends the runs back
pickled, in input order (unpickling costs a twentieth of reading). Its
LoadReport is merged into the build's at the end; a strict-mode RunError is
raised in the build as if it had been read there. It can also count the
outcomes first, while the build is still importing the model client.

Each run is pickled on its own here (``_Shipped``), so the build can hand the same bytes
on to the page writer. A module of a higher layer may serve the same protocol with a step of its own for
every run read (``serve(..., each=...)``, started as ``RunReader(..., module=...)``):
the LLM path's reader also makes each run's offline lessons and prompt there
(compilers/llm_offline.py), the offline build's compiles each run (compilers/offline_reader.py).
"""

from __future__ import annotations

import pickle
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterator

from .. import helper_process
from ._common import Carried
from .model import RunError
from .original import seal_original

if TYPE_CHECKING:
    from ..build_options import BuildOptions
    from .load import LoadReport

BATCH = 16  # runs per frame
# Frames read ahead of the build and not yet taken: the build takes runs only as it compiles
# them, and while it starts (the model client's import alone is most of a second) this
# process would otherwise stop after the few frames a pipe holds.
READ_AHEAD_BYTES = 32 * 1024 * 1024
WORTH_IT_BYTES = 4 * 1024 * 1024  # smaller inputs are read before a process would have started


def worth_a_helper(paths: list[Path]) -> bool:
    """True for inputs large enough that reading beside the build pays off."""
    total = 0
    for path in paths:
        try:
            if path.is_dir():
                return True  # a folder of logs: usually many runs
            total += path.stat().st_size
        except OSError:
            continue
        if total >= WORTH_IT_BYTES:
            return True
    return False


READER = "wikitrace.runs.read_helper"
LLM_READER = "wikitrace.compilers.llm_offline"  # the reader of the LLM path: it also prepares each run
OFFLINE_READER = "wikitrace.compilers.offline_reader"  # the offline build's: it also compiles each run


def start_early(paths: list[Path], llm: bool) -> None:
    """Begin the reader process that a build of ``paths`` will ask for (``RunReader``), before the
    build itself is imported: the reader's start-up, not the build's, is what the first model
    request waited for. Nothing for inputs read in the build's own process."""
    if worth_a_helper(paths):
        helper_process.start_early(LLM_READER if llm else OFFLINE_READER)


def read_kwargs(opts: BuildOptions, known: dict | None) -> dict:
    """How the build reads its input (``load.iter_runs``' options), here or in the reader."""
    return dict(outcomes=opts.outcomes, strict=opts.strict, redact=opts.redact,
                redact_patterns=tuple(opts.redact_patterns), known=known)


def request(opts: BuildOptions, known: dict, count_first: bool, llm: bool) -> tuple[str, tuple]:
    """(the reader's module, what a build of ``opts`` asks it): the input, how to read it
    (``known``: the records compiled before, by digest), and on the LLM path how to prepare each run."""
    templates = str(opts.templates) if opts.templates else None
    each_args = {"task_type": opts.task_type, "templates": templates} if llm else {"task_type": opts.task_type}
    return (LLM_READER if llm else OFFLINE_READER,
            (list(opts.inputs), opts.fmt, count_first, read_kwargs(opts, known), each_args))


def ask_early(opts: BuildOptions) -> None:
    """Send the reader begun early (``start_early``) its request as soon as the options are made,
    when the build will write a new corpus: it then compiles nothing read before (``known`` is
    empty), so the request is known before the build is imported and the reader begins reading
    beside that import rather than after it (about a third of a second, when the model's client
    and the build were imported first). ``RunReader`` takes the reader only if the build then asks
    exactly this; otherwise a new one is started."""
    llm = helper_process.waiting_early(LLM_READER)
    if not (llm or helper_process.waiting_early(OFFLINE_READER)):
        return
    try:
        fresh = not any(Path(opts.out).iterdir())
    except FileNotFoundError:
        fresh = True
    except OSError:
        return
    if fresh:
        # the build counts the outcomes first on the model's path, when it announces them (not --quiet)
        helper_process.ask_early(*request(opts, {}, llm and not opts.quiet, llm))


class RunReader:
    """``load.iter_runs`` in a helper process: the same items, report and errors.

    With ``count_first`` the helper first counts the outcomes (``load.count_outcomes``:
    the runs unredacted, what the reading tells redacted) and sends them, so the build can
    show them before any model call while it is still starting up itself.
    """

    def __init__(self, paths: list[Path], fmt: str | None, count_first: bool = False, *,
                 module: str = READER, each_args: dict | None = None, **kwargs):
        self._done = False
        self.proc = helper_process.start(module, (list(paths), fmt, count_first, kwargs, each_args or {}))
        helper_process.discard_early()  # a reader begun early for the other path (and asked) reads for nothing

    def counts(self) -> Counter:
        kind, payload = self._receive()
        if kind == "counts":
            return payload
        raise RunError(payload[0] if kind == "error" else f"the run reader process failed: {payload}")

    def runs(self, report: LoadReport) -> Iterator:
        try:
            while True:
                kind, payload = self._receive()
                if kind == "runs":
                    for item in payload:
                        yield item.open() if isinstance(item, _Shipped) else item
                elif kind == "done":
                    report.merge(payload)
                    self._done = True
                    return
                elif kind == "error":  # a strict-mode stop, raised here as it would have been
                    report.merge(payload[1])
                    self._done = True
                    raise RunError(payload[0])
                else:
                    raise RunError(f"the run reader process failed: {payload}")
        finally:
            self.stop()

    def stop(self) -> None:
        if self._done:
            self.proc.wait()
        else:
            helper_process.stop(self.proc)

    def _receive(self) -> tuple:
        message = helper_process.receive(self.proc.stdout)
        if message is helper_process.EOF:
            raise RunError(f"the run reader process stopped unexpectedly (exit status {self.proc.wait()})")
        return message


class _Shipped:
    """A run read (and prepared by ``each``) here, pickled on its own and sent with what
    ``each`` kept beside it (its ``_wikitrace_*`` attributes). The build unpickles it as
    before and keeps the bytes: compiling a run changes nothing of it (on the LLM path the
    build's defaults were applied here first; a run the build itself changes drops the
    bytes, build_input.apply_defaults), so the page writer is handed these bytes instead of a
    run pickled once more in the build's main process, the process every run waits on."""

    __slots__ = ("pickled", "kept")

    def __init__(self, pickled: helper_process.Pickled, kept: dict):
        self.pickled, self.kept = pickled, kept

    @classmethod
    def of(cls, run) -> "_Shipped":
        kept = {k: v for k, v in run.__dict__.items() if k.startswith("_wikitrace_")}
        for k in kept:
            del run.__dict__[k]
        return cls(helper_process.Pickled(pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL)), kept)

    def open(self):
        run = self.pickled.load()
        run.__dict__.update(self.kept)
        run.__dict__[helper_process.PICKLED_ATTR] = self.pickled
        return run


def serve(inp: BinaryIO, out: BinaryIO, each: Callable[..., Any] | None = None) -> int:
    """Read as the build asked and send the runs back; ``each(run, **each_args)`` is called on
    every run read (not on records carried over unparsed) before it is sent."""
    from ..gc_policy import collect_less

    collect_less()
    from .load import LoadReport, count_outcomes, iter_runs  # imported while the build sends its request

    request = helper_process.receive(inp)
    if request is helper_process.EOF:
        return 1  # the build went away (Ctrl-C, a failure) before saying what to read
    paths, fmt, count_first, kwargs, each_args = request
    report = LoadReport()
    batch: list = []
    size = 1  # the first runs go alone, so the build can start on them; then BATCH a frame
    sender = helper_process.Sender(out, budget=READ_AHEAD_BYTES)
    try:
        try:
            if count_first:
                counts, _ = count_outcomes(paths, fmt, **dict(kwargs, strict=False))
                sender.send(("counts", counts))
            for item in iter_runs(paths, fmt, report, **kwargs):
                if not isinstance(item, Carried):
                    if each is not None:
                        each(item, **each_args)
                    seal_original(item)  # unpickled only by the page writer
                    item = _Shipped.of(item)
                batch.append(item)
                if len(batch) >= size:
                    sender.send(("runs", batch))
                    batch, size = [], min(BATCH, size * 2)
            if batch:
                sender.send(("runs", batch))
            sender.send(("done", report))
        except RunError as exc:
            if batch:
                sender.send(("runs", batch))
            sender.send(("error", (str(exc), report)))
        except Exception as exc:  # reported to the build as a failed read
            sender.send(("crash", f"{type(exc).__name__}: {exc}"))
        sender.close()
    except (BrokenPipeError, ValueError):
        return 1  # the build stopped reading (a failed write is raised by the next send or close)
    return 0


if __name__ == "__main__":
    import signal

    # this module under its package name, so the runs it pickles (``_Shipped``) name a class the build can find
    from wikitrace.runs import read_helper

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    helper_process.exit_now(read_helper.serve(sys.stdin.buffer, sys.stdout.buffer))
