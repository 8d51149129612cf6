"""OpenTelemetry traces as OTLP JSON (OTLP 1.x; GenAI semantic conventions and OpenInference).

Read: the OTLP/HTTP JSON body ``{"resourceSpans": [{"resource": {"attributes": [..]},
"scopeSpans": [{"scope": {..}, "spans": [..]}]}]}`` as one document, or a collector's
file exporter output (one such object per line). A span: ``traceId``, ``spanId``,
``parentSpanId``, ``name``, ``startTimeUnixNano`` (nanoseconds, a string),
``attributes`` (``[{"key", "value": {"stringValue" | "intValue" (a string) |
"doubleValue" | "boolValue" | "arrayValue" | "kvlistValue"}}]``), ``events``
(``name``, ``timeUnixNano``, ``attributes``) and ``status`` (``code`` 2 or
``STATUS_CODE_ERROR`` is an error, with ``message``).

What a span is:

- a model call: ``gen_ai.operation.name`` chat / text_completion / generate_content,
  or ``openinference.span.kind`` LLM. Its messages, first found of:
  ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (JSON, ``{role, parts}``) with
  ``gen_ai.system_instructions``; the message events (``gen_ai.system.message``,
  ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message``,
  ``gen_ai.choice``); OpenInference's flattened ``llm.input_messages.N.message.*`` /
  ``llm.output_messages.N.message.*`` (``tool_calls.M.tool_call.{id, function.name,
  function.arguments}``, ``tool_call_id``); the indexed ``gen_ai.prompt.N.*`` /
  ``gen_ai.completion.N.*``; else ``input.value`` / ``output.value``;
- a tool execution: ``gen_ai.operation.name`` execute_tool or OpenInference TOOL:
  ``gen_ai.tool.name`` / ``tool.name``, ``gen_ai.tool.call.id`` / ``tool_call.id`` /
  ``tool.id``, arguments ``gen_ai.tool.call.arguments`` / ``input.value``, result
  ``gen_ai.tool.call.result`` / ``output.value``;
- a framework step (kept apart as a harness turn, see ``spans.py``): OpenInference
  GUARDRAIL, or a span named for a handoff or a guardrail;
- anything else (agent, chain, workflow, HTTP spans) only holds the others.

Errors: a span with status ERROR or an ``exception`` event failed; a tool span that
failed is a call with ``is_error``; a failed model call is a harness turn (the
framework's retry). A JSON attribute cut short by an attribute length limit is kept
as text and listed in ``run.source['unreadable_attributes']``.

Runs: the spans of one trace are a run, id the ``traceId``; spans that carry a
``session.id`` or ``gen_ai.conversation.id`` join the run of that session (id the
session id), across traces. Spans of one run must be in one file.

Outcome: ``gen_ai.evaluation.result`` events (``gen_ai.evaluation.name``,
``gen_ai.evaluation.score.label`` read as a verdict word, else
``gen_ai.evaluation.score.value``, success at >= 1.0); several must agree
(``spans.verdict_of``). Without one, ``--outcomes`` keyed by trace or session id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import spans as sp
from ._common import Sniff, parse_arguments
from .harness import end_turn
from .model import Outcome, Run, RunError, Task, count_steps
from .otlp_spans import HARNESS_NAME, Span, attributes, llm_step
from .spans import Step
from .trace_files import documents, mask_credentials


def looks_like(s: Sniff) -> bool:
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, list) and obj:
        obj = obj[0]
    if isinstance(obj, dict) and isinstance(obj.get("resourceSpans"), list):
        return True
    return bool(re.match(r'\s*\{\s*"resourceSpans"\s*:', s.head))


def _first(attrs: dict, *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) not in (None, "")), None)


def _tool_step(span: Span, problems: list[str]) -> Step:
    a = span.attrs
    name = _first(a, "gen_ai.tool.name", "tool.name", "tool_call.function.name")
    if not isinstance(name, str):
        name = re.sub(r"^execute_tool\s+", "", span.name).strip() or "unknown"
    call_id = _first(a, "gen_ai.tool.call.id", "tool_call.id", "tool.id")
    arguments = _first(a, "gen_ai.tool.call.arguments", "input.value", "tool_call.function.arguments")
    result = _first(a, "gen_ai.tool.call.result", "output.value")
    if isinstance(result, str) and result.lstrip()[:1] in ("{", "[") and parse_arguments(result) is result:
        problems.append(f"span {span.span_id}: the result of {name} is not valid JSON (cut short by a length "
                        f"limit?); kept as text")
    failed, error = span.failure()
    return Step(at=span.start, kind="tool", name=name, call_id=str(call_id) if call_id is not None else None,
                arguments=arguments, result=result if result is None or isinstance(result, str) else json.dumps(result),
                failed=failed, error=error)


def _harness_step(span: Span) -> Step:
    kind = "guardrail" if "guardrail" in span.name.lower() or str(span.attrs.get("openinference.span.kind")).upper() == "GUARDRAIL" \
        else HARNESS_NAME.match(span.name).group(1).lower() if HARNESS_NAME.match(span.name) else "framework"
    failed, error = span.failure()
    detail = _first(span.attrs, "output.value", "gen_ai.agent.name")
    text = span.name + (f": {detail}" if isinstance(detail, str) and detail.strip() else "")
    if failed:
        text += f" (failed: {error or 'error'})"
    target = span.attrs.get("gen_ai.agent.name")
    return Step(at=span.start, kind="harness", harness=kind, text=text, name=target if isinstance(target, str) else None)


# -- reading ----------------------------------------------------------------------------------------

def _spans(doc: Any, where: str) -> Iterator[Span | RunError]:
    if not isinstance(doc, dict) or not isinstance(doc.get("resourceSpans"), list):
        yield RunError(f"{where}: not an OTLP traces document (no 'resourceSpans' list)")
        return
    for rs in doc["resourceSpans"]:
        if not isinstance(rs, dict):
            continue
        res = rs.get("resource") if isinstance(rs.get("resource"), dict) else {}
        resource = attributes(res.get("attributes"))
        for ss in sp.as_list(rs.get("scopeSpans")) or sp.as_list(rs.get("instrumentationLibrarySpans")):
            if not isinstance(ss, dict):
                continue
            scope = ss.get("scope") or ss.get("instrumentationLibrary")
            scope_name = scope.get("name") if isinstance(scope, dict) and isinstance(scope.get("name"), str) else None
            for raw in sp.as_list(ss.get("spans")):
                if isinstance(raw, dict):
                    span = Span(raw, resource, scope_name)
                    if span.trace_id:
                        yield span
                    else:
                        yield RunError(f"{where}: a span without a traceId ({span.name!r}); skipped")


def _group(spans: list[Span]) -> dict[str, list[Span]]:
    """Run key -> its spans: a trace, or every trace of a session."""
    session_of_trace: dict[str, str] = {}
    for s in spans:
        if s.session and s.trace_id not in session_of_trace:
            session_of_trace[s.trace_id] = s.session
    groups: dict[str, list[Span]] = {}
    for s in spans:
        groups.setdefault(session_of_trace.get(s.trace_id, s.trace_id), []).append(s)
    return groups


def read(path: Path) -> Iterator[Run | RunError]:
    """Runs of the file. A span exported twice (an exporter's retry, a re-export appended to
    the file) counts once: the last copy, which holds its latest state."""
    spans: dict[tuple, Span] = {}
    originals: list[Any] = []
    masked = 0
    for item in documents(path):
        if isinstance(item, RunError):
            yield item
            continue
        where, doc = item
        masked += mask_credentials(doc)
        originals.append(doc)
        for span in _spans(doc, where):
            if isinstance(span, RunError):
                yield span
            else:
                spans[(span.trace_id, span.span_id or f"#{len(spans)}")] = span
    if not spans and not originals:
        yield RunError(f"{path}: empty file")
        return
    if not spans:
        yield RunError(f"{path}: no spans in the OTLP document; nothing to import")
        return
    yield from sp.each_run(((lambda key=key, group=group: _to_run(path, key, group))
                            for key, group in _group(list(spans.values())).items()), masked)


def _to_run(path: Path, key: str, group: list[Span]) -> Run:
    problems: list[str] = []
    steps: list[Step] = []
    scores: list[tuple[str, Any]] = []
    dropped = 0
    for span in group:
        kind = span.kind()
        if kind == "llm":
            steps.append(llm_step(span, problems))
        elif kind == "tool":
            steps.append(_tool_step(span, problems))
        elif kind == "harness":
            steps.append(_harness_step(span))
        for name, attrs, _ in span.events:
            if name == "gen_ai.evaluation.result":
                label = attrs.get("gen_ai.evaluation.score.label")
                number = attrs.get("gen_ai.evaluation.score.value")
                value = label if sp.score_verdict(label) is not None else number
                scores.append((str(attrs.get("gen_ai.evaluation.name") or "evaluation"), value, number))
        if isinstance(span.raw.get("droppedAttributesCount"), int):
            dropped += span.raw["droppedAttributesCount"]
    assembly = sp.assemble(steps)
    turns = assembly.turns
    trace_ids = sorted({s.trace_id for s in group})
    root = min((s for s in group if not s.parent), key=lambda s: s.start, default=None) or min(group, key=lambda s: s.start)
    instruction = next((t.content for t in turns if t.type == "message" and t.role == "user" and (t.content or "").strip()), None)
    if instruction is None:
        value = root.attrs.get("input.value") or root.attrs.get("gen_ai.input.messages")
        msgs = sp.msgs_from(value, "user") if value is not None else []
        instruction = next((m.content for m in msgs if m.role == "user" and m.content), None)
    if not instruction:
        # Content capture is off by default in the GenAI instrumentations: the calls are still worth keeping.
        if not any(t.type == "function_call" for t in turns):
            raise RunError(f"{path}: trace {key}: no user message and no tool call in any span; nothing to import")
        instruction = f"{root.name or 'trace ' + key} (the trace records no message content)"
    failed, error = root.failure()
    ended = f"harness: the run failed ({error or 'status ERROR on ' + root.name})" if failed else "agent"
    end_turn(turns, ended)
    verdict, why = sp.verdict_of(scores)
    outcome = None
    if verdict is not None:
        outcome = Outcome(success=verdict[0], steps=count_steps(turns), score=verdict[1], ended_by=ended)
    meta: dict[str, Any] = {"trace_ids": trace_ids}
    service = root.resource.get("service.name")
    if isinstance(service, str):
        meta["service"] = service
    agent = next((s.attrs.get("gen_ai.agent.name") for s in group if isinstance(s.attrs.get("gen_ai.agent.name"), str)), None)
    if agent:
        meta["agent"] = agent
    if scores:
        meta["scores"] = {name: value for name, value, _ in scores}
    task = Task(id=key, instruction=instruction, task_type=meta.get("service") or "otel", metadata=meta)
    run = Run(run_id=key, task=task, turns=turns, outcome=outcome)
    run.source = {"format": "otlp", "file": path.name, "original_format": "json",
                  "original": {"spans": [s.raw for s in sorted(group, key=lambda s: (s.start, s.span_id or ""))]},
                  "outcome_keys": trace_ids, "ended_by": ended, "pairing": assembly.pairing}
    if problems:
        run.source["unreadable_attributes"] = problems
    if dropped:
        run.source["dropped_attributes"] = dropped
    if outcome is None:
        run.source["no_outcome_reason"] = (why or "no span holds a gen_ai.evaluation.result event") + \
            f"; key an --outcomes entry by {'session' if key not in trace_ids else 'trace'} id {key}"
    return run
