"""The agent side of WikiTrace: prompts, similarity, citations, descents and evaluation."""

from .cite import Citation, CitationError, check_citation, parse_and_check, parse_citation
from .corpusdata import CorpusData, CorpusError, load_corpus
from .descents import DescentReport, analyse_file, analyse_turns
from .prompt import PromptParts, build_prompt, citation_prompt, estimate_tokens

__all__ = [
    "Citation", "CitationError", "CorpusData", "CorpusError", "DescentReport", "PromptParts",
    "analyse_file", "analyse_turns", "build_prompt", "check_citation", "citation_prompt",
    "estimate_tokens", "load_corpus", "parse_and_check", "parse_citation",
]
