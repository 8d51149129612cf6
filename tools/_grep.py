"""``grep``: search the corpus layers with ``rg`` when it is on PATH, else in Python.

Imported only by the ``grep`` tool (see ``_corpus.py`` for why it is separate).
Paths are printed as the agent sees them: the corpus root as given (made
absolute, symlinks left alone) joined with the path inside the corpus. The
``rg`` and Python regex dialects differ in corners (look-around, ``\\p`` classes);
set WIKITRACE_TOOLS_NO_RG=1 to always use Python's ``re``.

Without ``rg``, a layer with search files (``index/grep/<layer>/<shard>.txt``, written
by ``wikitrace compile``: the layer's files joined, see wikitrace/corpus/search_files.py)
is searched one pass per shard instead of opening each of its files, and a shard whose
word list lacks a word of the pattern's plain text is not read at all (``_search_files.py``,
loaded only then); an older corpus without them is scanned file by file. A line of
a turn log is reported by its turn (``step-0003 turn 7``), the number ``turn`` takes.
``original.*`` (the imported record, a second copy of the turn log) is skipped unless
``--original`` is given.
"""

import os

from _corpus import (LAYERS, NO_RG_ENV, TURNS_PAGE, ToolError, _no_corpus, _usage_line, corpus_root,
                     emit, is_turns_page, json_lines, tool_module, visible, warn)


def cmd_grep(opts, positional):
    patterns = ([opts["-e"]] if "-e" in opts else []) + positional[:1]
    extra = positional[1:] if "-e" not in opts else positional
    if not patterns:
        raise ToolError("missing PATTERN; " + _usage_line("grep"))
    if extra:
        raise ToolError(f"unexpected argument {extra[0]!r} (one PATTERN; choose layers with "
                        "--layer); " + _usage_line("grep"))
    pattern = patterns[0]
    layers = []
    for value in opts.get("--layer", []):
        for name in value.split(","):
            name = name.strip().strip("/")
            if name not in LAYERS:
                raise ToolError(f"unknown layer {name!r}; choose from {', '.join(LAYERS)}")
            if name not in layers:
                layers.append(name)
    explicit = bool(layers)
    layers = layers or list(LAYERS)
    limit, skip = _count(opts, "--max", DEFAULT_MAX), _count(opts, "--skip", 0)

    root = corpus_root(opts)
    if not os.path.isdir(root):
        raise _no_corpus(root, "no such folder")
    base = os.path.abspath(root)
    present = [name for name in layers if os.path.isdir(os.path.join(base, name))]
    if not explicit and not present:
        raise _no_corpus(root, "none of " + ", ".join(n + "/" for n in LAYERS) + " found")
    for name in layers:
        if explicit and name not in present:
            warn(f"layer {name}/ is not in {root}; skipped")
    folders = [os.path.join(base, name) for name in present]

    files_only = bool(opts.get("-l"))
    rg = None if os.environ.get(NO_RG_ENV, "") not in ("", "0") else _which("rg")
    if not folders:
        hits = iter(())
    elif rg:
        hits = _search_rg(rg, pattern, folders, opts, files_only)
    else:
        hits = _search_python(pattern, base, present, opts, files_only, limit and limit + skip)

    shown, left_out, skipped = [], 0, 0
    for hit in hits:
        if skipped < skip:
            skipped += 1
        elif hit is None or (limit and len(shown) >= limit):
            left_out += 1
            if left_out > COUNT_PAST_MAX:  # the exact rest would cost a scan of everything
                break
        else:
            shown.append(hit)
    if opts.get("--json"):
        emit(json_lines([_json_item(base, hit, files_only) for hit in shown]))
    else:
        emit(visible("".join(f"{p}\n" if files_only else f"{_where(base, p, n, t)}: {_clip_line(t, s)}\n"
                             for p, n, t, s in shown)))
    if left_out:
        what = "files" if files_only else "matching lines"
        count = f"over {COUNT_PAST_MAX}" if left_out > COUNT_PAST_MAX else str(left_out)
        note = (f"[{count} more {what} not shown; the next {limit}: --skip {skip + len(shown)}; or narrow the "
                f"search (--layer, -l, a longer pattern)]")
        if opts.get("--json"):
            warn(note)
        else:
            emit(note + "\n")
    if not shown and skipped:
        warn(f"all {skipped} matches are before --skip {skip}")
        return 1
    if not shown:
        where = ", ".join(n + "/" for n in present)
        warn(f"no match for {pattern!r} in {where}" if where else "no layer left to search")
        return 1
    return 0


def _which(program):
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = os.path.join(folder or ".", program)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


_CLIP_AT = 240
DEFAULT_MAX = 50  # lines shown without --max: about 12 KB, a page an agent's context can take
COUNT_PAST_MAX = 200  # matches past --max are counted up to this many, then "over N"
_TURN_LOG = "solver.full.jsonl"


def _count(opts, name, default):
    try:
        value = int(opts.get(name, str(default)))
        if value < 0:
            raise ValueError
    except ValueError:
        raise ToolError(f"{name} wants a whole number >= 0, got {opts[name]!r}") from None
    return value


def _turn_of(path, line):
    """(step, turn) when ``line`` is a record of a run's turn log, else None."""
    if not path.endswith(_TURN_LOG):
        return None
    step = os.path.basename(os.path.dirname(path))
    if not step.startswith("step-"):
        return None
    at = line.find('"turn":')
    if at < 0:
        return None
    digits = line[at + 7:at + 30].lstrip().split(",", 1)[0].split("}", 1)[0].strip()
    return (step, int(digits)) if digits.isdigit() else None


def _where(base, path, lineno, line):
    found = _turn_of(path, line)
    return f"{found[0]} turn {found[1]}" if found else f"{path}:{lineno}"


def _json_item(base, hit, files_only):
    path, lineno, line, start = hit
    if files_only:
        return {"path": path}
    item = {"path": path, "line": lineno}
    found = _turn_of(path, line)
    if found:
        item["step"], item["turn"] = found
    item["text"] = _clip_line(line, start)
    return item


def _clip_line(line, start):
    """At most _CLIP_AT characters of ``line``, a window around ``start`` if it is long."""
    line = line.rstrip("\r\n")
    if len(line) <= _CLIP_AT:
        return line
    begin = max(0, min(start - 60, len(line) - _CLIP_AT))
    piece = line[begin:begin + _CLIP_AT]
    return ("..." if begin else "") + piece + ("..." if begin + _CLIP_AT < len(line) else "")


def _compile(pattern, opts):
    import re

    flags = re.IGNORECASE if opts.get("-i") else 0
    try:
        return re.compile(re.escape(pattern) if opts.get("-F") else pattern, flags)
    except re.error as exc:
        raise ToolError(f"bad pattern {pattern!r}: {exc}") from None


def _search_python(pattern, base, layers, opts, files_only, limit=0):
    """Pure-Python search, layer by layer: the layer's search files when the build wrote
    them and the pattern means the same on their bytes, else each file in sorted order
    (non-UTF-8 or NUL-bearing files skipped). Yields (path, line, text, match start)."""
    import re

    search_files = tool_module("_search_files")
    line_rx = _compile(pattern, opts)
    # Whole-text pre-check so most text is rejected with one regex call. MULTILINE
    # keeps ^ and $ meaning "line start/end"; \A and \Z would change meaning, so a
    # pattern using them skips the pre-check.
    file_rx = None
    if "\\A" not in pattern and "\\Z" not in pattern:
        file_rx = re.compile(line_rx.pattern, line_rx.flags | re.MULTILINE)
    bytes_rx = search_files.bytes_twin(line_rx) if file_rx is not None and not opts.get("--original") else None
    literal = search_files.literal_bytes(pattern, opts) if bytes_rx is not None else None
    needles = search_files.word_needles(pattern, opts) if bytes_rx is not None else None
    remaining = limit or None  # hits still to show; None: no limit
    for layer in layers:
        shards = search_files.shards(base, layer) if bytes_rx is not None else None
        if shards is None:
            yield from _scan_files(os.path.join(base, layer), file_rx, line_rx, files_only,
                                   bool(opts.get("--original")))
            continue
        for blob in shards:
            if needles and not search_files.may_hold(blob[:-4] + ".words", needles):
                continue
            found = yield from search_files.search_blob(blob, base, literal or bytes_rx, line_rx, files_only,
                                                        remaining)
            remaining = None if remaining is None else max(0, remaining - found)


def _scan_files(folder, file_rx, line_rx, files_only, originals):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for filename in sorted(filenames):
            if filename.startswith("original.") and not originals:
                continue
            path = os.path.join(dirpath, filename)
            if filename == TURNS_PAGE and is_turns_page(path):
                continue
            try:
                with open(path, "rb") as handle:
                    data = handle.read()
                if b"\0" in data:
                    continue
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if file_rx is not None and file_rx.search(text) is None:
                continue
            for lineno, line in enumerate(text.split("\n"), 1):
                found = line_rx.search(line)
                if found:
                    if files_only:
                        yield path, None, None, 0
                        break
                    yield path, lineno, line, found.start()


def _search_rg(rg, pattern, folders, opts, files_only):
    import subprocess
    import tempfile

    cmd = [rg, "--no-config", "--color", "never", "--sort", "path", "--no-ignore", "--hidden",
           "--null"]
    cmd += ["--files-with-matches"] if files_only else ["--no-heading", "--with-filename",
                                                        "--line-number"]
    if opts.get("-i"):
        cmd.append("--ignore-case")
    if opts.get("-F"):
        cmd.append("--fixed-strings")
    if not opts.get("--original"):
        cmd += ["--glob", "!original.*"]
    cmd += ["--glob", "!step-*/" + TURNS_PAGE]  # anchored at each layer folder searched: raw/step-N/turns.md
    cmd += ["--regexp", pattern, "--", *folders]
    locate = None
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors,
                                stdin=subprocess.DEVNULL)
        got_any = False
        try:
            if files_only:
                for name in proc.stdout.read().split(b"\0"):
                    name = name.strip(b"\n")
                    if name and not is_turns_page(os.fsdecode(name)):
                        got_any = True
                        yield os.fsdecode(name), None, None, 0
            else:
                for raw in proc.stdout:
                    path, _, rest = raw.partition(b"\0")
                    number, _, text = rest.partition(b":")
                    if not number.isdigit() or path.endswith(b"/" + TURNS_PAGE.encode()) and \
                            is_turns_page(os.fsdecode(path)):
                        continue
                    got_any = True
                    line = text.decode("utf-8", "replace").rstrip("\r\n")
                    start = 0
                    if len(line) > _CLIP_AT:
                        if locate is None:  # rg's regex dialect may differ; fall back to 0
                            try:
                                locate = _compile(pattern, opts)
                            except ToolError:
                                locate = False
                        found = locate.search(line) if locate else None
                        start = found.start() if found else 0
                    yield os.fsdecode(path), int(number), line, start
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code == 2 and not got_any:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise ToolError("rg failed: " + (message[0] if message else f"exit {code}")
                            + (f" (set {NO_RG_ENV}=1 to use the built-in search)"))
