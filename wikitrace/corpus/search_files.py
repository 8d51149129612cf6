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

import os
from pathlib import Path

from .fsio import FILE_MODE

SEARCH_DIR = "index/grep"
LAYERS = ("raw", "compilation", "insight")


def _walk(root: Path, layer: str):
    """Files of ``layer`` in grep's order: os.walk, folders and names sorted."""
    for dirpath, dirnames, filenames in os.walk(root / layer):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.startswith("original."):
                yield Path(dirpath) / name


def write_search_files(root: Path) -> None:
    """Write ``index/grep/<layer>.txt`` and ``.map`` for every layer under ``root``."""
    out = root / SEARCH_DIR
    out.mkdir(parents=True, exist_ok=True)
    for layer in LAYERS:
        if not (root / layer).is_dir():
            continue
        entries: list[str] = []
        offset = 0
        text_path, map_path = out / f"{layer}.txt", out / f"{layer}.map"
        with open(text_path, "wb") as blob:
            for path in _walk(root, layer):
                try:
                    data = path.read_bytes()
                    data.decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue
                if b"\0" in data:
                    continue
                if data and not data.endswith(b"\n"):
                    data += b"\n"
                entries.append(f"{offset}\t{path.relative_to(root).as_posix()}\n")
                blob.write(data)
                offset += len(data)
        entries.append(f"{offset}\t\n")
        map_path.write_text("".join(entries), encoding="utf-8")
        for path in (text_path, map_path):
            os.chmod(path, FILE_MODE)
