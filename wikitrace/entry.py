"""The ``wikitrace`` executable.

``prompt`` runs once per agent task, ``query`` once per question and ``add`` once per
finished run, so they start without the CLI framework: importing typer (and the
option handling behind it) costs about as much as the whole indexed prompt build.
Anything their plain parsers do not take (help, a usage error) and every other
command goes to ``wikitrace.cli``, imported only then.
"""

from __future__ import annotations

import sys


def fast_path(argv: list[str]) -> int | None:
    """``prompt``, ``query`` and ``add`` run by their argparse parsers; None: typer's turn."""
    if argv[:1] == ["prompt"]:
        from .agent.cli_glue import prompt_main

        return prompt_main(argv[1:])
    if argv[:1] == ["add"]:
        from .add_cli import add_main

        return add_main(argv[1:])
    if argv[:1] == ["query"]:
        from .dialogue.cli_support import query_main

        return query_main(argv[1:])
    return None


def _dispatch() -> int | None:
    rc = fast_path(sys.argv[1:])
    if rc is not None:
        return rc
    from .cli import run_typer

    return run_typer()


def collect_less() -> None:
    """Look for reference cycles ten times less often than Python's default. A build makes
    and drops millions of small acyclic objects (turns, page lines, JSON values); each pass
    over the young ones finds almost nothing, and together they cost a build about 4% of its
    CPU. Called by the command and by the build's helper processes, never on import."""
    import gc

    gc.set_threshold(7000, 10, 10)


def main() -> None:
    from .errors import run

    collect_less()
    run(_dispatch)


if __name__ == "__main__":
    main()
