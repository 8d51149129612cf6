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
    found = _RUN_ID.fullmatch(parts[1]) if len(parts) > 1 else None
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
    shards: dict[tuple[str, str], list[str]] = {}
    current: dict[str, str] = {}
    for rel in _in_walk_order(paths):
        layer = rel.split("/", 1)[0]
        key = shard_key(rel)
        if layer in current and _rank(key) < _rank(current[layer]):
            key = current[layer]
        current[layer] = key
        shards.setdefault((layer, key), []).append(rel)
    return shards


def write_shard(put, root: Path, layer: str, key: str, rels: list[str]) -> None:
    """Write one shard's three files through ``put(rel, chunks)``, reading its files
    one at a time (a shard's text is never held whole)."""
    entries: list[str] = []
    words: set[bytes] = set()
    txt, map_, word_list = shard_files(layer, key)
    put(txt, _shard_chunks(root, rels, entries, words))
    put(map_, ["".join(entries).encode("utf-8")])
    words = sorted(word for word in words if len(word) >= 3)
    put(word_list, [b"\n" + b"\n".join(words) + b"\n" if words else b""])


def _shard_chunks(root: Path, rels: list[str], entries: list[str], words: set[bytes]):
    """The files joined (each ending in a newline), noting each start in ``entries``
    and each word in ``words``."""
    offset = 0
    top = str(root)
    for rel in rels:
        try:
            with open(f"{top}/{rel}", "rb") as fh:
                data = fh.read()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if b"\0" in data:
            continue
        if data and not data.endswith(b"\n"):
            data += b"\n"
        entries.append(f"{offset}\t{rel}\n")
        offset += len(data)
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
    before = plan(pub.manifest.files)  # the files owned before this build, and those claimed since
    now = plan(paths)
    wanted = {rel for layer, key in now for rel in shard_files(layer, key)}
    for rel in [rel for rel in pub.output if rel.startswith(SEARCH_DIR + "/") and rel not in wanted]:
        del pub.output[rel]  # kept by a caller, but its files are gone (a forgotten run's text)
    written = []
    for (layer, key), rels in now.items():
        files = shard_files(layer, key)
        unchanged = before.get((layer, key)) == rels and all(
            _same_bytes(pub.manifest.files.get(rel), pub.output.get(rel)) for rel in rels)
        if unchanged and all(pub.owns(rel) for rel in files) and pub.verify_group(files):
            pub.keep(files)
            continue
        write_shard(pub.write_stream, root, layer, key, rels)
        written.append(f"{layer}/{key}")
    return written


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
