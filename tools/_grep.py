"""``grep``: search the corpus layers with ``rg`` when it is on PATH, else in Python.

Imported only by the ``grep`` tool (see ``_corpus.py`` for why it is separate).
Paths are printed as the agent sees them: the corpus root as given (made
absolute, symlinks left alone) joined with the path inside the corpus. The
``rg`` and Python regex dialects differ in corners (look-around, ``\\p`` classes);
set WIKITRACE_TOOLS_NO_RG=1 to always use Python's ``re``.
"""

import os

from _corpus import (LAYERS, NO_RG_ENV, ToolError, _no_corpus, _usage_line, corpus_root,
                     emit, json_lines, visible, warn)


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
    try:
        limit = int(opts.get("--max", "200"))
        if limit < 0:
            raise ValueError
    except ValueError:
        raise ToolError(f"--max wants a whole number >= 0, got {opts['--max']!r}") from None

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
        hits = _search_python(pattern, folders, opts, files_only)

    shown, left_out = [], 0
    for hit in hits:
        if limit and len(shown) >= limit:
            left_out += 1
        else:
            shown.append(hit)
    if opts.get("--json"):
        items = [{"path": p} if files_only else {"path": p, "line": n, "text": t}
                 for p, n, t in shown]
        emit(json_lines(items))
    else:
        emit(visible("".join(f"{p}\n" if files_only else f"{p}:{n}: {t}\n" for p, n, t in shown)))
    if left_out:
        what = "files" if files_only else "matching lines"
        note = f"[{left_out} more {what} not shown; narrow the search or raise --max]"
        if opts.get("--json"):
            warn(note)
        else:
            emit(note + "\n")
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


def _search_python(pattern, folders, opts, files_only):
    """Pure-Python scan: files in sorted order, non-UTF-8 (or NUL-bearing) files skipped."""
    import re

    line_rx = _compile(pattern, opts)
    # Whole-file pre-check so most files are rejected with one regex call. MULTILINE
    # keeps ^ and $ meaning "line start/end"; \A and \Z would change meaning, so a
    # pattern using them skips the pre-check.
    file_rx = None
    if "\\A" not in pattern and "\\Z" not in pattern:
        file_rx = re.compile(line_rx.pattern, line_rx.flags | re.MULTILINE)
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder):
            dirnames.sort()
            for filename in sorted(filenames):
                path = os.path.join(dirpath, filename)
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
                            yield path, None, None
                            break
                        yield path, lineno, _clip_line(line, found.start())


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
                    if name:
                        got_any = True
                        yield os.fsdecode(name), None, None
            else:
                for raw in proc.stdout:
                    path, _, rest = raw.partition(b"\0")
                    number, _, text = rest.partition(b":")
                    if not number.isdigit():
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
                    yield os.fsdecode(path), int(number), _clip_line(line, start)
        finally:
            proc.stdout.close()
            code = proc.wait()
        if code == 2 and not got_any:
            errors.seek(0)
            message = errors.read().decode("utf-8", "replace").strip().splitlines()
            raise ToolError("rg failed: " + (message[0] if message else f"exit {code}")
                            + (f" (set {NO_RG_ENV}=1 to use the built-in search)"))
