"""Which past runs are most like the current task.

The default backend is Okapi BM25 over the runs' task instructions (k1=1.5, b=0.75,
the non-negative idf ``ln(1 + (N - df + 0.5) / (df + 0.5))``), written here in a few
dozen lines (no extra dependency beyond numpy). Runs whose task type (or app
set) equals the current task's get a bonus of ``boost * best_bm25_score`` (so the bonus
is on the scale of the scores and a same-type run with no word in common can still be
chosen). Ties break by step number, so the ranking is a pure function of the corpus
and the task text. Posting lists are numpy arrays; the index is built once per loaded
corpus and reused across prompts.

An optional backend embeds the texts through an OpenAI-compatible ``/v1/embeddings``
endpoint (vLLM, Ollama, llama.cpp, OpenAI) and ranks by cosine similarity; the same
type bonus and tie rule apply.
"""

from __future__ import annotations

import math
import re
from typing import Callable, Protocol, Sequence

from .corpusdata import CorpusData, InsightInfo, RunInfo, id_key, task_kind  # noqa: F401

_TOKEN = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    "a an and are as at be been but by can do does for from had has have he her his i if in into is it its "
    "me my not of on or our she so that the their them then there these they this to was we were what when "
    "which who will with would you your".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased alphanumeric runs, English stop words removed."""
    return [t for t in _TOKEN.findall((text or "").lower()) if t not in STOPWORDS]


class BM25:
    """Okapi BM25 over a fixed list of documents, with an inverted index.

    Posting lists are slices of two numpy arrays (documents, and their length-normalised
    term weights ``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``) sorted by term,
    built in bulk; a query costs one vectorised add per query term.
    """

    def __init__(self, docs: Sequence[str], k1: float = 1.5, b: float = 0.75,
                 tokenizer: Callable[[str], list[str]] = tokenize):
        import numpy as np

        self.k1, self.b, self.tokenizer = k1, b, tokenizer
        self.n = len(docs)
        vocab: dict[str, int] = {}
        term_ids: list[int] = []
        lengths: list[int] = []
        for doc in docs:
            toks = tokenizer(doc)
            lengths.append(len(toks))
            term_ids.extend([vocab.setdefault(t, len(vocab)) for t in toks])
        self.doc_len = lengths
        self.avgdl = (sum(lengths) / self.n) if self.n else 0.0
        self.vocab = vocab
        # one key per (term, doc) occurrence; unique keys give tf, sorted by term then doc
        doc_of = np.repeat(np.arange(self.n, dtype=np.int64), np.asarray(lengths, dtype=np.int64))
        keys, tf = np.unique(np.asarray(term_ids, dtype=np.int64) * max(self.n, 1) + doc_of, return_counts=True)
        terms, self.doc_ids = np.divmod(keys, max(self.n, 1))
        dl = np.asarray(lengths, dtype=np.float64)[self.doc_ids] if len(keys) else np.zeros(0)
        norm = k1 * (1 - b + b * dl / self.avgdl) if self.avgdl else np.full(len(keys), k1)
        self.weights = tf * (k1 + 1) / (tf + norm)
        self.starts = np.searchsorted(terms, np.arange(len(vocab) + 1))

    def _postings(self, term: str):
        t = self.vocab.get(term)
        if t is None:
            return None
        a, z = self.starts[t], self.starts[t + 1]
        return self.doc_ids[a:z], self.weights[a:z]

    def idf(self, term: str) -> float:
        plist = self._postings(term)
        df = len(plist[0]) if plist is not None else 0
        return math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def score_array(self, query: str):
        """numpy array of one score per document; each distinct query term counts once."""
        import numpy as np

        out = np.zeros(self.n, dtype=np.float64)
        for term in dict.fromkeys(self.tokenizer(query)):
            plist = self._postings(term)
            if plist is not None:
                out[plist[0]] += self.idf(term) * plist[1]
        return out

    def scores(self, query: str) -> list[float]:
        return self.score_array(query).tolist()


def run_text(run: RunInfo) -> str:
    return run.instruction or run.title


def insight_text(ins: InsightInfo) -> str:
    return f"{ins.title}\n{ins.guideline}\n{ins.applicability}"


def _run_index(corpus: CorpusData) -> BM25:
    idx = corpus.cache.get("bm25:runs")
    if idx is None:
        idx = corpus.cache["bm25:runs"] = BM25([run_text(r) for r in corpus.runs])
    return idx


def _insight_index(corpus: CorpusData) -> BM25:
    idx = corpus.cache.get("bm25:insights")
    if idx is None:
        idx = corpus.cache["bm25:insights"] = BM25([insight_text(i) for i in corpus.insights])
    return idx


class ScoreBackend(Protocol):
    def run_scores(self, corpus: CorpusData, task: str) -> Sequence[float]: ...


class BM25Backend:
    name = "bm25"

    def run_scores(self, corpus: CorpusData, task: str):
        return _run_index(corpus).score_array(task)


def _kinds(corpus: CorpusData, what: str):
    """numpy array of each run's (or insight's) task kind, cached on the corpus."""
    import numpy as np

    key = f"kinds:{what}"
    hit = corpus.cache.get(key)
    if hit is None:
        items = corpus.runs if what == "runs" else corpus.insights
        hit = corpus.cache[key] = np.array([it.kind for it in items], dtype=object)
    return hit


def rank_runs(corpus: CorpusData, task: str, *, task_type: str | None = None, apps: list[str] | None = None,
              k: int = 3, boost: float = 0.25, backend: ScoreBackend | None = None) -> list[tuple[RunInfo, float]]:
    """The ``k`` runs most similar to ``task``: (run, score), best first, score > 0 only."""
    import numpy as np

    if not corpus.runs or k <= 0:
        return []
    backend = backend or BM25Backend()
    scores = np.asarray(backend.run_scores(corpus, task), dtype=np.float64)
    kind = task_kind(task_type, apps)
    if kind and boost:
        top = float(scores.max(initial=0.0))
        scores = scores + (_kinds(corpus, "runs") == kind) * (boost * (top if top > 0 else 1.0))
    # corpus.runs is in step order, so a stable sort on -score breaks ties by step.
    order = np.argsort(-scores, kind="stable")[:k]
    return [(corpus.runs[i], float(scores[i])) for i in order if scores[i] > 0]


def insight_scores(corpus: CorpusData, task: str) -> dict[str, float]:
    """BM25 of the task against each insight's title, guideline and applicability."""
    raw = insight_score_array(corpus, task)
    return {ins.id: float(s) for ins, s in zip(corpus.insights, raw)}


def insight_score_array(corpus: CorpusData, task: str):
    """The same, as a numpy array aligned with ``corpus.insights``."""
    return _insight_index(corpus).score_array(task)


class OpenAIEmbeddings:
    """Cosine similarity of embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint.

    Requests go through the model gateway (``wikitrace.llm.client``), which imports
    ``openai`` only when this backend is used; a failed request raises its ``ModelFault``.
    Run embeddings are cached on the loaded corpus (per model), so only the task is
    embedded for later prompts.
    """

    name = "embeddings"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 batch_size: int = 128, client=None):
        self.model, self.base_url, self.batch_size = model, base_url, batch_size
        self.api_key = api_key
        self._client = client

    def client(self):
        if self._client is None:
            import os

            from ..llm.client import Client
            from ..llm.config import ENV_KEY, EmbeddingsConfig, api_key_from, api_key_or_placeholder

            key, _ = api_key_or_placeholder(*((self.api_key, "argument") if self.api_key
                                              else api_key_from(os.environ, ENV_KEY)))
            config = EmbeddingsConfig(url=self.base_url, model=self.model, query_model=self.model, api_key=key)
            self._client = Client(config, embeddings=True)
        return self._client

    def embed(self, texts: list[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            chunk = [t if t.strip() else " " for t in texts[start:start + self.batch_size]]
            out.extend(_unit(v) for v in self.client().embed(chunk, model=self.model))
        return out

    def run_scores(self, corpus: CorpusData, task: str) -> list[float]:
        key = f"emb:{self.base_url}:{self.model}"
        vecs = corpus.cache.get(key)
        if vecs is None:
            vecs = corpus.cache[key] = self.embed([run_text(r) for r in corpus.runs])
        (q,) = self.embed([task])
        # Cosine can be negative; shift to (0, 2] so "score > 0" keeps every candidate.
        return [1.0 + sum(a * b for a, b in zip(q, v)) for v in vecs]


def _unit(v: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / norm for x in v]


def make_backend(name: str = "bm25", *, model: str | None = None, base_url: str | None = None,
                 api_key: str | None = None) -> ScoreBackend:
    if name == "bm25":
        return BM25Backend()
    if name == "embeddings":
        if not model:
            raise ValueError("the embeddings backend needs a model name (--embedding-model)")
        return OpenAIEmbeddings(model=model, base_url=base_url, api_key=api_key)
    raise ValueError(f"unknown similarity backend {name!r}; use bm25 or embeddings")


__all__ = ["BM25", "BM25Backend", "OpenAIEmbeddings", "insight_scores", "make_backend", "rank_runs",
           "tokenize", "id_key"]
