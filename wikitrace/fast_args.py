"""argparse for the fast paths of ``prompt``, ``query`` and ``add``: stdlib only, silent.

A fast parser never prints a usage text nor exits: anything it cannot take (help, a
typo, a value below its limit) makes ``parse_or_none`` return None, and the entry point
hands the same argv to typer, which says the one error line (cli_usage.py).
"""

from __future__ import annotations

import argparse


class _Refused(Exception):
    """argparse could not take the arguments: typer parses them instead."""


class _Unprinted(argparse.HelpFormatter):
    """argparse builds a help formatter for every option it adds; the default one asks the
    terminal for its width, which imports shutil (and with it the compression modules), ~2 ms
    of a one-shot query. A fast parser never prints help."""

    def __init__(self, prog: str):
        super().__init__(prog, width=80)


class FastParser(argparse.ArgumentParser):
    """argparse that never prints or exits: a parse it cannot do raises ``_Refused``."""

    def __init__(self, prog: str):
        super().__init__(prog=prog, add_help=False, allow_abbrev=False, formatter_class=_Unprinted)

    def error(self, message):  # argparse's own: print usage, exit 2
        raise _Refused(message)

    def exit(self, status=0, message=None):
        raise _Refused(message or "")


class AtLeast:
    """An argparse type: a number of ``kind`` not below ``minimum`` (typer's ``min=``)."""

    def __init__(self, minimum: int | float, kind: type = int):
        self.minimum, self.kind = minimum, kind
        self.__name__ = f"{kind.__name__} >= {minimum}"

    def __call__(self, text: str) -> int | float:
        value = self.kind(text)
        if value < self.minimum:
            raise ValueError(f"{value} < {self.minimum}")
        return value


def parse_or_none(parser: FastParser, argv: list[str]) -> argparse.Namespace | None:
    """The parsed arguments, or None when typer should parse them (help asked for, or
    anything argparse refuses: typer then prints the one usage line)."""
    if any(a in ("--help", "-h") for a in argv):
        return None
    try:
        return parser.parse_args(argv)
    except _Refused:
        return None
