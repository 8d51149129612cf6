"""Searching the search files a compile writes (``index/grep/<layer>/<shard>.txt``).

``wikitrace/corpus/search_files.py`` writes them: each shard joins a layer's files,
with a ``.map`` of where each file starts and a ``.words`` list of the words in it.
Here ``grep`` reads them without ``rg``: one pass per shard instead of one open per
file, a shard whose word list lacks a word of the pattern's plain text skipped
unread, and candidates found on the bytes (a substring search for plain text, else
the pattern compiled for bytes) before the text pattern confirms each line. Loaded
by ``_grep.py`` only on that path: with ``rg``, grep never compiles this module.
"""

import os

from _corpus import TURNS_PAGE, is_turns_page


def shards(base, layer):
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


def word_needles(pattern, opts):
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


def may_hold(words_path, needles):
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


_BYTES_UNSAFE = frozenset("wWsSdDbBpPNuUx")


def bytes_twin(line_rx):
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


def literal_bytes(pattern, opts):
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


def search_blob(blob_path, base, finder, line_rx, files_only, limit=None):
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
            if rels[k].endswith(b"/" + TURNS_PAGE.encode()) and is_turns_page(rels[k].decode("utf-8", "replace")):
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
