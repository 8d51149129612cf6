"""Search files for the agent's ``grep`` tool, written at compile time, one shard at a time.

Without ripgrep, ``grep`` would open every file of a layer (20,000 on a 10,000-run
corpus) on every call. Instead each layer's text files are joined, in the order
``grep`` walks them, into shards: the layer's own top files (``_index.md``) form the
``head`` shard, and a run's files go to the shard named by the first two digits of
its id (``step-0123`` and ``insight-0123`` are in shard ``01``; ``step-12345`` in
``12``), so a shard holds about a hundred runs, shards in name order follow grep's
walk order, and adding a run rewrites one shard per layer, not the layer.
Layout (``index/grep/<layer>/``)::

    <shard>.txt    the files' bytes, each ending in a newline
    <shard>.map    one line per file: "<offset>\t<path inside the corpus>", then "<end>\t"
    <shard>.words  the shard's words, sorted and unique, one a line, between newlines

A word is a run of ASCII letters, digits, ``_`` and non-ASCII bytes, at least three
long, with ASCII letters lowered. A text that contains a plain piece of a pattern
contains that piece's words, each inside one of the text's words (whole, when the
piece shows its edges), so grep looks them up in the short word list before reading
a shard: a rare or absent word reads each shard's word list, not its text.

Every file here is a pure function of the files it joins, so a corpus updated run by
run is byte-identical to one built from scratch. ``original.*`` (the imported record,
a copy of the turn log) is left out: grep skips it unless asked, and then scans it
directly. Files that are not UTF-8 text (or hold a NUL) are left out, as grep's own
scan skips them. The tools fall back to their per-file scan when a shard is missing.
"""

from __future__ import annotations

import re
from pathlib import Path

SEARCH_DIR = "index/grep"
LAYERS = ("raw", "compilation", "insight")
HEAD = "head"  # the shard of a layer's own files (its _index.md): first in walk order
_RUN_ID = re.compile(r"(?:step|insight)-(\d\d)\d{2,}(?:\.md)?")
# bytes -> the same with ASCII letters lowered and every byte that is not part of a word a
# space, so bytes.split() yields the words (at C speed: a regex findall is twice as slow)
_WORDS_ONLY = bytes(c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128)
                    else 32 for c in range(256))


def shard_key(rel: str) -> str:
    """The shard a layer file belongs to: ``head``, or the first two digits of its run's id."""
    parts = rel.split("/", 2)
    if len(parts) < 2:
        return HEAD
    name = parts[1]
    # the ids a build writes, without the regex (called for every file of the corpus)
    digits = name[5:] if name.startswith("step-") else name[8:] if name.startswith("insight-") else None
    if digits is not None:
        digits = digits.removesuffix(".md")
        if digits.isascii() and digits.isdigit():
            return digits[:2] if len(digits) >= 4 else HEAD
    found = _RUN_ID.fullmatch(name)  # anything else (other digits, other names) as the pattern says
    return found.group(1) if found else HEAD


def _rank(key: str) -> int:
    return -1 if key == HEAD else int(key)


def shard_files(layer: str, key: str) -> list[str]:
    """The corpus-relative paths of one shard's files."""
    return [f"{SEARCH_DIR}/{layer}/{key}.{ext}" for ext in ("txt", "map", "words")]


def _in_walk_order(paths) -> list[str]:
    """Layer files (no ``original.*``) in the order grep walks a folder: os.walk with
    folders and names sorted, so a folder's files come before its subfolders'."""
    chosen = [p for p in paths if p.split("/", 1)[0] in LAYERS and not p.rsplit("/", 1)[-1].startswith("original.")]
    return sorted(chosen, key=lambda p: (tuple(p.split("/")[:-1]), p.rsplit("/", 1)[-1]))


def plan(paths) -> dict[tuple[str, str], list[str]]:
    """(layer, shard) -> the layer files it joins, in walk order. A file placed out of
    order (not one a build writes: a stray note between pages) joins the shard before
    it, so reading the shards in order still reads the files in walk order."""
    return _plan(paths)[0]


def _plan(paths) -> tuple[dict[tuple[str, str], list[str]], bool]:
    """``plan``, and whether every file is of a kind that joins its own key's shard in
    any corpus (then the grouping of a file never depends on its neighbours)."""
    shards: dict[tuple[str, str], list[str]] = {}
    current: dict[str, str] = {}
    regular = True
    for rel in _in_walk_order(paths):
        layer = rel.split("/", 1)[0]
        key = shard_key(rel)
        if key == HEAD and not _in_order_wherever(rel):
            regular = False
        if layer in current and _rank(key) < _rank(current[layer]):
            key = current[layer]
        current[layer] = key
        shards.setdefault((layer, key), []).append(rel)
    return shards, regular


def _in_order_wherever(rel: str) -> bool:
    """Whether a file joins its own key's shard in any corpus: a run's file, or a layer's
    ``_index.md`` (which walks first). Only another kind of file can be displaced."""
    return shard_key(rel) != HEAD or rel.count("/") == 1 and rel.endswith("/_index.md")


def _keys(paths) -> tuple[dict[str, tuple[str, str]], bool]:
    """Each layer file grep searches (no ``original.*``) -> its own (layer, shard), and whether
    every one is of a kind that joins that shard in any corpus (``_plan``'s second answer)."""
    keys, regular = {}, True
    shards: dict[tuple[str, str], tuple[str, str]] = {}  # (layer, a run's folder or page) -> its shard
    for rel in paths:
        layer, _, rest = rel.partition("/")
        if layer not in LAYERS or rest.rpartition("/")[2].startswith("original."):
            continue
        top = rest.partition("/")[0]
        shard = shards.get((layer, top))  # a run's files share their first part: its key is worked out once
        if shard is None:
            shard = shards[(layer, top)] = (layer, shard_key(rel))
        if shard[1] == HEAD and not (rest == "_index.md"):
            regular = False
        keys[rel] = shard
    return keys, regular


def _changed_shards(pub, paths: list[str], regular: bool,
                    keys: dict[str, tuple[str, str]]) -> set[tuple[str, str]] | None:
    """The shards whose list of files or whose files' bytes differ from the last build's,
    found from the files that changed alone (no second walk of every file). None when a
    file of another kind (a stray note, now or before) could make a file's shard depend on
    its neighbours: the caller compares the two plans instead."""
    if not regular:
        return None
    before, output = pub.manifest.files, pub.output
    changed = [rel for rel in keys if not _same_bytes(before.get(rel), output.get(rel))]
    present = set(paths)
    removed = [rel for rel in before if rel not in present and rel.split("/", 1)[0] in LAYERS
               and not rel.rsplit("/", 1)[-1].startswith("original.")]
    if not all(_in_order_wherever(rel) for rel in removed):
        return None  # a removed file of another kind may have been displaced before
    return {keys[rel] for rel in changed} | {(rel.split("/", 1)[0], shard_key(rel)) for rel in removed}


class PageWords:
    """The words of the pages one writer wrote, gathered per shard as the text goes by.

    The process that renders a run's pages has their bytes in hand; splitting them into
    words there spares the build's main process reading every page's words again at the
    end. A shard's words are used only when the shard's files at the end include every
    page noted here with the same bytes (``known_words``); otherwise its files are read.
    A shard the writer has moved on from is kept as one joined bytes string, not a set of
    word objects (a tenth of the memory, and cheap to send back)."""

    def __init__(self) -> None:
        self.words: dict[tuple[str, str], set[bytes] | bytes] = {}
        self.pages: dict[tuple[str, str], dict[str, str]] = {}  # shard -> rel -> sha256 of the bytes noted
        self.spoiled: set[tuple[str, str]] = set()  # a page noted twice: its old words may linger
        self._current: dict[str, tuple[str, str]] = {}  # layer -> the shard noted last

    def _open(self, shard: tuple[str, str]) -> set[bytes]:
        words = self.words.get(shard)
        if not isinstance(words, set):
            words = set(words.split(b"\n")) if words else set()
            words.discard(b"")
            self.words[shard] = words
        return words

    def _pack(self, shard: tuple[str, str]) -> None:
        words = self.words.get(shard)
        if isinstance(words, set):
            self.words[shard] = b"\n".join(words)  # words never hold a newline

    def packed(self) -> "PageWords":
        """Every shard's words as joined bytes (before sending them to the build)."""
        for shard in list(self.words):
            self._pack(shard)
        return self

    def note(self, rel: str, data: bytes, entry: list) -> None:
        layer = rel.split("/", 1)[0]
        if layer not in LAYERS or rel.rsplit("/", 1)[-1].startswith("original."):
            return
        shard = (layer, shard_key(rel))
        last = self._current.get(layer)
        if last is not None and last != shard:
            self._pack(last)
        self._current[layer] = shard
        pages = self.pages.setdefault(shard, {})
        if rel in pages:
            self.spoiled.add(shard)
        pages[rel] = entry[0]
        if b"\0" not in data:  # a file with a NUL is left out of the shard, words and all
            self._open(shard).update(data.translate(_WORDS_ONLY).split())

    def merge(self, other: "PageWords | None") -> None:
        """Add another writer's notes (the pages written here before the helper took over)."""
        if other is None:
            return
        self.spoiled |= other.spoiled
        for shard, pages in other.pages.items():
            mine = self.pages.setdefault(shard, {})
            if mine.keys() & pages.keys():
                self.spoiled.add(shard)
            mine.update(pages)
            if shard in other.words:
                self._open(shard).update(other._open(shard))
                self._pack(shard)

    def known_words(self, layer: str, key: str, rels: list[str], output: dict) -> tuple[set[bytes], set[str]]:
        """The words already known for the shard ``rels`` make, and the files they cover
        (empty when the notes cannot be trusted for it: the files are read instead)."""
        shard = (layer, key)
        pages = self.pages.get(shard)
        if not pages or shard in self.spoiled or not pages.keys() <= set(rels):
            return set(), set()
        if any((output.get(rel) or [None])[0] != digest for rel, digest in pages.items()):
            return set(), set()
        words = set(self._open(shard))  # a copy: the caller adds the other files' words to it
        self._pack(shard)
        return words, set(pages)


def write_shard(put, root: Path, layer: str, key: str, rels: list[str],
                words: set[bytes] | None = None, covered: set[str] | frozenset = frozenset()) -> None:
    """Write one shard's three files through ``put(rel, chunks)``, reading its files
    one at a time (a shard's text is never held whole). ``words``: the words of the
    files in ``covered``, known already (those files are read, not split again)."""
    entries: list[str] = []
    words = set() if words is None else words
    txt, map_, word_list = shard_files(layer, key)
    missed: list[str] = []
    put(txt, _shard_chunks(root, rels, entries, words, covered, missed))
    if missed and covered:  # a page noted as written is gone or no longer text: its noted words may not be
        return write_shard(put, root, layer, key, rels)
    put(map_, ["".join(entries).encode("utf-8")])
    words = sorted(word for word in words if len(word) >= 3)
    put(word_list, [b"\n" + b"\n".join(words) + b"\n" if words else b""])


def _shard_chunks(root: Path, rels: list[str], entries: list[str], words: set[bytes], covered=frozenset(),
                  missed: list[str] | None = None, offset: int = 0):
    """The files joined (each ending in a newline), noting each start in ``entries``,
    each word in ``words`` (not again for the ``covered`` files) and each file left out
    in ``missed``. ``offset``: where the first file starts in the shard's text."""
    top = str(root)
    for rel in rels:
        try:
            with open(f"{top}/{rel}", "rb") as fh:
                data = fh.read()
            if not data.isascii():  # ASCII is UTF-8: only other bytes need the (copying) check
                data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            data = b"\0"
        if b"\0" in data:
            if missed is not None:
                missed.append(rel)
            continue
        if data and not data.endswith(b"\n"):
            data += b"\n"
        entries.append(f"{offset}\t{rel}\n")
        offset += len(data)
        if rel not in covered:
            words.update(data.translate(_WORDS_ONLY).split())
        yield data
    entries.append(f"{offset}\t\n")


def update_search_files(pub, root: Path, paths=None) -> list[str]:
    """Bring ``index/grep/`` up to date after a build (or an added run) wrote its pages.

    Call it once every layer file of the new corpus is in ``pub.output`` (written or
    kept) and before ``pub.finish``. ``paths``: the corpus's files (default: all of
    ``pub.output``). A shard whose files are the same paths with the same bytes as at
    the last build, and whose own files are intact, is kept untouched; the others are
    written again from the files on disk. Shards no longer needed are taken out of
    ``pub.output`` (also when the caller kept every file), so ``pub.finish`` removes them. Returns the shards written, as
    ``layer/key``: one per layer (and the layer's head) when one run was added.
    """
    paths = list(pub.output) if paths is None else list(paths)
    noted: PageWords | None = getattr(pub, "page_words", None)  # the words the page writers saw, if any
    keys, regular = _keys(paths)
    changed = _changed_shards(pub, paths, regular, keys)
    if changed is None:
        now = _plan(paths)[0]
        # the files owned before this build, and those claimed since, when the changes alone cannot tell
        before = plan(pub.manifest.files)
    else:  # every file joins its own key's shard: only the changed shards' files need ordering
        now = {shard: [] for shard in sorted(set(keys.values()), key=lambda s: (s[0], _rank(s[1])))}
        for rel in _in_walk_order([rel for rel, shard in keys.items() if shard in changed]):
            now[keys[rel]].append(rel)
        before = None
    wanted = {rel for layer, key in now for rel in shard_files(layer, key)}
    for rel in [rel for rel in pub.output if rel.startswith(SEARCH_DIR + "/") and rel not in wanted]:
        del pub.output[rel]  # kept by a caller, but its files are gone (a forgotten run's text)
    written = []
    for (layer, key), rels in now.items():
        files = shard_files(layer, key)
        if before is None:
            unchanged = (layer, key) not in changed
        else:
            unchanged = before.get((layer, key)) == rels and all(
                _same_bytes(pub.manifest.files.get(rel), pub.output.get(rel)) for rel in rels)
        if unchanged and all(pub.owns(rel) for rel in files) and pub.verify_group(files):
            pub.keep(files)
            continue
        if before is None and not rels and (layer, key) not in changed:  # its own files damaged: joined anew
            rels = _in_walk_order([rel for rel, shard in keys.items() if shard == (layer, key)])
        if before is None and _appended(pub, root, layer, key, rels):
            written.append(f"{layer}/{key}")
            continue
        write_shard(pub.write_stream, root, layer, key, rels,
                    *(noted.known_words(layer, key, rels, pub.output) if noted is not None else ()))
        written.append(f"{layer}/{key}")
    return written


def _appended(pub, root: Path, layer: str, key: str, rels: list[str]) -> bool:
    """Write the shard as the files it holds now followed by files added after them, when
    that is the whole change (an added run is the last of its shard): its text, map and
    words are carried over and only the new files are read. False (nothing written) when
    the shard's own files are not exactly as the last build wrote them, or anything else
    changed; the caller then joins the shard anew."""
    files = shard_files(layer, key)
    if not (all(pub.owns(rel) for rel in files) and pub.verify_group(files)):
        return False
    txt, map_, word_list = files
    try:
        with open(f"{root}/{map_}", "rb") as fh:
            lines = fh.read().decode("utf-8").split("\n")
        with open(f"{root}/{word_list}", "rb") as fh:
            words = set(fh.read().split(b"\n"))
    except (OSError, UnicodeDecodeError):
        return False
    if len(lines) < 3 or lines[-1] != "" or not lines[-2].endswith("\t"):
        return False
    kept = lines[:-2]
    held = [line.split("\t", 1)[-1] for line in kept]
    if len(rels) <= len(held) or rels[:len(held)] != held or not all(
            _same_bytes(pub.manifest.files.get(rel), pub.output.get(rel)) for rel in held):
        return False
    words.discard(b"")
    entries = ["".join(line + "\n" for line in kept)]

    def chunks():
        with open(f"{root}/{txt}", "rb") as fh:
            while block := fh.read(1 << 20):
                yield block
        yield from _shard_chunks(root, rels[len(held):], entries, words, offset=int(lines[-2][:-1]))

    pub.write_stream(txt, chunks())
    pub.write(map_, "".join(entries).encode("utf-8"))
    words = sorted(word for word in words if len(word) >= 3)
    pub.write(word_list, b"\n" + b"\n".join(words) + b"\n" if words else b"")
    return True


def _same_bytes(before, now) -> bool:
    return before is not None and now is not None and before[0] == now[0]


def write_search_files_to(put, root: Path, paths) -> None:
    """Write every shard for the files ``paths`` (corpus-relative) under ``root``."""
    for (layer, key), rels in plan(paths).items():
        write_shard(put, root, layer, key, rels)


def write_search_files(root: Path) -> None:
    """Index every layer file under ``root`` (for corpora assembled by hand: benchmarks, tests)."""
    paths = [p.relative_to(root).as_posix() for layer in LAYERS if (root / layer).is_dir()
             for p in (root / layer).rglob("*") if p.is_file()]

    def put(rel, chunks):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(root / rel, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)

    write_search_files_to(put, root, paths)
