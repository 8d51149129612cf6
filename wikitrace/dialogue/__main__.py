"""``python -m wikitrace.dialogue query ...``: the same command as ``wikitrace query``.

Plain arguments are parsed by argparse alone (``cli_support.query_main``); help and
usage errors go to the typer command in cli.py, so both spell the same one line.
"""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["query"]:
        from .cli_support import query_main

        rc = query_main(argv[1:])
        if rc is not None:
            return rc
    from ..cli import app

    return app(args=argv, prog_name="wikitrace")


if __name__ == "__main__":
    from ..errors import run

    run(main)
