"""Putting each run's pages into the staged tree: here, or in one helper process.

Rendering a run's pages and creating its files costs about as much CPU as
reading the run and talking to the model, and both are plain Python under one
interpreter lock. So a build of more than a few runs hands its pages to a
helper process (``python -m wikitrace.corpus.pages``) that renders and writes
them on a second core while the build goes on reading and compiling. Small
builds never start it: they write here, through the same ``PageSink`` code.

What crosses the pipe is a list of operations, pickled in batches:

- ``("run", run, comp, step, refs)``: render and write one compiled run;
- ``("carry", step, insight_ids)``: hard-link an unchanged run's pages from the
  published tree.

The helper reports the first failure when the build closes it; the build then
stops before anything is published, so a failed write never reaches readers.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO

from . import documents, layout
from .. import helper_process
from ..controls import json_visible, visible
from ..runs.turnlog import dumps_turns

BATCH = 16  # operations per pickled batch: amortises pickling and pipe calls


class PageWriteError(RuntimeError):
    """Writing the staged tree failed (disk full, permissions, a broken template)."""


def run_pages(run, comp, step: str, refs: list, mount: str, templates: Path | None) -> list[tuple[str, str]]:
    """Every file of one compiled run as (path in the corpus, text)."""
    pages = [(layout.raw_log(step), json_visible(dumps_turns(run.turns))),
             (layout.raw_metadata(step), documents.render_raw_metadata(run, step, refs, mount, templates)),
             (layout.raw_turns(step), documents.render_raw_turns(run, step, mount, templates))]
    original = run.source.get("original")
    if original is not None:  # the record as the harness wrote it (after redaction)
        kind = run.source.get("original_format") or ("text" if isinstance(original, str) else "json")
        if kind == "text":
            pages.append((f"raw/{step}/original.txt", visible(str(original))))
        elif kind == "jsonl" and isinstance(original, list):
            pages.append((f"raw/{step}/original.jsonl", json_visible(
                "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in original))))
        else:
            pages.append((f"raw/{step}/original.json",
                          json_visible(json.dumps(original, ensure_ascii=False, sort_keys=True) + "\n")))
    pages.append((layout.compilation_doc(step), documents.render_compilation(run, comp, step, refs, mount, templates)))
    for k, ref in enumerate(refs):
        pages.append((ref.path, documents.render_insight(run, comp, k, ref, step, mount, templates)))
    return pages


def _create(path: str, data: bytes) -> None:
    """A new file, created read-only (the published mode)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
    finally:
        os.close(fd)


class PageSink:
    """Applies page operations to the staged tree ``root`` (in whichever process)."""

    CARRY_THREADS = 4

    def __init__(self, root: str, published: str, mount: str, templates: str | None):
        self.root, self.published = root, published
        self.mount, self.templates = mount, Path(templates) if templates else None
        for layer in ("raw", "compilation", "insight"):
            os.makedirs(f"{root}/{layer}", exist_ok=True)
        self._pool = None  # threads for carrying runs over, made on first use
        self._pending: collections.deque = collections.deque()

    def apply(self, op: tuple) -> None:
        """Raises PageWriteError naming the run's step and what went wrong (for a
        carried run possibly later, at another call or at ``close``)."""
        if op[0] == "carry":
            # Linking is nearly all waiting in the file system, which threads overlap:
            # 10,000 runs carried over took 4.2 s in one thread, 1.1 s in four.
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.CARRY_THREADS, thread_name_prefix="wikitrace-carry")
            self._pending.append((op[1], self._pool.submit(self.carry, *op[1:])))
            if len(self._pending) > 1024:
                self._drain(keep=512)
            return
        if op[0] != "run":
            raise PageWriteError(f"unknown page operation {op[0]!r}")
        try:
            self.run(*op[1:])
        except Exception as exc:
            raise _failed(op[3], exc) from exc

    def run(self, run, comp, step: str, refs: list) -> None:
        os.mkdir(f"{self.root}/{layout.raw_dir(step)}")
        for rel, text in run_pages(run, comp, step, refs, self.mount, self.templates):
            _create(f"{self.root}/{rel}", text.encode("utf-8"))

    def carry(self, step: str, insight_ids: list[str]) -> None:
        raw = layout.raw_dir(step)
        os.mkdir(f"{self.root}/{raw}")
        rels = [f"{raw}{name}" for name in sorted(os.listdir(f"{self.published}/{raw}"))]
        rels.append(layout.compilation_doc(step))
        rels += [layout.insight_doc(i) for i in insight_ids]
        for rel in rels:
            src, dst = f"{self.published}/{rel}", f"{self.root}/{rel}"
            try:
                os.link(src, dst)
            except OSError:  # no hard links here (another filesystem): copy instead
                shutil.copy2(src, dst)

    def _drain(self, keep: int = 0) -> None:
        while len(self._pending) > keep:
            step, future = self._pending.popleft()
            try:
                future.result()
            except Exception as exc:
                raise _failed(step, exc) from exc

    def close(self) -> None:
        """Wait for the runs still being carried over; raise the first failure."""
        try:
            self._drain()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None


def _failed(step: str, exc: BaseException) -> PageWriteError:
    return PageWriteError(f"writing {step} of the staged corpus failed: {type(exc).__name__}: {exc}")


class HelperSink:
    """The same operations, sent to ``python -m wikitrace.corpus.pages``."""

    def __init__(self, root: str, published: str, mount: str, templates: str | None):
        self.proc = helper_process.start("wikitrace.corpus.pages")
        self._batch: list[tuple] = [("open", root, published, mount, templates)]
        self._flush()

    def apply(self, op: tuple) -> None:
        self._batch.append(op)
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        try:
            helper_process.send(self.proc.stdin, batch)
        except (BrokenPipeError, OSError, ValueError):
            raise PageWriteError(self._outcome() or "the page writer process stopped unexpectedly") from None

    def close(self) -> None:
        """Send what is left, wait until every page is on disk; raise what failed."""
        self._batch.append(("end",))
        self._flush()
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        problem = self._outcome()
        if problem:
            raise PageWriteError(problem)

    def kill(self) -> None:
        """Stop without waiting (the build failed; the staged tree is thrown away)."""
        helper_process.stop(self.proc)

    def _outcome(self) -> str | None:
        out = self.proc.stdout.read().decode("utf-8", "replace").strip()
        code = self.proc.wait()
        if out == "ok" and code == 0:
            return None
        return out.removeprefix("error: ") or f"the page writer process exited with status {code}"


def serve(inp: BinaryIO, out: BinaryIO) -> int:
    """The helper: apply batches until ``end``; answer ``ok`` or the first error.

    After a failure it keeps reading (and ignoring) so the build never blocks on
    a full pipe, and says what failed when the build closes it."""
    sink: Any = None
    problem: str | None = None
    while True:
        batch = helper_process.receive(inp)
        if batch is helper_process.EOF:
            return 1  # the build went away without closing: nothing to report to
        for op in batch:
            if op[0] == "end":
                if sink is not None:
                    try:
                        sink.close()
                    except PageWriteError as exc:
                        problem = problem or str(exc)
                out.write(b"ok\n" if problem is None else f"error: {problem}\n".encode("utf-8", "replace"))
                out.flush()
                return 0
            if problem is not None:
                continue
            try:
                if op[0] == "open":
                    sink = PageSink(*op[1:])
                else:
                    sink.apply(op)
            except PageWriteError as exc:  # reported to the build, which fails before publishing
                problem = str(exc)
            except Exception as exc:
                problem = f"the page writer failed: {type(exc).__name__}: {exc}"


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    sys.exit(serve(sys.stdin.buffer, sys.stdout.buffer))
