"""Shared code for the agent-side tools ``actions``, ``turn`` and ``grep`` (``grep``'s
search itself is in ``_grep.py``).

These commands run on every step of an agent that has a compiled corpus mounted
read-only (layout: docs/corpus-layout.md), so they are built for start-up time:

* stdlib only, and no wikitrace / yaml / typer import;
* the three scripts are tiny launchers and the logic lives in modules: a script
  run as ``__main__`` is compiled from source on every call, an imported module
  is loaded from its cached bytecode (``wikitrace tools install`` writes it, as
  a read-only mount or PYTHONDONTWRITEBYTECODE keeps Python from doing so).
  Without that cache, compiling this module costs about 5 ms, so grep's search
  code lives in ``_grep.py`` and ``actions``/``turn`` never compile it;
* the hot path (``actions``, ``turn``) imports neither ``argparse`` nor ``json``
  nor ``re``: options are parsed by hand and turn logs are decoded with the C
  scanner behind ``json`` (``_json``), which ``json`` would wrap after importing
  ``re`` (about 5 ms on its own). If ``_json`` is missing (not CPython) we fall
  back to the ``json`` module, so this is a speed-up, never a requirement.

Why one shared module rather than duplicated code: duplication would keep each
script self-contained, but three copies of the corpus/step/option logic drift
apart. The cost of sharing is that ``_corpus.py`` and ``_grep.py`` must sit next
to the scripts; the launchers find them through their own folder (not the working
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


def _no_corpus(root, what):
    return ToolError(
        f"no corpus at {root} ({what}); set WIKITRACE_CORPUS to the corpus root "
        f"or pass --corpus DIR"
    )


def raw_dir(root):
    raw = os.path.join(root, "raw")
    if not os.path.isdir(raw):
        raise _no_corpus(root, "raw/ is missing" if os.path.isdir(root) else "no such folder")
    return raw


def step_number(text):
    """``step-0017``, ``step-17``, ``0017``, ``17`` or ``raw/step-0017/`` -> 17, else None."""
    name = text.strip().rstrip("/").rsplit("/", 1)[-1]
    if name.startswith("step-"):
        name = name[5:]
    elif name.startswith("step"):
        name = name[4:]
    if name and name.isascii() and name.isdecimal():
        return int(name)
    return None


def step_name(number):
    return "step-%04d" % number


def existing_steps(raw):
    """Step numbers present under raw/ (error path only: one scandir, no stat calls)."""
    numbers = []
    with os.scandir(raw) as entries:
        for entry in entries:
            name = entry.name
            if name.startswith("step-") and name[5:].isascii() and name[5:].isdecimal():
                numbers.append(int(name[5:]))
    return numbers


def _steps_hint(raw, wanted):
    numbers = existing_steps(raw)
    if not numbers:
        return f"{raw} holds no runs"
    hint = (f"valid steps are {step_name(min(numbers))}..{step_name(max(numbers))} "
            f"({len(numbers)} runs)")
    if wanted is not None:
        below = max((n for n in numbers if n < wanted), default=None)
        above = min((n for n in numbers if n > wanted), default=None)
        near = [step_name(n) for n in (below, above) if n is not None]
        if near:
            hint += "; nearest: " + ", ".join(near)
    return hint


def load_turns(root, step_arg):
    """(step id, turn records sorted by turn) for run ``step_arg``; ToolError if absent."""
    raw = raw_dir(root)
    number = step_number(step_arg)
    if number is None:
        raise ToolError(f"{step_arg!r} is not a step id (use step-0017, 0017 or 17); "
                        + _steps_hint(raw, None))
    step = step_name(number)
    path = os.path.join(raw, step, "solver.full.jsonl")
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        if os.path.isdir(os.path.join(raw, step)):
            raise ToolError(f"{step} has no solver.full.jsonl in {raw}/{step}") from None
        raise ToolError(f"unknown step {step} in {raw}; " + _steps_hint(raw, number)) from None
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from None
    turns = []
    for lineno, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        try:
            record = loads(line.decode("utf-8"))
        except (ValueError, UnicodeDecodeError, RecursionError):
            record = None
        if not isinstance(record, dict) or type(record.get("turn")) is not int:
            warn(f"{step}/solver.full.jsonl line {lineno}: not a turn record, skipped")
            continue
        turns.append(record)
    turns.sort(key=lambda rec: rec["turn"])
    return step, turns


# -------------------------------------------------------------------- formatting

def clip(text, limit):
    """One line of at most ``limit`` characters (whitespace runs collapsed)."""
    if text is None:
        return ""
    if not isinstance(text, str):
        text = dumps(text)
    head = " ".join(text[: limit * 4 + 16].split())
    if len(head) > limit:
        return head[: limit - 3] + "..."
    if len(text) > limit * 4 + 16:
        return head + "..."
    return head


def _arguments(record):
    args = record.get("arguments")
    if isinstance(args, str):
        try:
            parsed = loads(args)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            args = parsed
    return args


def call_text(record):
    args = _arguments(record)
    if isinstance(args, dict):
        inner = ", ".join(f"{key}={clip(dumps(value), 60)}" for key, value in args.items())
    elif args is None:
        inner = ""
    else:
        inner = clip(args, 60)
    return f"{record.get('name') or '?'}({clip(inner, 160)})"


def summary(record):
    """The one-line text ``actions`` prints after the turn number."""
    kind = record.get("type")
    if kind == "function_call":
        if record.get("is_error"):
            outcome = "ERROR"
        else:
            outcome = "ok"
        result = record.get("result")
        tail = f"{outcome}: {clip(result, 80)}" if result not in (None, "") else outcome
        return f"{call_text(record)}  -> {tail}"
    if kind == "message":
        return f"[{record.get('role') or '?'}] {clip(record.get('content'), 100)}".rstrip()
    text = record.get("content")
    if text is None:
        text = record.get("ended_by") or record.get("result")
    return f"[{kind or '?'}] {clip(text, 100)}".rstrip()


_SHOWN = ("turn", "type", "role", "content", "name", "arguments", "reasoning", "result",
          "is_error")


# A field longer than this is cut to its head and tail (a log of download progress can
# be thousands of lines: it would fill the agent's context for nothing).
CAP_LINES = (30, 10)  # head, tail
CAP_CHARS = (3000, 1000)


def cap_field(text, step, turn):
    """``text``, or its head and tail with one line saying what was cut and how to see it."""
    head_lines, tail_lines = CAP_LINES
    head_chars, tail_chars = CAP_CHARS
    if len(text) <= head_chars + tail_chars and text.count("\n") < head_lines + tail_lines:
        return text
    lines = text.split("\n")
    if len(lines) > head_lines + tail_lines:
        head, tail = "\n".join(lines[:head_lines]), "\n".join(lines[-tail_lines:])
    else:
        head, tail = text, ""
    if len(head) + len(tail) > head_chars + tail_chars:  # long lines: cut by characters too
        head, tail = head[:head_chars], (tail or text)[-tail_chars:]
    cut_lines = text.count("\n") + 1 - (head.count("\n") + 1) - (tail.count("\n") + 1 if tail else 0)
    cut_chars = len(text) - len(head) - len(tail)
    what = f"{cut_lines} lines" if cut_lines > 1 else f"{cut_chars} characters"
    return f"{head}\n… {what} cut — `turn {step} {turn} --full`\n{tail}"


def capped(step, record):
    """The record with each text field capped (``turn --json`` without ``--full``)."""
    out = dict(record)
    for key in ("content", "reasoning", "result"):
        value = out.get(key)
        if isinstance(value, str):
            out[key] = cap_field(value, step, record["turn"])
    return out


def full_text(step, record, full=True):
    """Everything in one turn, in labelled sections (long fields capped unless ``full``)."""
    if not full:
        record = capped(step, record)
    kind = record.get("type") or "?"
    role = record.get("role")
    header = f"=== {step} turn {record['turn']} ({kind}{', ' + role if role else ''}) ==="
    out = [header]
    if record.get("reasoning") is not None:
        out += ["reasoning:", _text(record["reasoning"])]
    if record.get("content") is not None:
        out += ["content:", _text(record["content"])]
    if record.get("name") is not None or kind == "function_call":
        out.append(f"action: {record.get('name') or '?'}")
        args = _arguments(record)
        if args is not None:
            out += ["arguments:", args if isinstance(args, str) else dumps(args, indent=2)]
    if record.get("result") is not None:
        out += ["observation:", _text(record["result"])]
    if record.get("is_error") is not None:
        out.append(f"is_error: {dumps(bool(record['is_error']))}")
    for key in sorted(k for k in record if k not in _SHOWN):
        out.append(f"{key}: {dumps(record[key])}")
    return "\n".join(out)


def _text(value):
    return value if isinstance(value, str) else dumps(value, indent=2)


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


# ------------------------------------------------------------------------- tools

def cmd_actions(opts, positional):
    if len(positional) != 1:
        raise ToolError(("missing STEP" if not positional else "expected one STEP")
                        + "; " + _usage_line("actions"))
    step, turns = load_turns(corpus_root(opts), positional[0])
    if opts.get("--json"):
        items = []
        for rec in turns:
            item = {"turn": rec["turn"], "type": rec.get("type")}
            for key in ("role", "name"):
                if rec.get(key) is not None:
                    item[key] = rec[key]
            if rec.get("type") == "function_call":
                item["arguments"] = _arguments(rec)
                item["is_error"] = bool(rec.get("is_error"))
            item["summary"] = summary(rec)
            items.append(item)
        return emit(json_lines(items))
    if not turns:
        warn(f"{step} has no turns")
        return 0
    width = max(3, len(str(turns[-1]["turn"])))
    return emit(visible("".join(f"{rec['turn']:>{width}}  {summary(rec)}\n" for rec in turns)))


def _turn_number(text):
    value = text.strip()
    if value.lstrip("-").isdecimal() and value.isascii():
        return int(value)
    raise ToolError(f"turn {text!r} is not a number; {_usage_line('turn')}")


def cmd_turn(opts, positional):
    if not positional:
        raise ToolError("missing STEP and turn A; " + _usage_line("turn"))
    if len(positional) > 3:
        raise ToolError("too many arguments; " + _usage_line("turn"))
    step, turns = load_turns(corpus_root(opts), positional[0])
    if not turns:
        raise ToolError(f"{step} has no turns")
    low, high = turns[0]["turn"], turns[-1]["turn"]
    span = f"{step} has turns {low}..{high}"
    if len(positional) == 1:
        raise ToolError(f"missing turn A; {span}; " + _usage_line("turn"))
    first_arg = positional[1]
    if len(positional) == 2 and ".." in first_arg:
        first_arg, _, last_arg = first_arg.partition("..")
    else:
        last_arg = positional[2] if len(positional) == 3 else first_arg
    first, last = _turn_number(first_arg), _turn_number(last_arg)
    if first > last:
        raise ToolError(f"turn range {first}..{last} is backwards; {span}")
    if first < low or last > high:
        asked = str(first) if first == last else f"{first}..{last}"
        raise ToolError(f"turn {asked} is out of range; {span}")
    chosen = [rec for rec in turns if first <= rec["turn"] <= last]
    if not chosen:  # only possible when the log skips turn numbers
        raise ToolError(f"{step} has no turn {first}..{last}; its turns run {low}..{high} "
                        f"with gaps")
    full = bool(opts.get("--full"))
    if opts.get("--json"):
        return emit(json_lines(chosen if full else [capped(step, rec) for rec in chosen]))
    return emit(visible("\n\n".join(full_text(step, rec, full) for rec in chosen) + "\n"))


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


def _command(tool):
    if tool == "grep":  # kept in its own module so actions/turn never load (or compile) it
        try:
            from _grep import cmd_grep
        except ModuleNotFoundError as exc:
            if exc.name != "_grep":
                raise
            raise ToolError("_grep.py is missing next to this script; reinstall with: "
                            "wikitrace tools install DIR") from None
        return cmd_grep
    return {"actions": cmd_actions, "turn": cmd_turn}[tool]


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
