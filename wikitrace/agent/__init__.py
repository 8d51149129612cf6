"""The agent side of WikiTrace: prompts, similarity, citations, descents and evaluation.

Names are imported on first use (PEP 562), so ``wikitrace prompt`` loads only what it
needs (no descent or evaluation code).
"""

from __future__ import annotations

import importlib

_HOME = {
    "Citation": "cite", "CitationError": "cite", "check_citation": "cite", "parse_and_check": "cite",
    "parse_citation": "cite",
    "CorpusData": "corpusdata", "CorpusError": "corpusdata", "load_corpus": "corpusdata",
    "DescentReport": "descents", "analyse_file": "descents", "analyse_turns": "descents",
    "PromptParts": "prompt", "build_prompt": "prompt", "citation_prompt": "prompt", "estimate_tokens": "prompt",
    "write_prompt_index": "index",
}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))
