"""The ``wikitrace`` console script. ``wikitrace query`` runs once per question, so it is parsed
with argparse before the typer command line (and its imports) is loaded at all; every other
command, and ``query --help``, goes to ``wikitrace.cli``."""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if len(argv) > 1 and argv[0] == "query" and not {"--help", "-h"} & set(argv):
        from .dialogue.__main__ import main as dialogue_main
        from .errors import run

        run(lambda: dialogue_main(argv))
        return
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
