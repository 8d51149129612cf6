"""The ``wikitrace`` command line. Each command parses options, imports lazily and
calls one library function, so ``wikitrace --help`` stays fast (no openai import).

Conventions every command follows: ``-h``/``--help``; flags are flags (``--offline``,
never ``--offline true``); a corpus defaults to $WIKITRACE_CORPUS; ``--json`` prints one
JSON object on stdout while human text goes to stderr; every failure is one line
``wikitrace: error: ...`` from wikitrace/errors.py (exit 2 usage/input, 1 problems or
failed build, 130 Ctrl-C).
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from . import __version__
from .cli_usage import Commands

CORPUS_ENV = "WIKITRACE_CORPUS"
FORMATS = ("native, atif, swe-agent, mini-swe-agent, claude-code, codex-cli, otlp (OpenTelemetry / OpenInference), "
           "inspect-ai, agents-sdk (OpenAI Agents SDK), langfuse, openhands, openai-chat (tau-bench), react-text")
ENVIRONMENT = (
    "Environment: WIKITRACE_CORPUS (default corpus for add, forget, prompt, check, query, cite, mcp, dialogue add and "
    "dialogue forget); OPENAI_API_KEY / OPENAI_BASE_URL / WIKITRACE_MODEL (the LLM; without them the offline compiler "
    "runs; OPENAI_ORG_ID / OPENAI_PROJECT_ID are sent with each request), WIKITRACE_MAX_TOKENS, WIKITRACE_TIMEOUT, WIKITRACE_MAX_ANSWER_BYTES (limits per LLM request), "
    "WIKITRACE_CACHE_DIR (LLM response cache); WIKITRACE_REDACT_KEY (the key of redaction tags, else one kept in the "
    "user config folder); WIKITRACE_EMBEDDINGS_URL / WIKITRACE_EMBEDDINGS_MODEL / WIKITRACE_EMBEDDINGS_QUERY_MODEL / "
    "WIKITRACE_EMBEDDINGS_API_KEY (dialogue embeddings); WIKITRACE_TOOLS_NO_RG=1 (grep without rg); "
    "WIKITRACE_DEBUG=1 (show the traceback of an internal error). "
    "Shell completion: wikitrace --show-completion bash|zsh|fish|powershell."
)
_SETTINGS = {"help_option_names": ["-h", "--help"]}


def _typer(help: str, **kw) -> typer.Typer:
    # rich_markup_mode=None: plain help text (flags shown as flags, "[plot]" printed as written).
    return typer.Typer(no_args_is_help=True, rich_markup_mode=None, context_settings=_SETTINGS,
                       pretty_exceptions_enable=False, help=help, **kw)


app = _typer("Compile agent runs and dialogues into evidence-linked, read-only memory.", epilog=ENVIRONMENT,
             cls=Commands)
tools_app = _typer("The small agent-facing commands (actions, turn, grep).")
cite_app = _typer("The post-episode citation prompt, its parser, and the usage ledger (cite record).")
dialogue_app = _typer("Dialogue memory (TrajWiki): compile conversations, add a session, forget.", epilog=ENVIRONMENT)
app.add_typer(tools_app, name="tools")
app.add_typer(cite_app, name="cite")
app.add_typer(dialogue_app, name="dialogue")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wikitrace {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", "-V", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """Compile agent runs and dialogues into evidence-linked, read-only memory."""


def _corpus_option(help: str = "A compiled corpus folder."):
    return typer.Option(None, "--corpus", "-c", envvar=CORPUS_ENV, show_envvar=True, help=help,
                        metavar="DIR", show_default=False)


def _need_corpus(corpus: Optional[Path], option: str = "--corpus DIR") -> Path:
    if corpus is None:
        from .errors import UsageError

        raise UsageError("no corpus given", f"pass {option} or set {CORPUS_ENV}", where=option.split()[0])
    return corpus


@app.command()
def compile(
    inputs: List[Path] = typer.Argument(..., metavar="INPUT", help=f"Run files or folders (walked). Formats: {FORMATS}."),
    out: Path = typer.Option(..., "--out", "-o", metavar="DIR", help="Corpus folder, updated in place (files you add there are left alone)."),
    fmt: Optional[str] = typer.Option(None, "--from", metavar="FORMAT", help="Input format; detected per file when omitted."),
    mount_path: str = typer.Option("/work/corpus", "--mount-path", help="Where the agent sees the corpus."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
    task_type: Optional[str] = typer.Option(None, "--task-type", help="Task type for runs that carry none."),
    offline: bool = typer.Option(False, "--offline", help="Use the offline compiler even if an LLM is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name for the LLM compiler (default $WIKITRACE_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint: vLLM, Ollama, llama.cpp (default $OPENAI_BASE_URL)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="LLM calls in flight at once."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", metavar="DIR", help="LLM response cache (default $WIKITRACE_CACHE_DIR or ~/.cache/wikitrace/llm)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the model again even for runs whose answer is cached (new answers are still stored)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, metavar="N", help="Longest answer per LLM request, in tokens (default $WIKITRACE_MAX_TOKENS or 2048)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.001, metavar="SECONDS", help="Seconds to wait for one LLM request (default $WIKITRACE_TIMEOUT or 120)."),
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", metavar="FILE", help="run id -> success/failure/score (JSON, CSV or JSONL) for formats with no verdict."),
    strict: bool = typer.Option(False, "--strict", help="Fail when a run has no outcome instead of skipping it."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secrets in the text (redaction is on by default)."),
    redact_pattern: List[str] = typer.Option([], "--redact-pattern", metavar="REGEX", help="Extra regex to redact (repeatable)."),
    batch: bool = typer.Option(False, "--batch", help="Send the model calls through the OpenAI Batch API first (half price, results within 24 h; rerun with --resume-batch)."),
    resume_batch: Optional[str] = typer.Option(None, "--resume-batch", metavar="ID", help="Collect an earlier --batch submission (batch id, or ids joined by commas), then build."),
    restore: bool = typer.Option(False, "--restore", help="Compile again the runs `wikitrace forget` removed (they get new ids); without it they are skipped and reported."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no summary (errors still print)."),
    as_json: bool = typer.Option(False, "--json", help="Print the build summary as one JSON object on stdout."),
) -> None:
    """Compile runs into raw/ compilation/ insight/ layers with indexes and corpus.json."""
    from .build_cli import compile_command  # the entry point's fast path ends there too

    raise typer.Exit(compile_command(
        inputs, out, fmt, mount_path, templates, task_type, offline, model, base_url, concurrency, cache_dir, no_cache,
        max_tokens, timeout, outcomes, strict, no_redact, redact_pattern, batch, resume_batch, restore, quiet, as_json))


@app.command()
def add(
    run_file: Optional[Path] = typer.Argument(None, metavar="RUN_FILE", help=f"One finished run (several in one file are all added). Formats: {FORMATS}.", show_default=False),
    corpus: Optional[Path] = _corpus_option("A corpus built by wikitrace compile."),
    claude_code_hook: bool = typer.Option(False, "--claude-code-hook", help="Take RUN_FILE from a Claude Code hook's JSON on stdin (transcript_path)."),
    outcome: Optional[str] = typer.Option(None, "--outcome", metavar="success|failure|SCORE", help="The run's verdict, for formats that carry none (a score counts as success at 1.0)."),
    fmt: Optional[str] = typer.Option(None, "--from", metavar="FORMAT", help="Input format; detected when omitted."),
    offline: bool = typer.Option(False, "--offline", help="Compile offline (the default for a corpus compiled offline)."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the LLM compiler (default: the corpus's)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Template folder (default: the one the corpus was compiled with)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, metavar="N", help="Longest answer per LLM request (default $WIKITRACE_MAX_TOKENS or 2048)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.001, metavar="SECONDS", help="Seconds to wait for one LLM request (default $WIKITRACE_TIMEOUT or 120)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary (errors still print)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object on stdout."),
) -> None:
    """Append one finished run to a compiled corpus, updating its indexes and corpus.json in place."""
    from .add_cli import add_command  # the entry point's fast path ends there too

    raise typer.Exit(add_command(run_file, corpus, claude_code_hook, outcome, fmt, offline, model, base_url, templates,
                                 max_tokens, timeout, quiet, as_json))


@app.command()
def forget(
    run_ids: List[str] = typer.Argument(..., metavar="RUN_ID", help="Runs to remove: run ids or step ids (step-NNNN), as corpus.json and raw/_index.md show them."),
    corpus: Optional[Path] = _corpus_option("The corpus to remove them from."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", metavar="DIR", help="Also purge this LLM response cache (the caches the corpus's builds used and the default one are purged anyway)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was removed as one JSON object on stdout."),
) -> None:
    """Remove runs for good: their pages, insights, index lines and cached LLM answers; later builds skip them."""
    from .forget import forget_command

    raise typer.Exit(forget_command(_need_corpus(corpus), run_ids, cache_dir, as_json))


@app.command()
def check(
    corpus: Optional[Path] = typer.Argument(None, envvar=CORPUS_ENV, show_envvar=True, metavar="[DIR]",
                                            help="A compiled corpus folder.", show_default=False),
    as_json: bool = typer.Option(False, "--json", help='Print {"corpus", "ok", "problems"} as JSON.'),
) -> None:
    """Verify links, source links, turn refs, frontmatter and indexes; exit 1 on any problem."""
    from .check import check_corpus, print_report

    corpus = _need_corpus(corpus, "DIR")
    problems = check_corpus(corpus)
    if as_json:
        import json

        print(json.dumps({"corpus": str(corpus), "ok": not problems, "problems": problems}, indent=2))
    else:
        print_report(corpus, problems)
    raise typer.Exit(1 if problems else 0)


@tools_app.command("install")
def tools_install(
    dest: Path = typer.Argument(..., metavar="DIR", help="Folder to copy the tools into (mount it at /work/tools)."),
    force: bool = typer.Option(False, "--force", help="Replace files in DIR that differ from the bundled tools."),
    as_json: bool = typer.Option(False, "--json", help="Print the files written as JSON."),
) -> None:
    """Copy the stdlib-only agent tools into DIR."""
    from .tools_install import install_command

    raise typer.Exit(install_command(dest, force, as_json))


@app.command()
def prompt(
    corpus: Optional[Path] = _corpus_option("A compiled corpus folder (reads its corpus.json)."),
    task: Optional[str] = typer.Option(None, "--task", help="The task text, as the agent will receive it."),
    task_file: Optional[Path] = typer.Option(None, "--task-file", metavar="FILE", help="Read the task text from this file ('-' for stdin)."),
    variant: str = typer.Option("wikitrace", "--variant", help="wikitrace, or insights-only (the paper's control)."),
    budget: int = typer.Option(4000, "--budget", min=0, help="Token budget for the additions (chars/4); keeps the most relevant insights. 0 inlines every insight (the paper's setting)."),
    task_type: Optional[str] = typer.Option(None, "--task-type", help="The task's type: boosts same-type runs and insights."),
    similar: int = typer.Option(3, "--similar", min=0, help="How many similar past runs to list."),
    mount_path: Optional[str] = typer.Option(None, "--mount-path", help="Where the agent sees the corpus (default: corpus.json's)."),
    tools_path: str = typer.Option("/work/tools", "--tools-path", help="Where the agent sees the corpus tools."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
    embedding_model: Optional[str] = typer.Option(None, "--embedding-model", help="Rank runs by embeddings from this model instead of BM25."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for --embedding-model."),
    as_json: bool = typer.Option(False, "--json", help="Print the prompt parts as JSON."),
    prefer_helpful: bool = typer.Option(False, "--prefer-helpful", help="With --budget: keep insights that the usage ledger shows cited mostly in failed episodes last (never-cited insights keep their place)."),
) -> None:
    """Render the memory additions (system + task message + citation prompt) for one task."""
    from .agent.cli_glue import prompt_command

    raise typer.Exit(prompt_command(_need_corpus(corpus), task, task_file, variant, budget, task_type, similar,
                                    mount_path, tools_path, templates, embedding_model, base_url, as_json,
                                    prefer_helpful))


@cite_app.command("prompt")
def cite_prompt(
    corpus: Optional[Path] = _corpus_option("Corpus whose first ids serve as examples (optional)."),
    variant: str = typer.Option("wikitrace", "--variant", help="wikitrace (R, C, I) or insights-only (I)."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
) -> None:
    """Print the post-episode citation prompt."""
    from .agent.prompt import citation_prompt
    from .cli_checks import existing_folder

    typer.echo(citation_prompt(corpus, variant, existing_folder(templates, "--templates")), nl=False)


@cite_app.command("parse")
def cite_parse(
    source: str = typer.Argument(..., metavar="FILE", help="The agent's reply (a file, or '-' for stdin)."),
    corpus: Optional[Path] = _corpus_option("The corpus the ids must exist in."),
    as_json: bool = typer.Option(False, "--json", help="Print the parsed citation as JSON."),
) -> None:
    """Read R / C / I ids from a messy reply; exit 1 if any id is unknown, 2 if no JSON object."""
    from .agent.cite import cite_parse_command

    raise typer.Exit(cite_parse_command(source, _need_corpus(corpus), as_json))


@cite_app.command("record")
def cite_record(
    source: str = typer.Argument(..., metavar="ANSWER", help="The agent's answer or transcript holding its citation (a file, or '-' for stdin)."),
    corpus: Optional[Path] = _corpus_option("The corpus whose usage ledger (usage/ledger.jsonl) records the episode."),
    run: str = typer.Option(..., "--run", metavar="RUN_ID", help="The episode's run id. With the answer it names the episode: recording both again adds nothing."),
    outcome: str = typer.Option(..., "--outcome", metavar="success|failure|SCORE", help="How the episode ended (a score >= 1.0 is a success)."),
    method: str = typer.Option("wikitrace", "--method", help="The memory method the agent ran with (for wikitrace eval)."),
    task: Optional[str] = typer.Option(None, "--task", help="Task id (default: the run's task in the corpus, else the run id)."),
    suite: str = typer.Option("default", "--suite", help="Benchmark suite (for wikitrace eval)."),
    trial: Optional[str] = typer.Option(None, "--trial", help="Trial label (default: how many episodes of this suite, method and task came before)."),
    as_json: bool = typer.Option(False, "--json", help="Print the recorded episode and the new counts as JSON."),
) -> None:
    """Store which insights, compilations and runs an episode cited and how it ended; update the insight pages' counts."""
    from .agent.cite_record import cite_record_command

    raise typer.Exit(cite_record_command(source, _need_corpus(corpus), run, outcome, method, task, suite, trial,
                                         as_json))


@app.command()
def descents(
    transcript: Path = typer.Argument(..., metavar="FILE", help="Agent transcript: turn log, OpenAI chat messages, or a file of runs (JSON or JSONL)."),
    mount_path: str = typer.Option("/work/corpus", "--mount-path", help="Where the agent saw the corpus."),
    tools_path: str = typer.Option("/work/tools", "--tools-path", help="Where the agent saw the corpus tools."),
    as_json: bool = typer.Option(False, "--json", help="Print the descents as JSON."),
    judge: bool = typer.Option(False, "--judge", help="Label each descent's trigger, target and effect (paper §5.2)."),
    judges: int = typer.Option(3, "--judges", min=1, help="Judge calls whose majority gives the effect (with --judge)."),
    offline: bool = typer.Option(False, "--offline", help="Judge with the offline rules even if an LLM is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the judge (with --judge)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for the judge."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="LLM response cache (as for compile)."),
) -> None:
    """Group memory calls into descents and label each run Descent or Stay."""
    if judge:
        from .agent.descent_report import judge_command

        raise typer.Exit(judge_command(transcript, mount_path, tools_path, as_json, judges, offline, model,
                                       base_url, cache_dir))
    from .agent.descents import descents_command

    raise typer.Exit(descents_command(transcript, mount_path, tools_path, as_json))


@app.command("eval")
def eval_(
    results: Path = typer.Argument(..., metavar="FILE", help="CSV or JSONL rows: suite, task_id, method, trial, score|success; or a corpus folder (or its usage/ledger.jsonl) whose episodes were recorded with cite record."),
    csv_out: Optional[Path] = typer.Option(None, "--csv", metavar="FILE", help="Write the table as CSV here."),
    plot_out: Optional[Path] = typer.Option(None, "--plot", metavar="FILE", help="Write a Gain/Regression PNG here (needs matplotlib: the plot extra, pip install '.[plot]' in a clone)."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    resamples: int = typer.Option(10_000, "--resamples", min=0, help="Bootstrap resamples of tasks within each suite."),
    reference: str = typer.Option("no-memory", "--reference", help="Method whose trial majority gives B_i (case, spaces and dashes ignored: 'No Memory' matches)."),
    rerun: str = typer.Option("no-memory-rerun", "--rerun", help="Rerun No-Memory trials that give the floor."),
    success_threshold: float = typer.Option(1.0, "--success-threshold", help="Score counted as success when no success column."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    labels: Optional[Path] = typer.Option(None, "--labels", help="Instead: the lead by descent label, from `descents --judge --json` output."),
    method: str = typer.Option("wikitrace", "--method", help="With --labels: the memory method whose descents were labelled."),
    control: str = typer.Option("insights-only", "--control", help="With --labels: the method it is compared with."),
) -> None:
    """Score, Gain and Regression with paired-bootstrap 95% intervals, rerun floor and excess."""
    if labels is not None:
        from .agent.descent_breakdown import by_label_command

        raise typer.Exit(by_label_command(results, labels, method, control, success_threshold, as_json, plot_out,
                                          reference))
    from .agent.eval_report import eval_command
    from .cli_checks import writable_file

    raise typer.Exit(eval_command(results, writable_file(csv_out, "--csv"), writable_file(plot_out, "--plot"),
                                  seed, resamples, reference, rerun, success_threshold, as_json))


@dialogue_app.command("compile")
def dialogue_compile(
    inputs: List[Path] = typer.Argument(..., metavar="INPUT", help="LoCoMo files/folders (flat or locomo10.json) or JSONL of messages."),
    out: Path = typer.Option(..., "--out", "-o", metavar="DIR", help="Corpus folder; writes OUT/dialogue/<sample>/ in place."),
    sample: Optional[List[str]] = typer.Option(None, "--sample", "-s", help="Compile only these sample ids."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
    offline: bool = typer.Option(False, "--offline", help="Never call an LLM, even if one is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the structured LLM calls (default $WIKITRACE_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no summary (errors still print)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object on stdout."),
    restore: bool = typer.Option(False, "--restore", help="Compile forgotten samples/sessions the inputs hold again."),
) -> None:
    """Compile dialogues into snapshots, trajectories, a Memory Wiki and a retrieval index."""
    from .cli_checks import existing_folder
    from .dialogue.cli_support import compile_command

    raise typer.Exit(compile_command(inputs, out, sample or [], existing_folder(templates, "--templates"),
                                     offline, model, base_url, quiet=quiet, as_json=as_json, restore=restore))


@dialogue_app.command("add")
def dialogue_add(
    session: Path = typer.Argument(..., metavar="SESSION", help="One session: LoCoMo JSON or JSONL of messages."),
    corpus: Optional[Path] = _corpus_option("Corpus folder holding the compiled conversation."),
    sample: str = typer.Option(..., "--sample", "-s", help="The compiled conversation to extend."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
    offline: bool = typer.Option(False, "--offline", help="Never call an LLM, even if one is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the structured LLM calls (default $WIKITRACE_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary (errors still print)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as one JSON object on stdout."),
) -> None:
    """Append one session to a compiled conversation (same output as compiling the longer input)."""
    from .cli_checks import existing_folder
    from .dialogue.add import add_command

    raise typer.Exit(add_command(session, _need_corpus(corpus), sample, existing_folder(templates, "--templates"),
                                 offline, model, base_url, quiet=quiet, as_json=as_json))


@dialogue_app.command("forget")
def dialogue_forget(
    corpus: Optional[Path] = _corpus_option("Corpus folder holding the compiled conversation."),
    sample: str = typer.Option(..., "--sample", "-s", help="The conversation to forget (all of it, or --session)."),
    session: Optional[str] = typer.Option(None, "--session", help="Forget only this session of the sample."),
    templates: Optional[Path] = typer.Option(None, "--templates", metavar="DIR", help="Folder whose templates override the bundled ones."),
    offline: bool = typer.Option(False, "--offline", help="Never call an LLM when rebuilding, even if one is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the structured LLM calls (default $WIKITRACE_MODEL)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default $OPENAI_BASE_URL)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No summary (errors still print)."),
    as_json: bool = typer.Option(False, "--json", help="Print what was removed as one JSON object on stdout."),
) -> None:
    """Forget a conversation, or one session of it: files removed, tombstone kept (ids and hashes only)."""
    from .cli_checks import existing_folder
    from .dialogue.forget import forget_command

    raise typer.Exit(forget_command(_need_corpus(corpus), sample, session, existing_folder(templates, "--templates"),
                                    offline, model, base_url, quiet=quiet, as_json=as_json))


@app.command("query")
def query(
    question: str = typer.Argument(..., help="The question."),
    corpus: Optional[Path] = _corpus_option("Corpus folder holding dialogue/."),
    sample: Optional[str] = typer.Option(None, "--sample", "-s", help="Sample id (optional when there is one)."),
    budget: int = typer.Option(2000, "--budget", min=50, help="Source-context budget in whitespace tokens."),
    as_json: bool = typer.Option(False, "--json", help="Print the evidence packet as JSON."),
    offline: bool = typer.Option(True, "--offline/--llm", help="Evidence only (default), or answer with the configured LLM."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for answer synthesis (with --llm)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (with --llm)."),
) -> None:
    """Retrieve evidence for a question from a compiled dialogue (wiki -> trajectories -> sources)."""
    from .dialogue.cli_support import query_command

    raise typer.Exit(query_command(_need_corpus(corpus), sample, question, budget, as_json, offline, model, base_url))


_SHELLS = ("bash", "zsh", "fish", "powershell", "pwsh")


def _completion_for(argv: list[str]) -> int | None:
    """``--show-completion SHELL``: the script for that shell. Typer's flag takes no value and
    guesses the shell from the parent process, so ``--show-completion zsh`` printed bash's."""
    if len(argv) != 2 or argv[0] != "--show-completion":
        return None
    from .errors import UsageError

    if argv[1] not in _SHELLS:
        raise UsageError(f"unknown shell {argv[1]!r}", f"use one of {', '.join(_SHELLS)}", where="--show-completion")
    from typer.completion import get_completion_script

    print(get_completion_script(prog_name="wikitrace", complete_var="_WIKITRACE_COMPLETE", shell=argv[1]))
    return 0


def run_typer() -> int | None:
    """Every command through typer (after the entry point's fast path declined)."""
    import sys

    shown = _completion_for(sys.argv[1:])
    if shown is not None:
        return shown
    return app()


# --- MCP server (the optional mcp extra: the official MCP SDK) ---

@app.command("mcp")
def mcp_(
    corpus: Optional[Path] = _corpus_option("A compiled corpus folder (served read-only)."),
    http: Optional[int] = typer.Option(None, "--http", metavar="PORT", help="Serve streamable HTTP on 127.0.0.1:PORT instead of stdio."),
) -> None:
    """Serve the corpus to MCP clients (Claude Code, Claude Desktop, Cursor, Agents SDK)."""
    from .mcp_server import mcp_command

    raise typer.Exit(mcp_command(_need_corpus(corpus), http))


def main(process_ends_here: bool = False) -> None:
    """``python -m wikitrace.cli``: every command through typer (the ``wikitrace``
    executable, entry.py, tries the fast paths of prompt and query first)."""
    from .errors import run

    run(run_typer, process_ends_here=process_ends_here)


if __name__ == "__main__":
    main(process_ends_here=True)
