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
from ._common import Sniff, iter_json_lines, parse_arguments, parse_json, read_text
from .harness import end_turn
from .model import Outcome, Run, RunError, Task, count_steps
from .spans import Msg, Step

_LLM_OPS = {"chat", "text_completion", "generate_content", "completion"}
_SESSION_KEYS = ("session.id", "gen_ai.conversation.id")
_HARNESS_NAME = re.compile(r"^\s*(handoff|guardrail|retry)\b", re.I)


def looks_like(s: Sniff) -> bool:
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, list) and obj:
        obj = obj[0]
    if isinstance(obj, dict) and isinstance(obj.get("resourceSpans"), list):
        return True
    return bool(re.match(r'\s*\{\s*"resourceSpans"\s*:', s.head))


# -- OTLP values ----------------------------------------------------------------------------------

def value_of(v: Any) -> Any:
    """An OTLP ``AnyValue`` as a Python value (``intValue`` arrives as a string)."""
    if not isinstance(v, dict):
        return v
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in v:
            return v[key]
    if "intValue" in v:
        try:
            return int(v["intValue"])
        except (TypeError, ValueError, OverflowError):
            return v["intValue"]
    if "arrayValue" in v:
        values = v["arrayValue"].get("values") if isinstance(v["arrayValue"], dict) else None
        return [value_of(x) for x in sp.as_list(values)]
    if "kvlistValue" in v:
        values = v["kvlistValue"].get("values") if isinstance(v["kvlistValue"], dict) else None
        return attributes(values)
    return None


def attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, dict):  # some exporters write a plain mapping
        return dict(items)
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else []:
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = value_of(kv.get("value"))
    return out


def unflatten(attrs: dict[str, Any], prefix: str) -> Any:
    """Attributes ``prefix.0.message.role`` … as nested lists and dicts (None when absent)."""
    root: dict = {}
    head = prefix + "."
    for key, value in attrs.items():
        if not key.startswith(head):
            continue
        node = root
        parts = key[len(head):].split(".")
        for part in parts[:-1]:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[parts[-1]] = value
    return _lists(root) if root else None


def _lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    fixed = {k: _lists(v) for k, v in node.items()}
    if fixed and all(k.isascii() and k.isdigit() for k in fixed):
        return [fixed[k] for k in sorted(fixed, key=int)]
    return fixed


# -- spans ----------------------------------------------------------------------------------------

class _Span:
    def __init__(self, raw: dict, resource: dict, scope: str | None):
        self.raw = raw
        self.attrs = attributes(raw.get("attributes"))
        self.resource = resource
        self.scope = scope
        self.trace_id = raw.get("traceId") if isinstance(raw.get("traceId"), str) else None
        self.span_id = raw.get("spanId") if isinstance(raw.get("spanId"), str) else None
        self.parent = raw.get("parentSpanId") if isinstance(raw.get("parentSpanId"), str) else None
        self.name = raw.get("name") if isinstance(raw.get("name"), str) else ""
        self.start = sp.seconds(raw.get("startTimeUnixNano"))
        self.events = [(e.get("name") if isinstance(e.get("name"), str) else "", attributes(e.get("attributes")),
                        sp.seconds(e.get("timeUnixNano")))
                       for e in sp.as_list(raw.get("events")) if isinstance(e, dict)]

    @property
    def session(self) -> str | None:
        for key in _SESSION_KEYS:
            value = self.attrs.get(key)
            if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
                return str(value)
        return None

    def failure(self) -> tuple[bool | None, str | None]:
        status = self.raw.get("status") if isinstance(self.raw.get("status"), dict) else {}
        code = status.get("code")
        failed = None
        if code in (2, "2", "STATUS_CODE_ERROR", "ERROR", "Error"):
            failed = True
        elif code in (1, "1", "STATUS_CODE_OK", "OK", "Ok"):
            failed = False
        message = status.get("message") if isinstance(status.get("message"), str) and status.get("message") else None
        for name, attrs, _ in self.events:
            if name == "exception":
                failed = True
                kind = attrs.get("exception.type")
                text = attrs.get("exception.message")
                message = ": ".join(str(x) for x in (kind, text) if x) or message or "exception"
        if failed and not message and isinstance(self.attrs.get("error.type"), str):
            message = self.attrs["error.type"]
        return failed, message

    def kind(self) -> str:
        op = self.attrs.get("gen_ai.operation.name")
        oi = str(self.attrs.get("openinference.span.kind") or "").upper()
        if oi == "GUARDRAIL" or _HARNESS_NAME.match(self.name):  # some instrumentations record a handoff as a TOOL
            return "harness"
        if (isinstance(op, str) and op in _LLM_OPS) or oi == "LLM":
            return "llm"
        if op == "execute_tool" or oi == "TOOL":
            return "tool"
        if any(k.startswith(("gen_ai.prompt.", "llm.input_messages.")) for k in self.attrs):
            return "llm"
        return "other"


def _json_attr(span: _Span, key: str, problems: list[str]) -> Any:
    value = span.attrs.get(key)
    if isinstance(value, str):
        parsed = parse_arguments(value)
        if parsed is value and value.lstrip()[:1] in ("[", "{"):
            problems.append(f"span {span.span_id}: {key} is not valid JSON (cut short by a length limit?); kept as text")
        return parsed
    return value


def _flat_messages(span: _Span, prefix: str, default_role: str) -> list[Msg]:
    items = unflatten(span.attrs, prefix)
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        m = item.get("message") if isinstance(item.get("message"), dict) else item  # OpenInference nests it
        d: dict[str, Any] = {"role": m.get("role") or default_role}
        contents = m.get("contents")
        if isinstance(contents, list):
            d["content"] = [c.get("message_content", c) if isinstance(c, dict) else c for c in contents]
        elif m.get("content") is not None:
            d["content"] = m.get("content")
        calls = []
        for c in sp.as_list(m.get("tool_calls")):
            if isinstance(c, dict):
                c = c.get("tool_call", c)
                fn = c.get("function") if isinstance(c.get("function"), dict) else {}
                calls.append({"id": c.get("id"), "function": {"name": fn.get("name", c.get("name")),
                                                              "arguments": fn.get("arguments", c.get("arguments"))}})
        if calls:
            d["tool_calls"] = calls
        if m.get("tool_call_id") is not None:
            d["tool_call_id"] = m.get("tool_call_id")
        msg = sp.msg_from_dict(d, default_role)
        if msg is not None:
            out.append(msg)
    return out


_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _event_messages(span: _Span) -> tuple[list[Msg], list[Msg]]:
    inputs, outputs = [], []
    for name, attrs, _ in span.events:
        if name in _EVENT_ROLES:
            d = dict(attrs)
            d.setdefault("role", _EVENT_ROLES[name])
            if isinstance(d.get("tool_calls"), str):
                d["tool_calls"] = parse_arguments(d["tool_calls"])
            msg = sp.msg_from_dict(d, _EVENT_ROLES[name])
            if msg is not None:
                inputs.append(msg)
        elif name == "gen_ai.choice":
            body = attrs.get("message")
            body = parse_arguments(body) if isinstance(body, str) else body
            if not isinstance(body, dict):
                body = {k: parse_arguments(v) if k == "tool_calls" and isinstance(v, str) else v
                        for k, v in attrs.items() if k in ("content", "tool_calls", "role")}
            msg = sp.msg_from_dict(dict(body, role=body.get("role") or "assistant"), "assistant")
            if msg is not None:
                outputs.append(msg)
        elif name in ("gen_ai.content.prompt", "gen_ai.content.completion"):
            key = "gen_ai.prompt" if name.endswith("prompt") else "gen_ai.completion"
            msgs = sp.msgs_from(attrs.get(key), "user" if key == "gen_ai.prompt" else "assistant")
            (inputs if key == "gen_ai.prompt" else outputs).extend(msgs)
    return inputs, outputs


def _llm_step(span: _Span, problems: list[str]) -> Step:
    inputs: list[Msg] = []
    outputs: list[Msg] = []
    if "gen_ai.input.messages" in span.attrs or "gen_ai.output.messages" in span.attrs:
        system = _json_attr(span, "gen_ai.system_instructions", problems)
        if system:
            text = sp.msg_from_dict({"role": "system", "parts": system}) if isinstance(system, list) else Msg("system", str(system))
            if text is not None:
                inputs.append(text)
        raw_in = _json_attr(span, "gen_ai.input.messages", problems)
        raw_out = _json_attr(span, "gen_ai.output.messages", problems)
        inputs += sp.msgs_from(raw_in, "user") if not isinstance(raw_in, str) else []
        outputs += sp.msgs_from(raw_out, "assistant")
    if not inputs and not outputs:
        inputs, outputs = _event_messages(span)
    if not inputs and not outputs:
        inputs = _flat_messages(span, "llm.input_messages", "user")
        outputs = _flat_messages(span, "llm.output_messages", "assistant")
    if not inputs and not outputs:
        inputs = _flat_messages(span, "gen_ai.prompt", "user")
        outputs = _flat_messages(span, "gen_ai.completion", "assistant")
    if not inputs and not outputs:
        inputs = sp.msgs_from(_json_attr(span, "input.value", problems), "user")
        outputs = sp.msgs_from(_json_attr(span, "output.value", problems), "assistant")
    for m in outputs:
        if m.role == "user":
            m.role = "assistant"
    failed, error = span.failure()
    model = span.attrs.get("gen_ai.response.model") or span.attrs.get("gen_ai.request.model") or span.attrs.get("llm.model_name")
    return Step(at=span.start, kind="llm", inputs=inputs, outputs=outputs, failed=failed, error=error,
                extra={"model": model} if isinstance(model, str) else {})


def _first(attrs: dict, *keys: str) -> Any:
    return next((attrs[k] for k in keys if attrs.get(k) not in (None, "")), None)


def _tool_step(span: _Span, problems: list[str]) -> Step:
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


def _harness_step(span: _Span) -> Step:
    kind = "guardrail" if "guardrail" in span.name.lower() or str(span.attrs.get("openinference.span.kind")).upper() == "GUARDRAIL" \
        else _HARNESS_NAME.match(span.name).group(1).lower() if _HARNESS_NAME.match(span.name) else "framework"
    failed, error = span.failure()
    detail = _first(span.attrs, "output.value", "gen_ai.agent.name")
    text = span.name + (f": {detail}" if isinstance(detail, str) and detail.strip() else "")
    if failed:
        text += f" (failed: {error or 'error'})"
    target = span.attrs.get("gen_ai.agent.name")
    return Step(at=span.start, kind="harness", harness=kind, text=text, name=target if isinstance(target, str) else None)


# -- reading ----------------------------------------------------------------------------------------

def documents(path: Path, split_arrays: bool = True) -> Iterator[tuple[str, Any] | RunError]:
    """(where, document) for a JSON file (each item of a top-level array unless ``split_arrays``
    is off), or for each line of a JSONL file (a collector's file exporter writes one OTLP
    object per line)."""
    try:
        text = read_text(path)
    except RunError as exc:
        yield exc
        return
    lines = [line for line in text.split("\n") if line.strip()]
    jsonl = len(lines) > 1
    if jsonl:
        try:
            json.loads(lines[0])
        except (ValueError, RecursionError):
            jsonl = False
    if not jsonl:
        try:
            whole = parse_json(text, str(path))
        except RunError as exc:
            yield exc
            return
        split = split_arrays and isinstance(whole, list)
        for i, doc in enumerate(whole if split else [whole]):
            yield (f"{path}: item {i}" if split else str(path)), doc
        return
    for lineno, obj in iter_json_lines(path):
        yield obj if isinstance(obj, RunError) else (f"{path}:{lineno}", obj)


def _spans(doc: Any, where: str) -> Iterator[_Span | RunError]:
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
                    span = _Span(raw, resource, scope_name)
                    if span.trace_id:
                        yield span
                    else:
                        yield RunError(f"{where}: a span without a traceId ({span.name!r}); skipped")


def _group(spans: list[_Span]) -> dict[str, list[_Span]]:
    """Run key -> its spans: a trace, or every trace of a session."""
    session_of_trace: dict[str, str] = {}
    for s in spans:
        if s.session and s.trace_id not in session_of_trace:
            session_of_trace[s.trace_id] = s.session
    groups: dict[str, list[_Span]] = {}
    for s in spans:
        groups.setdefault(session_of_trace.get(s.trace_id, s.trace_id), []).append(s)
    return groups


def read(path: Path) -> Iterator[Run | RunError]:
    spans: list[_Span] = []
    originals: list[Any] = []
    masked = 0
    for item in documents(path):
        if isinstance(item, RunError):
            yield item
            continue
        where, doc = item
        masked += sp.mask_credentials(doc)
        originals.append(doc)
        for span in _spans(doc, where):
            if isinstance(span, RunError):
                yield span
            else:
                spans.append(span)
    if not spans and not originals:
        yield RunError(f"{path}: empty file")
        return
    if not spans:
        yield RunError(f"{path}: no spans in the OTLP document; nothing to import")
        return
    for key, group in _group(spans).items():
        try:
            run = _to_run(path, key, group)
        except RunError as exc:
            yield exc
            continue
        if masked:
            run.source["credentials_masked_in_file"] = masked
        yield run


def _to_run(path: Path, key: str, group: list[_Span]) -> Run:
    problems: list[str] = []
    steps: list[Step] = []
    scores: list[tuple[str, Any]] = []
    dropped = 0
    for span in group:
        kind = span.kind()
        if kind == "llm":
            steps.append(_llm_step(span, problems))
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
    task = Task(id=key, instruction=instruction, task_type="otel", metadata=meta)
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
