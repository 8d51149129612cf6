"""Stable ids across rebuilds.

The published corpus.json remembers which ``step-`` and ``insight-`` ids each
run got. A rebuild gives a known run its old ids and a new run the next free
ones, in input order, so adding one run changes only that run's files, the
indexes and corpus.json. Ids of runs that left the input are retired, never
handed out again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import time

from . import layout
from ..fsio import before_replace


def _write_sealed(path: str, flag: int, chunks, digest) -> os.stat_result:
    """``chunks`` written to a new file, hashed into ``digest`` on the way, the file then made
    read-only (0444, as every published page); returns its stat."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | flag, 0o600)
    try:
        for chunk in chunks:
            digest.update(chunk)
            view = memoryview(chunk)
            while view:
                view = view[os.write(fd, view):]
        os.fchmod(fd, 0o444)
        return os.fstat(fd)
    finally:
        os.close(fd)


class IdAllocator:
    def __init__(self, previous: dict | None):
        previous = previous or {}
        self.prev_runs: dict[str, dict] = {r["run_id"]: r for r in previous.get("runs", [])}
        retired = previous.get("retired", {"steps": [], "insights": []})
        self.retired_steps: set[str] = set(retired.get("steps", []))
        self.retired_insights: set[str] = set(retired.get("insights", []))
        known_steps = [r["step"] for r in self.prev_runs.values()] + list(self.retired_steps)
        known_ins = [i for r in self.prev_runs.values() for i in r.get("insights", [])] + list(self.retired_insights)
        self.next_step = max((layout.id_number(s) for s in known_steps), default=-1) + 1
        self.next_insight = max((layout.id_number(i) for i in known_ins), default=-1) + 1
        self.known_insights: set[str] = set(known_ins)
        self.used_run_ids: set[str] = set()
        # One insight per task type and lesson key: the id a live lesson already has
        from .insights import group_key

        self.key_ids: dict[str, str] = {}
        for r in self.prev_runs.values():
            # corpus.json's run entry holds its lessons; the manifest's copy (corpus.json lost) their keys
            keys = [lesson.get("key") for lesson in r.get("lessons") or [] if isinstance(lesson, dict)] or r.get("keys") or []
            for key, iid in zip(keys, r.get("insights") or []):
                if isinstance(key, str):
                    self.key_ids.setdefault(group_key(r, key), iid)
        self.used_insights: set[str] = set()

    def step_for(self, run_id: str) -> str:
        self.used_run_ids.add(run_id)
        prev = self.prev_runs.get(run_id)
        if prev:
            return prev["step"]
        step = layout.step_id(self.next_step)
        self.next_step += 1
        return step

    def insights_for(self, entry: dict, keys: list[str]) -> list[str]:
        """The insight id of each lesson key of a run (``entry``: its task type or apps): the
        id the lesson already has in this corpus, else the next free one."""
        from .insights import group_key

        ids = []
        for key in keys:
            g = group_key(entry, key)
            if g not in self.key_ids:
                self.key_ids[g] = layout.insight_id(self.next_insight)
                self.next_insight += 1
            ids.append(self.key_ids[g])
        self.used_insights.update(ids)
        return ids

    def keep_insights(self, ids: list[str]) -> None:
        """Ids a run carried over unchanged still links."""
        self.used_insights.update(ids)

    def retired(self) -> dict[str, list[str]]:
        """Ids of runs no longer in the input join the retired list for good."""
        steps = set(self.retired_steps)
        # an insight no run links any more is retired with its id
        insights = (set(self.retired_insights) | self.known_insights) - self.used_insights
        for run_id, entry in self.prev_runs.items():
            if run_id not in self.used_run_ids:
                steps.add(entry["step"])
        return {"steps": sorted(steps, key=layout.id_number), "insights": sorted(insights, key=layout.id_number)}

    def dropped_runs(self) -> list[str]:
        return sorted(r for r in self.prev_runs if r not in self.used_run_ids)


# --- which files a build owns, and writing them -----------------------------------------

_FORMAT = "wikitrace-owned/1"


def hash_file(path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def publish_pause() -> float:
    """Seconds to wait before each file is put in place or removed: lets the tests kill a
    build at chosen points of an update (WIKITRACE_PUBLISH_PAUSE; 0 in normal use)."""
    try:
        return max(0.0, float(os.environ.get("WIKITRACE_PUBLISH_PAUSE") or 0))
    except ValueError:
        return 0.0


class FileManifest:
    """What one kind of build wrote into a corpus: path -> [sha256, size, mtime_ns, inode].

    The stat fields make checking 50,000 files a stat each; only a file whose stat
    changed is hashed again. ``None``: owned, bytes unknown. ``data``: the kind's own
    state (record digests of the input, the build key)."""

    def __init__(self, files: dict | None = None, data: dict | None = None):
        self.files: dict[str, list | None] = files or {}
        self.data: dict = data or {}

    @classmethod
    def load(cls, path) -> "FileManifest | None":
        try:
            with open(path, "rb") as fh:
                raw = json.loads(fh.read())
        except (OSError, ValueError):
            return None
        if not isinstance(raw, dict) or raw.get("format") != _FORMAT or not isinstance(raw.get("files"), dict):
            return None
        files = {k: v if isinstance(v, list) and len(v) == 4 else None for k, v in raw["files"].items()}
        return cls(files, raw.get("data") if isinstance(raw.get("data"), dict) else {})

    def save(self, path, data_text: str | None = None) -> None:
        """``data_text``: ``json.dumps(self.data, separators=(",", ":"))`` when the caller made it
        already (the commit record holds the same data): the file's bytes are the same either way."""
        from ..fsio import write_atomic

        if data_text is None:
            data_text = json.dumps(self.data, separators=(",", ":"))
        write_atomic(path, f'{{"format":{json.dumps(_FORMAT)},"data":{data_text},"files":'
                           f'{json.dumps(self.files, separators=(",", ":"))}}}\n', mode=0o644)


def _same_bytes(path: str, size: int, hexdigest: str) -> bool:
    """Whether the regular file at ``path`` has ``size`` bytes hashing to ``hexdigest`` (sha256)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_size != size:
        return False
    other = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            other.update(block)
    return other.hexdigest() == hexdigest


class FileWriter:
    """Puts corpus files in place atomically (used by the build and its page-writing helper).

    A file is written to a temp file in the state folder (same file system), made 0444,
    then renamed over its path; a file that already holds exactly these bytes is left
    alone, so pages that did not change keep their inode and mtime."""

    def __init__(self, root: str, tmp: str, kind: str):
        self.root, self.tmp, self.prefix = root, tmp, f"{kind}-{os.getpid()}-"
        self._dirs: set[str] = set()
        self._n = 0
        self.pause = publish_pause()

    def _parent(self, rel: str) -> None:
        parent = rel.rpartition("/")[0]
        if not parent or parent in self._dirs:
            return
        self._parent(parent)
        path = f"{self.root}/{parent}"
        try:
            os.mkdir(path)
            os.chmod(path, 0o755)
        except FileExistsError:
            if not stat.S_ISDIR(os.lstat(path).st_mode):  # a symlink or a file where a folder belongs
                raise NotADirectoryError(f"{path}: not a folder (a link is never followed out of the corpus)")
        self._dirs.add(parent)

    def _to_temp(self, chunks, digest) -> tuple[str, os.stat_result]:
        """The bytes in a 0444 temp file beside the corpus (hashed into ``digest`` on the way)."""
        self._n += 1
        tmp = f"{self.tmp}/{self.prefix}{self._n}"
        return tmp, _write_sealed(tmp, os.O_TRUNC, chunks, digest)

    def _into_place(self, tmp: str, path: str, hexdigest: str, st: os.stat_result) -> list:
        if self.pause:
            time.sleep(self.pause)
        before_replace()
        os.rename(tmp, path)
        return [hexdigest, st.st_size, st.st_mtime_ns, st.st_ino]

    def put_stream(self, rel: str, chunks) -> list:
        """``put`` for a file too large to hold in memory: written chunk by chunk to a temp
        file, which replaces the file only when the bytes differ."""
        self._parent(rel)
        path = f"{self.root}/{rel}"
        digest = hashlib.sha256()
        tmp, _st = self._to_temp(chunks, digest)
        return self.put_temp(rel, tmp, digest.hexdigest())

    def put_temp(self, rel: str, tmp: str, hexdigest: str) -> list:
        """A sealed (0444) temp file in the temp folder, whose bytes hash to ``hexdigest``, put
        at ``rel`` (or dropped when the file there holds these bytes already): a page writer
        process writes a search shard this way as its pages go by."""
        self._parent(rel)
        path = f"{self.root}/{rel}"
        st = os.lstat(tmp)
        if _same_bytes(path, st.st_size, hexdigest):
            os.unlink(tmp)
            old = os.lstat(path)
            if stat.S_IMODE(old.st_mode) != 0o444:
                os.chmod(path, 0o444)
            return [hexdigest, old.st_size, old.st_mtime_ns, old.st_ino]
        return self._into_place(tmp, path, hexdigest, st)

    def put_link(self, rel: str, source: str, hexdigest: str) -> list:
        """``put_temp`` of a file already on disk beside the corpus whose bytes hash to
        ``hexdigest`` (corpus.json as the commit record saved it): a second name for it is made
        in the temp folder, sealed and put in place, so its megabytes are not written again."""
        self._n += 1
        tmp = f"{self.tmp}/{self.prefix}{self._n}"
        os.link(source, tmp)
        try:
            os.chmod(tmp, 0o444)
            return self.put_temp(rel, tmp, hexdigest)
        except BaseException:
            if os.path.lexists(tmp):
                os.unlink(tmp)
            raise

    def put_folder(self, rel_dir: str, files: list[tuple[str, bytes]]) -> dict[str, list] | None:
        """A folder that does not exist yet, made whole: its files are written into a folder
        under the temp folder, which is then renamed into place, so a reader sees all of them
        or none, at the cost of one rename instead of one per file. Returns each file's
        manifest entry, or None (nothing written) when the folder exists already or cannot
        be put in place this way; the caller then writes the files one by one."""
        path = f"{self.root}/{rel_dir}"
        if os.path.lexists(path):
            return None
        self._parent(rel_dir)  # its parent (``_parent`` makes the folders above a file's name)
        self._n += 1
        stage = f"{self.tmp}/{self.prefix}{self._n}.d"
        os.mkdir(stage)
        try:
            os.chmod(stage, 0o755)
            entries = {}
            for rel, data in files:
                digest = hashlib.sha256()
                st = _write_sealed(f"{stage}/{rel.rpartition('/')[2]}", os.O_EXCL, (data,), digest)
                entries[rel] = [digest.hexdigest(), st.st_size, st.st_mtime_ns, st.st_ino]
            if self.pause:
                time.sleep(self.pause)
            before_replace()
            os.rename(stage, path)  # refused when something took the name meanwhile
        except OSError:
            import shutil

            shutil.rmtree(stage, ignore_errors=True)
            if os.path.isdir(path) and not os.path.islink(path):
                self._dirs.add(rel_dir)
            return None
        self._dirs.add(rel_dir)
        return entries

    def put(self, rel: str, data: bytes) -> list:
        self._parent(rel)
        path = f"{self.root}/{rel}"
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISREG(st.st_mode) and st.st_size == len(data):
            with open(path, "rb") as fh:
                same = fh.read() == data
            if same:
                if stat.S_IMODE(st.st_mode) != 0o444:
                    os.chmod(path, 0o444)
                return [hashlib.sha256(data).hexdigest(), st.st_size, st.st_mtime_ns, st.st_ino]
        digest = hashlib.sha256()
        tmp, st = self._to_temp([data], digest)
        return self._into_place(tmp, path, digest.hexdigest(), st)
