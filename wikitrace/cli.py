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
    cache_dir: Optional[Path] = typer.Option(None, "--cache-dir", help="LLM response cache (default: ~/.cache/wikitrace)."),
) -> None:
    """Compile runs into raw/ compilation/ insight/ layers with indexes and corpus.json."""
    from .build import BuildOptions, run_build

    opts = BuildOptions(
        inputs=inputs, out=out, fmt=fmt, mount_path=mount_path, templates=templates,
        task_type=task_type, offline=offline, model=model, base_url=base_url,
        concurrency=concurrency, cache_dir=cache_dir,
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

    for path in install(dest):
        typer.echo(path)


# --- agent-side commands (issue 3) ---

# --- dialogue memory commands (issue 4) ---


def main() -> None:
    app()


if __name__ == "__main__":
    main()
