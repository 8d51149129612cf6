"""Command bodies that need more than one call (kept out of cli.py so it stays thin)."""

from __future__ import annotations

import json
import sys
from pathlib import Path


def prompt_command(corpus: Path, task: str | None, task_file: Path | None, variant: str, budget: int | None,
                   task_type: str | None, similar: int, mount_path: str | None, tools_path: str,
                   templates: Path | None, embedding_model: str | None, base_url: str | None, as_json: bool,
                   prefer_helpful: bool = False) -> int:
    # No rich here: it would cost more to import than the whole indexed prompt build.
    # Errors are raised (errors.WikitraceError) and printed as one line by errors.run.
    from ..errors import InputError, UsageError
    from .prompt import build_prompt
    from .similarity import make_backend

    def err(msg: str) -> None:
        sys.stderr.write(msg + "\n")

    if (task is None) == (task_file is None):
        raise UsageError("give exactly one of --task TEXT or --task-file FILE", where="prompt")
    if task_file is not None:
        try:
            task = sys.stdin.read() if str(task_file) == "-" else task_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError("no such file", "check the --task-file path", where=task_file) from None
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text", "save the task as UTF-8", where=task_file) from None
    if templates is not None and not Path(templates).is_dir():
        raise UsageError("no such folder", "give an existing folder to --templates", where=templates)
    backend = make_backend("embeddings", model=embedding_model, base_url=base_url) if embedding_model else None
    parts = build_prompt(corpus, task, variant=variant, budget=budget or None, task_type=task_type, k=similar,
                         mount_path=mount_path, tools_path=tools_path, templates=templates, backend=backend,
                         prefer_helpful=prefer_helpful)
    if as_json:
        print(json.dumps(parts.to_dict(), indent=2, ensure_ascii=False))
    else:
        sys.stdout.write(parts.to_text())
    for note in parts.notes:
        err(f"note: {note}")
    if parts.left_out:
        err(f"{len(parts.insight_ids)} insights inlined, {parts.left_out} left out (~{parts.tokens} tokens)")
    return 0


def prompt_parser():
    """``wikitrace prompt``'s options as an argparse parser: the same names, defaults and
    limits as the typer command in cli.py (tests/test_cli_usage.py checks they agree)."""
    import os

    from ..fast_args import AtLeast, FastParser
    from .prompt import DEFAULT_BUDGET

    ap = FastParser("wikitrace prompt")
    ap.add_argument("--corpus", "-c", type=Path, default=os.environ.get("WIKITRACE_CORPUS") or None)
    ap.add_argument("--task")
    ap.add_argument("--task-file", type=Path)
    ap.add_argument("--variant", default="wikitrace")
    ap.add_argument("--budget", type=AtLeast(0), default=DEFAULT_BUDGET)
    ap.add_argument("--task-type")
    ap.add_argument("--similar", type=AtLeast(0), default=3)
    ap.add_argument("--mount-path")
    ap.add_argument("--tools-path", default="/work/tools")
    ap.add_argument("--templates", type=Path)
    ap.add_argument("--embedding-model")
    ap.add_argument("--base-url")
    ap.add_argument("--json", dest="as_json", action="store_true")
    ap.add_argument("--prefer-helpful", action="store_true")
    return ap


def prompt_main(argv: list[str]) -> int | None:
    """Run ``wikitrace prompt ARGV`` without the CLI framework, or return None when ARGV
    asks for help or does not parse (the caller then hands it to typer, which prints the
    help or the one usage line).

    Starting typer costs about as much as the whole indexed prompt build (it imports
    pydantic to coerce the options), so the entry point calls this first for ``prompt``.
    """
    from ..fast_args import parse_or_none

    ns = parse_or_none(prompt_parser(), argv)
    if ns is None or ns.corpus is None:
        return None  # typer's command says what is wrong or missing
    return prompt_command(ns.corpus, ns.task, ns.task_file, ns.variant, ns.budget, ns.task_type, ns.similar,
                          ns.mount_path, ns.tools_path, ns.templates, ns.embedding_model, ns.base_url, ns.as_json,
                          ns.prefer_helpful)
