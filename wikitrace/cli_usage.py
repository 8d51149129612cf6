"""Usage errors in the one shape, whichever parser found them.

``wikitrace`` parses its arguments two ways: typer (through click) for every command,
and plain argparse for ``prompt`` and ``query``, which start too often to import typer.
A usage error from either is the line ``wikitrace: error: <command> <option>: <what> —
<what to do>`` with exit 2; click's usage box and argparse's usage text never print.

The fast parsers do not report errors themselves: when they cannot take the arguments
(help, a typo, a value out of range) they give up and typer parses the same argv, so
the message and its limits come from the one definition in cli.py. Their options,
defaults and limits are checked against typer's in tests/test_cli_usage.py.
"""

from __future__ import annotations

import argparse
import re


def click_errors():
    """The module of click's exception classes as typer raises them: recent typer
    carries its own copy of click (``typer._click``), older typer uses click itself."""
    import importlib

    import typer.core

    base = getattr(typer.core, "_click", None) or typer.core.click
    return importlib.import_module(base.__name__ + ".exceptions")


def from_click(exc, command: str = "wikitrace"):
    """A click ``UsageError`` (unknown option, missing argument, bad or out-of-range
    value, unknown command) as our ``UsageError``, naming the command and the option.
    ``command``: the command words typed, for an error click tied to a parent's context
    (a value missing after the last option)."""
    from .errors import UsageError

    click = click_errors()
    ctx = exc.ctx
    if ctx is not None and len(ctx.command_path) > len(command):
        command = ctx.command_path
    where = command.split(" ", 1)[1] if " " in command else ""
    fix = f"see `{command} -h`"
    param = getattr(exc, "param", None)
    if isinstance(exc, click.NoSuchOption):
        where, what = f"{where} {exc.option_name}", "no such option"
        if exc.possibilities:
            fix = f"did you mean {' or '.join(sorted(exc.possibilities))}? ({fix})"
    elif isinstance(exc, click.MissingParameter):
        name = _param_name(param) if param is not None else ""
        kind = exc.param_type or (param.param_type_name if param is not None else "value")
        where, what = f"{where} {name}", f"missing {kind}"
    else:
        what = exc.message
        if param is not None:
            where = f"{where} {_param_name(param)}"
        elif isinstance(exc, click.BadOptionUsage) and exc.option_name:
            where = f"{where} {exc.option_name}"
    what = re.sub(r"^[Oo]ption '[^']*' ", "", what.rstrip("."))  # the option is named in ``where`` already
    what = what[:1].lower() + what[1:]
    return UsageError(what, fix, where=where.strip() or None)


def _param_name(param) -> str:
    """How the user typed (or should type) the parameter: ``--budget``, ``INPUT``."""
    if param.param_type_name == "argument":
        return (param.metavar or param.name or "").strip("[].").upper()
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or param.opts)[0]


class _Refused(Exception):
    """argparse could not take the arguments: typer parses them instead."""


class FastParser(argparse.ArgumentParser):
    """argparse that never prints or exits: a parse it cannot do raises ``_Refused``."""

    def __init__(self, prog: str):
        super().__init__(prog=prog, add_help=False, allow_abbrev=False)

    def error(self, message):  # argparse's own: print usage, exit 2
        raise _Refused(message)

    def exit(self, status=0, message=None):
        raise _Refused(message or "")


class AtLeast:
    """An argparse type: an integer not below ``minimum`` (typer's ``min=``)."""

    def __init__(self, minimum: int):
        self.minimum = minimum
        self.__name__ = f"int >= {minimum}"

    def __call__(self, text: str) -> int:
        value = int(text)
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
