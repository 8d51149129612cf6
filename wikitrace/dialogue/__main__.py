"""A lean command line for scripts and agents: ``python -m wikitrace.dialogue query ...``.

Same behaviour as ``wikitrace query`` but with argparse only (no typer, no rich, no jinja2 for
``--json``), so a one-shot call spends its time retrieving rather than importing."""

from __future__ import annotations

import argparse
import os
from pathlib import Path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m wikitrace.dialogue")
    sub = ap.add_subparsers(dest="command", required=True)
    q = sub.add_parser("query", help="retrieve evidence for a question from a compiled dialogue")
    q.add_argument("question")
    q.add_argument("--corpus", "-c", type=Path, default=os.environ.get("WIKITRACE_CORPUS") or None,
                   required=not os.environ.get("WIKITRACE_CORPUS"), help="default: $WIKITRACE_CORPUS")
    q.add_argument("--sample", "-s")
    q.add_argument("--budget", type=int, default=2000)
    q.add_argument("--json", action="store_true", dest="as_json")
    q.add_argument("--llm", action="store_true", help="answer with the configured LLM")
    q.add_argument("--offline", action="store_false", dest="llm", help="evidence only (the default)")
    q.add_argument("--model")
    q.add_argument("--base-url")
    args = ap.parse_args(argv)
    if args.budget < 50:
        raise SystemExit(f"query: --budget {args.budget}: too small — give at least 50 tokens")
    from .cli_support import query_command

    return query_command(args.corpus, args.sample, args.question, args.budget, args.as_json,
                         not args.llm, args.model, args.base_url)


if __name__ == "__main__":
    from ..errors import run

    run(main)
