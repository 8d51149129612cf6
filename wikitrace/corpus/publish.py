"""Publishing in place: the corpus folder is the user's; a build owns only what it wrote.

The folder given as ``--out`` is created once and never renamed or replaced, so a
shell, an editor, a bind mount or a git checkout holding it sees every rebuild.
What the build wrote is listed in a manifest under ``.wikitrace/`` (one per kind of
memory: ``runs`` for agent runs, ``dialogue`` for dialogues), beside the lock. An
update:

1. claims each new path in a journal before creating it, so a build killed at any
   point still knows what it owns (and never takes a file the user made);
2. writes new and changed files by temp file + rename (temps live in
   ``.wikitrace/tmp``, so nothing half-written is ever visible);
3. writes the indexes, then ``corpus.json``, each the same way;
4. removes the files it no longer owns, then saves the manifest.

Readers therefore never meet an index or a link naming a missing file, and a rerun
after ``kill -9`` converges to what an uninterrupted build writes. Files are 0444,
folders 0755: the owner can delete, ``git checkout`` or add notes; the agent's
read-only view comes from the mount.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from pathlib import Path

from . import layout
from ..fsio import DIR_MODE, before_replace
from .corpus_folder import (KINDS, STATE, BuildLock, PublishError, check_target,  # noqa: F401 (their home before)
                            corpus_root, read_corpus_json)
from .manifest import FileManifest, FileWriter, hash_file


class Publisher:
    """Writes one kind's files into the corpus in place and keeps its manifest.

    ``write``/``keep`` name this build's output; ``finish`` removes what the kind
    owned before but no longer produces and saves the manifest."""

    def __init__(self, root: Path, kind: str):
        assert kind in KINDS
        self.root, self.kind = root, kind
        self._root = str(root)
        self._folders: dict[str, bool] = {}
        self._listed: dict[str, frozenset[str]] = {}  # folder -> the names in it, once asked (``_on_disk``)
        self.state = root / STATE
        self.manifest_path = self.state / f"{kind}.json"
        self._journal_path = self.state / f"{kind}.journal"
        self.tmp = self.state / "tmp"
        if self.tmp.exists():  # temps of a build that was killed: never renamed into place
            for name in os.listdir(self.tmp):
                if name.startswith(f"{kind}-"):  # "….d": a run's folder being made whole (FileWriter.put_folder)
                    remove = shutil.rmtree if name.endswith(".d") else os.unlink
                    remove(self.tmp / name)
        self.tmp.mkdir(exist_ok=True)
        self.manifest = FileManifest.load(self.manifest_path)
        if self.manifest is None:
            self.manifest = FileManifest()
            self._adopt()
        self.claimed_dirs: set[str] = set()
        for rel in self._read_journal():
            if rel.endswith("/"):
                self.claimed_dirs.add(rel)
            else:
                self.manifest.files.setdefault(rel, None)  # owned, bytes unknown: rendered again
        self.output: dict[str, list] = {}
        self.repaired: list[str] = []  # "path (missing)" / "path (edited)"
        self.writer = FileWriter(str(root), str(self.tmp), kind)
        self._journal = os.open(self._journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    # --- what the kind owns -----------------------------------------------------------

    def _in_kind(self, rel: str) -> bool:
        return rel.startswith("dialogue/") if self.kind == "dialogue" else layout.is_corpus_path(rel)

    def _adopt(self) -> None:
        """A corpus of an earlier wikitrace (no manifest): the files it wrote are ours, bytes
        unknown (every page is rendered again, rewritten only where it differs); its 0555
        folders become 0755. Agent runs: the layout's paths, when corpus.json is there.
        Dialogues: every sample folder holding a memory.json, and the dialogue index."""
        if self.kind == "runs":
            if not (self.root / "corpus.json").is_file():
                return
            tops = [self.root / d for d in (*layout.LAYERS, "index")]
            self._adopt_file("corpus.json")
            root_index = self.root / layout.ROOT_INDEX
            if root_index.is_file() and "\nlayer: root\n" in root_index.read_text("utf-8", "replace")[:300]:
                self._adopt_file(layout.ROOT_INDEX)  # ours by its frontmatter; a user's own index.md is not
        else:
            top = self.root / "dialogue"
            if not top.is_dir():
                return
            tops = [p for p in top.iterdir() if p.is_dir() and not p.is_symlink() and (p / "memory.json").is_file()]
            if (top / "_index.md").is_file() and "type: dialogue-index" in (top / "_index.md").read_text("utf-8", "replace"):
                self._adopt_file("dialogue/_index.md")
            _writable(top)
        for top in tops:
            if not top.is_dir() or top.is_symlink():
                continue
            for dirpath, _dirnames, filenames in os.walk(top):
                _writable(dirpath)
                for name in filenames:
                    self._adopt_file(os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/"))

    def _adopt_file(self, rel: str) -> None:
        if self._in_kind(rel):
            self.manifest.files[rel] = None

    def _read_journal(self) -> list[str]:
        try:
            text = self._journal_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return [rel for line in text.splitlines() for rel in line.split("\t") if rel]

    def owns(self, rel: str) -> bool:
        return rel in self.manifest.files

    def claim(self, rels: list[str]) -> None:
        """Record paths as ours before they are created. A path that exists but was not
        written by wikitrace is the user's: the build stops rather than overwrite it."""
        new = [r for r in rels if r not in self.manifest.files and not (r.endswith("/") and r in self.claimed_dirs)]
        if not new:
            return
        for rel in new:
            if not rel.endswith("/") and self._on_disk(rel):
                raise PublishError(f"{self.root / rel}: exists but was not written by wikitrace; move it out of "
                                   f"the corpus folder and compile again")
        os.write(self._journal, ("\t".join(new) + "\n").encode("utf-8"))
        for rel in new:
            if rel.endswith("/"):
                self.claimed_dirs.add(rel)
            else:
                self.manifest.files[rel] = None

    def _on_disk(self, rel: str) -> bool:
        """Whether a name is in the corpus folder, from one listing per folder (made the first
        time a name in it is asked about): a build claims five new paths a run, and a lookup
        of each cost more than the rest of the run's bookkeeping. A folder that was not
        there holds nothing; the names this build writes itself are never asked again."""
        folder, _, name = rel.rpartition("/")
        return name in self._names_in(folder)

    def _names_in(self, folder: str) -> frozenset[str]:
        names = self._listed.get(folder)
        if names is None:
            parent, _, name = folder.rpartition("/")
            names = frozenset()
            if not folder or name in self._names_in(parent):
                try:
                    names = frozenset(os.listdir(f"{self._root}/{folder}" if folder else self._root))
                except OSError:  # a file where a folder would be: nothing is under it
                    pass
            self._listed[folder] = names
        return names

    # --- checking what is on disk -----------------------------------------------------

    def verify(self, rel: str) -> str:
        """``ok``, ``missing``, ``edited`` (bytes differ from what was written) or
        ``unknown`` (written by an interrupted or an earlier build). Restores 0444."""
        entry = self.manifest.files.get(rel)
        path = f"{self._root}/{rel}"  # a str: pathlib costs more than the stat at 50,000 files
        try:
            if not self._real_folder(rel.rpartition("/")[0]):  # a link: never looked through
                raise FileNotFoundError
            st = os.lstat(path)
        except FileNotFoundError:
            return "unknown" if entry is None else "missing"
        if entry is None:
            return "unknown"
        if not stat.S_ISREG(st.st_mode) or st.st_size != entry[1]:
            return "edited"
        if (st.st_mtime_ns, st.st_ino) != (entry[2], entry[3]):
            if hash_file(path) != entry[0]:
                return "edited"
            entry[2], entry[3] = st.st_mtime_ns, st.st_ino  # same bytes, rewritten (git checkout)
        if stat.S_IMODE(st.st_mode) != 0o444:  # e.g. after git checkout, which writes 0644
            os.chmod(path, 0o444)
        return "ok"

    def _real_folder(self, rel_dir: str) -> bool:
        """True when every folder on the way to ``rel_dir`` is a folder, not a symlink."""
        if not rel_dir:
            return True
        known = self._folders.get(rel_dir)
        if known is None:
            try:
                known = stat.S_ISDIR(os.lstat(f"{self._root}/{rel_dir}").st_mode)
            except OSError:
                known = False
            known = known and self._real_folder(rel_dir.rpartition("/")[0])
            self._folders[rel_dir] = known
        return known

    def verify_group(self, rels: list[str]) -> bool:
        """True when every file of one unit (a run's pages) is as written; problems are
        noted in ``repaired`` (they are about to be rewritten)."""
        whole = True
        for rel in rels:
            state = self.verify(rel)
            if state != "ok":
                whole = False
                if state in ("missing", "edited"):
                    self.repaired.append(f"{rel} ({state})")
        return whole

    def owned_under(self, prefix: str) -> list[str]:
        return sorted(r for r in self.manifest.files if r.startswith(prefix))

    # --- this build's output ----------------------------------------------------------

    def keep(self, rels: list[str]) -> None:
        """Files that stay as they are (verified by the caller)."""
        for rel in rels:
            self.output[rel] = self.manifest.files[rel]

    def write(self, rel: str, data: bytes) -> None:
        """Claim, then write one file atomically (left alone when its bytes are already these)."""
        self.write_stream(rel, None, data)

    def write_stream(self, rel: str, chunks, data: bytes | None = None) -> None:
        """``write`` for a file given as an iterable of byte chunks (never all in memory)."""
        self.claim([rel])
        try:
            self.output[rel] = self.writer.put(rel, data) if chunks is None else self.writer.put_stream(rel, chunks)
        except OSError as exc:
            raise PublishError(f"{self.root / rel}: cannot be written ({exc.strerror or exc}); free space or fix "
                               f"the folder's permissions and compile again (the pages already written stay)") from None

    def record(self, written: dict[str, list]) -> None:
        """Entries of files another process wrote (claimed here first)."""
        self.output.update(written)

    def finish(self, data: dict | None = None, data_text: str | None = None) -> list[str]:
        """Remove the files this kind owned and did not write now, then save the manifest.
        ``data_text``: ``data`` as the manifest writes it, when the caller dumped it already.
        Returns the removed paths."""
        # a layer's pages link the layer below (insight -> compilation -> raw): removed top layer first, a
        # reader never finds a page that still stands linking one already gone
        gone = sorted(set(self.manifest.files) - set(self.output),
                      key=lambda rel: (_REMOVAL_ORDER.get(rel.split("/", 1)[0], len(_REMOVAL_ORDER)), rel))
        self._listed.clear()  # names go from the folders now
        dirs = set(self.claimed_dirs)
        for rel in gone:
            if self.writer.pause:
                time.sleep(self.writer.pause)
            before_replace()
            try:
                os.unlink(self.root / rel)
            except FileNotFoundError:
                pass
            except IsADirectoryError:
                continue
            except OSError as exc:
                raise PublishError(f"{self.root / rel}: cannot be removed ({exc.strerror}); fix the folder's "
                                   f"permissions and compile again") from None
            dirs.add(rel.rsplit("/", 1)[0] + "/")
        if dirs:  # the folders still holding output are worked out only when one may be left empty
            needed = {rel.rsplit("/", 1)[0] + "/" for rel in self.output}
            for d in sorted(dirs - needed, key=lambda d: -d.count("/")):
                _rmdir_empty(self.root, d)
        output = self.output
        self.manifest.files = {rel: output[rel] for rel in sorted(output)}
        if data is not None:
            self.manifest.data = data
        self.manifest.save(self.manifest_path, data_text if data is not None else None)
        os.close(self._journal)
        self._journal = -1
        try:
            os.unlink(self._journal_path)
        except FileNotFoundError:
            pass
        return gone

    def abandon(self, rels: list[str]) -> None:
        """A build that failed: remove files it created for units no index names yet."""
        self._listed.clear()
        for rel in rels:
            if rel.endswith("/"):
                continue
            try:
                os.unlink(self.root / rel)
            except OSError:
                pass
        for d in sorted({r if r.endswith("/") else r.rsplit("/", 1)[0] + "/" for r in rels},
                        key=lambda d: -d.count("/")):
            _rmdir_empty(self.root, d)

    def close(self) -> None:
        if self._journal >= 0:
            os.close(self._journal)
            self._journal = -1


_REMOVAL_ORDER = {"insight": 0, "compilation": 1, "raw": 2}


def _writable(folder) -> None:
    """Folders an earlier wikitrace left 0555 become 0755 (by mode, as root ignores access)."""
    if not os.stat(folder).st_mode & stat.S_IWUSR:
        os.chmod(folder, DIR_MODE)


def _rmdir_empty(root: Path, rel_dir: str) -> None:
    """Remove a folder the build made once it is empty (and its empty parents up to a layer)."""
    rel_dir = rel_dir.rstrip("/")
    while rel_dir and "/" in rel_dir:
        try:
            os.rmdir(root / rel_dir)
        except OSError as exc:
            if exc.errno in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOENT):
                return
            raise
        rel_dir = rel_dir.rsplit("/", 1)[0]
