"""The ``wikitrace`` executable.

``prompt`` runs once per agent task and ``query`` once per question, so both start
without the CLI framework: importing typer (and the option handling behind it) costs
about as much as the whole indexed prompt build. Anything their plain parsers do not
take (help, a usage error) and every other command goes to ``wikitrace.cli``,
imported only then.
"""

from __future__ import annotations

import sys


def _dispatch() -> int | None:
    argv = sys.argv[1:]
    if argv[:1] == ["prompt"]:
        from .agent.cli_glue import prompt_main

        rc = prompt_main(argv[1:])
        if rc is not None:
            return rc
    elif len(argv) > 1 and argv[0] == "query" and not {"--help", "-h"} & set(argv):
        from .dialogue.__main__ import main as dialogue_main

        return dialogue_main(argv)
    from .cli import _dispatch as dispatch

    return dispatch()


def main() -> None:
    from .errors import run

    run(_dispatch)


if __name__ == "__main__":
    main()
