"""The ``wikitrace`` executable.

``prompt`` runs once per agent task, ``query`` once per question and ``add`` once per
finished run, so they start without the CLI framework: importing typer (and the
option handling behind it) costs about as much as the whole indexed prompt build.
``compile`` too: that cost comes before its helpers and model client can start.
Anything their plain parsers do not take (help, a usage error) and every other
command goes to ``wikitrace.cli``, imported only then.
"""

from __future__ import annotations

import sys


def fast_path(argv: list[str]) -> int | None:
    """``prompt``, ``query``, ``add`` and ``compile`` run by their argparse parsers; None: typer's turn."""
    if argv[:1] == ["prompt"]:
        from .agent.cli_glue import prompt_main

        return prompt_main(argv[1:])
    if argv[:1] == ["add"]:
        from .add_cli import add_main

        return add_main(argv[1:])
    if argv[:1] == ["compile"]:
        from .build_cli import compile_main

        return compile_main(argv[1:])
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


def main() -> None:
    from .errors import run
    from .gc_policy import collect_less

    collect_less()
    run(_dispatch, process_ends_here=True)


if __name__ == "__main__":
    main()
