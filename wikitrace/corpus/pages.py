"""Putting each compiled run's pages into the corpus (the insight pages, gathered across
runs, are written after them: corpus/update.py): here, or in one helper process.

Rendering a run's pages and creating its files costs about as much CPU as
reading the run and talking to the model, and both are plain Python under one
interpreter lock. So a build of more than a few runs hands its pages to a
helper process (``python -m wikitrace.corpus.pages``) that renders and writes
them on a second core while the build goes on reading and compiling. Small
builds never start it: they write here, through the same ``PageSink`` code.

What crosses the pipe is a list of ``("run", run, comp, step, refs)``
operations, pickled in batches; the build has already claimed each run's paths
(corpus/publish.py). A new run's raw folder is made whole under the temp folder and
renamed into place; the raw pages of a run already in the corpus are replaced one by
one (temp file + rename), its log first and its metadata page last. Runs whose pages
are unchanged are never sent: their files stay as they are.

A compilation page's "In short" holds a line against the other trials of its task,
which only every run of the build can give (corpus/trial_pages.py). So the writer
renders it with its run, holds the text, and once the build sends ``("trials", groups)``
after its last run (the trials of each task whose pages have such a line), works out the
lines and writes the pages: every page is written once, in step order (a search shard's
text then streams: corpus/page_words.py). The pages the build's
own process held before the helper took over go to the helper as ``("held", pages)``.
At the end the helper answers with the manifest entry of every file it wrote, or the
first failure.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, BinaryIO

from . import cause_contrast, documents, layout, trial_contrast, trial_pages
from .manifest import FileWriter
from .page_words import PageWords, walk_key
from .. import helper_process
from ..controls import json_visible, visible
from ..runs.original import original_suffix
from ..runs.turnlog import dumps_turns

BATCH = 16  # operations per pickled batch: amortises pickling and pipe calls


class PageWriteError(RuntimeError):
    """Writing pages into the corpus failed (disk full, permissions, a broken template)."""


def _json_text(text: str) -> str:
    """``json_visible`` of JSON text that ``json.dumps`` wrote without indent: every control
    character below space is escaped in it, so the only one left raw is the newline between
    records, which stays. ASCII text then holds a character to escape only as DEL, told by
    two scans in C; the check for any text is several passes (a log line by line)."""
    return text if text.isascii() and "\x7f" not in text else json_visible(text)


def _original(run, step: str) -> tuple[str, str] | None:
    suffix = original_suffix(run)
    if suffix is None:
        return None
    original = run.source["original"]
    if isinstance(original, helper_process.PickledOriginal):
        original = original.load()
    path = f"raw/{step}/original.{suffix}"
    if suffix == "txt":
        return path, visible(str(original))
    if suffix == "jsonl":
        return path, _json_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in original))
    # the newline added after the check: a text of one line passes the check for any text in one pass
    return path, _json_text(json.dumps(original, ensure_ascii=False, sort_keys=True)) + "\n"


def run_paths(run, step: str, refs: list) -> list[str]:
    """The paths ``run_pages`` will write for this run (cheap: nothing is rendered)."""
    suffix = original_suffix(run)
    paths = [layout.raw_dir(step), layout.raw_log(step)]
    if suffix is not None:
        paths.append(f"raw/{step}/original.{suffix}")
    paths.append(layout.raw_turns(step))
    return paths + [layout.compilation_doc(step), layout.raw_metadata(step)]


def run_pages(run, comp, step: str, refs: list, mount: str, templates: Path | None) -> list[tuple[str, str]]:
    """Every file of one compiled run as (path in the corpus, text), in the order they are
    written: pages that link to others come after them where the links allow."""
    pages = [(layout.raw_log(step), _json_text(dumps_turns(run.turns)))]
    original = _original(run, step)
    if original is not None:  # the record as the harness wrote it (after redaction)
        pages.append(original)
    pages.append((layout.raw_turns(step), documents.render_raw_turns(run, step, mount, templates)))
    pages.append((layout.compilation_doc(step), documents.render_compilation(run, comp, step, refs, mount, templates)))
    pages.append((layout.raw_metadata(step), documents.render_raw_metadata(run, step, refs, mount, templates)))
    return pages


class PageSink:
    """Writes compiled runs' pages into the corpus at ``root`` (in whichever process)."""

    def __init__(self, root: str, tmp: str, mount: str, templates: str | None):
        self.writer = FileWriter(root, tmp, "runs")
        self.root = Path(root)
        self.mount, self.templates = mount, Path(templates) if templates else None
        self.written: dict[str, list] = {}  # path -> manifest entry
        # the pages' words and shard texts for grep's search files, made here
        self.page_words = PageWords(f"{self.writer.tmp}/{self.writer.prefix}")
        # compilation pages rendered and not written yet: (step, text, outcome, restating facts),
        # until ``write_held`` has their lines; none with a compilation template of the user's
        from . import plain_pages

        self.holds = not plain_pages.overridden(self.templates, plain_pages.COMPILATION_TEMPLATE)
        self.held: list[tuple[str, str, str, list | None]] = []

    def apply(self, op: tuple) -> None:
        """Raises PageWriteError naming the run's step and what went wrong."""
        if op[0] == "held":
            self.held.extend(op[1])
            return
        if op[0] == "trials":
            return self.write_held(trial_pages.written_lines(op[1]), op[2] if len(op) > 2 else {})
        if op[0] != "run":
            raise PageWriteError(f"unknown page operation {op[0]!r}")
        try:
            if isinstance(op[1], helper_process.Pickled):
                op = (op[0], op[1].load(), *op[2:])
            self.run(*op[1:])
        except Exception as exc:
            raise _failed(op[3], exc) from exc

    def run(self, run, comp, step: str, refs: list) -> None:
        written = run_pages(run, comp, step, refs, self.mount, self.templates)
        if self.holds:
            page = layout.compilation_doc(step)
            restates = (trial_contrast.entry_field(comp).get("decisive") or {}).get("restates")
            self.held += [(step, text, comp.outcome, restates) for rel, text in written if rel == page]
            written = [(rel, text) for rel, text in written if rel != page]
        folder = layout.raw_dir(step)
        # a new run's raw folder appears whole (one rename, not one per file). A folder there
        # already is updated file by file (unchanged files stay).
        encoded = [(rel, text.encode("utf-8")) for rel, text in written]
        staged = self.writer.put_folder(folder.rstrip("/"), [(rel, data) for rel, data in encoded
                                                             if rel.startswith(folder)]) or {}
        self.written.update(staged)
        for rel, data in encoded:
            if rel not in staged:
                self.written[rel] = self.writer.put(rel, data)
        for rel, data in sorted(encoded, key=lambda page: walk_key(page[0])):  # as grep's shards hold them
            self.page_words.note(rel, data, self.written[rel])

    def hand_held_to(self, other) -> None:
        """Give the compilation pages held here to the sink that writes the build's next runs."""
        held, self.held = self.held, []
        if held:
            other.apply(("held", held))

    def write_held(self, lines: dict, causes: dict | None = None) -> None:
        """Write the compilation pages held, in step order, each with its line against the other
        trials of its task from ``lines`` (step -> line or None; a step not there keeps the
        page as rendered) and its causes set against the successes from ``causes``
        (corpus/cause_contrast.py ``notes``)."""
        held, self.held = self.held, []
        for step, text, outcome, restates in sorted(held, key=lambda page: layout.id_number(page[0])):
            try:
                text = cause_contrast.set_causes(text, (causes or {}).get(step))
                if step in lines:
                    text = trial_pages.set_in_short(text, step, outcome, lines[step], restates)
                rel, data = layout.compilation_doc(step), text.encode("utf-8")
                self.written[rel] = self.writer.put(rel, data)
                self.page_words.note(rel, data, self.written[rel])
            except Exception as exc:
                raise _failed(step, exc) from exc

    def close(self) -> dict[str, list]:
        """The manifest entries of every file written (its search notes sealed)."""
        self.write_held({})  # pages whose lines were never sent: as their runs give them
        self.page_words.packed()
        return self.written

    def kill(self) -> None:
        """The build failed: its search notes' temp files go."""
        self.page_words.discard()


def _failed(step: str, exc: BaseException) -> PageWriteError:
    return PageWriteError(f"writing {step} into the corpus failed: {type(exc).__name__}: {exc}")


class HelperSink:
    """The same operations, sent to ``python -m wikitrace.corpus.pages``."""

    def __init__(self, root: str, tmp: str, mount: str, templates: str | None):
        self.proc = helper_process.start("wikitrace.corpus.pages")
        self._sender = helper_process.Sender(self.proc.stdin)
        self._batch: list[tuple] = [("open", root, tmp, mount, templates)]
        self._ended = False
        self._flush()
        self.page_words: PageWords | None = None  # the helper's, once it has answered

    def apply(self, op: tuple) -> None:
        attrs = getattr(op[1], "__dict__", None) if op[0] == "run" else None
        pickled = attrs.pop(helper_process.PICKLED_ATTR, None) if attrs else None
        if pickled is not None:  # the run as the reader pickled it: not pickled again here
            op = (op[0], pickled, *op[2:])
        self._batch.append(op)
        if len(self._batch) >= BATCH:
            self._flush()

    def _flush(self) -> None:
        batch, self._batch = self._batch, []
        try:
            self._sender.send(batch)
        except (BrokenPipeError, OSError, ValueError):
            raise PageWriteError(self._outcome()[1] or "the page writer process stopped unexpectedly") from None

    def end(self) -> None:
        """Send what is left and say it is all: the helper writes the last pages and seals
        its notes while the build goes on (``close`` then waits for it)."""
        if self._ended:
            return
        self._ended = True
        self._batch.append(("end",))
        self._flush()
        self._sender.close(wait=False)  # the frames still queued go out on the sender's thread

    def close(self) -> dict[str, list]:
        """Wait until every page is on disk; the entries of the files written, or raise what failed."""
        self.end()
        try:
            self._sender.close()
        except (OSError, ValueError):
            pass  # the helper stopped: its exit status says what happened
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        written, problem, self.page_words = self._outcome()
        if problem:
            raise PageWriteError(problem)
        return written

    def kill(self) -> None:
        """Stop without waiting (the build failed)."""
        helper_process.stop(self.proc)

    def _outcome(self) -> tuple[dict, str | None, PageWords | None]:
        try:
            answer = helper_process.receive(self.proc.stdout)
        except Exception:  # a torn frame from a process that died writing it
            answer = helper_process.EOF
        code = self.proc.wait()
        if isinstance(answer, dict) and code == 0:
            return answer["written"], answer["problem"], answer.get("words")
        return {}, f"the page writer process exited with status {code}", None


def serve(inp: BinaryIO, out: BinaryIO) -> int:
    """The helper: apply batches until ``end``; answer the files written and the first error.

    After a failure it keeps reading (and ignoring) so the build never blocks on
    a full pipe, and says what failed when the build closes it."""
    from ..gc_policy import collect_less

    collect_less()
    sink: Any = None
    problem: str | None = None
    while True:
        batch = helper_process.receive(inp)
        if batch is helper_process.EOF:
            return 1  # the build went away without closing: nothing to report to
        for op in batch:
            if op[0] == "end":
                helper_process.send(out, {"written": sink.close() if sink is not None else {}, "problem": problem,
                                          "words": sink.page_words if sink is not None else None})
                return 0
            if problem is not None:
                continue
            try:
                if op[0] == "open":
                    sink = PageSink(*op[1:])
                else:
                    sink.apply(op)
            except PageWriteError as exc:  # reported to the build, which then fails
                problem = str(exc)
            except Exception as exc:
                problem = f"the page writer failed: {type(exc).__name__}: {exc}"


if __name__ == "__main__":
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the build's to handle; it stops this one
    helper_process.die_with_parent()
    helper_process.exit_now(serve(sys.stdin.buffer, sys.stdout.buffer))
