"""Inspect AI evaluation logs: ``.eval`` (a zip of JSON) and ``.json`` (log format version 2).

Read from a ``.eval`` archive: ``header.json`` (else ``_journal/start.json`` of a log
whose run did not finish) for ``eval`` (``eval_id``, ``task``, ``model``), and every
``samples/<id>_epoch_<n>.json``. From a ``.json`` log: ``eval`` and ``samples``.

A sample (one run per sample and epoch) gives: ``id``, ``epoch``, ``input`` (text or
messages), ``target``, ``messages`` (``system`` / ``user`` / ``assistant`` with
``tool_calls: [{id, function, arguments}]`` / ``tool`` with ``tool_call_id``,
``function`` and ``error``), ``scores`` (``{scorer: {value, answer, explanation}}``),
``error``, ``error_retries``, ``limit`` (``{type, limit}``) and ``attachments``
(``attachment://<hash>`` strings in messages are replaced by their text).

Turns: the messages in order; a tool message is the result of the call with its
``tool_call_id`` (``error`` set means ``is_error``). Harness steps, kept apart: each
``error_retries`` entry (the sample failed and Inspect ran it again) is a harness
message; a ``limit`` ends the run by the harness (``<type> limit reached``), so does
an ``error``.

Outcome: the scorers' values, mapped as Inspect maps them to numbers (``C`` 1,
``I`` 0, ``P`` 0.5, ``N`` 0; booleans; numbers as given; ``yes``/``no``), a success
at full marks (>= 1.0); several scorers must agree (``spans.verdict_of``). A sample
without a score (not scored, or a value that is a dict or list) needs ``--outcomes``
keyed by its run id or ``<sample id>-epoch<n>``.

Run id: ``<task>-<sample id>-epoch<n>-<eval_id>``, so the same log read again (or its
``.json`` conversion) gives the same ids; task id ``<task>/<sample id>``.
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path
from typing import Any, Iterator

from . import spans as sp
from ._common import MAX_INPUT_BYTES, Sniff, load_json, text_of
from .harness import end_turn
from .model import Outcome, Run, RunError, Task, count_steps
from .spans import Msg, Step

_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
_ATTACHMENT = re.compile(r"attachment://([0-9a-f]{16,64})")


def is_eval_zip(path: Path) -> bool:
    """A zip whose entries are an Inspect log's (checked before any text sniffing: a zip is binary)."""
    try:
        with path.open("rb") as fh:
            if fh.read(4) != b"PK\x03\x04":
                return False
    except OSError:
        return False
    if not zipfile.is_zipfile(path):
        return False
    try:
        with zipfile.ZipFile(path) as zf:
            names = set(zf.namelist())
    except (zipfile.BadZipFile, OSError):
        return False
    return "header.json" in names or "_journal/start.json" in names or any(n.startswith("samples/") for n in names)


def looks_like(s: Sniff) -> bool:
    obj = s.whole if s.whole is not None else s.first
    if isinstance(obj, dict) and isinstance(obj.get("eval"), dict) and ("samples" in obj or "results" in obj) \
            and "task" in obj["eval"]:
        return True
    return bool(re.match(r'\s*\{', s.head) and re.search(r'"eval"\s*:\s*\{', s.head)
                and re.search(r'"eval_id"\s*:', s.head) and re.search(r'"task"\s*:', s.head))


def _zip_json(zf: zipfile.ZipFile, name: str, where: str) -> Any:
    info = zf.getinfo(name)
    if info.file_size > MAX_INPUT_BYTES:
        raise RunError(f"{where}: {name} unpacks to {info.file_size} bytes, more than a single input may have")
    from ._common import decode, parse_json

    return parse_json(decode(zf.read(name), f"{where}:{name}"), f"{where}:{name}")


def _samples(path: Path) -> Iterator[tuple[dict, Any, str] | RunError]:
    """(eval spec, sample, where) for every sample of the log."""
    if is_eval_zip(path):
        try:
            zf = zipfile.ZipFile(path)
        except (zipfile.BadZipFile, OSError) as exc:
            yield RunError(f"{path}: not a readable .eval archive ({exc})")
            return
        with zf:
            names = zf.namelist()
            head_name = "header.json" if "header.json" in names else "_journal/start.json" if "_journal/start.json" in names else None
            if head_name is None:
                yield RunError(f"{path}: an .eval archive without header.json or _journal/start.json")
                return
            header = _zip_json(zf, head_name, str(path))
            spec = header.get("eval") if isinstance(header, dict) and isinstance(header.get("eval"), dict) else None
            if spec is None:
                yield RunError(f"{path}:{head_name}: no 'eval' object (task, eval_id)")
                return
            samples = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
            if not samples:
                yield RunError(f"{path}: no samples in the archive (the evaluation logged none)")
            for name in samples:
                try:
                    yield spec, _zip_json(zf, name, str(path)), f"{path}:{name}"
                except RunError as exc:
                    yield exc
        return
    log = load_json(path)
    if not isinstance(log, dict) or not isinstance(log.get("eval"), dict):
        yield RunError(f"{path}: an Inspect log must be a JSON object with 'eval'")
        return
    samples = log.get("samples")
    if not isinstance(samples, list) or not samples:
        yield RunError(f"{path}: no samples in the log (written with --no-log-samples?); nothing to import")
        return
    for i, sample in enumerate(samples):
        yield log["eval"], sample, f"{path}: samples[{i}]"


def read(path: Path) -> Iterator[Run | RunError]:
    try:
        for item in _samples(path):
            if isinstance(item, RunError):
                yield item
                continue
            spec, sample, where = item
            try:
                yield to_run(spec, sample, path, where)
            except RunError as exc:
                yield exc
    except RunError as exc:
        yield exc


def _resolve(value: Any, attachments: dict) -> Any:
    """Replace ``attachment://<hash>`` references by the text the sample keeps for them."""
    if isinstance(value, str):
        if "attachment://" not in value:
            return value
        return _ATTACHMENT.sub(lambda m: attachments.get(m.group(1), m.group(0))
                               if isinstance(attachments.get(m.group(1)), str) else m.group(0), value)
    if isinstance(value, list):
        return [_resolve(v, attachments) for v in value]
    if isinstance(value, dict):
        return {k: _resolve(v, attachments) for k, v in value.items()}
    return value


def _content(content: Any) -> tuple[str | None, str | None]:
    """(text, reasoning) of an Inspect message's content: a string or typed parts."""
    if not isinstance(content, list):
        return text_of(content), None
    texts, thoughts = [], []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "reasoning":
            thought = part.get("reasoning") if not part.get("redacted") else "[redacted reasoning]"
            if isinstance(thought, str):
                thoughts.append(thought)
        else:
            texts.append(text_of([part]) or "")
    return "\n".join(t for t in texts if t) or None, "\n\n".join(thoughts) or None


def _message(m: Any) -> Msg | None:
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        return None
    text, reasoning = _content(m.get("content"))
    msg = Msg(role=m["role"], content=text, reasoning=reasoning)
    for call in sp.as_list(m.get("tool_calls")):
        if isinstance(call, dict):
            name = call.get("function") if isinstance(call.get("function"), str) else None
            msg.calls.append(sp.Call(call.get("id") if isinstance(call.get("id"), str) else None, name or "unknown",
                                     call.get("arguments")))
    if msg.role == "tool":
        msg.call_id = m.get("tool_call_id") if isinstance(m.get("tool_call_id"), str) else None
        err = m.get("error")
        if isinstance(err, dict):
            msg.failed = True
            kind = err.get("type") if isinstance(err.get("type"), str) else "error"
            detail = err.get("message") if isinstance(err.get("message"), str) else kind
            if detail and detail not in (msg.content or ""):
                msg.content = "\n".join(x for x in (msg.content, f"{kind}: {detail}") if x)
    return msg


def _value(value: Any) -> Any:
    if isinstance(value, str) and value.strip() in _LETTERS:
        return _LETTERS[value.strip()]
    return value


def sample_id(sample: dict) -> str:
    sid = sample.get("id")
    return str(sid) if isinstance(sid, (str, int)) and not isinstance(sid, bool) else ""


def to_run(spec: dict, sample: Any, path: Path, where: str) -> Run:
    if not isinstance(sample, dict):
        raise RunError(f"{where}: a sample must be a JSON object")
    sid = sample_id(sample)
    if not sid:
        raise RunError(f"{where}: a sample without an 'id'")
    epoch = sample.get("epoch") if isinstance(sample.get("epoch"), int) and not isinstance(sample.get("epoch"), bool) else 1
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    messages = _resolve(sample.get("messages"), attachments)
    if not isinstance(messages, list):
        raise RunError(f"{where}: field 'messages' must be a list")
    task_name = spec.get("task") if isinstance(spec.get("task"), str) and spec.get("task") else "inspect"
    eval_id = spec.get("eval_id") if isinstance(spec.get("eval_id"), str) else spec.get("run_id") if isinstance(spec.get("run_id"), str) else ""
    steps: list[Step] = []
    for i, retry in enumerate(sp.as_list(sample.get("error_retries"))):
        text = retry.get("message") if isinstance(retry, dict) else None
        steps.append(Step(at=-1.0, kind="harness", harness="retry",
                          text=f"the sample failed and was run again ({_first_line(text) or 'error'})"))
    steps.append(Step(at=0.0, kind="message", inputs=[m for m in map(_message, messages) if m is not None]))
    assembly = sp.assemble(steps)
    turns = assembly.turns
    source_input = _resolve(sample.get("input"), attachments)
    instruction = source_input if isinstance(source_input, str) else next(
        (m.content for m in sp.msgs_from(source_input, "user") if m.role == "user" and m.content), None)
    if not instruction:
        instruction = next((t.content for t in turns if t.type == "message" and t.role == "user" and t.content), None)
    if not instruction:
        raise RunError(f"{where}: sample {sid}: no input and no user message; nothing says what the task was")
    ended = "agent"
    limit = sample.get("limit")
    error = sample.get("error")
    if isinstance(limit, dict) and limit.get("type"):
        ended = f"harness: {limit['type']} limit reached" + (f" ({limit['limit']})" if limit.get("limit") is not None else "")
    elif isinstance(error, dict):
        ended = f"harness: the sample raised an error ({_first_line(error.get('message')) or 'error'})"
    end_turn(turns, ended)
    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    named = [(str(name), _value(s.get("value")) if isinstance(s, dict) else None) for name, s in scores.items()]
    verdict, why = sp.verdict_of(named)
    outcome = None
    if verdict is not None:
        outcome = Outcome(success=verdict[0], steps=count_steps(turns), score=verdict[1], ended_by=ended)
    run_id = f"{task_name}-{sid}-epoch{epoch}" + (f"-{eval_id}" if eval_id else "")
    meta: dict[str, Any] = {"eval_id": eval_id, "sample_id": sid, "epoch": epoch}
    for key in ("model", "task_version"):
        if spec.get(key) is not None:
            meta[key] = spec[key]
    target = sample.get("target")
    if target not in (None, "", []):
        meta["target"] = target
    if scores:
        meta["scores"] = {name: {k: s.get(k) for k in ("value", "answer", "explanation") if k in s}
                          for name, s in scores.items() if isinstance(s, dict)}
    task = Task(id=f"{task_name}/{sid}", instruction=instruction, task_type=task_name, metadata=meta)
    run = Run(run_id=run_id, task=task, turns=turns, outcome=outcome)
    run.source = {"format": "inspect-ai", "file": path.name, "original": sample, "original_format": "json",
                  "outcome_keys": [f"{sid}-epoch{epoch}"] + ([sample["uuid"]] if isinstance(sample.get("uuid"), str) else []),
                  "ended_by": ended, "pairing": assembly.pairing}
    if outcome is None:
        run.source["no_outcome_reason"] = (why or "the sample holds no score") + \
            f"; key an --outcomes entry by {run_id} or {sid}-epoch{epoch}"
    return run


def _first_line(text: Any) -> str | None:
    if not isinstance(text, str) or not text.strip():
        return None
    return text.strip().splitlines()[0][:200]
