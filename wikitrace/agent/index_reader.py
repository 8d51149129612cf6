"""Reading the prompt index (``index/prompt.bin``) that ``agent.index`` writes at compile time.

``open_index`` maps the file and returns a ``PromptIndex``, which answers a prompt's
questions (BM25 scores of the runs and insights, the runs a prompt lists, insight
texts, the same-lesson groups) by reading only the sections and ``corpus.json`` spans
it touches: no numpy, no whole ``corpus.json`` parse.

Staleness: the header records the byte length and SHA-256 of the ``"runs"`` and
``"insights"`` arrays exactly as ``corpus.json`` spells them (``json.dumps(...,
ensure_ascii=False, indent=1)``, as ``wikitrace.build`` writes it). The reader maps
``corpus.json``, finds the arrays' first byte, and hashes that span (about 15 ms for a
16 MB file); any difference, a different scoring setup (tokenizer, stop words, k1, b) or
an unknown index format, and the index is ignored: the prompt is built from
``corpus.json`` as before. The pre-rendered insight texts are also stamped with the hash
of the insight template, and used only while the template in effect is that same file.

The hash is skipped when the build that wrote both files noted them as a pair
(``note_pair``: ``.wikitrace/prompt-pair.json`` holds the inode, modification time and
size of each, the test the manifest trusts for every page): a prompt that finds both
files exactly so reads only the parts of ``corpus.json`` it needs. Any other state of
either file (``wikitrace forget``, a hand edit, a copy) falls back to the hash.

The stamps that decide staleness live here, beside the check; the writer puts them in
the header.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import sys
from array import array
from bisect import bisect_left
from pathlib import Path
from typing import Any, Iterable, Iterator

from .corpusdata import InsightInfo, RunInfo, insight_from_entry, run_from_entry, task_kind
from .similarity import STOPWORDS, _TOKEN, tokenize
from ..corpus.index_pair import INDEX_PATH, CorpusFile, _stat_key, noted_pair

FORMAT = "wikitrace-prompt-index/4"  # 2: the "lesson" section (same lesson, shown once); 3: what runs taught;
# 4: each insight's cue word (relevance.applies_to)
K1, B = 1.5, 0.75  # as similarity.BM25's defaults
_RUNS_MARK = b'\n "runs": ['
_INSIGHT_TEMPLATE = "agent/_insight.md.j2"
_LITTLE = sys.byteorder == "little"


class IndexUnusable(ValueError):
    """Internal: the index cannot be used (the message says why)."""


# --- stamps -------------------------------------------------------------------------------

def scoring_stamp() -> str:
    """Hash of everything the stored postings depend on besides the texts."""
    spec = json.dumps({"token": _TOKEN.pattern, "stop": sorted(STOPWORDS), "k1": K1, "b": B,
                       "run_text": "instruction or title", "insight_text": "title\\nguideline\\napplicability"},
                      sort_keys=True)
    return hashlib.sha256(spec.encode()).hexdigest()[:16]


def template_stamp(templates: str | Path | None = None) -> str | None:
    """Hash of the insight template in effect (an override folder's copy, else the bundled one)."""
    from ..templates import bundled_dir

    candidates = ([Path(templates) / _INSIGHT_TEMPLATE] if templates else []) + \
                 [bundled_dir("corpus_templates") / _INSIGHT_TEMPLATE]
    for path in candidates:
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
        except FileNotFoundError:
            continue
    return None


def _version() -> str:
    from .. import __version__

    return __version__


# --- reading ------------------------------------------------------------------------------

class _Postings:
    """One stored BM25 index; scores match similarity.BM25 bit for bit."""

    def __init__(self, idx: "PromptIndex", prefix: str, n: int):
        self.n = n
        self.vocab = idx._text(prefix + "vocab").split("\n") if idx._size(prefix + "vocab") else []
        self.starts = idx._ints(prefix + "starts")
        self.docs = idx._ints(prefix + "docs")
        self.tf = idx._ints(prefix + "tf")
        lengths = idx._ints(prefix + "len")
        avgdl = (sum(lengths) / n) if n else 0.0
        if avgdl:
            self.norm = [K1 * (1 - B + B * dl / avgdl) for dl in lengths]
        else:
            self.norm = [K1] * n

    def scores(self, query: str) -> list[float]:
        out = [0.0] * self.n
        vocab, starts, docs, tfs, norm, n = self.vocab, self.starts, self.docs, self.tf, self.norm, self.n
        k1p1 = K1 + 1
        for term in dict.fromkeys(tokenize(query)):
            t = bisect_left(vocab, term)
            if t == len(vocab) or vocab[t] != term:
                continue
            a, z = starts[t], starts[t + 1]
            df = z - a
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            for d, tf in zip(docs[a:z], tfs[a:z]):
                out[d] += idf * (tf * k1p1 / (tf + norm[d]))
        return out


class PromptIndex:
    """A validated ``index/prompt.bin`` with ``corpus.json`` mapped beside it."""

    def __init__(self, root: Path, header: dict, buf, data_start: int, corpus_map, region_start: int,
                 head: dict):
        self.root, self.header, self._buf, self._base = root, header, buf, data_start
        self._corpus, self._region = corpus_map, region_start
        self.mount_path = str(head.get("mount_path") or "/work/corpus")
        self.n_runs = header["counts"]["runs"]
        self.n_insights = header["counts"]["insights"]
        self.first_step = header["first"]["step"]
        self.first_insight = header["first"]["insight"]
        self.kinds = header["kinds"]
        self.cache: dict[str, Any] = {}

    # raw sections
    def _size(self, name: str) -> int:
        return self.header["sections"][name][1]

    def _bytes(self, name: str):
        off, size, _ = self.header["sections"][name]
        return memoryview(self._buf)[self._base + off:self._base + off + size]

    def _text(self, name: str) -> str:
        return str(self._bytes(name), "utf-8")

    def _ints(self, name: str):
        code = self.header["sections"][name][2]
        view = self._bytes(name)
        if _LITTLE:
            return view.cast(code)
        arr = array(code)
        arr.frombytes(view)
        arr.byteswap()
        return arr

    def _cached(self, key: str, make):
        hit = self.cache.get(key)
        if hit is None:
            hit = self.cache[key] = make()
        return hit

    # ids, kinds, entries
    @property
    def insight_ids(self) -> list[str]:
        return self._cached("ids", lambda: self._text("ins_ids").split("\n") if self.n_insights else [])

    @property
    def insight_pos(self) -> dict[str, int]:
        return self._cached("pos", lambda: {i: j for j, i in enumerate(self.insight_ids)})

    def _entry(self, spans: str, i: int) -> dict:
        s = self._ints(spans)
        a, z = self._region + s[2 * i], self._region + s[2 * i + 1]
        return json.loads(self._corpus[a:z])

    def run(self, i: int) -> RunInfo:
        cache = self._cached("runs", dict)
        hit = cache.get(i)
        if hit is None:
            hit = cache[i] = run_from_entry(self._entry("run_spans", i))
        return hit

    def insight(self, j: int) -> InsightInfo:
        cache = self._cached("insights", dict)
        hit = cache.get(j)
        if hit is None:
            hit = cache[j] = insight_from_entry(self._entry("ins_spans", j))
        return hit

    def display(self) -> list[int]:
        return self._cached("display", lambda: list(self._ints("display")))

    def lesson_reps(self) -> list[int]:
        """Per insight, the first insight of its kind that teaches the same lesson."""
        return self._cached("lesson", lambda: list(self._ints("lesson")) if self.n_insights else [])

    def _kind_list(self, what: str) -> list[str]:
        return self._cached(f"kinds:{what}", lambda: [self.kinds[k] for k in self._ints(what)])

    # similarity
    def _index(self, prefix: str) -> _Postings:
        n = self.n_runs if prefix == "r_" else self.n_insights
        return self._cached(f"bm25:{prefix}", lambda: _Postings(self, prefix, n))

    def run_scores(self, task: str) -> list[float]:
        """BM25 of the task per run; the last task's are kept (similar runs and the budget's
        ranking both need them)."""
        last = self.cache.get("run-scores")
        if last is None or last[0] != task:
            last = self.cache["run-scores"] = (task, self._index("r_").scores(task))
        return last[1]

    def insight_scores(self, task: str) -> list[float]:
        return self._index("i_").scores(task)

    def rank_runs(self, task: str, *, task_type: str | None = None, apps: list[str] | None = None, k: int = 3,
                  boost: float = 0.25) -> list[tuple[RunInfo, float]]:
        """As similarity.rank_runs with the BM25 backend (same scores, same ties)."""
        import heapq

        if not self.n_runs or k <= 0:
            return []
        scores = self.run_scores(task)
        kind = task_kind(task_type, apps)
        if kind and boost:
            top = max(scores, default=0.0)
            top = max(top, 0.0)
            bonus = boost * (top if top > 0 else 1.0)
            kinds = self._kind_list("run_kind")
            scores = [s + (bonus if kinds[i] == kind else 0.0) for i, s in enumerate(scores)]
        best = heapq.nsmallest(k, range(self.n_runs), key=lambda i: (-scores[i], i))
        return [(self.run(i), scores[i]) for i in best if scores[i] > 0]

    def priority(self, task: str, similar_ids: Iterable[str], kind: str | None) -> Iterator[int]:
        """Insight positions in prompt.priority_order's order, produced lazily: those the
        runs most like the task taught (relevance.py), then ``tiers``."""
        from .relevance import applies_to, relevance_order

        starts, taught = self._ints("taught_starts"), self._ints("taught")
        cues = self._cached("cues", lambda: self._text("ins_cues").split("\n") if self.n_insights else [])
        return relevance_order(self.run_scores(task), self._ints("run_task"), lambda r: taught[starts[r]:starts[r + 1]],
                               self._ints("ins_nsrc"), self._ints("ins_side"), self.tiers(task, similar_ids, kind),
                               applies_to(task, cues))

    def tiers(self, task: str, similar_ids: Iterable[str], kind: str | None) -> Iterator[int]:
        """relevance.tier_order, lazily: the similar runs' insights, then the kind's, then
        the rest, each by BM25 then id."""
        import heapq

        pos = self.insight_pos
        first: list[int] = []
        seen: set[int] = set()
        for iid in similar_ids:
            j = pos.get(iid)
            if j is not None and j not in seen:
                seen.add(j)
                first.append(j)
        yield from first
        if len(seen) == self.n_insights:
            return
        score = self.insight_scores(task)
        kinds = self._kind_list("ins_kind")
        for tier in ((lambda j: kinds[j] == kind), (lambda j: kinds[j] != kind)) if kind else ((lambda j: True),):
            members = [j for j in range(self.n_insights) if j not in seen and tier(j)]
            scored = [(-score[j], j) for j in members if score[j] > 0]
            heapq.heapify(scored)
            while scored:
                yield heapq.heappop(scored)[1]
            yield from (j for j in members if not score[j] > 0)

    # insight texts
    def texts(self, show_source: bool, templates: str | Path | None) -> "IndexTexts":
        return self._cached(f"texts:{show_source}:{templates}", lambda: IndexTexts(self, show_source, templates))


class IndexTexts:
    """Insight texts for a prompt: the stored renders when the insight template in effect is
    the one they were made with, else rendered on demand from the corpus.json entries."""

    def __init__(self, idx: PromptIndex, show_source: bool, templates: str | Path | None):
        self.idx, self.show_source, self.templates = idx, show_source, templates
        render = idx.header["render"]
        self.stored = render["template"] is not None and render["wikitrace"] == _version() \
            and template_stamp(templates) == render["template"]
        self.texts: dict[int, str] = {}
        self._total = render["chars"][1 if show_source else 0] if self.stored else None
        if self.stored:
            self._off = idx._ints("text_off")
            self._blob = idx._bytes("text")
            if not show_source:
                if "cut" in idx.header["sections"]:
                    self._cut = idx._ints("cut")
                else:
                    self._cut = None
                    self._off = idx._ints("plain_off")
                    self._blob = idx._bytes("plain_text")

    def _stored(self, j: int) -> str:
        a, z = self._off[j], self._off[j + 1]
        if self.show_source or self._cut is None:
            return str(self._blob[a:z], "utf-8")
        c0, c1 = self._cut[2 * j], self._cut[2 * j + 1]
        return str(bytes(self._blob[a:a + c0]) + bytes(self._blob[a + c1:z]), "utf-8")

    def _render(self, js: list[int]) -> list[str]:
        from .insight_text import render_insights

        return render_insights(self.templates or None, [self.idx.insight(j) for j in js], self.show_source)

    def get(self, j: int) -> str:
        hit = self.texts.get(j)
        if hit is None:
            hit = self.texts[j] = self._stored(j) if self.stored else self._render([j])[0]
        return hit

    def all(self) -> dict[int, str]:
        if len(self.texts) < self.idx.n_insights:
            missing = [j for j in range(self.idx.n_insights) if j not in self.texts]
            if self.stored:
                for j in missing:
                    self.texts[j] = self._stored(j)
            else:
                self.texts.update(zip(missing, self._render(missing)))
        if self._total is None:
            self._total = sum(len(t) + 1 for t in self.texts.values())
        return self.texts

    def total_chars(self) -> int | None:
        return self._total


_OPEN: dict[tuple, PromptIndex] = {}


def index_status(root: str | Path) -> tuple[PromptIndex | None, str]:
    """(the index, "ok") or (None, why it cannot be used)."""
    root = Path(root)
    path, cpath = root / INDEX_PATH, root / "corpus.json"
    try:
        key = (str(path.resolve()), _stat_key(path), _stat_key(cpath))
    except OSError:
        return None, "absent" if cpath.exists() else "no corpus.json"
    hit = _OPEN.get(key)
    if hit is not None:
        return hit, "ok"
    try:
        idx = _open(root, path, cpath)
    except IndexUnusable as exc:
        return None, str(exc)
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        return None, f"unreadable ({exc.__class__.__name__}: {exc})"
    if len(_OPEN) > 4:
        _OPEN.clear()
    _OPEN[key] = idx
    return idx, "ok"


def open_index(root: str | Path) -> PromptIndex | None:
    """The corpus's prompt index, or None when it is absent, stale or unreadable."""
    return index_status(root)[0]


def _map(path: Path):
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size == 0:
            return b""
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


def _open(root: Path, path: Path, cpath: Path) -> PromptIndex:
    buf = _map(path)
    index_key = tuple(_stat_key(path))
    nl = buf.find(b"\n", 0, 1 << 20)
    if nl < 0:
        raise IndexUnusable("no header line")
    header = json.loads(buf[:nl])
    if header.get("format") != FORMAT:
        raise IndexUnusable(f"format {header.get('format')!r} is not {FORMAT!r}")
    if header.get("scoring") != scoring_stamp():
        raise IndexUnusable("built with another tokenizer or BM25 setting")
    data_start = nl + 1 + (-(nl + 1) % 8)
    # corpus.json is read, not mapped: someone may rewrite it in place while we hold it
    # (the index itself is only ever replaced whole, so mapping it is safe)
    fh = open(cpath, "rb")
    st = os.fstat(fh.fileno())
    noted = hasattr(os, "pread") and noted_pair(root, index_key, (st.st_ino, st.st_mtime_ns, st.st_size))
    if noted:
        corpus = CorpusFile(fh, st.st_size)
    else:
        with fh:
            corpus = fh.read()
    try:
        return _checked(root, header, buf, data_start, corpus, noted)
    except BaseException:
        fh.close()
        raise


def _checked(root: Path, header: dict, buf, data_start: int, corpus, noted: bool) -> PromptIndex:
    mark = corpus.find(_RUNS_MARK, 0, 1 << 20)
    if mark < 0:
        raise IndexUnusable("corpus.json is not laid out as wikitrace.build writes it")
    start = mark + 1
    size, digest = header["source"]["bytes"], header["source"]["sha256"]
    if start + size > len(corpus) or corpus[start + size:start + size + 1] not in (b",", b"\n"):
        raise IndexUnusable("stale: corpus.json's runs/insights differ from the indexed ones")
    if not noted and hashlib.sha256(memoryview(corpus)[start:start + size]).hexdigest() != digest:
        raise IndexUnusable("stale: corpus.json's runs/insights differ from the indexed ones")
    head_text = bytes(corpus[:mark]).rstrip().rstrip(b",") + b"}"
    try:
        head = json.loads(head_text)
    except ValueError:
        raise IndexUnusable("corpus.json's header is not a JSON object") from None
    return PromptIndex(root, header, buf, data_start, corpus, start, head)


__all__ = ["FORMAT", "IndexTexts", "PromptIndex", "index_status", "open_index", "scoring_stamp", "template_stamp"]
