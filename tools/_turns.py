"""The turn log of one run, as ``actions`` and ``turn`` show it to an agent.

Finding a run's ``raw/step-NNNN/solver.full.jsonl`` from what an agent types
(``step-0017``, ``17``, ``raw/step-0017/``; a near miss names the nearest steps),
reading its turn records, and rendering them: one line a turn for ``actions``,
every field for ``turn`` with long fields cut to head and tail as the corpus's
``turns.md`` cuts them (a test holds the two alike). Imported only by those two
tools; what all three tools share (options, JSON, errors, output) is ``_corpus.py``.
"""

import os

from _corpus import (ToolError, _no_corpus, _usage_line, corpus_root, dumps, emit, json_lines, loads,
                     visible, warn)


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
