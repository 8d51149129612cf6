"""What a build is asked to do (``wikitrace compile``'s options), apart from the build itself:
the command line makes these (and may begin the run reader with them) before the build's own
modules are imported."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class BuildOptions:
    inputs: list[Path]
    out: Path
    fmt: str | None = None
    mount_path: str = "/work/corpus"
    templates: Path | None = None
    task_type: str | None = None
    offline: bool = False
    model: str | None = None
    base_url: str | None = None
    concurrency: int = 8
    cache_dir: Path | None = None
    read_cache: bool = True  # False: --no-cache (ask the model again, still store the answers)
    max_tokens: int | None = None  # None: WIKITRACE_MAX_TOKENS or the default
    timeout: float | None = None  # None: WIKITRACE_TIMEOUT or the default
    quiet: bool = False
    batch: bool = False  # send the model calls through the OpenAI Batch API first
    resume_batch: str | None = None
    batch_poll_interval: float = 30.0
    outcomes: Path | None = None
    strict: bool = False
    redact: bool = True
    redact_patterns: tuple[str, ...] = ()
    restore: bool = False  # compile runs `wikitrace forget` removed again (with new ids)
    command: str = "compile"  # named by `wikitrace check` when this update is interrupted
