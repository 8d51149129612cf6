"""The records an evaluation reads (one trial of a method on a task) and returns: scores per suite and method, Gain / Regression rates with
their bootstrap intervals; kept apart so the bootstrap and the reports share them."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

AVERAGE = "average"


@dataclass
class Trial:
    suite: str
    task_id: str
    method: str
    trial: str
    score: float | None
    success: bool


@dataclass
class Interval:
    value: float | None
    lo: float | None = None
    hi: float | None = None
    dropped: float = 0.0  # share of resamples dropped for lack of eligible tasks


@dataclass
class RateRow:
    suite: str
    method: str
    gain: Interval
    regression: Interval
    gain_moved: float | None = None        # tasks gained per trial
    gain_eligible: int = 0                 # tasks with B_i = 0
    regression_moved: float | None = None
    regression_eligible: int = 0
    excess_gain: Interval | None = None
    excess_regression: Interval | None = None


@dataclass
class ScoreRow:
    suite: str
    method: str
    mean: float
    std: float
    trials: int
    tasks: int


@dataclass
class EvalResult:
    suites: list[str]
    methods: list[str]
    reference: str
    rerun: str | None
    scores: list[ScoreRow] = field(default_factory=list)
    rates: list[RateRow] = field(default_factory=list)
    resamples: int = 0
    seed: int | None = None
    warnings: list[str] = field(default_factory=list)

    def rate(self, suite: str, method: str) -> RateRow | None:
        return next((r for r in self.rates if r.suite == suite and r.method == method), None)

    def score(self, suite: str, method: str) -> ScoreRow | None:
        return next((r for r in self.scores if r.suite == suite and r.method == method), None)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def natural_order(s: str):
    return (0, int(s), s) if s.lstrip("-").isdecimal() else (1, 0, s)
