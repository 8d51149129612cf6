"""What a page writer keeps of the pages it writes, for grep's search files (corpus/search_files.py).

The process that renders a run's pages has their bytes in hand. Splitting them into
words there spares the build's main process reading every page's words again at the
end; appending them to their shard's text there (a temp file beside the corpus, hashed
as it grows) spares it reading, hashing and writing every page's bytes once more. That
end is the part of a build no other process works beside, so a shard whose files turn
out to be exactly the pages noted, with the same bytes, only has its temp file renamed
into place. Anything else (a page noted twice, pages noted out of grep's walk order, a
file the writer never saw) is found at the end, and the shard is joined from disk.
"""

from __future__ import annotations

import hashlib
import os
import re

from .layout import LAYERS

# bytes -> the same with ASCII letters lowered and every byte that is not part of a word a
# space, so bytes.split() yields the words (at C speed: a regex findall is twice as slow)
WORDS_ONLY = bytes(c + 32 if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122 or c == 95 or c >= 128)
                   else 32 for c in range(256))
Shard = tuple[str, str]  # (layer, key)
HEAD = "head"  # the shard of a layer's own files (its _index.md): first in walk order
_RUN_ID = re.compile(r"(?:step|insight)-(\d\d)\d{2,}(?:\.md)?")


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


def walk_key(rel: str) -> tuple:
    """Where grep's walk (os.walk, folders and names sorted) meets a file: a folder's own
    files before its subfolders'."""
    folders, _, name = rel.rpartition("/")
    return tuple(folders.split("/")) if folders else (), name


def words_file(words) -> bytes:
    """The ``.words`` file of a shard holding ``words``: those at least three long, sorted, between newlines."""
    kept = sorted(word for word in words if len(word) >= 3)
    return b"\n" + b"\n".join(kept) + b"\n" if kept else b""


class ShardText:
    """One shard's ``.txt`` written as its pages go by, with what its ``.map`` and ``.words``
    hold once it is done (``seal``)."""

    def __init__(self, path: str):
        self.path = path
        self.rels: list[str] = []  # every page noted, in order (those left out of the text too)
        self.map: list[str] | bytes = []  # "<offset>\t<path>\n" per page in the text; bytes once sealed
        self.size = 0
        self.sha256: hashlib._Hash | str = hashlib.sha256()  # its hex digest once sealed
        self.words = b""  # the .words file, made by ``seal``
        self.ordered = True  # every page noted after the one before it in grep's walk
        self._last: tuple | None = None

    def append(self, fd: int, rel: str, data: bytes) -> None:
        key = walk_key(rel)
        if self._last is not None and key <= self._last:
            self.ordered = False
        self._last = key
        self.rels.append(rel)
        if b"\0" in data:  # left out of the shard, as its scan from disk leaves it out
            return
        if data and not data.endswith(b"\n"):
            data += b"\n"
        self.map.append(f"{self.size}\t{rel}\n")
        self.size += len(data)
        self.sha256.update(data)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]

    def seal(self, words: set[bytes]) -> None:
        os.chmod(self.path, 0o444)
        self._last = None
        self.map = ("".join(self.map) + f"{self.size}\t\n").encode("utf-8")
        self.sha256 = self.sha256.hexdigest()
        self.words = words_file(words)


class PageWords:
    """The words of the pages one writer wrote, gathered per shard as the text goes by, and
    with ``tmp`` (the folder for temp files, and a name prefix its owner cleans up) each
    shard's text as well.

    A shard's words are used only when the shard's files at the end include every page
    noted here with the same bytes (``known_words``); its text only when they are exactly
    those pages in that order (``streamed``). A shard the writer has moved on from keeps its
    words as one joined bytes string, not a set of word objects (a tenth of the memory, and
    cheap to send back)."""

    def __init__(self, tmp: str | None = None) -> None:
        self.words: dict[Shard, set[bytes] | bytes] = {}
        self.pages: dict[Shard, dict[str, str]] = {}  # shard -> rel -> sha256 of the bytes noted
        self.spoiled: set[Shard] = set()  # a page noted twice: its old words may linger
        # the lines of the shard noted last in each layer whose words its set holds already:
        # its runs share long lines (a benchmark's policy, its tools' answers), split once
        self._lines: dict[Shard, set[bytes]] = {}
        self._current: dict[str, Shard] = {}  # layer -> the shard noted last
        self._tmp = tmp
        self.texts: dict[Shard, ShardText] = {}
        self._open_fd: dict[str, tuple[str, int]] = {}  # layer -> (path, descriptor) of the text open last

    def _open(self, shard: Shard) -> set[bytes]:
        words = self.words.get(shard)
        if not isinstance(words, set):
            words = set(words.split(b"\n")) if words else set()
            words.discard(b"")
            self.words[shard] = words
        return words

    def _pack(self, shard: Shard) -> None:
        self._lines.pop(shard, None)
        words = self.words.get(shard)
        if isinstance(words, set):
            self.words[shard] = b"\n".join(words)  # words never hold a newline

    def packed(self) -> "PageWords":
        """Every shard's words as joined bytes and every text sealed (before sending them to the build)."""
        for _path, fd in self._open_fd.values():
            os.close(fd)
        self._open_fd.clear()
        for shard, text in self.texts.items():
            if not isinstance(text.sha256, str):
                text.seal(self._open(shard) if shard in self.words else set())
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
            words = self._open(shard)
            # a newline parts words as any other byte of no word does: the page's words are
            # those of its lines, and a line seen before in the shard adds none
            seen = self._lines.setdefault(shard, set())
            lines = set(data.split(b"\n"))
            lines -= seen
            if lines:
                seen |= lines
                words.update(b"\n".join(lines).translate(WORDS_ONLY).split())
        if self._tmp is not None and shard not in self.spoiled:
            text = self.texts.get(shard)
            if text is None:
                text = self.texts[shard] = ShardText(f"{self._tmp}grep-{layer}-{shard[1]}")
            text.append(self._fd(layer, text), rel, data)

    def _fd(self, layer: str, text: ShardText) -> int:
        """``text``'s file, open for appending (the layer's file open before is closed)."""
        path, fd = self._open_fd.get(layer, (None, -1))
        if path != text.path:
            if fd >= 0:
                os.close(fd)
            fd = os.open(text.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            self._open_fd[layer] = (text.path, fd)
        return fd

    def merge(self, other: "PageWords | None") -> None:
        """Add another writer's notes (the pages written here before the helper took over).
        A shard both wrote text for is joined from disk at the end."""
        if other is None:
            return
        self.spoiled |= other.spoiled
        for shard, pages in other.pages.items():
            mine = self.pages.setdefault(shard, {})
            if mine:  # pages of it noted by both: neither text holds them all
                self._drop_text(shard)
                other._drop_text(shard)
            if mine.keys() & pages.keys():
                self.spoiled.add(shard)
            mine.update(pages)
            if shard in other.words:
                self._open(shard).update(other._open(shard))
                self._pack(shard)
        self.texts.update(other.texts)

    def _trusted(self, shard: Shard, rels: list[str], output: dict) -> dict[str, str] | None:
        """The pages noted for ``shard`` when every one of them is among ``rels`` with the
        bytes noted, else None."""
        pages = self.pages.get(shard)
        if not pages or shard in self.spoiled or not pages.keys() <= set(rels):
            return None
        if any((output.get(rel) or [None])[0] != digest for rel, digest in pages.items()):
            return None
        return pages

    def known_words(self, layer: str, key: str, rels: list[str], output: dict) -> tuple[set[bytes], set[str]]:
        """The words already known for the shard ``rels`` make, and the files they cover
        (empty when the notes cannot be trusted for it: the files are read instead)."""
        shard = (layer, key)
        pages = self._trusted(shard, rels, output)
        if pages is None:
            return set(), set()
        words = set(self._open(shard))  # a copy: the caller adds the other files' words to it
        self._pack(shard)
        return words, set(pages)

    def streamed(self, layer: str, key: str, rels: list[str], output: dict) -> ShardText | None:
        """The shard's sealed text when it holds exactly ``rels``, in that order, with the
        bytes now in ``output``: then its ``.map`` and ``.words`` are the text's too."""
        text = self.texts.get((layer, key))
        if text is None or not isinstance(text.sha256, str) or text.rels != rels:
            return None
        if self._trusted((layer, key), rels, output) is None:
            return None
        return self.texts.pop((layer, key))  # the caller's now: put in place, or removed

    def _drop_text(self, shard: Shard) -> None:
        text = self.texts.pop(shard, None)
        if text is not None:
            try:
                os.unlink(text.path)
            except FileNotFoundError:
                pass

    def in_walk_order(self, layer: str, key: str, rels: list[str]) -> list[str] | None:
        """``rels`` (a shard's files) in grep's walk order without sorting them, when they are
        the pages a text holds, noted in that order; else None."""
        text = self.texts.get((layer, key))
        if text is None or not text.ordered or len(text.rels) != len(rels) or set(text.rels) != set(rels):
            return None
        return list(text.rels)

    def discard(self) -> None:
        """Remove the temp files of the texts not put in place."""
        for _path, fd in self._open_fd.values():
            os.close(fd)
        self._open_fd.clear()
        for shard in list(self.texts):
            self._drop_text(shard)
