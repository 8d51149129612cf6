"""A small, correct Okapi BM25 (k1=1.2, b=0.75, idf = ln(1 + (N - df + 0.5)/(df + 0.5))).

Documents are token lists (see ``text.tokens``). The index serialises to plain JSON
(term frequencies per document, document frequencies, lengths) so it can be
precomputed at compile time and loaded quickly at query time."""

from __future__ import annotations

import math
from collections import Counter


class BM25:
    def __init__(self, docs: list[list[str]] | None = None, k1: float = 1.2, b: float = 0.75):
        self.k1, self.b = k1, b
        self.tfs: list[dict[str, int]] = []
        self.lengths: list[int] = []
        self.df: dict[str, int] = {}
        if docs is not None:
            for d in docs:
                tf = Counter(d)
                self.tfs.append(dict(tf))
                self.lengths.append(len(d))
                for t in tf:
                    self.df[t] = self.df.get(t, 0) + 1
        self._finish()

    def _finish(self) -> None:
        self.n = len(self.tfs)
        self.avgdl = (sum(self.lengths) / self.n) if self.n else 0.0
        self._postings: dict[str, list[tuple[int, int]]] = {}

    def idf(self, t: str) -> float | None:
        df = self.df.get(t)
        return None if df is None else math.log(1.0 + (self.n - df + 0.5) / (df + 0.5))

    def postings(self, t: str) -> list[tuple[int, int]]:
        """Documents holding ``t`` (built on first use, so loading an index stays cheap)."""
        p = self._postings.get(t)
        if p is None:
            p = [(i, tf[t]) for i, tf in enumerate(self.tfs) if t in tf]
            self._postings[t] = p
        return p

    def scores(self, query: list[str], weights: dict[str, float] | None = None) -> dict[int, float]:
        """Sparse scores: only documents sharing a term appear. Repeated query terms count once;
        ``weights`` optionally scales a term's contribution."""
        out: dict[int, float] = {}
        k1, b, avg = self.k1, self.b, self.avgdl or 1.0
        for t in dict.fromkeys(query):
            idf = self.idf(t)
            if idf is None:
                continue
            w = idf * (weights.get(t, 1.0) if weights else 1.0)
            for i, c in self.postings(t):
                denom = c + k1 * (1.0 - b + b * self.lengths[i] / avg)
                out[i] = out.get(i, 0.0) + w * c * (k1 + 1.0) / denom
        return out

    def ranked(self, query: list[str], weights: dict[str, float] | None = None) -> list[tuple[int, float]]:
        s = self.scores(query, weights)
        return sorted(s.items(), key=lambda kv: (-kv[1], kv[0]))

    def to_json(self) -> dict:
        return {"k1": self.k1, "b": self.b, "tfs": self.tfs, "lengths": self.lengths,
                "df": dict(sorted(self.df.items()))}

    @classmethod
    def from_json(cls, data: dict) -> "BM25":
        obj = cls(None, k1=data.get("k1", 1.2), b=data.get("b", 0.75))
        obj.tfs = data["tfs"]
        obj.lengths = data["lengths"]
        if "df" in data:
            obj.df = data["df"]
        else:
            for tf in obj.tfs:
                for t in tf:
                    obj.df[t] = obj.df.get(t, 0) + 1
        obj._finish()
        return obj
