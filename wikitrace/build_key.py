"""What, besides each run's own content, decides the bytes of a build's pages: the build key
(compared with the published one to tell which runs' pages can be kept) and the settings the
manifest keeps so that ``wikitrace add`` compiles one more run exactly as the build did."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .code_digest import code_digest

if TYPE_CHECKING:
    from .build import BuildOptions


def build_settings(compiler_name: str, model: str | None, opts: BuildOptions) -> dict:
    """The options that decide the bytes of every run's pages, kept in the manifest so
    ``wikitrace add`` compiles one more run exactly as this build compiled the others.
    ``outcomes`` (the digest of the --outcomes file) is not one of them: a verdict is part
    of each run's content; it is kept only to tell when records may skip parsing."""
    return {"compiler": compiler_name, "model": model, "mount_path": opts.mount_path, "redact": opts.redact,
            "redact_patterns": list(opts.redact_patterns), "task_type": opts.task_type,
            "outcomes": outcomes_digest(opts),
            "templates": str(Path(opts.templates).resolve()) if opts.templates else None,
            "code": code_digest()}


def outcomes_digest(opts: BuildOptions) -> str | None:
    outcomes = opts.outcomes if isinstance(opts.outcomes, (str, Path)) and Path(opts.outcomes).is_file() else None
    return hashlib.sha256(Path(outcomes).read_bytes()).hexdigest() if outcomes else None


def build_key(compiler_name: str, model: str | None, opts: BuildOptions) -> str:
    """What, besides a run's own content (its verdict included), decides the bytes of its pages."""
    from .templates import bundled_dir

    h = hashlib.sha256()
    h.update(json.dumps([__version__, compiler_name, model, opts.mount_path, opts.redact,
                         list(opts.redact_patterns), opts.task_type]).encode())
    for folder in filter(None, [bundled_dir("corpus_templates"), opts.templates]):
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    h.update(code_digest().encode())
    return "sha256:" + h.hexdigest()
