"""Runs forgotten from a corpus, remembered only well enough to keep them out.

``wikitrace forget`` leaves one tombstone per run in ``.wikitrace/forgotten.json``:
its run id, its content hash (the loader's fingerprint, a sha256) and the step id it
had, never a word of its text. A build reads them before it compiles anything and
skips every input run that carries a forgotten run id or content hash (so the same
run re-imported with another outcome file, or renamed, stays out too), unless it runs
with ``--restore``: then those runs are compiled again, with new ids, and their
tombstones go.

The file is written before the corpus is touched, so a forget interrupted at any point
is still honoured by the next build.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..runs.model import content_hash
from .publish import STATE, PublishError

FILE = "forgotten.json"
FORMAT = "wikitrace-forgotten/1"


@dataclass
class Tombstone:
    run_id: str
    content_hash: str | None  # None: the corpus had no hash for it (ids kept by the manifest only)
    step: str


class Tombstones:
    """The tombstones of one corpus, and which input runs they keep out of a build."""

    def __init__(self, path: Path, stones: list[Tombstone], restore: bool = False):
        self.path, self.stones, self.restore = path, stones, restore
        self._by_id = {t.run_id: t for t in stones}
        self._by_hash = {t.content_hash: t for t in stones if t.content_hash}
        self.skipped: dict[str, None] = {}  # run ids kept out of this build, in input order
        self.restored: dict[str, Tombstone] = {}  # run id in the input -> its tombstone (--restore)

    @classmethod
    def load(cls, root: Path, restore: bool = False) -> "Tombstones":
        path = Path(root) / STATE / FILE
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls(path, [], restore)
        except (OSError, ValueError) as exc:
            raise PublishError(f"{path}: unreadable ({exc}); it lists the runs `wikitrace forget` removed, so no "
                               f"build goes ahead without it — restore it from a backup, or delete it to let "
                               f"those runs be compiled again") from None
        good = isinstance(raw, dict) and raw.get("format") == FORMAT and isinstance(raw.get("runs"), list) and all(
            isinstance(r, dict) and isinstance(r.get("run_id"), str) and isinstance(r.get("step"), str)
            for r in raw["runs"])
        if not good:
            raise PublishError(f"{path}: not a list of forgotten runs as wikitrace writes it; restore it from a "
                               f"backup, or delete it to let those runs be compiled again")
        return cls(path, [Tombstone(r["run_id"], r.get("content_hash") if isinstance(r.get("content_hash"), str)
                                    else None, r["step"]) for r in raw["runs"]], restore)

    def find(self, ident: str) -> Tombstone | None:
        """The tombstone of a run id or of the step id the run had."""
        return self._by_id.get(ident) or next((t for t in self.stones if t.step == ident), None)

    def add(self, stones: Iterable[Tombstone]) -> None:
        for stone in stones:
            if stone.run_id not in self._by_id:
                self.stones.append(stone)
                self._by_id[stone.run_id] = stone
                if stone.content_hash:
                    self._by_hash[stone.content_hash] = stone

    def save(self) -> None:
        from ..fsio import write_atomic

        runs = [asdict(t) for t in sorted(self.stones, key=lambda t: (t.run_id, t.step))]
        write_atomic(self.path, json.dumps({"format": FORMAT, "runs": runs}, indent=1, ensure_ascii=False) + "\n",
                     mode=0o644)

    def _match(self, run) -> Tombstone | None:
        stone = self._by_id.get(run.run_id)
        if stone is None and self._by_hash and hasattr(run, "turns"):  # a Carried record has no content here
            stone = self._by_hash.get(content_hash(run))
        return stone

    def skip(self, runs: Iterable) -> Iterator:
        """``runs`` without the forgotten ones (all of them with ``restore``, noted)."""
        if not self.stones:
            yield from runs
            return
        for run in runs:
            stone = self._match(run)
            if stone is None:
                yield run
            elif self.restore:
                self.restored[run.run_id] = stone
                yield run
            else:
                self.skipped[run.run_id] = None

    def settle(self, compiled: Iterable[str]) -> None:
        """After a build with ``restore`` went through: the runs it compiled again
        (``compiled``: the run ids in the corpus now) are no longer forgotten."""
        compiled = set(compiled)
        back = {id(t) for run_id, t in self.restored.items() if run_id in compiled}
        if not back:
            return
        self.stones = [t for t in self.stones if id(t) not in back]
        self.save()


CACHE_DIRS = "llm_cache_dirs"  # key in runs.json's data: every response cache a build of this corpus used


def forget_state(pub, compiler, templates) -> dict:
    """What `wikitrace forget` needs from the builds, kept in the manifest's data: where
    their LLM answers were cached (all of them, over every build) and the templates
    folder the indexes were rendered with."""
    seen = pub.manifest.data.get(CACHE_DIRS)
    dirs = [d for d in seen if isinstance(d, str)] if isinstance(seen, list) else []
    cache = getattr(compiler, "cache", None)
    if cache is not None:
        dirs.append(str(Path(cache.dir).expanduser().resolve()))
    return {CACHE_DIRS: sorted(set(dirs)), "templates": str(Path(templates).resolve()) if templates else None}
