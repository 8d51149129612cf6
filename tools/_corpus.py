"""Shared code for the agent-side tools ``actions``, ``turn`` and ``grep``: options,
JSON, the corpus root, errors and output. Each tool's own code is in the module of
its kind: ``_turns.py`` for ``actions`` and ``turn``, ``_grep.py`` for ``grep`` (and
``_search_files.py``, grep's reader of the compiled search files, when ``rg`` is absent).

These commands run on every step of an agent that has a compiled corpus mounted
read-only (layout: docs/corpus-layout.md), so they are built for start-up time:

* stdlib only, and no wikitrace / yaml / typer import;
* the three scripts are tiny launchers and the logic lives in modules: a script
  run as ``__main__`` is compiled from source on every call, an imported module
  is loaded from its cached bytecode (``wikitrace tools install`` writes it, as
  a read-only mount or PYTHONDONTWRITEBYTECODE keeps Python from doing so).
  Without that cache, compiling a module costs about 5 ms, so a tool loads only
  this module and the one of its kind, never the other tools' code;
* the hot path (``actions``, ``turn``) imports neither ``argparse`` nor ``json``
  nor ``re``: options are parsed by hand and turn logs are decoded with the C
  scanner behind ``json`` (``_json``), which ``json`` would wrap after importing
  ``re`` (about 5 ms on its own). If ``_json`` is missing (not CPython) we fall
  back to the ``json`` module, so this is a speed-up, never a requirement.

Why one shared module rather than duplicated code: duplication would keep each
script self-contained, but three copies of the corpus/step/option logic drift
apart. The cost of sharing is that the ``_*.py`` modules must sit next to the
scripts; the launchers find them through their own folder (not the working
directory) and say so in one line if missing; ``wikitrace tools install`` copies
the whole folder.

Conventions for all three tools: corpus root from ``--corpus DIR``, else
``$WIKITRACE_CORPUS``, else ``/work/corpus``; plain text on stdout, ``--json``
for a JSON list; any error is one line on stderr and exit code 2 (never a
traceback); ``grep`` exits 1 when nothing matched, as grep does.
"""

import os
import sys

DEFAULT_CORPUS = "/work/corpus"
LAYERS = ("raw", "compilation", "insight", "dialogue")
NO_RG_ENV = "WIKITRACE_TOOLS_NO_RG"  # set to 1 to force grep's pure-Python scan
TURNS_PAGE = "turns.md"  # raw/step-N/turns.md: the turn log rendered for editors; its hits are the log's

USAGE = {
    "actions": (
        "usage: actions STEP [--json] [--corpus DIR]\n"
        "  One line per turn of run STEP (step-0017, 0017 or 17), numbered as in the log:\n"
        "  tool calls as `name(arg=value, ...)  -> ok|ERROR: result`, messages as `[role] text`.\n"
    ),
    "turn": (
        "usage: turn STEP A [B] [--full] [--json] [--corpus DIR]\n"
        "  Turns A..B (inclusive; B defaults to A; `A..B` also works) of run STEP:\n"
        "  reasoning, action and arguments, observation, is_error, message text.\n"
        "  A long field shows its head and tail and says how much was cut; --full\n"
        "  prints every field whole.\n"
    ),
    "grep": (
        "usage: grep PATTERN [--layer raw|compilation|insight|dialogue ...] [-i] [-F] [-l]\n"
        "            [--original] [--max N] [--skip N] [--json] [--corpus DIR]\n"
        "  Regex search of the corpus layers (default: all); prints `path:line: text`,\n"
        "  and `step-0003 turn 7: text` for a line of a turn log (read it with\n"
        "  `turn step-0003 7`). -i ignore case, -F fixed string, -l file names only,\n"
        "  -e PATTERN for a pattern starting with '-', --original to search the imported\n"
        "  originals (raw/*/original.*) too. A turn-log hit is shown once (not again\n"
        "  from the run's turns.md). At most --max lines (default 50, 0 = no limit),\n"
        "  after skipping the first --skip N (the next page); long lines are clipped\n"
        "  around the match. Exit 0 on a match, 1 on none, 2 on error.\n"
    ),
}

_OPTIONS = {
    "actions": {"--json": "flag", "--corpus": "value"},
    "turn": {"--json": "flag", "--corpus": "value", "--full": "flag"},
    "grep": {
        "--json": "flag", "--corpus": "value", "--layer": "list", "--max": "value", "--skip": "value",
        "-i": "flag", "-l": "flag", "-F": "flag", "-e": "value", "--original": "flag",
    },
}
_ALIASES = {
    "--ignore-case": "-i", "--files-with-matches": "-l", "--fixed-strings": "-F",
    "--regexp": "-e", "-m": "--max",
}


class ToolError(Exception):
    """A problem the agent can fix; printed as one line on stderr, exit code 2."""


# --------------------------------------------------------------------------- JSON

def _make_loads():
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - not CPython
        import json

        return json.loads

    class _Context:  # the attributes json.JSONDecoder hands to the C scanner
        strict = True
        object_hook = None
        object_pairs_hook = None
        parse_float = float
        parse_int = int
        parse_constant = {
            "NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"),
        }.__getitem__
        memo = {}

    scan = make_scanner(_Context())

    def loads(text):
        text = text.strip()
        try:
            value, end = scan(text, 0)
        except StopIteration:
            raise ValueError("no JSON value") from None
        if end != len(text):
            raise ValueError("extra data after the JSON value")
        return value

    return loads


loads = _make_loads()

try:
    from _json import encode_basestring as _quote
except ImportError:  # pragma: no cover - not CPython
    def _quote(text):
        import json

        return json.dumps(text, ensure_ascii=False)


def dumps(value, indent=None, _depth=0):
    """JSON text for what ``loads`` returns (json.dumps layout, non-ASCII kept)."""
    if isinstance(value, str):
        return _quote(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return float.__repr__(value)
    if isinstance(value, dict):
        parts = [_quote(str(k)) + ": " + dumps(v, indent, _depth + 1) for k, v in value.items()]
        opening, closing = "{", "}"
    elif isinstance(value, (list, tuple)):
        parts = [dumps(v, indent, _depth + 1) for v in value]
        opening, closing = "[", "]"
    else:
        return _quote(str(value))
    if not parts:
        return opening + closing
    if indent is None:
        return opening + ", ".join(parts) + closing
    inner = "\n" + " " * (indent * (_depth + 1))
    return opening + inner + ("," + inner).join(parts) + "\n" + " " * (indent * _depth) + closing


def json_lines(items):
    """A JSON list with one item per line: valid JSON that still greps well."""
    if not items:
        return "[]\n"
    return "[\n" + ",\n".join(dumps(item) for item in items) + "\n]\n"


# ----------------------------------------------------------------------- options

def parse_options(tool, argv):
    """Hand-rolled option parsing (argparse alone costs more than the whole tool)."""
    spec = _OPTIONS[tool]
    opts, positional = {}, []
    args = list(argv)
    i = 0

    def take_value(name):
        nonlocal i
        if i >= len(args):
            raise ToolError(f"option {name} needs a value; {_usage_line(tool)}")
        i += 1
        return args[i - 1]

    def store(name, value):
        if spec[name] == "list":
            opts.setdefault(name, []).append(value)
        elif spec[name] == "flag":
            opts[name] = True
        else:
            opts[name] = value

    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positional.extend(args[i:])
            break
        if arg in ("-h", "--help"):
            raise _Help()
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            name = _ALIASES.get(name, name)
            kind = spec.get(name)
            if kind is None:
                raise ToolError(f"unknown option {arg.partition('=')[0]}; {_usage_line(tool)}")
            if kind == "flag":
                if eq:
                    raise ToolError(f"option {name} takes no value")
                store(name, True)
            else:
                store(name, value if eq else take_value(name))
        elif arg.startswith("-") and len(arg) > 1 and not arg[1:].isdecimal():
            j = 1
            while j < len(arg):  # a cluster such as -il or -m5
                name = _ALIASES.get("-" + arg[j], "-" + arg[j])
                kind = spec.get(name)
                if kind is None:
                    raise ToolError(f"unknown option -{arg[j]}; {_usage_line(tool)}")
                if kind == "flag":
                    store(name, True)
                    j += 1
                    continue
                store(name, arg[j + 1:] if j + 1 < len(arg) else take_value(name))
                break
        else:
            positional.append(arg)
    return opts, positional


class _Help(Exception):
    pass


def _usage_line(tool):
    return USAGE[tool].splitlines()[0]


# ------------------------------------------------------------------------ corpus

def corpus_root(opts):
    return opts.get("--corpus") or os.environ.get("WIKITRACE_CORPUS") or DEFAULT_CORPUS


def is_turns_page(rel):
    """True for a run's turns.md (``raw/step-N/turns.md``): each of its lines repeats a line
    of the run's turn log, so a search shows the log's hit (``step-N turn T``) only."""
    parts = rel.replace(os.sep, "/").rsplit("/", 3)
    return len(parts) >= 3 and parts[-1] == TURNS_PAGE and parts[-2].startswith("step-") and parts[-3] == "raw"


def _no_corpus(root, what):
    return ToolError(
        f"no corpus at {root} ({what}); set WIKITRACE_CORPUS to the corpus root "
        f"or pass --corpus DIR"
    )


# Control and invisible characters shown as escapes in plain output (`\x1b`, `\u202e`), so
# a log cannot drive the agent's terminal; --json output is left to the JSON encoder.
# The same set as wikitrace/controls.py (a test checks they agree).
HIDDEN_RANGES = ((0x00, 0x08), (0x0B, 0x1F), (0x7F, 0x9F), (0x061C, 0x061C), (0x180E, 0x180E),
                 (0x200B, 0x200B), (0x200E, 0x200F), (0x2028, 0x202E), (0x2060, 0x2064),
                 (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB), (0xE0000, 0xE007F))
_VISIBLE = None


def visible(text):
    global _VISIBLE
    if _VISIBLE is None:
        _VISIBLE = {cp: (f"\\x{cp:02x}" if cp <= 0xFF else f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
                    for a, b in HIDDEN_RANGES for cp in range(a, b + 1)}
    return text.translate(_VISIBLE)


# -------------------------------------------------------------------------- glue

def warn(message):
    sys.stderr.write(message + "\n")


def emit(text):
    """Write all of ``text`` at once; bad characters become '?', never an exception."""
    out = sys.stdout
    try:
        out.reconfigure(errors="replace")
    except AttributeError:
        pass
    out.write(text)
    out.flush()
    return 0


# Each tool's code is in the module of its own kind, loaded only when that tool runs:
# actions and turn never load (or compile) grep's search, nor grep the turn renderer.
_COMMANDS = {"actions": ("_turns", "cmd_actions"), "turn": ("_turns", "cmd_turn"), "grep": ("_grep", "cmd_grep")}


def tool_module(name):
    """One of the tools' own modules, by name; a ToolError naming it when it is not beside the script."""
    try:
        return __import__(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        raise ToolError(f"{name}.py is missing next to this script; reinstall with: "
                        "wikitrace tools install DIR") from None


def _command(tool):
    module_name, function = _COMMANDS[tool]
    return getattr(tool_module(module_name), function)


def main(tool, argv):
    """Run ``tool`` with ``argv``; return the exit code. Never lets a traceback out."""
    try:
        opts, positional = parse_options(tool, argv)
        return _command(tool)(opts, positional)
    except _Help:
        return emit(USAGE[tool])
    except ToolError as exc:
        warn(f"{tool}: {exc}")
        return 2
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly, and keep Python from
        # complaining again when it flushes stdout at exit.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError:
            pass
        return 0
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug: still one line, the agent cannot use a traceback
        warn(f"{tool}: internal error {type(exc).__name__}: {exc}")
        return 2
