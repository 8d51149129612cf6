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

from pathlib import Path

from .page_words import HEAD, WORDS_ONLY, PageWords, shard_key, walk_key, words_file

SEARCH_DIR = "index/grep"
LAYERS = ("raw", "compilation", "insight")


def _rank(key: str) -> int:
    return -1 if key == HEAD else int(key)


def shard_files(layer: str, key: str) -> list[str]:
    """The corpus-relative paths of one shard's files."""
    return [f"{SEARCH_DIR}/{layer}/{key}.{ext}" for ext in ("txt", "map", "words")]


def _in_walk_order(paths) -> list[str]:
    """Layer files (no ``original.*``) in the order grep walks a folder: os.walk with
    folders and names sorted, so a folder's files come before its subfolders'."""
    chosen = [p for p in paths if p.split("/", 1)[0] in LAYERS and not p.rsplit("/", 1)[-1].startswith("original.")]
    return sorted(chosen, key=walk_key)


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
    put(word_list, [words_file(words)])


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
            words.update(data.translate(WORDS_ONLY).split())
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
        for rel, shard in keys.items():
            if shard in changed:
                now[shard].append(rel)
        for (layer, key), rels in now.items():
            if rels:  # the order a page writer noted them in, when that is grep's walk order already
                now[(layer, key)] = (noted.in_walk_order(layer, key, rels) if noted is not None else None) \
                    or sorted(rels, key=walk_key)
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
        text = noted.streamed(layer, key, rels, pub.output) if noted is not None else None
        if text is not None:
            _put_streamed(pub, files, text)
        elif not (before is None and _spliced(pub, root, layer, key, rels)):
            write_shard(pub.write_stream, root, layer, key, rels,
                        *(noted.known_words(layer, key, rels, pub.output) if noted is not None else ()))
        written.append(f"{layer}/{key}")
    if noted is not None:
        noted.discard()  # texts of shards kept as they were, or joined from disk after all
    return written


def _put_streamed(pub, files: list[str], text) -> None:
    """A shard whose text the page writer wrote as its pages went by: the text is renamed
    into place, its map and word list written from what the writer noted."""
    from .publish import PublishError

    txt, map_, word_list = files
    pub.claim([txt])
    try:
        pub.output[txt] = pub.writer.put_temp(txt, text.path, text.sha256)
    except OSError as exc:
        raise PublishError(f"{pub.root / txt}: cannot be written ({exc.strerror or exc}); free space or fix "
                           f"the folder's permissions and compile again (the pages already written stay)") from None
    pub.write(map_, text.map)
    pub.write(word_list, text.words)


def _spliced(pub, root: Path, layer: str, key: str, rels: list[str]) -> bool:
    """Write the shard as the files it holds now with files added among them in one place,
    when that is the whole change (an added run: ``step-10000`` joins shard ``10`` between
    ``step-1000`` and ``step-1001``): its text, map and words are carried over, the text cut
    where the new files go, and only the new files are read. False (nothing written) when
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
        if len(lines) < 3 or lines[-1] != "" or not lines[-2].endswith("\t"):
            return False
        kept = [line.split("\t", 1) for line in lines[:-2]]
        offsets, end = [int(at) for at, _rel in kept], int(lines[-2][:-1])
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    held = [rel for _at, rel in kept]
    added = len(rels) - len(held)
    if added <= 0:
        return False
    cut = 0  # the new files go before held[cut]: the files before it are unchanged in place
    while cut < len(held) and rels[cut] == held[cut]:
        cut += 1
    if rels[cut + added:] != held[cut:] or not all(
            _same_bytes(pub.manifest.files.get(rel), pub.output.get(rel)) for rel in held):
        return False
    words.discard(b"")
    split = offsets[cut] if cut < len(held) else end
    entries: list[str] = []

    def chunks():
        with open(f"{root}/{txt}", "rb") as fh:
            left = split
            while left and (block := fh.read(min(left, 1 << 20))):
                left -= len(block)
                yield block
            yield from _shard_chunks(root, rels[cut:cut + added], entries, words, offset=split)
            while block := fh.read(1 << 20):
                yield block

    pub.write_stream(txt, chunks())
    grown = int(entries.pop()[:-2]) - split  # the new files' bytes: _shard_chunks ends with their end offset
    head = "".join(f"{at}\t{rel}\n" for at, rel in kept[:cut])
    tail = "".join(f"{int(at) + grown}\t{rel}\n" for at, rel in kept[cut:])
    pub.write(map_, f"{head}{''.join(entries)}{tail}{end + grown}\t\n".encode("utf-8"))
    pub.write(word_list, words_file(words))
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
