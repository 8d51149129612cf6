"""Whether a model's answer may be published: the schema, then what it cannot see.

Two kinds of problem:

- faults: JSON that does not parse, a schema violation, a title, description,
  decision or support with no words or copied from the prompt's example, and no
  decision/cause left that cites a turn the run has. The answer is unusable.
- content problems in one lesson: it copies values of this episode (ids,
  amounts, dates: tokens with digits that the task, the user or the tool calls
  and their JSON results carried, but the agent's own instructions did not),
  names a turn number, or repeats a passage of the prompt's example. Lessons
  feed future prompts, so an episode's values there would mislead.

A first answer with any problem gets one repair call that lists them. In a final
answer (the repair, or one read back from the cache) faults still reject it, but
a lesson with content problems is dropped and counted; with none left, the
answer is rejected. Turn refs the run does not have and quotes that do not occur
in their turns are dropped and counted (``grounding.ground``), and so is each
decision/cause left citing no turn. Nothing is dropped without a count in the
page's frontmatter.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Callable, Iterator

from ..runs.model import Run
from .answer_json import extract_json
from .grounding import ground
from .prompt_views import evidence_key
from .schema import Compilation, SchemaError, compilation_from_json

_ECHO_MIN = 16  # shorter texts may match the instructions by chance
_SHINGLE = 6  # this many words in a row shared with the prompt is a copy, not a coincidence
_TOKEN = re.compile(r"[#$]?[A-Za-z0-9][A-Za-z0-9_\-./:]*")
_TURN_REF = re.compile(r"\bturns?\s*(?:#|no\.?\s*)?\d+", re.I)
_WORD = re.compile(r"[a-z0-9]+")


class BadAnswer(Exception):
    """An answer that cannot be used; ``problems`` go into the repair prompt."""

    def __init__(self, problems: list[str], reason: str):
        super().__init__(reason)
        self.problems = problems
        self.reason = reason


def norm(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .,:;")


def check_answer(text: str, run: Run, instructions: str, *, final: bool,
                 clean: Callable[[str], str] | None = None) -> tuple[Compilation, str]:
    """The compilation in ``text`` for ``run``, grounded, and the answer as JSON text
    to cache; raises ``BadAnswer``.

    ``instructions`` is the compiler's own system prompt, normalised with ``norm``.
    ``clean`` (redaction) is applied to every string of the parsed answer, so a key
    the model wrote back is gone while the JSON stays valid.
    """
    outcome = run.outcome.label
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise BadAnswer([str(exc)], f"invalid JSON: {exc}") from None
    if clean is not None:
        data = _map_strings(data, clean)
    stored = json.dumps(data, ensure_ascii=False)
    try:
        comp = compilation_from_json(data, outcome)
    except SchemaError as exc:
        raise BadAnswer(list(exc.problems), _reason("schema", exc.problems)) from None
    faults = _field_problems(comp, instructions)
    ground(comp, run)
    key = evidence_key(outcome)
    unsupported = sum(not item.turns for item in comp.evidence)
    if comp.evidence and unsupported == len(comp.evidence):
        faults.append(f"no item of $.{key} cites a turn the log has; list in \"turns\" the [turn N] "
                      f"numbers each one rests on")
    lessons = _lesson_problems(comp, run, instructions)
    content = [p for found in lessons.values() for p in found]
    if faults:
        raise BadAnswer(faults + content, _reason("schema", faults))
    if content and not final:
        raise BadAnswer(content, _reason("content", content))
    comp.evidence = [item for item in comp.evidence if item.turns]
    comp.dropped_items = unsupported
    if lessons:
        comp.insights = [ins for i, ins in enumerate(comp.insights) if i not in lessons]
        comp.dropped_insights = len(lessons)
        if not comp.insights:
            raise BadAnswer(content, _reason("content", content))
    return comp, stored


def _map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, fn) for v in value]
    return value


def _reason(kind: str, problems: list[str]) -> str:
    first = problems[0] if problems else "does not match the schema"
    more = len(problems) - 1
    return f"{kind}: {first}" + (f" (and {more} more problem{'s' if more != 1 else ''})" if more > 0 else "")


def _field_problems(comp: Compilation, instructions: str) -> list[str]:
    """Faults in the fields every page shows: no words, or the prompt's example text."""
    key = evidence_key(comp.outcome)
    fields = [("$.title", comp.title), ("$.description", comp.description)]
    for i, item in enumerate(comp.evidence):
        fields += [(f"$.{key}[{i}].decision", item.decision), (f"$.{key}[{i}].support", item.support)]
    problems = []
    for where, text in fields:
        problems += _echo_problems(where, text, instructions)
    return problems


def _echo_problems(where: str, text: str, instructions: str) -> list[str]:
    if not re.search(r"[^\W\d_]", text):
        return [f"{where} has no words in it ({text!r})"]
    normed = norm(text) if instructions else ""
    if len(normed) >= _ECHO_MIN and normed in instructions:
        return [f"{where} copies the example text {text!r} from the answer format; write what this run shows instead"]
    return []


def _lesson_problems(comp: Compilation, run: Run, instructions: str) -> dict[int, list[str]]:
    """Per lesson index, what makes it unfit to reach another agent's prompt."""
    found: dict[int, list[str]] = {}
    values: set[str] | None = None
    shingles = _shingles(instructions)
    for i, ins in enumerate(comp.insights):
        problems: list[str] = []
        for name in ("title", "guideline", "applicability"):
            where, text = f"$.candidate_insights[{i}].{name}", getattr(ins, name)
            echo = _echo_problems(where, text, instructions)
            if echo:
                problems += echo
                continue
            copied = _shared_passage(text, shingles)
            if copied:
                problems.append(f"{where} repeats the prompt's wording ({copied!r}); say it in terms of this task")
            turn = _TURN_REF.search(text)
            if turn:
                problems.append(f"{where} names {turn.group(0)!r} of this run; a lesson must hold for other runs")
            # Only value-like tokens can be episode values: most lessons have none, and
            # then the episode need not be scanned at all.
            candidates = set(map(_value_core, _TOKEN.findall(text)))
            candidates.discard(None)
            if candidates and values is None:
                values = episode_values(run)
            specific = sorted(candidates & values) if candidates else []
            if specific:
                problems.append(f"{where} copies values of this episode ({', '.join(specific[:5])}); "
                                f"describe the kind of value instead")
        if problems:
            found[i] = problems
    return found


def _core(token: str) -> str:
    return token.lstrip("#$").rstrip(".-/:").lower()


@lru_cache(maxsize=1 << 16)  # the lessons' words recur from run to run: each token is judged once
def _value_core(token: str) -> str | None:
    """The token's core when it is a value (``_is_value``), else None."""
    core = _core(token)
    return core if _is_value(core) else None


@lru_cache(maxsize=1 << 16)
def _is_value(core: str) -> bool:
    """A token that names one thing of one episode: an id, an amount, a date."""
    digits = sum(c.isdigit() for c in core)
    if digits >= 3:
        return True
    letters = sum(c.isalpha() for c in core)
    return digits >= 2 and letters > 0 and len(core) >= 5


def episode_values(run: Run) -> set[str]:
    """Tokens with digits that this episode's task, user and tool calls carried.

    Free-text observations (shell output) are left out: error codes and versions
    there are general knowledge more often than one episode's facts. Tokens the
    agent's own instructions state (policy amounts, limits) are not episode values.
    """
    values: set[str] = set()
    solver = ""
    texts: list[str] = [run.task.instruction or ""]
    for i, t in enumerate(run.turns):
        if t.type == "message" and t.role in ("system", "developer"):
            if i == 0:
                solver = t.content or ""
            continue
        if t.type == "message" and t.role == "user":
            texts.append(t.content or "")
        elif t.type == "function_call":
            texts.extend(_leaves(t.arguments))
            result = t.result
            if result and result.lstrip()[:1] in ("{", "["):
                try:
                    texts.extend(_leaves(json.loads(result)))
                except ValueError:
                    pass
    for text in texts:
        if not _DIGIT.search(text):  # a value has digits
            continue
        for token in _TOKEN.findall(text):
            core = _core(token)
            if _is_value(core):
                values.add(core)
    if solver and values:
        values -= _stated(solver)
    return values


def _stated(solver: str) -> frozenset[str]:
    """The tokens of an agent's instructions: one set per prompt text, which most runs share."""
    memo = _STATED_MEMO.get(solver)
    if memo is None:
        memo = frozenset(_core(tok) for tok in _TOKEN.findall(solver))
        if len(_STATED_MEMO) > 16:
            _STATED_MEMO.clear()
        _STATED_MEMO[solver] = memo
    return memo


_STATED_MEMO: dict[str, frozenset[str]] = {}
_DIGIT = re.compile(r"\d")


def _leaves(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield str(value)


def _shingles(instructions: str) -> frozenset[tuple[str, ...]]:
    memo = _SHINGLE_MEMO.get(instructions)
    if memo is None:
        words = _WORD.findall(instructions)
        memo = frozenset(tuple(words[i:i + _SHINGLE]) for i in range(len(words) - _SHINGLE + 1))
        if len(_SHINGLE_MEMO) > 16:
            _SHINGLE_MEMO.clear()
        _SHINGLE_MEMO[instructions] = memo
    return memo


_SHINGLE_MEMO: dict[str, frozenset[tuple[str, ...]]] = {}


def _shared_passage(text: str, shingles: frozenset[tuple[str, ...]]) -> str | None:
    words = _WORD.findall(text.lower())
    for i in range(len(words) - _SHINGLE + 1):
        if tuple(words[i:i + _SHINGLE]) in shingles:
            return " ".join(words[i:i + _SHINGLE])
    return None
