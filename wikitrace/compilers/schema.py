"""What a compiler returns, and how a model's JSON is checked before it is trusted.

Both compilers (offline and LLM) produce a ``Compilation``. The LLM's JSON is
validated field by field with ``compilation_from_json``; every problem is named
so a repair prompt can quote it back to the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

MAX_INSIGHTS = 3
MAX_ITEMS = 8  # decisions / causes kept per run


@dataclass
class Evidence:
    """A key decision (success) or a failure cause, with the turns it rests on."""

    decision: str
    support: str
    turns: list[int] = field(default_factory=list)
    quote: str | None = None  # exact text from one of ``turns`` (observation or action)
    call: str | None = None  # the call in full (name and every argument), when it is the point
    notes: list[str] = field(default_factory=list)  # checked facts about the call: argument diff, rules
    # on a failure page: shown for context, not as a cause (a change made as the task expected, a
    # note the agent wrote to itself); headed "Context", never "Cause"
    context: bool = False


@dataclass
class KeyFact:
    """One fact that most likely decided the run, said plainly, with the turns that show it."""

    text: str
    turns: list[int] = field(default_factory=list)
    # what kind of checked fact it is ("comparison", "arguments"...; empty: not counted across
    # runs) and what it is about (the arguments that differed, the comparison's true reading)
    kind: str = ""
    about: list[str] = field(default_factory=list)
    # the run's own rule this fact turns on (compilers/rule_reasons.py), counted as a kind of its
    # own: [the tool, what the rule is on, the quote]; empty when no rule clearly governs
    rule: list[str] = field(default_factory=list)


@dataclass
class CandidateInsight:
    title: str
    guideline: str
    applicability: str
    # The lesson's structural key (compilers/run_insights.py): runs with the same key of one task
    # type share one insight page. None from a model's answer until it is grouped.
    key: str | None = None
    detail: str = ""  # what this run showed of it, beside the run on the insight page
    worked: bool = False  # the run got past it or succeeded with it: its wording is preferred
    case: dict | None = None  # a final answer's case (answer_case.py), shown and counted on the insight page


@dataclass
class Compilation:
    title: str
    description: str
    outcome: str  # "success" | "failure"
    evidence: list[Evidence]
    insights: list[CandidateInsight]
    compiler: str = "offline"  # "offline" | "llm" | "offline-fallback"
    model: str | None = None
    fallback_reason: str | None = None
    dropped_refs: int = 0  # turn refs that did not exist in the run
    dropped_quotes: int = 0  # quotes that did not occur in their turns
    dropped_items: int = 0  # decisions/causes left citing no turn of the run
    dropped_insights: int = 0  # lessons that copied episode values or the prompt's example
    usage: dict[str, int] = field(default_factory=dict)
    left_out: int = 0  # agent calls the evidence list does not cite (the page says how to see them)
    patterns: list[str] = field(default_factory=list)  # what the run met, for the contrast across runs
    in_short: list[KeyFact] = field(default_factory=list)  # the page's "In short" (offline: compilers/in_short.py)
    decisive: dict = field(default_factory=dict)  # what other trials of its task are set against (trial_record.py)
    # the prompt's rule sentences naming a value of a record the run looked up, per change it made:
    # [tool, field, value, sentence] (compilers/value_rules.py), quoted by corpus/conditions.py; with
    # value "", the rule on a change's argument itself (compilers/field_rules.py, corpus/rule_quote.py)
    value_rules: list[list[str]] = field(default_factory=list)

    @property
    def evidence_heading(self) -> str:
        return "Key Decisions" if self.outcome == "success" else "Failure Causes"


class SchemaError(ValueError):
    """The model's JSON does not match the schema; ``problems`` lists each fault."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def json_schema(outcome: str) -> dict[str, Any]:
    """The JSON schema sent to models that accept one (json_schema / json_object modes)."""
    key = "key_decisions" if outcome == "success" else "failure_causes"
    item = {
        "type": "object",
        "properties": {
            "decision": {"type": "string"},
            "support": {"type": "string"},
            "turns": {"type": "array", "items": {"type": "integer"}},
            "quote": {"type": "string"},
        },
        "required": ["decision", "support", "turns"],
    }
    insight = {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "guideline": {"type": "string"},
            "applicability": {"type": "string"},
        },
        "required": ["title", "guideline", "applicability"],
    }
    return {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "description": {"type": "string"},
            key: {"type": "array", "items": item},
            "candidate_insights": {"type": "array", "items": insight, "maxItems": MAX_INSIGHTS},
        },
        "required": ["title", "description", key, "candidate_insights"],
    }


def _text(obj: dict, key: str, where: str, problems: list[str]) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}.{key} must be a non-empty string")
        return ""
    return " ".join(value.split())


def compilation_from_json(data: Any, outcome: str) -> Compilation:
    """Check a model's answer; raise SchemaError naming every fault."""
    problems: list[str] = []
    if not isinstance(data, dict):
        raise SchemaError([f"the answer must be a JSON object, got {type(data).__name__}"])
    key = "key_decisions" if outcome == "success" else "failure_causes"
    title = _text(data, "title", "$", problems)
    description = _text(data, "description", "$", problems)
    evidence: list[Evidence] = []
    items = data.get(key)
    if not isinstance(items, list) or not items:
        problems.append(f"$.{key} must be a non-empty list")
        items = []
    for i, item in enumerate(items[:MAX_ITEMS]):
        where = f"$.{key}[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be an object")
            continue
        turns = item.get("turns", [])
        if isinstance(turns, int) and not isinstance(turns, bool):
            turns = [turns]
        if not isinstance(turns, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in turns):
            problems.append(f"{where}.turns must be a list of turn numbers")
            turns = []
        quote = item.get("quote")
        if quote is not None and not isinstance(quote, str):
            problems.append(f"{where}.quote must be a string")
            quote = None
        evidence.append(Evidence(
            decision=_text(item, "decision", where, problems),
            support=_text(item, "support", where, problems),
            turns=sorted(set(turns)),
            quote=quote.strip() or None if quote else None,
        ))
    insights: list[CandidateInsight] = []
    raw_insights = data.get("candidate_insights")
    if not isinstance(raw_insights, list) or not raw_insights:
        problems.append("$.candidate_insights must be a non-empty list")
        raw_insights = []
    if len(raw_insights) > MAX_INSIGHTS:
        problems.append(f"$.candidate_insights has {len(raw_insights)} items; at most {MAX_INSIGHTS} are allowed")
    for i, item in enumerate(raw_insights[:MAX_INSIGHTS]):
        where = f"$.candidate_insights[{i}]"
        if not isinstance(item, dict):
            problems.append(f"{where} must be an object")
            continue
        insights.append(CandidateInsight(
            title=_text(item, "title", where, problems),
            guideline=_text(item, "guideline", where, problems),
            applicability=_text(item, "applicability", where, problems),
        ))
    if problems:
        raise SchemaError(problems)
    return Compilation(title=title, description=description, outcome=outcome,
                       evidence=evidence, insights=insights)
