"""What a build is about to read, told before any work starts.

Detects the format of every input file (the same detection the readers use, on the
first bytes only) and estimates the number of runs cheaply, so the progress bar has a
total and an ETA and an input read as the wrong format shows before an LLM call is
paid for. The estimate counts records (JSONL lines, array items, one per run file or
folder); a record that turns out not to be a run only ends the bar early.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

_PARSE_ARRAY_LIMIT = 64 << 20  # a JSON array bigger than this is not parsed twice just to count it
_MANY_RUN_FORMATS = ("native", "openai-chat")
# Files holding an unknown number of runs until read (a log of many episodes, traces, samples).
_UNCOUNTED_FORMATS = ("react-text", "react-notebook", "otlp", "langfuse", "agents-sdk", "inspect-ai", "openhands")


@dataclass
class Survey:
    formats: dict[str, str] = field(default_factory=dict)  # path -> format
    undetected: list[str] = field(default_factory=list)  # one line each (the build reports them again)
    runs: int | None = 0  # None: some file's run count is unknown until it is read

    def lines(self, limit: int = 10) -> list[str]:
        """One line per file for a few files, else one line of counts per format."""
        if len(self.formats) <= limit:
            return [f"reading {path} as {fmt}" for path, fmt in self.formats.items()]
        by_format = Counter(self.formats.values())
        parts = ", ".join(f"{n} {fmt}" for fmt, n in by_format.most_common())
        return [f"reading {len(self.formats)} files: {parts}"]


def _records(path: Path, fmt: str) -> int | None:
    if path.is_dir():
        return 1
    if fmt not in _MANY_RUN_FORMATS:
        return None if fmt in _UNCOUNTED_FORMATS else 1
    try:
        with path.open("rb") as fh:
            head = fh.read(4096).lstrip()
            if head.startswith(b"["):
                if path.stat().st_size > _PARSE_ARRAY_LIMIT:
                    return None
                fh.seek(0)
                data = json.loads(fh.read().decode("utf-8", "replace"))
                return len(data) if isinstance(data, list) else 1
            fh.seek(0)
            return sum(1 for line in fh if line.strip())
    except (OSError, ValueError, RecursionError):
        return None


def survey(paths: list[Path], fmt: str | None = None) -> Survey:
    """Formats and an estimated run count for ``paths`` (files and folders, walked as
    the build walks them). Never raises for a bad input: the build reports those."""
    from .runs import load
    from .runs.model import RunError

    result = Survey()
    report = load.LoadReport()
    try:
        forced = load.format_name(fmt) if fmt else None
    except RunError:
        forced = None
    total: int | None = 0
    for path, _walked in load._expand(list(paths), report):
        if not path.exists():
            continue
        try:
            name = forced or load.detect(path)
        except RunError as exc:
            result.undetected.append(str(exc))
            continue
        result.formats[str(path)] = name
        n = _records(path, name)
        total = None if (total is None or n is None) else total + n
    result.runs = total
    return result
