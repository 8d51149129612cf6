"""The one interface every compiler implements, and the counts a build reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Protocol

from ..runs.model import Run
from .schema import Compilation


class Compiler(Protocol):
    """``(compilation, insights) = Compiler(task, trajectory, outcome)`` of the paper."""

    name: str  # what frontmatter says produced the text: "offline" or "llm"
    model: str | None

    async def compile(self, run: Run) -> Compilation: ...

    def stats(self) -> "CompileStats": ...


@dataclass
class CompileStats:
    runs: int = 0
    calls: int = 0  # HTTP requests actually sent
    cache_hits: int = 0
    retries: int = 0
    repairs: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # What the answer checks removed from pages that were published anyway.
    dropped_refs: int = 0
    dropped_quotes: int = 0
    dropped_items: int = 0
    dropped_insights: int = 0
    # Why runs fell back: the reason's kind (text before its first ':') -> runs,
    # and the first full reason of each kind.
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    fallback_examples: dict[str, str] = field(default_factory=dict)

    def count_fallback(self, reason: str) -> None:
        self.fallbacks += 1
        kind = reason.split(":", 1)[0].strip() or "unknown"
        self.fallback_reasons[kind] = self.fallback_reasons.get(kind, 0) + 1
        self.fallback_examples.setdefault(kind, reason)

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
