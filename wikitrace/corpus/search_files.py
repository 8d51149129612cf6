"""Per-layer search files for the agent's ``grep`` tool, written at compile time.

Without ripgrep, ``grep`` used to open every file of a layer (20,000 on a 10,000-run
corpus) on every call. A search file is the layer's text files joined in the order
``grep`` walks them, beside a table of where each file starts, so one read (an mmap)
and one regex pass replace thousands of opens. Layout (``index/grep/``)::

    <layer>.txt   the files' bytes, each ending in a newline
    <layer>.map   one line per file: "<offset>\\t<path inside the corpus>", then "<end>\\t"

``original.*`` (the imported source record, a copy of the turn log) is left out: grep
skips it unless asked, and then scans it directly. Files that are not UTF-8 text (or
hold a NUL) are left out, as grep's own scan skips them. The tools fall back to their
per-file scan when a search file is missing, so a corpus from an older build still works.
"""

from __future__ import annotations

from pathlib import Path

SEARCH_DIR = "index/grep"
LAYERS = ("raw", "compilation", "insight")


def _in_walk_order(paths) -> list[str]:
    """Layer files (no ``original.*``) in the order grep walks a folder: os.walk with
    folders and names sorted, so a folder's files come before its subfolders'."""
    chosen = [p for p in paths if p.split("/", 1)[0] in LAYERS and not p.rsplit("/", 1)[-1].startswith("original.")]
    return sorted(chosen, key=lambda p: (tuple(p.split("/")[:-1]), p.rsplit("/", 1)[-1]))


def write_search_files_to(put, root: Path, paths) -> None:
    """Write ``index/grep/<layer>.txt`` and ``.map`` for the build's own files under
    ``root`` through ``put(rel, chunks)``, a file at a time (a layer's text can be
    hundreds of MB: it is streamed, never held whole). ``paths``: corpus-relative paths
    the build wrote; a user's notes are not indexed."""
    ordered = _in_walk_order(paths)
    for layer in LAYERS:
        mine = [p for p in ordered if p.startswith(layer + "/")]
        if not mine:
            continue
        entries: list[str] = []
        put(f"{SEARCH_DIR}/{layer}.txt", _layer_chunks(root, mine, entries))
        put(f"{SEARCH_DIR}/{layer}.map", ["".join(entries).encode("utf-8")])


def _layer_chunks(root: Path, rels: list[str], entries: list[str]):
    """The layer's files joined (each ending in a newline), noting each start in ``entries``."""
    offset = 0
    for rel in rels:
        try:
            data = (root / rel).read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if b"\0" in data:
            continue
        if data and not data.endswith(b"\n"):
            data += b"\n"
        entries.append(f"{offset}\t{rel}\n")
        offset += len(data)
        yield data
    entries.append(f"{offset}\t\n")


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
