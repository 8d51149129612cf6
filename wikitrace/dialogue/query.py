"""``wikitrace query``: hierarchical retrieval over a compiled sample, evidence packet out,
and an LLM answer only when an LLM is configured (offline: evidence only, and it says so)."""

from __future__ import annotations

import json
from pathlib import Path

from .retrieve import DEFAULT_BUDGET, load_index, retrieve


class QueryError(ValueError):
    pass


def sample_dir(corpus: Path, sample: str | None) -> Path:
    root = Path(corpus)
    base = root / "dialogue" if (root / "dialogue").is_dir() else root
    if sample is None:
        found = sorted(p.name for p in base.iterdir() if (p / "index.json").exists()) if base.is_dir() else []
        if len(found) != 1:
            raise QueryError(f"{base}: name a sample with --sample (found: {', '.join(found) or 'none'})")
        sample = found[0]
    path = base / sample
    if not (path / "index.json").exists():
        raise QueryError(f"{path}: no compiled dialogue sample here (run `wikitrace dialogue compile`)")
    return path


def run_query(corpus: Path, sample: str | None, question: str, budget: int = DEFAULT_BUDGET,
              as_json: bool = False, llm=None, templates=None) -> str:
    li = load_index(sample_dir(corpus, sample) / "index.json")
    packet = retrieve(li, question, budget=budget)
    if llm is not None:
        from .llm import answer

        def retry(terms):
            return retrieve(li, question + " " + " ".join(terms), budget=budget)

        packet.answer = answer(llm, packet, retry)
    if as_json:
        data = packet.to_json()
        data["mode"] = "evidence+answer" if packet.answer else "evidence-only (no LLM configured)"
        return json.dumps(data, ensure_ascii=False, indent=1)
    from ..templates import render          # jinja2 only for markdown output (keeps --json start-up lean)

    return render("dialogue/packet.md.j2", templates, p=packet)
