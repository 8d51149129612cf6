"""The usage ledger: which memory each agent episode cited, and how the episode ended.

``usage/ledger.jsonl`` inside the corpus, one JSON object per episode, keys in a
fixed order, so ``git diff`` shows each new episode as one added line::

    {"episode": "sha256:…", "run": "task-7-trial-0", "suite": "default", "task_id": "7",
     "method": "wikitrace", "trial": "0", "outcome": "success", "success": true,
     "score": null, "R": ["step-0003"], "C": [], "I": ["insight-0005"]}

Only ids and labels are stored, never the answer. An episode is named by its run id
and the digest of its (redacted) answer: recording the same pair again adds
nothing; recording it with another outcome or label appends a line that replaces
the earlier one when the ledger is read (the last line of an episode wins). The
file is only appended to, except by ``drop_ids`` (forgetting a run removes its ids
for good).

The build never writes or removes this file (it is not in the build's manifest);
it reads it to put the counts on insight pages. Each line also carries ``suite``,
``task_id``, ``method`` and ``trial``, so ``wikitrace eval`` reads the ledger as a
results table.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

LEDGER = "usage/ledger.jsonl"
KEYS = ("episode", "run", "suite", "task_id", "method", "trial", "outcome", "success", "score", "R", "C", "I")


class LedgerError(ValueError):
    """The ledger cannot be read or written where it is (a symlink, not a file)."""


@dataclass
class Episode:
    episode: str
    run: str
    suite: str
    task_id: str
    method: str
    trial: str
    outcome: str  # success | failure
    success: bool
    score: float | None
    R: list[str] = field(default_factory=list)
    C: list[str] = field(default_factory=list)
    I: list[str] = field(default_factory=list)  # noqa: E741 (the citation's key)

    def line(self) -> str:
        return json.dumps({k: getattr(self, k) for k in KEYS}, ensure_ascii=False) + "\n"

    def same_as(self, other: "Episode") -> bool:
        return self.line() == other.line()


def ledger_path(root: Path) -> Path:
    return Path(root) / LEDGER


def _safe(root: Path) -> Path:
    """The ledger path, refusing a ``usage`` folder or ledger that is a symlink (never
    followed out of the corpus) or not the kind of entry it should be."""
    folder = Path(root) / "usage"
    for path, want in ((folder, stat.S_ISDIR), (folder / "ledger.jsonl", stat.S_ISREG)):
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            break
        if not want(st.st_mode):
            kind = "folder" if want is stat.S_ISDIR else "file"
            raise LedgerError(f"{path}: is not a plain {kind} (a symlink or another kind of entry); "
                              f"move it away so wikitrace can keep its usage ledger there")
    return folder / "ledger.jsonl"


_KEYSET = frozenset(KEYS)
_STR = {str}


def _episode(obj, where: str) -> Episode:
    # checks kept to C-level calls: `cite record` and `check` read every line of the ledger
    if not isinstance(obj, dict):
        raise LedgerError(f"{where}: expected a JSON object")
    if not obj.keys() >= _KEYSET:
        raise LedgerError(f"{where}: missing {', '.join(k for k in KEYS if k not in obj)}")
    for k in ("R", "C", "I"):
        v = obj[k]
        if type(v) is not list or (v and not set(map(type, v)) <= _STR):
            raise LedgerError(f"{where}: {k!r} must be a list of ids")
    if obj["outcome"] not in ("success", "failure") or type(obj["success"]) is not bool:
        raise LedgerError(f"{where}: outcome must be success or failure, success true or false")
    return Episode(obj["episode"], obj["run"], obj["suite"], obj["task_id"], obj["method"], obj["trial"],
                   obj["outcome"], obj["success"], obj["score"], obj["R"], obj["C"], obj["I"])


def _parsed(root: Path) -> tuple[list[tuple[int, object]], list[str]]:
    """(line number, JSON value) of every non-blank line, and the lines that do not parse.
    One ``json.loads`` over the whole file when it is clean (a few times faster than one
    per line: ``prompt`` reads the ledger on every call)."""
    path = _safe(root)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return [], []
    except UnicodeDecodeError:
        return [], [f"{LEDGER}: not UTF-8 text; restore it from git"]
    numbered = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    try:
        values = json.loads("[" + ",".join(line for _, line in numbered) + "]")
        if len(values) == len(numbered):
            return list(zip((n for n, _ in numbered), values)), []
    except (json.JSONDecodeError, RecursionError):
        pass
    out, problems = [], []
    for n, line in numbered:
        try:
            out.append((n, json.loads(line)))
        except (json.JSONDecodeError, RecursionError) as exc:
            problems.append(f"{LEDGER}:{n}: not a JSON object ({getattr(exc, 'msg', exc)}); "
                            f"restore the line from git or delete it")
    return out, problems


def read_ledger(root: Path) -> tuple[list[Episode], list[str]]:
    """Every line of the ledger in file order, and a problem (``file:line: what``) for
    each line that cannot be read (those lines are skipped, never rewritten)."""
    values, problems = _parsed(root)
    out = []
    for n, obj in values:
        try:
            out.append(_episode(obj, f"{LEDGER}:{n}"))
        except (LedgerError, TypeError) as exc:
            problems.append(f"{exc}; restore the line from git or delete it")
    return out, problems


def _canonical(line: str) -> tuple[str, bool, list[str]] | None:
    """(episode, success, I) of a line as ``Episode.line`` writes it, read by slicing (a few
    times faster than JSON: ``prompt`` reads the ledger on every call), or None for any
    other line. Safe because a JSON string never holds an unescaped quote: ``, "success": ``
    and ``, "I": [`` can only be keys, and the ids after them are plain."""
    if not line.startswith('{"episode": "') or not line.endswith("]}"):
        return None
    end = line.find('"', 13)
    key = line[13:end]
    i = line.rfind(', "success": ')
    j = line.rfind(', "I": [')
    if end < 0 or "\\" in key or i < 0 or j < i or line[i + 13] not in "tf":
        return None
    ids = line[j + 8:-2]
    if "]" in ids or "\\" in ids:
        return None
    return key, line[i + 13] == "t", ids[1:-1].split('", "') if ids else []


def quick_tally(root: Path, group=None) -> dict:
    """``tally`` of the ledger's episodes without building records (``prompt``'s path);
    lines that are not episodes are passed over (``wikitrace check`` names them)."""
    try:
        text = _safe(root).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        return {}
    last: dict = {}
    for line in text.splitlines():
        got = _canonical(line)
        if got is None and line.strip():
            try:
                obj = json.loads(line)
            except (json.JSONDecodeError, RecursionError):
                continue
            if isinstance(obj, dict) and isinstance(obj.get("I"), list) and isinstance(obj.get("success"), bool):
                got = str(obj.get("episode")), obj["success"], obj["I"]
        if got is not None:
            last[got[0]] = got
    counts: dict = {}
    for _key, success, ids in last.values():
        try:
            keys = {group(i) for i in ids} if group else set(ids)
        except TypeError:  # an id that is not a string
            continue
        keys.discard(None)
        for key in keys:
            c = counts.get(key)
            if c is None:
                counts[key] = [1, int(success)]
            else:
                c[0] += 1
                c[1] += success
    return {k: (n, m) for k, (n, m) in counts.items()}


def fold(lines: Iterable[Episode]) -> dict[str, Episode]:
    """One entry per episode, the last line of each winning, in the order first recorded."""
    out: dict[str, Episode] = {}
    for ep in lines:
        out[ep.episode] = ep
    return out


def tally(episodes: Iterable[Episode], group=None) -> dict[str, tuple[int, int]]:
    """Insight id (or ``group(id)``) -> (episodes citing it, of which succeeded).
    An episode citing two insights of one group counts once for the group."""
    counts: dict[str, list[int]] = {}
    for ep in episodes:
        keys = {group(i) if group else i for i in ep.I}
        keys.discard(None)
        for key in keys:
            c = counts.setdefault(key, [0, 0])
            c[0] += 1
            c[1] += ep.success
    return {k: (n, m) for k, (n, m) in counts.items()}


def insight_counts(root: Path) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Counts per insight id from the ledger at ``root`` (empty when there is none),
    with the problems of unreadable lines (a ledger that cannot be read at all is one)."""
    try:
        lines, problems = read_ledger(root)
    except LedgerError as exc:
        return {}, [str(exc)]
    return tally(fold(lines).values()), problems


def write_lines(root: Path, lines: list[str]) -> None:
    """Replace the ledger with ``lines`` at once (temp file + rename, 0444)."""
    from ..fsio import DIR_MODE, write_atomic

    path = _safe(root)
    made = not path.parent.exists()
    if made:
        path.parent.mkdir()
        os.chmod(path.parent, DIR_MODE)
    for stale in path.parent.glob(f".{path.name}.*.tmp"):  # a write killed before its rename (we hold the lock)
        stale.unlink(missing_ok=True)
    try:
        write_atomic(path, "".join(lines), mode=0o444)
    except BaseException:
        if made:  # a failed first write (a full disk) leaves no empty usage/ behind
            try:
                path.parent.rmdir()
            except OSError:
                pass
        raise


def raw_lines(root: Path) -> list[str]:
    """The ledger's lines as written (unreadable ones too: they are the user's to fix)."""
    try:
        text = _safe(root).read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return [line + "\n" for line in text.splitlines() if line.strip()]


def append(root: Path, ep: Episode) -> None:
    """Add one episode line at the end. The caller holds the corpus lock."""
    write_lines(root, raw_lines(root) + [ep.line()])


def drop_ids(root: Path, ids: Iterable[str], runs: Iterable[str] = ()) -> int:
    """Forget: remove ``ids`` (step and insight ids) from every episode's R / C / I, and
    the episodes recorded for ``runs`` (run ids) altogether. Returns the lines changed
    or removed. The caller holds the corpus lock (``forget`` does) and rebuilds after,
    which puts the new counts on the insight pages. Unreadable lines are kept as they are."""
    ids, runs = set(ids), set(runs)
    if not ids and not runs:
        return 0
    changed, kept = 0, []
    for line in raw_lines(root):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            kept.append(line)
            continue
        if not isinstance(obj, dict):
            kept.append(line)
            continue
        if obj.get("run") in runs:
            changed += 1
            continue
        new = {k: ([i for i in v if i not in ids] if k in ("R", "C", "I") and isinstance(v, list) else v)
               for k, v in obj.items()}
        if new != obj:
            changed += 1
            line = json.dumps(new, ensure_ascii=False) + "\n"
        kept.append(line)
    if changed:
        write_lines(root, kept)
    return changed
