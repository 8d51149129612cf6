"""``wikitrace compile`` as a command: what will be read, progress, the closing summary
(all on stderr, or one JSON object on stdout), and the exit code. The build itself is
``wikitrace.build``; this is only what a person at the terminal sees of it.

Its options are parsed with argparse first (``compile_main``, the entry point's fast
path): importing typer and coercing the options through it costs a tenth of a second of
CPU before the build can start its helpers and its model client. Help, a typo or a value
out of range go to typer's command in cli.py, which says the one usage line; both end in
``compile_command``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .build import BuildOptions, BuildResult

# ``wikitrace.build`` (and all it imports) is imported only once the options are parsed, so
# the model client's import can start first (compile_main).


def compile_parser():
    """``wikitrace compile``'s options as an argparse parser: the same names, defaults and
    limits as the typer command in cli.py (tests/test_cli_usage.py checks they agree)."""
    from .fast_args import AtLeast, FastParser

    ap = FastParser("wikitrace compile")
    ap.add_argument("inputs", type=Path, nargs="+")
    ap.add_argument("--out", "-o", type=Path, required=True)
    ap.add_argument("--from", dest="fmt")
    ap.add_argument("--mount-path", default="/work/corpus")
    ap.add_argument("--templates", type=Path)
    ap.add_argument("--task-type")
    ap.add_argument("--offline", action="store_true")
    ap.add_argument("--model")
    ap.add_argument("--base-url")
    ap.add_argument("--concurrency", type=AtLeast(1), default=8)
    ap.add_argument("--cache-dir", type=Path)
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--max-tokens", type=AtLeast(1))
    ap.add_argument("--timeout", type=AtLeast(0.001, float))
    ap.add_argument("--outcomes", type=Path)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--no-redact", action="store_true")
    ap.add_argument("--redact-pattern", action="append", default=[])
    ap.add_argument("--batch", action="store_true")
    ap.add_argument("--resume-batch")
    ap.add_argument("--restore", action="store_true")
    ap.add_argument("--quiet", "-q", action="store_true")
    ap.add_argument("--json", dest="as_json", action="store_true")
    return ap


def compile_main(argv: list[str]) -> int | None:
    """Run ``wikitrace compile ARGV`` without typer, or None when ARGV asks for help or does
    not parse (typer then prints the help or the one usage line)."""
    import os

    from .fast_args import parse_or_none

    if os.environ.get("_WIKITRACE_COMPLETE"):
        return None  # a shell asking for completions: typer's to answer
    ns = parse_or_none(compile_parser(), argv)
    if ns is None:
        return None
    from .helper_process import discard_early
    from .llm.preload import import_client_for_compile
    from .runs.read_helper import start_early

    llm = import_client_for_compile(ns.offline, ns.model, ns.base_url, ns.cache_dir, not ns.no_cache, ns.quiet)
    start_early(list(ns.inputs), llm)  # its start-up runs beside this process's import of the build
    try:
        return compile_command(**vars(ns))
    finally:
        discard_early()  # a reader the build did not ask for after all (an error before it read)


def compile_command(inputs: list[Path], out: Path, fmt: str | None, mount_path: str, templates: Path | None,
                    task_type: str | None, offline: bool, model: str | None, base_url: str | None, concurrency: int,
                    cache_dir: Path | None, no_cache: bool, max_tokens: int | None, timeout: float | None,
                    outcomes: Path | None, strict: bool, no_redact: bool, redact_pattern: list[str], batch: bool,
                    resume_batch: str | None, restore: bool, quiet: bool, as_json: bool) -> int:
    from .build_options import BuildOptions
    from .cli_checks import existing_folder, flag_values, valid_patterns
    from .runs.read_helper import ask_early

    flag_values(inputs)
    opts = BuildOptions(
        inputs=inputs, out=out, fmt=fmt, mount_path=mount_path, templates=existing_folder(templates, "--templates"),
        task_type=task_type, offline=offline, model=model, base_url=base_url,
        concurrency=concurrency, cache_dir=cache_dir, outcomes=outcomes, strict=strict,
        redact=not no_redact, redact_patterns=valid_patterns(redact_pattern), batch=batch, resume_batch=resume_batch,
        quiet=quiet, read_cache=not no_cache, max_tokens=max_tokens, timeout=timeout, restore=restore,
    )
    ask_early(opts)  # a reader begun early (compile_main) reads now, beside the build's import
    code = run_build(opts, as_json=as_json)
    from .errors import skip_teardown

    skip_teardown()  # every page, index and answer is on disk and closed
    return code


def run_build(opts: BuildOptions, as_json: bool = False) -> int:
    """CLI wrapper: what will be read, progress, closing summary (all on stderr), exit code.
    With ``as_json`` the summary is also one JSON object on stdout."""
    from . import llm_report
    from .build import BuildError, BuildInputError, build
    from .corpus.publish import PublishError
    from .errors import Failed, InputError
    from .runs.model import RunError
    from .llm.config import LLMConfigError
    from .progress import Progress, console as make_console

    # --quiet prints nothing: no console is made (importing rich was ~0.015 CPU-s before the
    # first model request could leave) and no closing table is laid out
    console = None if opts.quiet else make_console()
    # --quiet shows neither the survey nor a bar with its total: the input is then not read
    # a first time to detect and count it (0.07 CPU-s for 2,000 runs measured alone, before the
    # first model request could leave)
    found = None
    if not opts.quiet:
        from .input_survey import survey

        found = survey(list(opts.inputs), opts.fmt)
    for line in found.lines() if found else ():
        console.print(line)
    try:
        with Progress(console, quiet=opts.quiet) as bar:
            # --quiet shows no announcement: the input is then not read a first time to count it
            result = build(opts, lambda runs: bar.track(runs, found.runs if found else None, "compiling runs"),
                           announce=None if opts.quiet else console.print, batch_progress=bar)
    except BuildInputError as exc:
        raise InputError(str(exc)) from None
    except (BuildError, PublishError) as exc:
        raise Failed(str(exc)) from None
    except (LLMConfigError, RunError) as exc:
        raise InputError(str(exc)) from None
    if console is not None:
        _summary(console, result, opts)
    if as_json:
        print(json.dumps(result_dict(result), indent=2, ensure_ascii=False))
    if result.waiting:
        raise Failed(result.waiting, llm_report.WAITING_FIX, where=result.out)
    return 0


def result_dict(result: BuildResult) -> dict:
    """The closing summary as data (``compile --json``)."""
    report = result.report
    return {
        "out": str(result.out), "runs": result.runs, "success": result.success, "failure": result.failure,
        "insights": result.insights, "stats": result.stats, "detected_formats": result.detected,
        "skipped": result.skipped, "warnings": list(report.warnings) if report else [],
        "ignored_files": list(report.ignored) if report else [], "retired_runs": result.dropped_runs,
        "compiler": result.compiler, "by_compiler": result.by_compiler, "forgotten": result.forgotten,
    }


def _summary(console, result: BuildResult, opts: BuildOptions) -> None:
    from rich.table import Table
    from rich.text import Text  # plain text: fallback reasons quote what a model wrote

    from . import llm_report

    table = Table(title=f"corpus published at {result.out}", show_header=False)
    table.add_row("compiler", Text(llm_report.compiler_line(result.compiler, result.by_compiler)))
    table.add_row("runs", f"{result.runs} ({result.success} success, {result.failure} failure)")
    if result.report is not None:
        table.add_row("input", result.report.summary())
    table.add_row("insights", str(result.insights))
    s = result.stats
    table.add_row("LLM calls", f"{s.get('calls', 0)} sent, {s.get('cache_hits', 0)} from cache, "
                               f"{s.get('retries', 0)} retries, {s.get('repairs', 0)} repairs")
    table.add_row("fallbacks", Text(llm_report.fallback_line(s)))
    dropped = llm_report.dropped_line(s)
    if dropped:
        table.add_row("checks", dropped)
    table.add_row("tokens", f"{s.get('prompt_tokens', 0)} prompt, {s.get('completion_tokens', 0)} completion")
    table.add_row("skipped", str(len(result.skipped)))
    console.print(table)
    from .controls import visible  # problem lines quote names and ids from the input: escapes shown, not acted on

    for line in result.skipped[:20]:
        console.print(f"  skipped: {visible(line)}", markup=False, highlight=False, soft_wrap=True)
    if len(result.skipped) > 20:
        console.print(f"  … and {len(result.skipped) - 20} more (all listed in corpus.json under build.skipped)")
    if result.batch is not None:
        console.print(result.batch.summary(), markup=False, soft_wrap=True)
        for item in result.batch.failed[:20]:
            console.print(f"  batch item failed: {item.run_id or item.custom_id}: {item.reason}", markup=False, soft_wrap=True)
    if result.repaired:
        console.print(f"repaired {len(result.repaired)} file(s) found missing or edited since the last build "
                      f"(rewritten as built): {', '.join(result.repaired[:5])}{' …' if len(result.repaired) > 5 else ''}",
                      markup=False, highlight=False, soft_wrap=True)
    for line in (result.report.warnings if result.report else [])[:10]:
        console.print(f"  warning: {visible(line)}", markup=False, highlight=False, soft_wrap=True)
    if result.forgotten:
        from .progress import plural

        console.print(f"{plural(len(result.forgotten), 'run')} skipped: forgotten; pass --restore to compile them again "
                      f"({', '.join(result.forgotten[:5])}{' …' if len(result.forgotten) > 5 else ''})",
                      markup=False, highlight=False, soft_wrap=True)
    if result.dropped_runs:
        console.print(f"{len(result.dropped_runs)} run(s) of the previous corpus are not in this input; "
                      f"their ids are retired: {', '.join(result.dropped_runs[:5])}{' …' if len(result.dropped_runs) > 5 else ''}")
