"""``wikitrace add`` from the command line, with or without the CLI framework.

A harness calls ``add`` once per finished run, and starting typer (which imports
pydantic to coerce the options) costs more CPU than adding one run to a small
corpus. So the entry point parses ``add``'s options with argparse first
(``add_main``); help, a typo or a value out of range go to typer's command in
cli.py, which says the one usage line. Both end in ``add_command``.
"""

from __future__ import annotations

from pathlib import Path


def add_parser():
    """``wikitrace add``'s options as an argparse parser: the same names, defaults and
    limits as the typer command in cli.py (tests/test_cli_usage.py checks they agree)."""
    import os

    from .fast_args import AtLeast, FastParser

    ap = FastParser("wikitrace add")
    ap.add_argument("run_file", type=Path, nargs="?", default=None)
    ap.add_argument("--corpus", "-c", type=Path, default=os.environ.get("WIKITRACE_CORPUS") or None)
    ap.add_argument("--claude-code-hook", action="store_true")
    ap.add_argument("--outcome")
    ap.add_argument("--from", dest="fmt")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--templates", type=Path)
    ap.add_argument("--max-tokens", type=AtLeast(1))
    ap.add_argument("--timeout", type=AtLeast(0.001, float))
    ap.add_argument("--quiet", "-q", action="store_true")
    ap.add_argument("--json", dest="as_json", action="store_true")
    return ap


def add_main(argv: list[str]) -> int | None:
    """Run ``wikitrace add ARGV`` without typer, or None when ARGV asks for help or does
    not parse (typer then prints the help or the one usage line)."""
    from .fast_args import parse_or_none

    ns = parse_or_none(add_parser(), argv)
    if ns is None or ns.corpus is None:
        return None  # typer's command says what is wrong or missing
    return add_command(ns.run_file, ns.corpus, ns.claude_code_hook, ns.outcome, ns.fmt, ns.offline, ns.model,
                       ns.base_url, ns.templates, ns.max_tokens, ns.timeout, ns.quiet, ns.as_json)


def add_command(run_file: Path | None, corpus: Path | None, claude_code_hook: bool, outcome: str | None, fmt: str | None,
                offline: bool, model: str | None, base_url: str | None, templates: Path | None,
                max_tokens: int | None, timeout: float | None, quiet: bool, as_json: bool) -> int:
    from .add import AddOptions, run_add
    from .cli_checks import existing_folder
    from .errors import UsageError

    if claude_code_hook == (run_file is not None):
        raise UsageError("give RUN_FILE or --claude-code-hook (exactly one)", where="RUN_FILE")
    if claude_code_hook:
        from .capture import log_failure, transcript_from_hook
        from .errors import WikitraceError

        try:
            run_file = transcript_from_hook()
        except WikitraceError as exc:
            log_failure(corpus, None, exc.message())
            raise
    if corpus is None:
        raise UsageError("no corpus given", "pass --corpus DIR or set WIKITRACE_CORPUS", where="--corpus")
    opts = AddOptions(run_file=run_file, corpus=corpus, outcome=outcome, fmt=fmt, offline=offline, model=model,
                      base_url=base_url, templates=existing_folder(templates, "--templates"),
                      max_tokens=max_tokens, timeout=timeout, quiet=quiet)
    code = run_add(opts, as_json=as_json)
    from .errors import skip_teardown

    skip_teardown()  # the run's pages, the indexes and the answers are on disk and closed
    return code
