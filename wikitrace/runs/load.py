"""Find the runs in the paths a user gives, whatever format they are in.

Each importer is a module with ``read(path) -> Iterator[Run | RunError]`` and
``looks_like(first_record) -> bool``; ``FORMATS`` maps a name (``--from``) to
it. Errors come back as values so one bad record never stops a build.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from . import native, openai_chat
from .model import Run, RunError


@dataclass
class LoadReport:
    """What the loader took and what it could not, for the closing summary."""

    detected: dict[str, str] = field(default_factory=dict)  # path -> format
    errors: list[str] = field(default_factory=list)
    duplicates: int = 0


def _first_record(path: Path):
    with path.open("rb") as fh:
        head = fh.read(1 << 16).decode("utf-8", errors="replace").lstrip()
    if head.startswith("["):
        # A JSON array: decode just the first element.
        try:
            obj, _ = json.JSONDecoder().raw_decode(head[1:].lstrip())
            return obj
        except json.JSONDecodeError:
            return None
    line = head.split("\n", 1)[0]
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


def detect(path: Path) -> str:
    if native.is_run_folder(path):
        return "native"
    first = _first_record(path)
    if isinstance(first, dict) and "run_id" in first and "turns" in first:
        return "native"
    if openai_chat.looks_like(first):
        return "openai-chat"
    raise RunError(
        f"{path}: cannot tell the format; expected native run records (run_id, task, outcome, turns) "
        f"or OpenAI chat trajectories (traj/messages + reward/success). Pass --from FORMAT."
    )


def _expand(paths: list[Path]) -> Iterator[Path]:
    for p in paths:
        if p.is_dir() and not native.is_run_folder(p):
            children = sorted(p.iterdir())
            folders = [c for c in children if native.is_run_folder(c)]
            files = [c for c in children if c.is_file() and c.suffix in (".json", ".jsonl")]
            yield from folders
            yield from files
        else:
            yield p


def _read(path: Path, fmt: str) -> Iterator[Run | RunError]:
    if fmt == "native":
        if path.is_dir():
            try:
                yield native.read_folder(path)
            except RunError as exc:
                yield exc
        else:
            yield from native.read_jsonl(path)
    elif fmt == "openai-chat":
        yield from openai_chat.read(path)
    else:
        raise RunError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}")


FORMATS = ("native", "openai-chat")


def iter_runs(paths: list[Path], fmt: str | None = None, report: LoadReport | None = None) -> Iterator[Run]:
    """Yield every good run in input order; record everything else in ``report``."""
    report = report if report is not None else LoadReport()
    seen: set[str] = set()
    for path in _expand(paths):
        if not path.exists():
            report.errors.append(f"{path}: no such file or folder")
            continue
        try:
            chosen = fmt or detect(path)
        except RunError as exc:
            report.errors.append(str(exc))
            continue
        report.detected[str(path)] = chosen
        for item in _read(path, chosen):
            if isinstance(item, RunError):
                report.errors.append(str(item))
                continue
            if item.run_id in seen:
                report.duplicates += 1
                report.errors.append(f"{path}: run_id {item.run_id!r} appears again; kept the first, skipped this one")
                continue
            seen.add(item.run_id)
            yield item
