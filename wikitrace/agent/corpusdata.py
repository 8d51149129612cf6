"""Read a compiled corpus's ``corpus.json``: the runs and insights prompt building needs.

Prompt rendering, similarity and citation checks never parse the markdown layers;
``corpus.json`` carries every task text and insight text (see docs/corpus-layout.md).
Loads are cached per (path, mtime, size), so one process building many prompts reads
and indexes the corpus once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

_ID = re.compile(r"^(step|insight)-(\d+)$")


class CorpusError(InputError):
    """The folder is not a compiled corpus, or its corpus.json is malformed."""


def id_number(ident: str) -> int:
    """``step-0042`` -> 42; anything else sorts last."""
    m = _ID.match(ident or "")
    return int(m.group(2)) if m else 1 << 62


def id_key(ident: str) -> tuple[int, str]:
    """Sort key for ids: numeric, so ``step-10000`` follows ``step-9999``."""
    return (id_number(ident), ident)


def format_id(kind: str, number: int) -> str:
    return f"{kind}-{number:04d}"


@dataclass
class RunInfo:
    step: str
    run_id: str | None
    task_id: str | None
    task_type: str | None
    apps: list[str] | None
    outcome: str
    steps: int | None
    instruction: str
    title: str
    insights: list[str]

    @property
    def kind(self) -> str:
        """Task type, or the apps joined, or '' (what the prompt groups by)."""
        return task_kind(self.task_type, self.apps)


@dataclass
class InsightInfo:
    id: str
    title: str
    task_type: str | None
    apps: list[str] | None
    source_step: str | None
    source_outcome: str | None
    guideline: str
    applicability: str
    sources: list[tuple[str, str]] = field(default_factory=list)  # (step, outcome) of every run that taught it
    evidence: str = ""  # its counts and the contrast with successes, as the insight page says them
    cue: str = ""  # the word of its tool's action its tasks' first messages said (corpus/applies.py)

    @property
    def kind(self) -> str:
        return task_kind(self.task_type, self.apps)


def task_kind(task_type: str | None, apps: list[str] | None) -> str:
    if task_type:
        return str(task_type)
    if apps:
        return ", ".join(str(a) for a in apps)
    return ""


@dataclass
class CorpusData:
    root: Path | None
    mount_path: str
    runs: list[RunInfo]
    insights: list[InsightInfo]
    retired_steps: set[str] = field(default_factory=set)
    retired_insights: set[str] = field(default_factory=set)
    # Filled lazily by similarity.py (indexes reused across prompts).
    cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.runs.sort(key=lambda r: id_key(r.step))
        self.insights.sort(key=lambda i: id_key(i.id))
        self.run_by_step = {r.step: r for r in self.runs}
        self.insight_by_id = {i.id: i for i in self.insights}


def _str_list(value: Any) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value]


def run_from_entry(r: dict[str, Any]) -> RunInfo:
    """One entry of corpus.json's ``runs``."""
    return RunInfo(
        step=str(r["step"]), run_id=r.get("run_id"), task_id=None if r.get("task_id") is None else str(r.get("task_id")),
        task_type=r.get("task_type"), apps=_str_list(r.get("apps")), outcome=str(r.get("outcome") or "unknown"),
        steps=r.get("steps"), instruction=str(r.get("instruction") or ""), title=str(r.get("title") or ""),
        insights=[str(i) for i in r.get("insights") or []],
    )


def insight_from_entry(i: dict[str, Any]) -> InsightInfo:
    """One entry of corpus.json's ``insights``."""
    return InsightInfo(
        id=str(i["id"]), title=str(i.get("title") or ""), task_type=i.get("task_type"),
        apps=_str_list(i.get("apps")), source_step=i.get("source_step"), source_outcome=i.get("source_outcome"),
        # what a page's What to do shows: the short advice, unless a model merged the guideline
        guideline=str((i.get("guideline_by") != "llm" and i.get("advice")) or i.get("guideline") or ""),
        applicability=str(i.get("applicability") or ""),
        sources=[(str(s.get("step")), str(s.get("outcome"))) for s in i.get("sources") or [] if isinstance(s, dict)],
        evidence=_evidence(i), cue=str(i.get("cue") or ""),
    )


def _evidence(i: dict[str, Any]) -> str:
    """"Seen in N runs: k successful, f failed." and what the contrast says."""
    c = i.get("counts")
    if not isinstance(c, dict):
        return ""
    from ..corpus.contrast_words import contrast_sentence

    return (f"Seen in {c.get('runs', 0)} run{'s' if c.get('runs') != 1 else ''}: {c.get('success', 0)} successful, "
            f"{c.get('failure', 0)} failed. " + contrast_sentence(i))


def corpus_from_dict(data: dict[str, Any], root: Path | None = None) -> CorpusData:
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list) or not isinstance(data.get("insights"), list):
        where = f"{root}/corpus.json" if root else "corpus.json"
        raise CorpusError(f"{where}: expected an object with 'runs' and 'insights' lists (format wikitrace-corpus/1)")
    runs = [run_from_entry(r) for r in data["runs"]]
    insights = [insight_from_entry(i) for i in data["insights"]]
    retired = data.get("retired") or {}
    return CorpusData(
        root=root, mount_path=str(data.get("mount_path") or "/work/corpus"), runs=runs, insights=insights,
        retired_steps=set(retired.get("steps") or []), retired_insights=set(retired.get("insights") or []),
    )


_CACHE: dict[tuple[str, int, int, int], CorpusData] = {}


def load_corpus(root: str | Path) -> CorpusData:
    """Load ``ROOT/corpus.json`` (cached while the file is unchanged)."""
    root = Path(root)
    path = root / "corpus.json"
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CorpusError(f"{root}: no corpus.json here; give the folder `wikitrace compile --out` wrote") from None
    key = (str(path.resolve()), st.st_ino, st.st_mtime_ns, st.st_size)  # a rename gives a new inode
    hit = _CACHE.get(key)
    if hit is not None:
        return hit
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    try:
        corpus = corpus_from_dict(data, root)
    except (KeyError, TypeError) as exc:
        raise CorpusError(f"{path}: malformed run or insight entry ({exc})") from None
    if len(_CACHE) > 4:
        _CACHE.clear()
    _CACHE[key] = corpus
    return corpus


def as_corpus(corpus: "CorpusData | str | Path | dict") -> CorpusData:
    if isinstance(corpus, CorpusData):
        return corpus
    if isinstance(corpus, dict):
        return corpus_from_dict(corpus)
    return load_corpus(corpus)
