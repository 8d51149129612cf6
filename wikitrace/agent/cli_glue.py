"""Command bodies that need more than one call (kept out of cli.py so it stays thin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def prompt_command(corpus: Path, task: str | None, task_file: Path | None, variant: str, budget: int | None,
                   task_type: str | None, similar: int, mount_path: str | None, tools_path: str,
                   templates: Path | None, embedding_model: str | None, base_url: str | None, as_json: bool) -> int:
    from rich.console import Console

    from .corpusdata import CorpusError
    from .prompt import build_prompt
    from .similarity import make_backend

    err = Console(stderr=True)
    if (task is None) == (task_file is None):
        err.print("[red]error:[/red] give exactly one of --task TEXT or --task-file FILE")
        return 2
    if task_file is not None:
        task = sys.stdin.read() if str(task_file) == "-" else task_file.read_text(encoding="utf-8")
    backend = make_backend("embeddings", model=embedding_model, base_url=base_url) if embedding_model else None
    try:
        parts = build_prompt(corpus, task, variant=variant, budget=budget, task_type=task_type, k=similar,
                             mount_path=mount_path, tools_path=tools_path, templates=templates, backend=backend)
    except (CorpusError, ValueError) as exc:
        err.print(f"[red]error:[/red] {exc}")
        return 2
    if as_json:
        print(json.dumps(parts.to_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(parts.to_text())
    for note in parts.notes:
        err.print(f"[yellow]note:[/yellow] {note}")
    if parts.left_out:
        err.print(f"{len(parts.insight_ids)} insights inlined, {parts.left_out} left out (~{parts.tokens} tokens)")
    return 0
