"""The answers of finished batches into the response cache (``wikitrace compile --batch``):
each successful output line is stored with the same ``ResponseCache.put`` the live path
uses, under the messages and mode of its request line; each failed one is listed with
its reason, and so is every request a batch gave no result for.
"""

from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from ..llm.cache import CachedAnswer
from .batch_api import TERMINAL, BatchError, _api_error, make_client


@dataclass
class FailedItem:
    custom_id: str  # the cache key of the request
    reason: str
    run_id: str | None = None  # known when the same process planned the batch


@dataclass
class BatchReport:
    submitted: int = 0  # requests in the batches (after skipping cached ones)
    succeeded: int = 0  # answers stored in the cache
    failed: list[FailedItem] = field(default_factory=list)  # these runs go through the live path
    skipped_cached: int = 0  # runs whose answer was already cached: not submitted
    batch_ids: list[str] = field(default_factory=list)
    statuses: dict[str, str] = field(default_factory=dict)  # batch id -> final status
    rejected: dict[str, str] = field(default_factory=dict)  # batch id -> why the API failed it as a whole
    resumed: bool = False
    duplicates: int = 0
    too_large: list[str] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.succeeded} of {self.submitted} batch requests answered"]
        if self.failed:
            parts.append(f"{len(self.failed)} failed (compiled live)")
        if self.skipped_cached:
            parts.append(f"{self.skipped_cached} already cached")
        if self.too_large:
            parts.append(f"{len(self.too_large)} too large for a batch file (compiled live)")
        odd = sorted({s for s in self.statuses.values() if s != "completed"})
        if odd:
            parts.append("batch status " + ", ".join(odd))
        return "; ".join(parts)


def _mode_of(body: dict[str, Any]) -> str:
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    return kind if kind in ("json_schema", "json_object") else "text"


def _file_lines(client: Any, file_id: str) -> Iterator[bytes]:
    """The lines of a stored file, streamed, split on ``\n`` only.

    (Text line splitting would also cut at U+2028 or U+0085, which JSON allows raw
    inside strings and which run logs do contain.)
    """
    with client.files.with_streaming_response.content(file_id) as response:
        rest = b""
        for chunk in response.iter_bytes():
            rest += chunk
            *lines, rest = rest.split(b"\n")
            for line in lines:
                if line.strip():
                    yield line
        if rest.strip():
            yield rest


def _error_text(body: Any) -> str:
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner.get("code") or json.dumps(inner))
        return str(inner)
    return str(body or "")


def _answer(body: Any) -> tuple[str, dict[str, int]] | str:
    """``(text, usage)`` of a chat completion body, or why there is none."""
    if not isinstance(body, dict):
        return "the response has no body"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return "the response has no choices"
    message = choices[0].get("message")
    text = message.get("content") if isinstance(message, dict) else None
    if not isinstance(text, str) or not text.strip():
        return f"empty answer (finish_reason {choices[0].get('finish_reason')})"
    raw = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    usage = {k: raw[k] for k in ("prompt_tokens", "completion_tokens")
             if isinstance(raw.get(k), int) and not isinstance(raw.get(k), bool)}
    return text, usage


def _outcome(record: dict[str, Any]) -> tuple[str, tuple[str, dict[str, int]] | None, str | None]:
    """``(custom_id, answer, reason)`` of one output or error file line."""
    cid = str(record.get("custom_id") or "")
    err = record.get("error")
    response = record.get("response") if isinstance(record.get("response"), dict) else {}
    status = response.get("status_code")
    if err:
        if isinstance(err, dict):
            code, msg = err.get("code"), err.get("message")
            return cid, None, " ".join(f"{code or 'error'}: {msg or ''}".split())[:300]
        return cid, None, " ".join(str(err).split())[:300]
    if status != 200:
        return cid, None, " ".join(f"HTTP {status}: {_error_text(response.get('body'))}".split())[:300]
    got = _answer(response.get("body"))
    if isinstance(got, str):
        return cid, None, got
    return cid, got, None


def _batch_problem(batch: Any) -> str:
    status = str(getattr(batch, "status", "unknown"))
    errs = getattr(getattr(batch, "errors", None), "data", None) or []
    first = errs[0] if errs else None
    detail = ""
    if first is not None:
        detail = f": {getattr(first, 'code', None) or 'error'}: {getattr(first, 'message', '') or ''}"
    return " ".join(f"no result (batch {status}{detail})".split())[:300]


def download_into_cache(batch_ids: list[str], compiler: Any, *, client: Any = None,
                        batches: dict[str, Any] | None = None,
                        inputs: dict[str, Path] | None = None) -> BatchReport:
    """Store every successful answer of finished batches in ``compiler.cache``.

    The input file of each batch (the local copy in ``inputs`` when given, else
    the uploaded one) supplies the messages and mode of each request, so each
    cache file is the same as the live path writes. Failed lines, lines in the
    error file and requests with no result at all are listed with a reason.
    Memory holds a custom_id -> offset index of one input file, not the answers.
    """
    from ..llm.client import sdk_errors

    sdk = sdk_errors()

    if getattr(compiler, "cache", None) is None:
        raise BatchError("--batch needs the response cache; do not combine it with --no-cache")
    client = client or make_client(compiler)
    report = BatchReport(batch_ids=list(batch_ids))
    for bid in dict.fromkeys(batch_ids):
        try:
            batch = (batches or {}).get(bid) or client.batches.retrieve(bid)
        except sdk.APIError as exc:
            raise _api_error(f"looking up batch {bid}", exc) from None
        report.statuses[bid] = str(batch.status)
        if str(batch.status) == "failed":
            report.rejected[bid] = _batch_problem(batch).removeprefix("no result (").removesuffix(")")
        if str(batch.status) not in TERMINAL:
            raise BatchError(f"batch {bid} is still {batch.status}; wait for it (poll) before downloading")
        with tempfile.TemporaryDirectory(prefix="wikitrace-batch-") as tmp:
            local = (inputs or {}).get(bid)
            if local is None or not Path(local).is_file():
                local = Path(tmp) / "input.jsonl"
                try:
                    with open(local, "wb") as fh:
                        for line in _file_lines(client, batch.input_file_id):
                            fh.write(line.rstrip(b"\r\n") + b"\n")
                except sdk.APIError as exc:
                    raise _api_error(f"downloading the input of batch {bid}", exc) from None
            _store_batch(batch, Path(local), client, compiler, report)
    compiler.cache.flush()  # on disk before anyone is told they are cached (a build may read them in another process)
    return report


def _store_batch(batch: Any, local: Path, client: Any, compiler: Any, report: BatchReport) -> None:
    from ..llm.client import sdk_errors

    sdk = sdk_errors()

    offsets: dict[str, int] = {}
    with open(local, "rb") as fh:
        pos = 0
        for raw in fh:
            if raw.strip():
                try:
                    cid = json.loads(raw).get("custom_id")
                except (ValueError, AttributeError):
                    cid = None
                if isinstance(cid, str) and cid:
                    offsets.setdefault(cid, pos)
            pos += len(raw)
    report.submitted += len(offsets)
    seen: set[str] = set()
    with open(local, "rb") as inp:
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            try:
                for raw in _file_lines(client, file_id):
                    try:
                        record = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(record, dict):
                        continue
                    cid, answer, reason = _outcome(record)
                    if cid not in offsets or cid in seen:
                        continue
                    seen.add(cid)
                    if answer is None:
                        report.failed.append(FailedItem(cid, reason or "failed"))
                        continue
                    inp.seek(offsets[cid])
                    body = json.loads(inp.readline()).get("body") or {}
                    text, usage = answer
                    text = compiler.redacted(text)  # a key the model wrote back is never cached
                    compiler.cache.put(cid, CachedAnswer(text, usage), model=str(body.get("model") or compiler.model),
                                       mode=_mode_of(body), messages=body.get("messages") or [])
                    report.succeeded += 1
            except sdk.APIError as exc:
                raise _api_error(f"downloading the results of batch {batch.id}", exc) from None
    missing = [cid for cid in offsets if cid not in seen]
    if missing:
        reason = _batch_problem(batch)
        report.failed.extend(FailedItem(cid, reason) for cid in missing)
