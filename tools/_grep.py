"""``grep``: search the corpus layers with ``rg`` when it is on PATH, else in Python.

Imported only by the ``grep`` tool (see ``_corpus.py`` for why it is separate).
Paths are printed as the agent sees them: the corpus root as given (made
absolute, symlinks left alone) joined with the path inside the corpus. The
``rg`` and Python regex dialects differ in corners (look-around, ``\\p`` classes);
set WIKITRACE_TOOLS_NO_RG=1 to always use Python's ``re``.

Without ``rg``, a layer with search files (``index/grep/<layer>/<shard>.txt``, written
by ``wikitrace compile``: the layer's files joined, see wikitrace/corpus/search_files.py)
is searched one pass per shard instead of opening each of its files, and a shard whose
word list lacks a word of the pattern's plain text is not read at all. A line of
a turn log is reported by its turn (``step-0003 turn 7``), the number ``turn`` takes.
``original.*`` (the imported record, a second copy of the turn log) is skipped unless
``--original`` is given.
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
_TURNS_PAGE = "turns.md"  # raw/step-N/turns.md: the turn log rendered for editors; its hits are the log's


def _count(opts, name, default):
    try:
        value = int(opts.get(name, str(default)))
        if value < 0:
            raise ValueError
    except ValueError:
        raise ToolError(f"{name} wants a whole number >= 0, got {opts[name]!r}") from None
    return value


def _is_turns_page(rel):
    """True for a run's turns.md (``raw/step-N/turns.md``): each of its lines repeats a line
    of the run's turn log, so a search shows the log's hit (``step-N turn T``) only."""
    parts = rel.replace(os.sep, "/").rsplit("/", 3)
    return len(parts) >= 3 and parts[-1] == _TURNS_PAGE and parts[-2].startswith("step-") and parts[-3] == "raw"


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

    line_rx = _compile(pattern, opts)
    # Whole-text pre-check so most text is rejected with one regex call. MULTILINE
    # keeps ^ and $ meaning "line start/end"; \A and \Z would change meaning, so a
    # pattern using them skips the pre-check.
    file_rx = None
    if "\\A" not in pattern and "\\Z" not in pattern:
        file_rx = re.compile(line_rx.pattern, line_rx.flags | re.MULTILINE)
    bytes_rx = _bytes_twin(line_rx) if file_rx is not None and not opts.get("--original") else None
    literal = _literal(pattern, opts) if bytes_rx is not None else None
    needles = _word_needles(pattern, opts) if bytes_rx is not None else None
    remaining = limit or None  # hits still to show; None: no limit
    for layer in layers:
        shards = _shards(base, layer) if bytes_rx is not None else None
        if shards is None:
            yield from _search_files(os.path.join(base, layer), file_rx, line_rx, files_only,
                                     bool(opts.get("--original")))
            continue
        for blob in shards:
            if needles and not _may_hold(blob[:-4] + ".words", needles):
                continue
            found = yield from _search_blob(blob, base, literal or bytes_rx, line_rx, files_only, remaining)
            remaining = None if remaining is None else max(0, remaining - found)


def _shards(base, layer):
    """The layer's search files in grep's walk order (``head`` first, then by name), or
    None when the build wrote none (an older corpus: one file per layer, or none)."""
    folder = os.path.join(base, "index", "grep", layer)
    try:
        names = set(os.listdir(folder))
    except OSError:
        blob = folder + ".txt"
        return [blob] if os.path.isfile(blob) and os.path.isfile(folder + ".map") else None
    keys = sorted(n[:-4] for n in names if n.endswith(".txt") and n[:-4] + ".map" in names)
    if "head" in keys:
        keys.remove("head")
        keys.insert(0, "head")
    return [os.path.join(folder, key + ".txt") for key in keys]


# Under -i these ASCII letters also match non-ASCII ones (i: U+0130 U+0131, k: U+212A,
# s: U+017F), whose bytes differ: a piece of a pattern holding one says nothing.
_FOLDS_PAST_ASCII = frozenset("iksIKS")


def _word_needles(pattern, opts):
    """What a shard's word list (``\\n``-separated words, ASCII letters lowered) must
    contain for a line of it to match: each word of three or more characters in the
    runs of plain characters at the top level of the pattern, with a newline on each
    side the run shows a word edge (then the text's word is that word exactly there).
    None when there is none: every shard is read."""
    import re

    try:
        from re import _constants as sre
        from re import _parser

        parsed = _parser.parse(re.escape(pattern) if opts.get("-F") else pattern,
                               re.IGNORECASE if opts.get("-i") else 0)
        fold = bool(parsed.state.flags & re.IGNORECASE)
        pieces, piece = [], []
        for op, value in parsed.data:
            char = chr(value) if op is sre.LITERAL else None
            if char is None or (fold and (not char.isascii() or char in _FOLDS_PAST_ASCII)):
                pieces.append("".join(piece))
                piece = []
            else:
                piece.append(char)
        pieces.append("".join(piece))
    except Exception:  # a private module of re changed shape: read every shard
        return None
    needles = set()
    for text in pieces:
        data = text.encode("utf-8", "surrogatepass").lower()
        for word in re.finditer(rb"[0-9a-z_\x80-\xff]{3,}", data):
            needles.add((b"\n" if word.start() else b"") + word.group() + (b"\n" if word.end() < len(data) else b""))
    return sorted(needles, key=len, reverse=True) or None  # the longest first: the likeliest to be absent


def _may_hold(words_path, needles):
    """False when the shard's word list lacks one of ``needles``: no line of the shard
    can match. True when it has them all, or there is no word list."""
    try:  # os-level calls: a word list is read per shard, a few hundred per call
        fd = os.open(words_path, os.O_RDONLY)
    except OSError:  # no word list: read the shard
        return True
    try:
        words = os.read(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    return all(words.find(needle) >= 0 for needle in needles)


def _search_files(folder, file_rx, line_rx, files_only, originals):
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames.sort()
        for filename in sorted(filenames):
            if filename.startswith("original.") and not originals:
                continue
            path = os.path.join(dirpath, filename)
            if filename == _TURNS_PAGE and _is_turns_page(path):
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


_BYTES_UNSAFE = frozenset("wWsSdDbBpPNuUx")


def _bytes_twin(line_rx):
    """The pattern compiled for bytes when it matches exactly the same lines there, else
    None: only ASCII-class-free patterns (no '.', no negated class, no \\w \\s \\d \\b ...),
    and with -i only ASCII ones, since one character may be several bytes. With -i it may
    also match a few more lines (see below): a finder of candidates, never the judge."""
    import re

    pattern = line_rx.pattern
    ignore_case = bool(line_rx.flags & re.IGNORECASE)
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if i + 1 < len(pattern) and (pattern[i + 1] in _BYTES_UNSAFE or pattern[i + 1].isdigit()):
                return None
            i += 2
            continue
        if ch == "." or (ch == "[" and pattern[i + 1:i + 2] == "^") or (ignore_case and not ch.isascii()):
            return None
        i += 1
    try:
        source = pattern.encode("utf-8")
    except UnicodeEncodeError:
        return None
    if ignore_case and any(ch in "iksIKS[" for ch in pattern):
        # Under -i, i k s (and classes holding them) also match İ ı K ſ, which bytes
        # matching cannot fold: lines holding one of those are candidates as well
        # (every candidate is confirmed with the text pattern).
        flags = re.match(rb"\(\?[aiLmsux]+\)", source)
        head = flags.group(0) if flags else b""
        source = head + b"(?:" + source[len(head):] + b")|" + "|".join(_PAST_ASCII_FOLDS).encode("utf-8")
    try:
        return re.compile(source, (re.IGNORECASE if ignore_case else 0) | re.MULTILINE)
    except re.error:
        return None


_PAST_ASCII_FOLDS = ("\u0130", "\u0131", "\u212a", "\u017f")  # İ ı K ſ: -i matches them to i i k s


_METACHARS = frozenset(".^$*+?{}[]|()")


def _literal(pattern, opts):
    """The bytes a pattern stands for when it is plain text (or -F) and case matters:
    then candidates are found with a substring search, several times faster than re."""
    if opts.get("-i"):
        return None
    if opts.get("-F"):
        return pattern.encode("utf-8")
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            nxt = pattern[i + 1:i + 2]
            if not nxt or nxt.isalnum() or not nxt.isascii():
                return None
            out.append(nxt)
            i += 2
            continue
        if ch in _METACHARS:
            return None
        out.append(ch)
        i += 1
    return "".join(out).encode("utf-8") or None


def _search_blob(blob_path, base, finder, line_rx, files_only, limit=None):
    """One pass over a layer's search file; each candidate line is confirmed with the
    text pattern, then placed in its file through the map (read only on a match).
    ``finder`` is the literal bytes to look for, or the pattern compiled for bytes (both
    match exactly the lines the text pattern does). Past ``limit`` hits (None: no limit),
    each further matching line is only counted: None is yielded (no map read, no line
    placed). Returns the number of hits yielded."""
    import mmap
    from bisect import bisect_right

    fd = os.open(blob_path, os.O_RDONLY)  # os-level: a call may open a few hundred shards
    try:
        size = os.fstat(fd).st_size
        if not size:
            return 0
        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    starts = rels = None
    pos = hits = 0
    literal = finder if isinstance(finder, bytes) else None
    try:
        while pos < size:
            if literal is not None:
                at = data.find(literal, pos)
            else:
                found = finder.search(data, pos)
                at = -1 if found is None else found.start()
            if at < 0:
                return hits
            end = data.find(b"\n", at)
            end = size if end < 0 else end
            past_limit = limit is not None and hits >= limit and not files_only
            begin = data.rfind(b"\n", 0, at) + 1
            if starts is None:
                starts, rels = _read_map(blob_path[:-4] + ".map")
            k = bisect_right(starts, begin) - 1
            if rels[k].endswith(b"/" + _TURNS_PAGE.encode()) and _is_turns_page(rels[k].decode("utf-8", "replace")):
                pos = starts[k + 1] if k + 1 < len(starts) else size  # the whole page repeats its turn log
                continue
            if past_limit and literal is not None:  # a literal hit is exact: count it
                pos = end + 1
                yield None
                continue
            line = data[begin:end].decode("utf-8", "replace")
            match = line_rx.search(line)
            pos = end + 1
            if match is None:
                continue
            if past_limit:
                yield None  # counted, not shown
                continue
            path = os.path.join(base, rels[k].decode("utf-8"))
            hits += 1
            if files_only:
                yield path, None, None, 0
                pos = starts[k + 1]
                continue
            yield path, data[starts[k]:begin].count(b"\n") + 1, line, match.start()
        return hits
    finally:
        data.close()


def _read_map(map_path):
    """(start offsets, corpus-relative paths as UTF-8 bytes) of the files joined in a search file."""
    fd = os.open(map_path, os.O_RDONLY)
    try:
        data = os.read(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)
    starts, rels = [], []
    for row in data.split(b"\n"):
        if row:
            offset, _, rel = row.partition(b"\t")
            starts.append(int(offset))
            rels.append(rel)
    return starts, rels


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
    cmd += ["--glob", "!step-*/" + _TURNS_PAGE]  # anchored at each layer folder searched: raw/step-N/turns.md
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
                    if name and not _is_turns_page(os.fsdecode(name)):
                        got_any = True
                        yield os.fsdecode(name), None, None, 0
            else:
                for raw in proc.stdout:
                    path, _, rest = raw.partition(b"\0")
                    number, _, text = rest.partition(b":")
                    if not number.isdigit() or path.endswith(b"/" + _TURNS_PAGE.encode()) and \
                            _is_turns_page(os.fsdecode(path)):
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
