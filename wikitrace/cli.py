"""The ``wikitrace`` command line. Each command parses options, imports lazily and
calls one library function, so ``wikitrace --help`` stays fast (no openai import)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="Compile agent runs and dialogues into evidence-linked, read-only memory.")
tools_app = typer.Typer(no_args_is_help=True, help="The small agent-facing commands (actions, turn, grep).")
app.add_typer(tools_app, name="tools")


@app.command()
def compile(
    inputs: List[Path] = typer.Argument(..., help="Run files or folders (native JSONL, run folders, OpenAI chat trajectories)."),
    out: Path = typer.Option(..., "--out", "-o", help="Corpus folder to publish (replaced atomically)."),
    fmt: Optional[str] = typer.Option(None, "--from", help="Input format; detected when omitted."),
    mount_path: str = typer.Option("/work/corpus", "--mount-path", help="Where the agent sees the corpus."),
    templates: Optional[Path] = typer.Option(None, "--templates", help="Folder whose templates override the bundled ones."),
    task_type: Optional[str] = typer.Option(None, "--task-type", help="Task type for runs that carry none."),
    offline: bool = typer.Option(False, "--offline", help="Use the offline compiler even if an LLM is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model name for the LLM compiler."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (vLLM, Ollama, llama.cpp)."),
    concurrency: int = typer.Option(8, "--concurrency", min=1, help="LLM calls in flight at once."),
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="LLM response cache (default: $WIKITRACE_CACHE_DIR or ~/.cache/wikitrace/llm)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Ask the model again even for runs whose answer is cached (new answers are still stored)."),
    max_tokens: Optional[int] = typer.Option(None, "--max-tokens", min=1, help="Longest answer per LLM request, in tokens (default: $WIKITRACE_MAX_TOKENS or 2048)."),
    timeout: Optional[float] = typer.Option(None, "--timeout", min=0.001, help="Seconds to wait for one LLM request (default: $WIKITRACE_TIMEOUT or 120)."),
    outcomes: Optional[Path] = typer.Option(None, "--outcomes", help="run id -> success/failure/score (JSON, CSV or JSONL) for formats with no verdict."),
    strict: bool = typer.Option(False, "--strict", help="Fail when a run has no outcome instead of skipping it."),
    no_redact: bool = typer.Option(False, "--no-redact", help="Keep secrets in the text (redaction is on by default)."),
    redact_pattern: List[str] = typer.Option([], "--redact-pattern", help="Extra regex to redact (repeatable)."),
    batch: bool = typer.Option(False, "--batch", help="Send the model calls through the OpenAI Batch API first (half price, up to 24 h); see docs/batch.md."),
    resume_batch: Optional[str] = typer.Option(None, "--resume-batch", metavar="ID", help="Collect an earlier --batch submission (batch id, or ids joined by commas), then build."),
) -> None:
    """Compile runs into raw/ compilation/ insight/ layers with indexes and corpus.json."""
    from .build import BuildOptions, run_build

    opts = BuildOptions(
        inputs=inputs, out=out, fmt=fmt, mount_path=mount_path, templates=templates,
        task_type=task_type, offline=offline, model=model, base_url=base_url,
        concurrency=concurrency, cache_dir=cache_dir, outcomes=outcomes, strict=strict,
        redact=not no_redact, redact_patterns=tuple(redact_pattern), batch=batch, resume_batch=resume_batch,
        read_cache=not no_cache, max_tokens=max_tokens, timeout=timeout,
    )
    raise typer.Exit(run_build(opts))


@app.command()
def check(corpus: Path = typer.Argument(..., help="A compiled corpus folder.")) -> None:
    """Verify links, source links, turn refs, frontmatter and indexes; exit 1 on any problem."""
    from .corpus.check import check_corpus, print_report

    problems = check_corpus(corpus)
    print_report(corpus, problems)
    raise typer.Exit(1 if problems else 0)


@tools_app.command("install")
def tools_install(dest: Path = typer.Argument(..., help="Folder to copy the tools into (mount it at /work/tools).")) -> None:
    """Copy the stdlib-only agent tools into DEST."""
    from .tools_install import install

    try:
        written = install(dest)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2)
    for path in written:
        typer.echo(path)


# --- agent-side commands (issue 3) ---
cite_app = typer.Typer(no_args_is_help=True, help="The post-episode citation prompt and its parser.")
app.add_typer(cite_app, name="cite")


@app.command()
def prompt(
    corpus: Path = typer.Option(..., "--corpus", help="A compiled corpus folder (reads its corpus.json)."),
    task: Optional[str] = typer.Option(None, "--task", help="The task text, as the agent will receive it."),
    task_file: Optional[Path] = typer.Option(None, "--task-file", help="Read the task text from this file ('-' for stdin)."),
    variant: str = typer.Option("wikitrace", "--variant", help="wikitrace, or insights-only (the paper's control)."),
    budget: Optional[int] = typer.Option(None, "--budget", min=0, help="Token budget for the additions (chars/4); keeps the most relevant insights."),
    task_type: Optional[str] = typer.Option(None, "--task-type", help="The task's type: boosts same-type runs and insights."),
    similar: int = typer.Option(3, "--similar", min=0, help="How many similar past runs to list."),
    mount_path: Optional[str] = typer.Option(None, "--mount-path", help="Where the agent sees the corpus (default: corpus.json's)."),
    tools_path: str = typer.Option("/work/tools", "--tools-path", help="Where the agent sees the corpus tools."),
    templates: Optional[Path] = typer.Option(None, "--templates", help="Folder whose templates override the bundled ones."),
    embedding_model: Optional[str] = typer.Option(None, "--embedding-model", help="Rank runs by embeddings from this model instead of BM25."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint for --embedding-model."),
    as_json: bool = typer.Option(False, "--json", help="Print the prompt parts as JSON."),
) -> None:
    """Render the memory additions (system + task message + citation prompt) for one task."""
    from .agent.cli_glue import prompt_command

    raise typer.Exit(prompt_command(corpus, task, task_file, variant, budget, task_type, similar, mount_path,
                                    tools_path, templates, embedding_model, base_url, as_json))


@cite_app.command("prompt")
def cite_prompt(
    corpus: Optional[Path] = typer.Option(None, "--corpus", help="Corpus whose first ids serve as examples."),
    variant: str = typer.Option("wikitrace", "--variant", help="wikitrace (R, C, I) or insights-only (I)."),
    templates: Optional[Path] = typer.Option(None, "--templates", help="Folder whose templates override the bundled ones."),
) -> None:
    """Print the post-episode citation prompt."""
    from .agent.prompt import citation_prompt

    typer.echo(citation_prompt(corpus, variant, templates), nl=False)


@cite_app.command("parse")
def cite_parse(
    source: str = typer.Argument(..., help="The agent's reply (a file, or '-' for stdin)."),
    corpus: Path = typer.Option(..., "--corpus", help="The corpus the ids must exist in."),
    as_json: bool = typer.Option(False, "--json", help="Print the parsed citation as JSON."),
) -> None:
    """Read R / C / I ids from a messy reply; exit 1 if any id is unknown, 2 if no JSON object."""
    from .agent.cite import cite_parse_command

    raise typer.Exit(cite_parse_command(source, corpus, as_json))


@app.command()
def descents(
    transcript: Path = typer.Argument(..., help="Agent transcript: turn log, OpenAI chat messages, or a file of runs."),
    mount_path: str = typer.Option("/work/corpus", "--mount-path", help="Where the agent saw the corpus."),
    tools_path: str = typer.Option("/work/tools", "--tools-path", help="Where the agent saw the corpus tools."),
    as_json: bool = typer.Option(False, "--json", help="Print the descents as JSON."),
) -> None:
    """Group memory calls into descents and label each run Descent or Stay."""
    from .agent.descents import descents_command

    raise typer.Exit(descents_command(transcript, mount_path, tools_path, as_json))


@app.command("eval")
def eval_(
    results: Path = typer.Argument(..., help="CSV or JSONL rows: suite, task_id, method, trial, score|success."),
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write the table as CSV here."),
    plot_out: Optional[Path] = typer.Option(None, "--plot", help="Write a Gain/Regression PNG here (needs wikitrace[plot])."),
    seed: int = typer.Option(0, "--seed", help="Bootstrap seed."),
    resamples: int = typer.Option(10_000, "--resamples", min=0, help="Bootstrap resamples of tasks within each suite."),
    reference: str = typer.Option("no-memory", "--reference", help="Method whose trial majority gives B_i."),
    rerun: str = typer.Option("no-memory-rerun", "--rerun", help="Rerun No-Memory trials that give the floor."),
    success_threshold: float = typer.Option(1.0, "--success-threshold", help="Score counted as success when no success column."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> None:
    """Score, Gain and Regression with paired-bootstrap 95% intervals, rerun floor and excess."""
    from .agent.evaluate import eval_command

    raise typer.Exit(eval_command(results, csv_out, plot_out, seed, resamples, reference, rerun,
                                  success_threshold, as_json))


# --- dialogue memory commands (issue 4) ---

dialogue_app = typer.Typer(no_args_is_help=True, help="Dialogue memory (TrajWiki): compile conversations.")
app.add_typer(dialogue_app, name="dialogue")


@dialogue_app.command("compile")
def dialogue_compile(
    inputs: List[Path] = typer.Argument(..., help="LoCoMo files/folders (flat or locomo10.json) or JSONL of messages."),
    out: Path = typer.Option(..., "--out", "-o", help="Corpus folder; writes OUT/dialogue/<sample>/ (replaced atomically)."),
    sample: Optional[List[str]] = typer.Option(None, "--sample", "-s", help="Compile only these sample ids."),
    templates: Optional[Path] = typer.Option(None, "--templates", help="Folder whose templates override the bundled ones."),
    offline: bool = typer.Option(False, "--offline", help="Never call an LLM, even if one is configured."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for the structured LLM calls."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint."),
) -> None:
    """Compile dialogues into snapshots, trajectories, a Memory Wiki and a retrieval index."""
    from .dialogue.cli_support import compile_command

    raise typer.Exit(compile_command(inputs, out, sample or [], templates, offline, model, base_url))


@app.command("query")
def query(
    question: str = typer.Argument(..., help="The question."),
    corpus: Path = typer.Option(..., "--corpus", "-c", help="Corpus folder holding dialogue/."),
    sample: Optional[str] = typer.Option(None, "--sample", "-s", help="Sample id (optional when there is one)."),
    budget: int = typer.Option(2000, "--budget", min=50, help="Source-context budget in whitespace tokens."),
    as_json: bool = typer.Option(False, "--json", help="Print the evidence packet as JSON."),
    offline: bool = typer.Option(True, "--offline/--llm", help="Evidence only (default), or answer with the configured LLM."),
    model: Optional[str] = typer.Option(None, "--model", help="Model for answer synthesis (with --llm)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (with --llm)."),
) -> None:
    """Retrieve evidence for a question from a compiled dialogue (wiki -> trajectories -> sources)."""
    from .dialogue.cli_support import query_command

    raise typer.Exit(query_command(corpus, sample, question, budget, as_json, offline, model, base_url))


def main() -> None:
    import sys

    # `prompt` runs once per agent task: parse it without typer (whose option
    # handling imports pydantic) when the arguments are plain.
    if len(sys.argv) > 1 and sys.argv[1] == "prompt":
        from .agent.cli_glue import prompt_main

        rc = prompt_main(sys.argv[2:])
        if rc is not None:
            raise SystemExit(rc)
    # `query` likewise runs once per question.
    if len(sys.argv) > 2 and sys.argv[1] == "query" and "--help" not in sys.argv:
        from .dialogue.__main__ import main as dialogue_main

        raise SystemExit(dialogue_main(sys.argv[1:]))
    app()


if __name__ == "__main__":
    main()
