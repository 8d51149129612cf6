"""From tracing records (spans, observations, events) to a turn log, for every tracing format.

Tracing tools record an agent as a tree of timed records: model calls that carry
the messages sent and received, tool executions that carry a call's arguments and
result, and the framework's own steps (retries, guardrails, handoffs). Each
tracing importer (OTLP, Langfuse, OpenAI Agents SDK) turns its records into
``Step`` values; ``assemble`` orders them by start time and builds the turns:

- a model call (``kind="llm"``) adds the input messages not seen before (a model
  call resends the whole conversation, so only what is new becomes a turn) and
  its output: text is an assistant message, each tool call a ``function_call``
  (text sent alongside calls is the first call's ``reasoning``);
- a tool execution (``kind="tool"``) gives the result of the call with the same
  tool-call id; without an id, of the oldest unanswered call of that tool; with
  neither, it is a call of its own. A ``tool`` message in a later model input
  answers a call that no tool record answered;
- a framework step (``kind="harness"``) and a failed model call are ``message``
  turns with ``role: "harness"`` and ``extra.harness`` naming the kind, never
  calls of the agent. A handoff (``name`` the agent handed to) answers the call
  just before it when that call's name contains the agent's name (the
  ``transfer_to_<agent>`` tool a model calls to hand off);
- calls nobody answered get an empty result marked as an error (``unanswered``).

``Assembly.pairing`` counts the calls and how each got its result, so an importer
can say how much it paired (kept in ``run.source['pairing']``).

``verdict_of`` is the outcome rule shared by formats that keep several scores.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from . import errors
from ._common import parse_arguments, text_of, unanswered
from .harness import step_turn
from .model import Run, RunError, Turn


@dataclass
class Call:
    id: str | None
    name: str
    arguments: Any = None


@dataclass
class Msg:
    role: str
    content: str | None = None
    calls: list[Call] = field(default_factory=list)
    call_id: str | None = None  # a tool message: the call it answers
    reasoning: str | None = None
    failed: bool | None = None  # a tool message's own error flag


@dataclass
class Step:
    """One tracing record, normalised. ``at`` only orders the steps (then input order)."""

    at: float
    kind: str  # "llm" | "tool" | "harness" | "message"
    inputs: list[Msg] = field(default_factory=list)
    outputs: list[Msg] = field(default_factory=list)
    name: str | None = None  # tool name; for a handoff, the agent handed to
    arguments: Any = None
    result: str | None = None
    call_id: str | None = None
    failed: bool | None = None  # the record's own status: True error, False ok, None unset
    error: str | None = None  # what the record says went wrong
    text: str | None = None  # a harness step in words
    harness: str | None = None  # its kind: "retry", "guardrail", "handoff", "error", ...
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Assembly:
    turns: list[Turn]
    pairing: dict[str, int]


def _squash(text: str | None) -> str:
    return re.sub(r"[^a-z0-9]", "", (text or "").lower())


def _key(msg: Msg) -> tuple:
    ids = tuple((c.id or "", c.name) for c in msg.calls)
    return msg.role, (msg.content or "").strip(), ids, msg.call_id or ""


def assemble(steps: list[Step]) -> Assembly:
    order = sorted(range(len(steps)), key=lambda i: (steps[i].at, i))
    ordered = [steps[i] for i in order]
    turns: list[Turn] = []
    by_id: dict[str, Turn] = {}
    seen: set[tuple] = set()
    count = {"calls": 0, "by_id": 0, "by_name": 0, "from_messages": 0, "tool_records": 0}
    last_llm = max((n for n, s in enumerate(ordered) if s.kind == "llm"), default=-1)

    def add(**kw) -> Turn:
        t = Turn(turn=len(turns), **kw)
        turns.append(t)
        return t

    def add_calls(msg: Msg, extra: dict | None = None) -> None:
        reasoning = "\n\n".join(x for x in (msg.reasoning, msg.content) if x and x.strip()) or None
        for call in msg.calls:
            if call.id and call.id in by_id:
                continue
            t = add(type="function_call", role="assistant", name=call.name or "unknown",
                    arguments=parse_arguments(call.arguments), reasoning=reasoning,
                    extra={"tool_call_id": call.id} if call.id else {})
            reasoning = None
            count["calls"] += 1
            if call.id:
                by_id[call.id] = t

    def add_message(msg: Msg, extra: dict | None = None) -> None:
        if msg.role == "tool":
            target = by_id.get(msg.call_id) if msg.call_id else None
            if target is not None:
                if target.result is None:
                    target.result = msg.content or ""
                    target.is_error = errors.judge(msg.failed, text=target.result)
                    count["from_messages"] += 1
                return
            add(type="message", role="tool", content=msg.content or "", is_error=errors.judge(msg.failed, text=msg.content),
                extra={"tool_call_id": msg.call_id} if msg.call_id else {})
            return
        if msg.calls:
            add_calls(msg, extra)
            return
        if (msg.content or "").strip() or msg.reasoning:
            add(type="message", role=msg.role, content=msg.content or "", reasoning=msg.reasoning,
                extra=dict(extra or {}))

    for n, step in enumerate(ordered):
        if step.kind in ("llm", "message"):
            for msg in step.inputs:
                key = _key(msg)
                if key in seen and step.kind == "llm":  # a model call resends the conversation
                    continue
                seen.add(key)
                if msg.role == "assistant" and msg.calls and all(c.id and c.id in by_id for c in msg.calls):
                    continue
                add_message(msg)
            if step.kind == "llm" and step.failed:
                retried = n < last_llm
                step_turn(turns, "retry" if retried else "model error", f"model call failed ({step.error or 'error'}); "
                          + ("the framework called the model again" if retried else "no further model call"), **step.extra)
            for msg in step.outputs:
                seen.add(_key(msg))
                add_message(msg, step.extra)
        elif step.kind == "tool":
            count["tool_records"] += 1
            target = by_id.get(step.call_id) if step.call_id else None
            how = "by_id" if target is not None else None
            if target is None and not step.call_id:
                target = next((t for t in turns if t.type == "function_call" and t.result is None
                               and t.name == step.name and not t.extra.get("tool_record")), None)
                how = "by_name" if target is not None else None
            if target is None:
                target = add(type="function_call", role="assistant", name=step.name or "unknown",
                             arguments=parse_arguments(step.arguments),
                             extra={"tool_call_id": step.call_id} if step.call_id else {})
                count["calls"] += 1
                if step.call_id:
                    by_id[step.call_id] = target
            elif how:
                count[how] += 1
            target.extra["tool_record"] = True
            if target.arguments is None and step.arguments is not None:
                target.arguments = parse_arguments(step.arguments)
            result = step.result if step.result is not None else (step.error if step.failed else None)
            if result is not None or step.failed:
                target.result = result or ""
                target.is_error = errors.judge(step.failed, text=target.result)
                if step.error and step.failed:
                    target.extra["error"] = step.error
            target.extra.update(step.extra)
        elif step.kind == "harness":
            calls = [t for t in turns if t.type == "function_call"]
            if (step.harness == "handoff" and calls and calls[-1].result is None and calls[-1].turn == len(turns) - 1
                    and _squash(step.name) and _squash(step.name) in _squash(calls[-1].name)):
                calls[-1].result = f"handoff: {step.text or 'to another agent'}"
                calls[-1].is_error = bool(step.failed)
                calls[-1].extra["handoff"] = True
                count["handoffs"] = count.get("handoffs", 0) + 1
            step_turn(turns, step.harness or "framework", step.text or step.harness or "framework step", **step.extra)
    for t in turns:
        t.extra.pop("tool_record", None)
    count["answered"] = sum(1 for t in turns if t.type == "function_call" and t.result is not None)
    unanswered(turns)
    return Assembly(turns, count)


# -- helpers the tracing importers share --------------------------------------------------------

def msg_from_dict(d: Any, default_role: str = "user") -> Msg | None:
    """An OpenAI chat message, an Anthropic-style one or a GenAI semconv ``{role, parts}`` one."""
    if isinstance(d, str):
        return Msg(role=default_role, content=d)
    if not isinstance(d, dict):
        return None
    role = d.get("role") if isinstance(d.get("role"), str) and d.get("role") else default_role
    msg = Msg(role=role)
    texts: list[str] = []
    thoughts: list[str] = []
    parts = d.get("parts")
    content = d.get("content")
    if isinstance(parts, list):
        items = parts
    elif isinstance(content, list):
        items = content
    else:
        items = []
        if content is not None:
            texts.append(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, sort_keys=True))
    for part in items:
        if not isinstance(part, dict):
            texts.append(text_of([part]) or "")
            continue
        kind = part.get("type")
        if kind in ("tool_call", "tool_use", "function_call"):
            msg.calls.append(Call(_str(part.get("id") or part.get("call_id")), _str(part.get("name")) or "unknown",
                                  part.get("arguments", part.get("input"))))
        elif kind in ("tool_call_response", "tool_result", "function_call_output"):
            msg.call_id = _str(part.get("id") or part.get("tool_use_id") or part.get("call_id"))
            value = part.get("response", part.get("content", part.get("output")))
            texts.append(value if isinstance(value, str) else text_of(value) if isinstance(value, list)
                         else json.dumps(value, ensure_ascii=False, sort_keys=True))
        elif kind in ("reasoning", "thinking"):
            value = part.get("content", part.get("thinking", part.get("text")))
            if isinstance(value, str):
                thoughts.append(value)
        else:
            value = part.get("content") if isinstance(part.get("content"), str) else None
            texts.append(value if value is not None else text_of([part]) or "")
    for call in as_list(d.get("tool_calls")):
        if isinstance(call, dict):
            fn = call.get("function") if isinstance(call.get("function"), dict) else call
            msg.calls.append(Call(_str(call.get("id")), _str(fn.get("name")) or "unknown", fn.get("arguments")))
    if role == "tool" and msg.call_id is None:
        msg.call_id = _str(d.get("tool_call_id") or d.get("id"))
    msg.content = "\n".join(t for t in texts if t) or None
    msg.reasoning = "\n\n".join(thoughts) or None
    return msg


def msgs_from(value: Any, default_role: str = "user") -> list[Msg]:
    """Messages from a list, a ``{"messages": [...]}`` object, one message or plain text."""
    if isinstance(value, str):
        parsed = parse_arguments(value)
        if parsed is value:
            return [Msg(role=default_role, content=value)] if value.strip() else []
        value = parsed
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if isinstance(value, dict) and "role" not in value and isinstance(value.get("choices"), list):
        value = [c.get("message") for c in value["choices"] if isinstance(c, dict)]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        return []
    return [m for m in (msg_from_dict(v, default_role) for v in value) if m is not None]


def as_list(value: Any) -> list:
    """A logged list, or nothing when the field holds something else."""
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    if value is None or value == "":
        return None
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def seconds(value: Any) -> float:
    """A timestamp as seconds: nanoseconds (OTLP, a number or a string), or ISO 8601 text."""
    if isinstance(value, bool):
        return 0.0
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:
            return 0.0
        if number != number or number in (float("inf"), float("-inf")):
            return 0.0
        return number / 1e9 if number > 1e14 else number
    if isinstance(value, str) and value.strip():
        text = value.strip()
        if text.isascii() and text.isdigit():
            return int(text[:30]) / 1e9
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return 0.0
    return 0.0


# -- outcomes from scores ------------------------------------------------------------------------

def score_verdict(value: Any) -> tuple[bool, float | None] | None:
    """(success, score) for one logged score value, or None when it gives no verdict.

    A boolean is the verdict; a number is a success at full marks (>= 1.0), the rule
    every importer applies to rewards; a word is read as ``--outcomes`` reads it.
    """
    from .outcomes import _NO, _YES

    if isinstance(value, bool):
        return value, 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        number = float(value)
        if number != number or number in (float("inf"), float("-inf")):
            return None
        return number >= 1.0, number
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _YES:
            return True, None
        if word in _NO:
            return False, None
    return None


def verdict_of(scores: list[tuple]) -> tuple[tuple[bool, float | None] | None, str | None]:
    """The outcome from the named scores a record holds: ((success, score), None), or (None, why not).

    ``scores``: ``(name, value)`` or ``(name, value, number)`` where ``number`` is the
    numeric score to keep beside a verdict word. Every score that gives a verdict must
    give the same one; the score kept is the first one's. Scores that disagree give no
    outcome: which one counts is the user's call (``--outcomes``), never ours.
    """
    judged = []
    for name, value, *number in scores:
        v = score_verdict(value)
        if v is not None and v[1] is None and number and score_verdict(number[0]) is not None:
            v = (v[0], float(number[0]))
        judged.append((name, v))
    verdicts = [(name, v) for name, v in judged if v is not None]
    if not verdicts:
        if scores:
            shown = ", ".join(f"{s[0]}={s[1]!r}" for s in scores[:3])
            return None, f"its scores ({shown}) give no success or failure"
        return None, None
    if len({v[0] for _, v in verdicts}) > 1:
        shown = ", ".join(f"{name}: {'success' if v[0] else 'failure'}" for name, v in verdicts[:4])
        return None, f"its scores disagree ({shown})"
    return verdicts[0][1], None


def each_run(builders, masked: int):
    """Each group's run, or the RunError that says why it could not be built (the file's other
    runs go on); every run notes how many credential values the file had masked."""
    for build in builders:
        try:
            run: Run = build()
        except RunError as exc:
            yield exc
            continue
        if masked:
            run.source["credentials_masked_in_file"] = masked
        yield run
