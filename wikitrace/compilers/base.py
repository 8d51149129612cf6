"""The one interface every compiler implements, and the counts a build reports."""

from __future__ import annotations

from dataclasses import asdict, dataclass
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

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
