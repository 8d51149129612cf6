"""Find the runs in the paths a user gives, whatever format they are in.

Each importer is a module with ``read(path) -> Iterator[Run | RunError]`` and
``looks_like(sniff) -> bool``; ``FORMATS`` maps a name (``--from``) to it, in
detection order. Errors come back as values so one bad record never stops a
build; ``LoadReport`` collects them as one line each (``file:line: reason``).

``iter_runs`` then, for every run an importer yields:

1. resolves a missing outcome from ``outcomes`` (``--outcomes FILE``), or
   reports "no outcome for run X" and skips the run (``strict=True`` raises);
2. reports a run whose id was already used (``report.duplicates``; the message
   says whether it is an exact copy); exact copies an importer itself recognises
   (Reflexion logs reprint every run each trial) are only counted, in
   ``report.deduplicated``;
3. repairs text that cannot be encoded (``repair.run``: lone surrogates, bytes
   that were not UTF-8, control characters become U+FFFD; counted per run in
   ``source['repaired_chars']`` and in ``report.repaired``), then clips text
   fields longer than ``_common.MAX_FIELD_CHARS``;
4. redacts secrets (``wikitrace.redact``; on by default) and counts them by type.
"""

from __future__ import annotations

import math
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Iterable, Iterator, Mapping

from . import atif, claude_code, codex_cli, mini_swe_agent, native, openai_chat, react_notebook, react_text, swe_agent
from . import agents_sdk, inspect_ai, langfuse, openhands, otlp
from . import outcomes as _outcomes
from . import repair as _repair
from ._common import Carried, DuplicateRun, NotText, Sniff, clip_turns, not_a_file, sniff
from .model import Run, RunError, fingerprint


@dataclass
class LoadReport:
    """What the loader took and what it could not, for the closing summary."""

    detected: dict[str, str] = field(default_factory=dict)  # path -> format
    errors: list[str] = field(default_factory=list)  # one line each: "file:line: reason"
    duplicates: int = 0  # runs reusing an id already read (each also in errors)
    deduplicated: int = 0  # exact copies an importer dropped (Reflexion logs reprint every run)
    missing_outcome: int = 0  # runs skipped because nothing gave their verdict
    outcomes: Counter = field(default_factory=Counter)  # "success"/"failure" over yielded runs
    redactions: Counter = field(default_factory=Counter)  # secret type -> count over yielded runs
    clipped: int = 0  # text fields clipped to _common.MAX_FIELD_CHARS
    repaired: int = 0  # characters that could not be encoded, replaced with U+FFFD (repair.py)
    repaired_runs: int = 0  # runs that had any
    ignored: list[str] = field(default_factory=list)  # files in input folders that are no run log
    warnings: list[str] = field(default_factory=list)  # worth telling, not a skipped run

    def merge(self, other: "LoadReport") -> None:
        """Add what another reader (a helper process) found; lists keep their identity."""
        self.detected.update(other.detected)
        self.errors.extend(other.errors)
        self.ignored.extend(other.ignored)
        self.warnings.extend(other.warnings)
        self.outcomes.update(other.outcomes)
        self.redactions.update(other.redactions)
        for name in ("duplicates", "deduplicated", "missing_outcome", "clipped", "repaired", "repaired_runs"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def summary(self) -> str:
        """One line for the closing summary: counts before compiling."""
        text = _outcomes.summary(self.outcomes)
        extra = []
        if self.deduplicated:
            extra.append(f"{self.deduplicated} identical copies dropped")
        if self.missing_outcome:
            extra.append(f"{self.missing_outcome} skipped for lack of an outcome")
        if self.errors:
            extra.append(f"{len(self.errors)} problem{'s' if len(self.errors) != 1 else ''}")
        if self.redactions:
            extra.append(f"{sum(self.redactions.values())} secrets redacted")
        if self.repaired:
            extra.append(f"{self.repaired} characters that could not be encoded replaced in {self.repaired_runs} runs")
        return text + (f" ({'; '.join(extra)})" if extra else "")


class _OpenAIChat:
    """Adapter: openai_chat.looks_like takes the first record, not a Sniff."""

    read = staticmethod(openai_chat.read)

    @staticmethod
    def looks_like(s: Sniff) -> bool:
        return openai_chat.looks_like(s.first)


class _Native:
    @staticmethod
    def looks_like(s: Sniff) -> bool:
        return isinstance(s.first, dict) and "run_id" in s.first and "turns" in s.first

    @staticmethod
    def read(path: Path, known: dict | None = None) -> Iterator[Run | RunError | Carried]:
        if path.is_dir():
            try:
                yield native.read_folder(path)
            except RunError as exc:
                yield exc
        else:
            yield from native.read_jsonl(path, known)


# name -> importer, in detection order (the more specific shapes first).
FORMATS: dict[str, ModuleType | type] = {
    "native": _Native,
    "atif": atif,
    "swe-agent": swe_agent,
    "mini-swe-agent": mini_swe_agent,
    "claude-code": claude_code,
    "codex-cli": codex_cli,
    "otlp": otlp,
    "inspect-ai": inspect_ai,
    "agents-sdk": agents_sdk,
    "langfuse": langfuse,
    "openhands": openhands,
    "openai-chat": _OpenAIChat,
    "react-notebook": react_notebook,
    "react-text": react_text,
}
ALIASES = {
    "tau-bench": "openai-chat", "openai": "openai-chat", "sweagent": "swe-agent", "swe-agent-traj": "swe-agent",
    "mini": "mini-swe-agent", "mini-swe": "mini-swe-agent", "claude": "claude-code", "codex": "codex-cli", "harbor": "atif",
    "inspect": "inspect-ai", "openai-agents": "agents-sdk", "otel": "otlp", "opentelemetry": "otlp",
    "openinference": "otlp", "phoenix": "otlp",
    "react": "react-text", "reflexion": "react-text",
    "fever": "react-notebook", "hotpotqa": "react-notebook", "webshop": "react-notebook", "alfworld": "react-notebook",
}
# Files a folder walk looks at; others are listed in report.ignored.
_RUN_SUFFIXES = (".json", ".jsonl", ".traj", ".txt", ".log", ".eval")
# Companion files that hold verdicts or predictions, not runs.
_COMPANIONS = {"results.json", "result.json", "report.json", "preds.json", "all_preds.jsonl", "config.json",
               "run_batch_exit_statuses.yaml"}


def format_name(name: str) -> str:
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in FORMATS:
        raise RunError(f"unknown format {name!r}; use one of: {', '.join(FORMATS)}")
    return key


def detect(path: Path) -> str:
    if native.is_run_folder(path):
        return "native"
    if path.is_dir():
        raise RunError(f"{path}: a folder without run.json — pass the files in it")
    try:
        s = sniff(path)
    except NotText:
        if inspect_ai.is_eval_zip(path):  # an Inspect AI .eval log is a zip
            return "inspect-ai"
        raise
    if not s.head.strip():
        raise RunError(f"{path}: empty file — give the file the run was saved to")
    for name, module in FORMATS.items():
        if module.looks_like(s):
            return name
    raise RunError(
        f"{path}: cannot tell the format; expected one of {', '.join(FORMATS)} "
        f"(`wikitrace compile --help` lists them) — pass --from FORMAT"
    )


_EVALUATION_FOLDERS = ("results", "logs")


def is_experiment_folder(folder: Path) -> bool:
    """A SWE-bench / Multi-SWE-bench experiment: ``trajs/`` beside ``results/results.json`` or ``logs/``."""
    return (folder / "trajs").is_dir() and ((folder / "results" / "results.json").is_file()
                                            or (folder / "logs").is_dir())


def _leaves(root: Path, path: Path) -> bool:
    """True when ``path`` is a symlink, or a run folder holding one, that resolves outside ``root``."""
    from ..safe_names import contained

    if path.is_symlink():
        return not contained(root, path.resolve())
    if path.is_dir() and native.is_run_folder(path):
        try:
            return any(p.is_symlink() and not contained(root, p.resolve()) for p in path.iterdir())
        except OSError:
            return False
    return False


def _walk(folder: Path, report: LoadReport, depth: int = 0, root: Path | None = None) -> Iterator[tuple[Path, bool]]:
    """(path, found_by_walking) for the run files and run folders under ``folder``.

    No symlink is followed out of the input folder (a link to ``/proc/self/environ``
    must not end up in a corpus); links to folders are not followed at all."""
    root = folder if root is None else root
    try:
        children = sorted(folder.iterdir())
    except OSError as exc:
        report.errors.append(_one_line(f"{folder}: cannot list ({exc.strerror or exc.__class__.__name__})"))
        return
    experiment = is_experiment_folder(folder)
    for child in children:
        if child.name.startswith("."):
            continue
        if experiment and child.name in _EVALUATION_FOLDERS and child.is_dir():
            report.ignored.append(f"{child}: evaluation output of a SWE-bench experiment folder (verdicts are read "
                                  f"from results/results.json), not runs")
            continue
        if child.is_symlink() and child.is_dir():
            report.ignored.append(f"{child}: symlinked folder not followed")
            continue
        if _leaves(root, child):
            report.ignored.append(f"{child}: symlink leading out of {root} not followed")
            continue
        if native.is_run_folder(child):
            yield child, True
        elif child.is_dir() and (child / ".wikitrace").is_dir() and (child / "corpus.json").is_file():
            report.ignored.append(f"{child}: a wikitrace corpus (its pages are not runs)")
        elif child.is_dir():
            if depth < 8:
                yield from _walk(child, report, depth + 1, root)
        elif child.is_file():
            name = child.name.lower()
            if name in _COMPANIONS or name.startswith("outcomes."):
                continue
            if name.endswith(_RUN_SUFFIXES):
                yield child, True
            else:
                report.ignored.append(str(child))


def _expand(paths: list[Path], report: LoadReport) -> Iterator[tuple[Path, bool]]:
    for p in paths:
        if p.is_dir() and not native.is_run_folder(p):
            yield from _walk(p, report)
        else:
            yield p, False


# Formats read a record at a time from JSONL: they can skip records compiled before.
_STREAMING = ("native", "openai-chat")
# Formats whose harness names each trajectory after its task instance (run id = task id): the same
# id with other content is another run of the task. A session log's id (Claude Code, Codex) is
# the session's own: the same id with other content is that session continued.
NAMED_AFTER_TASK = ("swe-agent", "mini-swe-agent", "openhands")


def _read(path: Path, fmt: str, known: dict | None = None) -> Iterator[Run | RunError | Carried]:
    name = format_name(fmt)
    module = FORMATS[name]
    try:
        yield from (module.read(path, known) if known and name in _STREAMING else module.read(path))
    except RunError as exc:
        yield exc
    except (RecursionError, MemoryError) as exc:
        yield RunError(f"{path}: too large or too deeply nested to read ({exc.__class__.__name__})")
    except Exception as exc:  # an importer bug must not stop the build: report it as the file's problem
        yield RunError(f"{path}: could not be read ({exc.__class__.__name__}: {exc}); please report this input shape")


def _one_line(message: str, limit: int = 1000) -> str:
    line = " ".join(message.splitlines())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def iter_runs(paths: list[Path], fmt: str | None = None, report: LoadReport | None = None, *,
              redact: bool = True, redact_patterns: Iterable[str] = (), **kwargs) -> Iterator[Run | Carried]:
    """``_iter_runs`` (below), and what it tells about the input redacted too: a file
    name or a record quoted in a problem line reaches the terminal and corpus.json."""
    report = report if report is not None else LoadReport()
    with _telling_redacted(report, redact, redact_patterns):
        yield from _iter_runs(paths, fmt, report, redact=redact, redact_patterns=redact_patterns, **kwargs)


@contextmanager
def _telling_redacted(report: LoadReport, redact: bool, patterns: Iterable[str]):
    """What a reading inside the block tells (the lines it adds to ``report``, the message of a
    RunError it raises) redacted, when ``redact`` is on: those reach the terminal."""
    marks = (len(report.errors), len(report.warnings), len(report.ignored), set(report.detected))
    try:
        yield
    except RunError as exc:
        if not redact:
            raise
        raise RunError(_redactor(patterns).text(str(exc))) from None
    finally:
        if redact:
            _redact_report(report, marks, _redactor(patterns))


def _redactor(patterns: Iterable[str]):
    from ..redact import redactor_for

    return redactor_for(True, patterns)


def _redact_report(report: LoadReport, marks: tuple, redactor) -> None:
    errors, warnings, ignored, detected = marks
    for items, start in ((report.errors, errors), (report.warnings, warnings), (report.ignored, ignored)):
        items[start:] = [redactor.text(line) for line in items[start:]]
    for path in [p for p in report.detected if p not in detected]:
        clean = redactor.text(path)
        if clean != path:
            report.detected[clean] = report.detected.pop(path)


def _iter_runs(
    paths: list[Path],
    fmt: str | None = None,
    report: LoadReport | None = None,
    *,
    outcomes: Mapping[str, _outcomes.Verdict] | Path | str | None = None,
    strict: bool = False,
    redact: bool = True,
    redact_patterns: Iterable[str] = (),
    known: dict[str, Carried] | None = None,
) -> Iterator[Run | Carried]:
    """Yield every good run in input order; record everything else in ``report``.

    ``outcomes``: a table from ``outcomes.load_outcomes`` or the path of an
    outcomes file; it gives the verdict of runs whose format has none.
    ``strict``: raise RunError for a run without an outcome instead of skipping it.
    ``redact``/``redact_patterns``: secret redaction (on by default) plus user regexes.
    ``known``: record digest -> ``Carried`` for JSONL records the published corpus
    compiled from these exact bytes; such records are yielded as ``Carried``,
    unparsed (a rebuild's fast path).
    """
    report = report if report is not None else LoadReport()
    chosen_fmt = format_name(fmt) if fmt else None
    table = _outcomes.load_outcomes(outcomes) if isinstance(outcomes, (str, Path)) else (outcomes or {})
    redactor = _redactor(redact_patterns) if redact else None
    seen: dict[str, str] = {}
    used: set[str] = set()
    for path, walked in _expand(paths, report):
        if not path.exists():
            report.errors.append(_one_line(f"{path}: no such file or folder — check the path"))
            continue
        why = not_a_file(path)
        if why:
            report.errors.append(_one_line(why))
            continue
        try:
            chosen = chosen_fmt or detect(path)
        except RunError as exc:
            if walked and path.suffix.lower() in (".txt", ".log") and not isinstance(exc, NotText):
                report.ignored.append(str(path))  # notes and licences beside logs are not errors
            else:
                report.errors.append(_one_line(str(exc)))
            continue
        report.detected[str(path)] = chosen
        for item in _read(path, chosen, known):
            if isinstance(item, Carried):
                if item.run_id in seen:
                    report.duplicates += 1
                    report.errors.append(_one_line(
                        f"{path}: run_id {item.run_id!r} appears again; kept the first, skipped this one"))
                    continue
                seen[item.run_id] = item.record_digest
                report.outcomes[item.outcome] += 1
                yield item
                continue
            if isinstance(item, DuplicateRun):
                report.deduplicated += 1
                continue
            if isinstance(item, RunError):
                report.errors.append(_one_line(str(item)))
                continue
            if not isinstance(item.run_id, str) or not item.run_id.strip():
                report.errors.append(_one_line(f"{path}: a run without an id; skipped"))
                continue
            found = _outcomes.match(item, table) if table else None
            verdict = found[1] if found else None
            if found:
                used.add(found[0])
            if item.outcome is not None and verdict is not None and verdict.success != item.outcome.success:
                report.warnings.append(_one_line(
                    f"{verdict.where}: says {'success' if verdict.success else 'failure'} for run {item.run_id!r} "
                    f"but {path} says {item.outcome.label}; kept the input's own verdict"))
            if item.outcome is None:
                if verdict is None:
                    message = _no_outcome(path, item, chosen, table, outcomes)
                    if strict:
                        raise RunError(message)
                    report.missing_outcome += 1
                    report.errors.append(_one_line(message))
                    continue
                _outcomes.apply(item, verdict)
            score = item.outcome.score
            if isinstance(score, float) and not math.isfinite(score):
                report.errors.append(_one_line(
                    f"{path}: run {item.run_id!r}: score {score} is not a finite number — give a score such as "
                    f"0.0 or 1.0; skipped"))
                continue
            repaired = _repair.run(item)
            if repaired:
                item.source["repaired_chars"] = repaired
                report.repaired += repaired
                report.repaired_runs += 1
            clipped = clip_turns(item.turns)
            counts = redactor.run(item) if redactor is not None else None
            # Hashed after redaction: the digest (kept in corpus.json) never covers a secret. A count
            # of outcomes needs it too: it tells a copy of a run from another run under the same id.
            digest = fingerprint(item)
            if item.run_id in seen and seen[item.run_id] != digest:
                other = qualified_id(path, item.run_id)
                if other not in seen:  # another run of the same task, from another experiment's folder
                    report.warnings.append(_one_line(
                        f"{path}: run_id {item.run_id!r} appears again (a different run); kept as {other!r}"))
                    item.run_id = other
            if item.run_id in seen:
                report.duplicates += 1
                same = "an exact copy" if seen[item.run_id] == digest else "a different run"
                report.errors.append(_one_line(
                    f"{path}: run_id {item.run_id!r} appears again ({same}); kept the first, skipped this one"))
                continue
            seen[item.run_id] = digest
            item.source["fingerprint"] = digest
            report.clipped += clipped
            if counts:
                item.source["redactions"] = dict(sorted(counts.items()))
                report.redactions.update(counts)
            report.outcomes[item.outcome.label] += 1
            yield item
    if table:
        unused = sorted(set(table) - used)
        if unused:
            report.warnings.append(_one_line(
                f"{len(unused)} of {len(table)} outcome entries matched no run (first: {unused[0]!r})"))


def qualified_id(path: Path, run_id: str) -> str:
    """The run id prefixed with the nearest folder of ``path`` not named after the run.

    Benchmark harnesses name each trajectory after its task (SWE-agent writes
    ``<experiment>/<instance>/<instance>.traj``), so several runs of one task differ
    only in the experiment folder above them: that folder tells them apart.
    """
    for folder in path.parents:
        if folder.name and folder.name != run_id:
            return f"{folder.name}/{run_id}"
    return run_id


def _no_outcome(path: Path, run: Run, fmt: str, table: Mapping, outcomes) -> str:
    """Why a run has no verdict, in words that are true for this input."""
    pending = _outcomes.why_missing(run, table) if table else None
    if pending:  # the --outcomes file itself names the run without a verdict
        return f"{path}: no outcome for run {run.run_id!r} ({pending}); skipped"
    reason = run.source.get("no_outcome_reason") or f"{fmt} has no verdict"
    head = f"{path}: no outcome for run {run.run_id!r} ({reason})"
    if isinstance(outcomes, (str, Path)):
        return f"{head}; --outcomes {outcomes} has no entry for it either; skipped (add it there to include it)"
    return f"{head}; skipped (pass --outcomes FILE to include it)"


def count_outcomes(paths: list[Path], fmt: str | None = None, *, redact: bool = True, redact_patterns: Iterable[str] = (),
                   **kwargs) -> tuple[Counter, LoadReport]:
    """Read everything once and count success/failure (for a summary before compiling), with the
    build's own redaction settings. The runs are counted and dropped, so their text is not
    redacted; what the reading tells is, as the build's reading tells it: a problem line or a
    failure names files and records, and reaches a printed line."""
    report = LoadReport()
    with _telling_redacted(report, redact, redact_patterns):
        for _ in _iter_runs(paths, fmt, report, redact=False, **kwargs):
            pass
    return Counter(report.outcomes), report
