"""OpenAI Agents SDK traces as its JSON exporters write them (``openai-agents`` 0.x tracing).

Read: the items ``Trace.export()`` and ``Span.export()`` produce, as the backend
exporter sends them (``{"data": [...]}``), as a JSON array, or one item per line.
A trace item: ``{"object": "trace", "id": "trace_…", "workflow_name", "group_id",
"metadata"}``; a span item: ``{"object": "trace.span", "id", "trace_id",
"parent_id", "started_at", "ended_at", "span_data": {"type": ..}, "error":
{"message", "data"} | null}``. Span types used:

- ``generation``: ``input`` / ``output`` chat messages (``tool_calls`` with ids),
  ``model``: the messages (see ``spans.py``);
- ``function``: ``name``, ``input`` (the arguments as JSON text), ``output``: a tool
  call and its result. Function spans carry no call id: each answers the oldest
  unanswered call of that tool a generation made, else it is a call of its own
  (runs on the Responses API log no generation content);
- ``handoff`` (``from_agent``, ``to_agent``) and ``guardrail`` (``name``,
  ``triggered``): the framework's steps, kept apart as harness turns;
- ``agent``, ``response``, ``custom``, ``mcp_tools``: structure only.

A span's ``error`` marks it failed (a failed function span is a call with
``is_error``; a failed generation a harness retry turn; a failed agent span, e.g.
``Max turns exceeded``, ends the run by the harness).

Runs: a trace, id its ``trace_id``; traces sharing a ``group_id`` (a conversation)
are one run with the group id. The SDK logs no verdict: ``--outcomes`` keyed by
trace id or group id.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import spans as sp
from ._common import Sniff
from .harness import end_turn
from .model import Run, RunError, Task
from .trace_files import documents, first_record, mask_credentials
from .spans import Step


def _is_item(obj: Any) -> bool:
    return isinstance(obj, dict) and obj.get("object") in ("trace", "trace.span")


def looks_like(s: Sniff) -> bool:
    obj = first_record(s.whole, s.first)
    if _is_item(obj):
        return True
    return bool(re.search(r'"object"\s*:\s*"trace(?:\.span)?"', s.head[:4096])
                and re.search(r'"(?:span_data|workflow_name)"\s*:', s.head))


def _items(path: Path) -> Iterator[tuple[str, dict] | RunError]:
    for item in documents(path):
        if isinstance(item, RunError):
            yield item
            continue
        where, doc = item
        if isinstance(doc, dict) and isinstance(doc.get("data"), list):
            for i, x in enumerate(doc["data"]):
                yield (f"{where}: data[{i}]", x) if _is_item(x) else RunError(f"{where}: data[{i}] is not a trace or span item")
        elif _is_item(doc):
            yield where, doc
        else:
            yield RunError(f"{where}: not a trace or span item (expected \"object\": \"trace\" or \"trace.span\")")


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _named(value: Any) -> bool:
    """A trace id a run can be named by: a blank one would make a run without an id."""
    return isinstance(value, str) and bool(value.strip())


def read(path: Path) -> Iterator[Run | RunError]:
    traces: dict[str, dict] = {}
    by_id: dict[str, dict] = {}  # a span exported twice counts once: its last copy
    masked = 0
    for item in _items(path):
        if isinstance(item, RunError):
            yield item
            continue
        _, obj = item
        masked += mask_credentials(obj)
        if obj["object"] == "trace" and _named(obj.get("id")):
            traces[obj["id"]] = obj
        elif obj["object"] == "trace.span":
            if _named(obj.get("trace_id")):
                by_id[obj["id"] if isinstance(obj.get("id"), str) else f"#{len(by_id)}"] = obj
            else:
                yield RunError(f"{path}: span {obj.get('id')!r} has no trace_id; skipped")
    spans = list(by_id.values())
    if not traces and not spans:
        yield RunError(f"{path}: no traces or spans; nothing to import")
        return
    groups: dict[str, list[str]] = {}
    for tid in list(traces) + [s["trace_id"] for s in spans]:
        group = traces.get(tid, {}).get("group_id")
        key = group if isinstance(group, str) and group.strip() else tid
        if tid not in groups.setdefault(key, []):
            groups[key].append(tid)
    yield from sp.each_run(((lambda key=key, tids=tids: _to_run(
        path, key, [traces[t] for t in tids if t in traces], [s for s in spans if s["trace_id"] in tids], tids))
        for key, tids in groups.items()), masked)


def _step(span: dict) -> Step | None:
    data = span.get("span_data") if isinstance(span.get("span_data"), dict) else {}
    kind = data.get("type")
    at = sp.seconds(span.get("started_at"))
    err = span.get("error") if isinstance(span.get("error"), dict) else None
    error = None
    if err:
        detail = err.get("data")
        error = _text(err.get("message")) or "error"
        if isinstance(detail, dict) and detail:
            error += f" ({_text(detail)})"
    if kind == "generation":
        model = data.get("model")
        return Step(at=at, kind="llm", inputs=sp.msgs_from(data.get("input"), "user"),
                    outputs=[m for m in sp.msgs_from(data.get("output"), "assistant")],
                    failed=bool(err), error=error, extra={"model": model} if isinstance(model, str) else {})
    if kind == "function":
        return Step(at=at, kind="tool", name=_text(data.get("name")) or "unknown", arguments=data.get("input"),
                    result=_text(data.get("output")), failed=True if err else None, error=error)
    if kind == "handoff":
        text = f"handoff from {data.get('from_agent') or '?'} to {data.get('to_agent') or '?'}"
        return Step(at=at, kind="harness", harness="handoff", text=text + (f" (failed: {error})" if err else ""),
                    failed=bool(err), name=_text(data.get("to_agent")))
    if kind == "guardrail":
        triggered = data.get("triggered")
        text = f"guardrail {data.get('name') or '?'}: " + ("triggered, the run was stopped" if triggered else "passed")
        return Step(at=at, kind="harness", harness="guardrail", text=text)
    return None


def _to_run(path: Path, key: str, traces: list[dict], spans: list[dict], tids: list[str]) -> Run:
    steps = [s for s in map(_step, spans) if s is not None]
    for s in steps:
        if s.kind == "llm":
            for m in s.outputs:
                m.role = "assistant" if m.role == "user" else m.role
    assembly = sp.assemble(steps)
    turns = assembly.turns
    workflow = next((t.get("workflow_name") for t in traces if isinstance(t.get("workflow_name"), str)), None)
    instruction = next((t.content for t in turns if t.type == "message" and t.role == "user" and (t.content or "").strip()), None)
    if not instruction:
        if not workflow:
            raise RunError(f"{path}: trace {key}: no user message in any generation span and no workflow_name; "
                           f"nothing says what the task was")
        instruction = f"{workflow} (the trace logs no user input)"
    ended = "agent"
    for s in sorted(spans, key=lambda x: sp.seconds(x.get("started_at"))):
        data = s.get("span_data") if isinstance(s.get("span_data"), dict) else {}
        if data.get("type") == "agent" and isinstance(s.get("error"), dict):
            ended = f"harness: the agent run stopped ({_text(s['error'].get('message')) or 'error'})"
        if data.get("type") == "guardrail" and data.get("triggered"):
            ended = f"harness: guardrail {data.get('name') or '?'} was triggered"
    end_turn(turns, ended)
    meta: dict[str, Any] = {"trace_ids": tids}
    if workflow:
        meta["workflow_name"] = workflow
    agents = sorted({d.get("name") for d in (s.get("span_data") for s in spans)
                     if isinstance(d, dict) and d.get("type") == "agent" and isinstance(d.get("name"), str)})
    if agents:
        meta["agents"] = agents
    task = Task(id=key, instruction=instruction, task_type=workflow or "openai-agents", metadata=meta)
    run = Run(run_id=key, task=task, turns=turns, outcome=None)
    run.source = {"format": "agents-sdk", "file": path.name, "original_format": "json",
                  "original": {"traces": traces, "spans": spans}, "outcome_keys": tids, "ended_by": ended,
                  "pairing": assembly.pairing,
                  "no_outcome_reason": f"the Agents SDK logs no verdict; key an --outcomes entry by "
                                       f"{'group' if key not in tids else 'trace'} id {key}"}
    return run
