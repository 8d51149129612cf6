"""``wikitrace query``: hierarchical retrieval over a compiled sample, evidence packet out,
and an LLM answer only when an LLM is configured (offline: evidence only, and it says so)."""

from __future__ import annotations

import json
from pathlib import Path

from ..errors import InputError
from .packet import header_tokens, packet_markdown
from .loaded_index import load_index
from .ranking import HASHED_NOTE
from .retrieve import DEFAULT_BUDGET, retrieve


class QueryError(InputError):
    """A question the compiled memory cannot answer as asked (no such sample, budget too small)."""


def sample_dir(corpus: Path, sample: str | None) -> Path:
    root = Path(corpus)
    base = root / "dialogue" if (root / "dialogue").is_dir() else root
    if sample is None:
        found = sorted(p.name for p in base.iterdir() if (p / "index.json").exists()) if base.is_dir() else []
        if not found:
            raise QueryError(f"{base}: no compiled dialogue sample here (run `wikitrace dialogue compile`, "
                             "or point --corpus at its output)")
        if len(found) > 1:
            raise QueryError(f"{base}: name a sample with --sample (found: {', '.join(found)})")
        sample = found[0]
    path = base / sample
    if not (path / "index.json").exists():
        raise QueryError(f"{path}: no compiled dialogue sample here (run `wikitrace dialogue compile`)")
    return path


def run_query(corpus: Path, sample: str | None, question: str, budget: int = DEFAULT_BUDGET,
              as_json: bool = False, llm=None) -> str:
    """The markdown packet (header included) and the JSON ``context`` both stay within ``budget``
    whitespace tokens; the JSON ``diagnostics`` are outside it and not meant for a model."""
    li = load_index(sample_dir(corpus, sample) / "index.json")
    mode = "evidence+answer" if llm is not None else "evidence-only (no LLM configured)"
    ctx_budget = budget
    if as_json:
        packet = retrieve(li, question, budget=budget)
    else:
        expected = HASHED_NOTE if li.raw.get("dense") is None else "endpoint"
        reserve = header_tokens(question, expected)
        if budget <= reserve:
            raise QueryError(f"--budget {budget}: the packet header alone takes {reserve} tokens — "
                             f"give a larger budget")
        packet = retrieve(li, question, budget=budget - reserve)
        if packet.context_tokens + header_tokens(question, packet.diagnostics["embedder"]) > budget:
            # the backend note came out longer (an endpoint fallback): pack again for it
            reserve = header_tokens(question, packet.diagnostics["embedder"])
            packet = retrieve(li, question, budget=max(0, budget - reserve))
        ctx_budget = budget - reserve
    packet.budget = budget
    if llm is not None:
        from .llm import answer

        def retry(terms):
            return retrieve(li, question + " " + " ".join(terms), budget=ctx_budget)

        packet.answer = answer(llm, packet, retry)
    if as_json:
        data = packet.to_json()
        data["mode"] = mode
        data["embedder"] = packet.diagnostics["embedder"]
        return json.dumps(data, ensure_ascii=False, indent=1)
    return packet_markdown(question, packet.diagnostics["embedder"], packet.context, packet.answer)
