"""One OTLP span as the OTLP importer reads it: attribute values, status, and the messages it carries.

``AnyValue`` JSON (``stringValue``, ``intValue`` as a string, ``arrayValue``,
``kvlistValue``) becomes Python values; flattened attribute families
(``llm.input_messages.0.message.role``) become nested lists; a model-call span's
messages come from the first family present (see ``otlp.py`` for the order).
"""

from __future__ import annotations

import re
from typing import Any

from . import spans as sp
from ._common import parse_arguments
from .spans import Msg, Step

_LLM_OPS = {"chat", "text_completion", "generate_content", "completion"}
_SESSION_KEYS = ("session.id", "gen_ai.conversation.id")
HARNESS_NAME = re.compile(r"^\s*(handoff|guardrail|retry)\b", re.I)


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


class Span:
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
        if oi == "GUARDRAIL" or HARNESS_NAME.match(self.name):  # some instrumentations record a handoff as a TOOL
            return "harness"
        if (isinstance(op, str) and op in _LLM_OPS) or oi == "LLM":
            return "llm"
        if op == "execute_tool" or oi == "TOOL":
            return "tool"
        if any(k.startswith(("gen_ai.prompt.", "llm.input_messages.")) for k in self.attrs):
            return "llm"
        return "other"


def json_attr(span: Span, key: str, problems: list[str]) -> Any:
    value = span.attrs.get(key)
    if isinstance(value, str):
        parsed = parse_arguments(value)
        if parsed is value and value.lstrip()[:1] in ("[", "{"):
            problems.append(f"span {span.span_id}: {key} is not valid JSON (cut short by a length limit?); kept as text")
        return parsed
    return value


def _flat_messages(span: Span, prefix: str, default_role: str) -> list[Msg]:
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


def _event_messages(span: Span) -> tuple[list[Msg], list[Msg]]:
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


def llm_step(span: Span, problems: list[str]) -> Step:
    inputs: list[Msg] = []
    outputs: list[Msg] = []
    if "gen_ai.input.messages" in span.attrs or "gen_ai.output.messages" in span.attrs:
        system = json_attr(span, "gen_ai.system_instructions", problems)
        if system:
            text = sp.msg_from_dict({"role": "system", "parts": system}) if isinstance(system, list) else Msg("system", str(system))
            if text is not None:
                inputs.append(text)
        raw_in = json_attr(span, "gen_ai.input.messages", problems)
        raw_out = json_attr(span, "gen_ai.output.messages", problems)
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
        inputs = sp.msgs_from(json_attr(span, "input.value", problems), "user")
        outputs = sp.msgs_from(json_attr(span, "output.value", problems), "assistant")
    for m in outputs:
        if m.role == "user":
            m.role = "assistant"
    failed, error = span.failure()
    model = span.attrs.get("gen_ai.response.model") or span.attrs.get("gen_ai.request.model") or span.attrs.get("llm.model_name")
    return Step(at=span.start, kind="llm", inputs=inputs, outputs=outputs, failed=failed, error=error,
                extra={"model": model} if isinstance(model, str) else {})
