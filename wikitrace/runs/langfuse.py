"""Langfuse trace exports (the public API's trace objects, Langfuse v2/v3).

Read: traces as ``GET /api/public/traces/{id}`` returns them, as a JSON array, as
a list response (``{"data": [...], "meta": ..}``), one per line, or one object:
``{"id", "timestamp", "name", "input", "output", "sessionId", "userId",
"metadata", "tags", "observations": [..], "scores": [..]}``. An observation:
``{"id", "traceId", "type", "name", "startTime", "input", "output", "level",
"statusMessage", "parentObservationId", "model", "metadata"}``; a score:
``{"name", "value", "stringValue", "dataType", "observationId", "source"}``.

Observations by ``type``:

- ``GENERATION``: a model call; ``input`` (chat messages, ``{"messages": ..}`` or
  text) and ``output`` (a message, a completion object or text) give the messages;
- ``TOOL``: a tool execution: ``name``, ``input`` (arguments), ``output`` (result),
  the call id from ``metadata.tool_call_id`` when present;
- ``GUARDRAIL``, and spans or events named for a handoff or a guardrail: harness turns;
- ``SPAN``, ``EVENT``, ``AGENT``, ``CHAIN``, ... : structure only.

A trace without any of these is its own ``input`` and ``output``. A trace whose
``observations`` are ids only (the traces list endpoint) is reported, not read half.

``level: ERROR`` marks an observation failed (``statusMessage`` says why): a failed
tool is a call with ``is_error``, a failed generation a harness retry turn.

Runs: a trace, id its ``id``; traces with the same ``sessionId`` are one run (id the
session id), in time order. Outcome: the trace-level scores (``observationId`` null):
``BOOLEAN`` 1/0, ``CATEGORICAL`` words (pass, correct, success / fail, incorrect,
…), ``NUMERIC`` a success at >= 1.0; several must agree (``spans.verdict_of``).
Without one, ``--outcomes`` keyed by trace or session id.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterator

from . import spans as sp
from ._common import Sniff
from .harness import end_turn
from .model import Outcome, Run, RunError, Task, count_steps
from .otlp_spans import HARNESS_NAME
from .trace_files import documents, first_record, mask_credentials
from .spans import Step

def _is_trace(obj: Any) -> bool:
    return (isinstance(obj, dict) and isinstance(obj.get("id"), str) and isinstance(obj.get("observations"), list)
            and ("scores" in obj or "sessionId" in obj or "htmlPath" in obj or "timestamp" in obj))


def looks_like(s: Sniff) -> bool:
    obj = first_record(s.whole, s.first)
    if _is_trace(obj):
        return True
    return bool(re.search(r'"observations"\s*:\s*\[', s.head) and re.search(r'"traceId"\s*:', s.head)
                and re.search(r'"type"\s*:\s*"(?:GENERATION|SPAN|EVENT|TOOL)"', s.head))


def _traces(path: Path) -> Iterator[dict | RunError]:
    for item in documents(path):
        if isinstance(item, RunError):
            yield item
            continue
        where, doc = item
        items = doc["data"] if isinstance(doc, dict) and isinstance(doc.get("data"), list) else [doc]
        for i, trace in enumerate(items):
            at = f"{where}" + (f": data[{i}]" if len(items) > 1 else "")
            if _is_trace(trace) and not trace["id"].strip():  # no id, no run id: the trace cannot be told apart
                yield RunError(f"{at}: a Langfuse trace with an empty 'id'; export it with its trace id")
            elif _is_trace(trace):
                yield trace
            else:
                yield RunError(f"{at}: not a Langfuse trace (needs 'id' and an 'observations' list)")


def read(path: Path) -> Iterator[Run | RunError]:
    by_id: dict[str, dict] = {}  # a trace exported twice counts once: its last copy
    masked = 0
    for trace in _traces(path):
        if isinstance(trace, RunError):
            yield trace
            continue
        masked += mask_credentials(trace)
        by_id[trace["id"]] = trace
    groups: dict[str, list[dict]] = {}
    for trace in by_id.values():
        session = trace.get("sessionId")
        key = session if isinstance(session, str) and session.strip() else trace["id"]
        groups.setdefault(key, []).append(trace)
    if not groups:
        yield RunError(f"{path}: no Langfuse traces; nothing to import")
        return
    yield from sp.each_run(((lambda key=key, traces=traces: _to_run(
        path, key, sorted(traces, key=lambda t: (sp.seconds(t.get("timestamp")), t["id"]))))
        for key, traces in groups.items()), masked)


def _step(obs: dict) -> Step | None:
    kind = str(obs.get("type") or "").upper()
    name = obs.get("name") if isinstance(obs.get("name"), str) else ""
    at = sp.seconds(obs.get("startTime"))
    failed = True if str(obs.get("level") or "").upper() == "ERROR" else None
    error = obs.get("statusMessage") if isinstance(obs.get("statusMessage"), str) and obs.get("statusMessage") else None
    if kind == "GENERATION":
        model = obs.get("model")
        return Step(at=at, kind="llm", inputs=sp.msgs_from(obs.get("input"), "user"),
                    outputs=sp.msgs_from(obs.get("output"), "assistant"), failed=failed, error=error,
                    extra={"model": model} if isinstance(model, str) else {})
    if kind == "TOOL":
        meta = obs.get("metadata") if isinstance(obs.get("metadata"), dict) else {}
        call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else None
        output = obs.get("output")
        return Step(at=at, kind="tool", name=name or "unknown", call_id=call_id, arguments=obs.get("input"),
                    result=sp._str(output) if output is not None else None, failed=failed, error=error)
    if kind == "GUARDRAIL" or HARNESS_NAME.match(name):
        word = "guardrail" if kind == "GUARDRAIL" else HARNESS_NAME.match(name).group(1).lower()
        detail = sp._str(obs.get("output"))
        text = name + (f": {detail}" if detail else "") + (f" (failed: {error or 'error'})" if failed else "")
        target = obs.get("output") if isinstance(obs.get("output"), str) else None
        return Step(at=at, kind="harness", harness=word, text=text, failed=failed, name=target)
    return None


def _score_value(score: dict) -> Any:
    kind = str(score.get("dataType") or "").upper()
    value = score.get("value")
    if kind == "BOOLEAN" and value in (0, 1, 0.0, 1.0):
        return bool(value)
    if kind == "CATEGORICAL" or (value is None and isinstance(score.get("stringValue"), str)):
        return score.get("stringValue") if isinstance(score.get("stringValue"), str) else value
    return value


def _to_run(path: Path, key: str, traces: list[dict]) -> Run:
    steps: list[Step] = []
    scores: list[tuple] = []
    for trace in traces:
        listed = trace["observations"]
        if listed and all(isinstance(o, str) for o in listed):
            raise RunError(f"{path}: trace {trace['id']} lists only observation ids (the shape of the traces list "
                           f"endpoint); export each trace with GET /api/public/traces/<id> to include them")
        observations = [o for o in listed if isinstance(o, dict)]
        before = len(steps)
        steps += [s for s in map(_step, observations) if s is not None]
        if len(steps) == before:  # no generation recorded: the trace's own input and output are the exchange
            at = sp.seconds(trace.get("timestamp"))
            steps.append(Step(at=at, kind="llm", inputs=sp.msgs_from(trace.get("input"), "user"),
                              outputs=sp.msgs_from(trace.get("output"), "assistant")))
        for score in sp.as_list(trace.get("scores")):
            if isinstance(score, dict) and not score.get("observationId"):
                number = score.get("value") if isinstance(score.get("value"), (int, float)) else None
                scores.append((str(score.get("name") or "score"), _score_value(score), number))
    assembly = sp.assemble(steps)
    turns = assembly.turns
    instruction = next((t.content for t in turns if t.type == "message" and t.role == "user" and (t.content or "").strip()), None)
    if not instruction:
        msgs = sp.msgs_from(traces[0].get("input"), "user")
        instruction = next((m.content for m in msgs if m.role == "user" and m.content), None)
    if not instruction:
        name = traces[0].get("name") if isinstance(traces[0].get("name"), str) and traces[0].get("name") else None
        if not name or not any(t.type == "function_call" for t in turns):
            raise RunError(f"{path}: trace {key}: no user message in its generations and no trace input; "
                           f"nothing says what the task was")
        instruction = f"{name} (the trace records no input)"
    last = traces[-1]
    errored = [o for o in last["observations"] if isinstance(o, dict) and str(o.get("level") or "").upper() == "ERROR"
               and not o.get("parentObservationId") and str(o.get("type") or "").upper() not in ("GENERATION", "TOOL")]
    ended = f"harness: the run failed ({errored[0].get('statusMessage') or 'level ERROR'})" if errored else "agent"
    end_turn(turns, ended)
    verdict, why = sp.verdict_of(scores)
    outcome = None
    if verdict is not None:
        outcome = Outcome(success=verdict[0], steps=count_steps(turns), score=verdict[1], ended_by=ended)
    ids = [t["id"] for t in traces]
    meta: dict[str, Any] = {"trace_ids": ids}
    for field in ("name", "userId", "tags", "release"):
        if traces[0].get(field) not in (None, "", []):
            meta[field] = traces[0][field]
    if scores:
        meta["scores"] = {s[0]: s[1] for s in scores}
    kind = meta["name"] if isinstance(meta.get("name"), str) and meta["name"].strip() else "langfuse"
    task = Task(id=key, instruction=instruction, task_type=kind, metadata=meta)
    run = Run(run_id=key, task=task, turns=turns, outcome=outcome)
    run.source = {"format": "langfuse", "file": path.name, "original": traces if len(traces) > 1 else traces[0],
                  "original_format": "json", "outcome_keys": ids, "ended_by": ended, "pairing": assembly.pairing}
    if outcome is None:
        run.source["no_outcome_reason"] = (why or "the trace holds no trace-level score") + \
            f"; key an --outcomes entry by {'session' if key not in ids else 'trace'} id {key}"
    return run
