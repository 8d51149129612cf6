"""Usage errors in the one shape, whichever parser found them.

``wikitrace`` parses its arguments two ways: typer (through click) for every command,
and plain argparse for ``prompt`` and ``query``, which start too often to import typer.
A usage error from either is the line ``wikitrace: error: <command> <option>: <what> —
<what to do>`` with exit 2; click's usage box and argparse's usage text never print.

The fast parsers (fast_args.py) do not report errors themselves: when they cannot take
the arguments (help, a typo, a value out of range) they give up and typer parses the
same argv, so the message and its limits come from the one definition in cli.py. Their
options, defaults and limits are checked against typer's in tests/test_cli_usage.py.
"""

from __future__ import annotations

import re

import typer
from typer.core import TyperGroup


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


class Commands(TyperGroup):
    """Reports a WikitraceError (or an OSError naming a file) and click's usage errors
    (of any subcommand) as the one error line and exits with its code, wherever the
    command is invoked from (main(), a test runner)."""

    def make_context(self, info_name, args, parent=None, **extra):
        click = click_errors()
        try:
            return super().make_context(info_name, args, parent, **extra)
        except getattr(click, "NoArgsIsHelpError", ()):  # (click >= 8.2)
            raise  # bare `wikitrace`: the help, as asked
        except click.UsageError as exc:  # an unknown option of `wikitrace` itself
            raise typer.Exit(_usage(exc)) from None

    def invoke(self, ctx):
        from .errors import WikitraceError, report

        click = click_errors()
        typed = _typed_command(self, ctx)  # before click's invoke takes the words off ctx
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            raise
        except getattr(click, "NoArgsIsHelpError", ()):
            raise  # `wikitrace dialogue`: the group's help
        except click.UsageError as exc:
            raise typer.Exit(_usage(exc, typed)) from None
        except (WikitraceError, OSError) as exc:
            raise typer.Exit(report(exc)) from None


def _usage(exc, command: str = "wikitrace") -> int:
    from .errors import report

    return report(from_click(exc, command))


def _typed_command(group, ctx) -> str:
    """``wikitrace dialogue add``: the command words the user typed, as far as they name one."""
    words = [*(getattr(ctx, "_protected_args", None) or getattr(ctx, "protected_args", [])), *ctx.args]
    path, command = [ctx.command_path], group
    for word in words:
        command = getattr(command, "commands", {}).get(word)
        if command is None:
            break
        path.append(word)
    return " ".join(path)
