"""``wikitrace compile --batch``: fill the response cache through the OpenAI Batch API.

The Batch API runs chat requests asynchronously (within 24 hours) at half the
price of live calls. This module uses it for one thing only: to **pre-fill the
response cache** (``cache.ResponseCache``) with the first answer for each run.
The normal build then runs as always; every run whose answer is cached costs no
HTTP call, and every run whose batch item failed takes the live path with its
retries, one repair call and the recorded offline fallback. Validation, repair
and fallback therefore live in ``llm.LLMCompiler`` alone.

The steps, each usable on its own:

- ``plan_batch``: render each run's messages in the compiler's response mode,
  compute the cache key, skip runs already cached (and exact duplicates), and
  stream request lines into JSONL files, a new file whenever one would pass the
  API's limits (50,000 requests, 200 MB). The ``custom_id`` of each line is its
  cache key, so the batch output maps straight back onto the cache;
- ``submit``: upload each file (purpose ``batch``) and create one batch per
  file (completion window ``24h``); the batch ids go to a state file at once;
- ``poll``: wait until every batch is completed, failed, expired or cancelled;
- ``download_into_cache``: store each successful output line with the same
  ``ResponseCache.put`` the live path uses; list each failed one with its
  reason. Expired or cancelled batches give what they finished.

The insight merges (one call per changed insight group, compilers/insight_merge.py) are
not in the batch: their prompts need every run compiled and gathered first, so the build
sends them through the live path afterwards, as it does without ``--batch``.

``prefill_cache`` runs them all, or resumes from a batch id or a state file so
that a build interrupted while waiting never submits (and pays for) the same
requests twice. It is synchronous: call it before the build's event loop.

Request lines never hold the API key; only the model, messages and response format.
The SDK client and its error classes come from the model gateway (``wikitrace.llm.client``),
which imports ``openai`` only when a client is made.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from ..runs.model import Run
from ..llm.cache import CachedAnswer

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
# OpenAI's limits per batch input file: 50,000 requests and 200 MB. The byte limit
# is kept a little under 200 MiB so that either reading of "MB" is respected.
MAX_REQUESTS_PER_FILE = 50_000
MAX_BYTES_PER_FILE = 200_000_000
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
STATE_FORMAT = "wikitrace-batch-state/1"
# Consecutive failed status checks tolerated while polling before giving up
# (the batches keep running; the state file lets a later run resume them).
MAX_POLL_ERRORS = 10


class BatchError(RuntimeError):
    """The batch path cannot go on; the message says what to do."""


@dataclass
class BatchFile:
    path: Path
    requests: int = 0
    bytes: int = 0


@dataclass
class BatchPlan:
    """Request files ready to submit, and what was left out of them."""

    directory: Path
    model: str
    endpoint: str  # the API base, e.g. https://api.openai.com/v1
    mode: str
    files: list[BatchFile] = field(default_factory=list)
    requests: int = 0
    skipped_cached: int = 0
    duplicates: int = 0  # runs whose request is identical to an earlier one (one request serves both)
    too_large: list[str] = field(default_factory=list)  # run ids whose one request passes the byte limit
    run_ids: dict[str, str] = field(default_factory=dict)  # cache key -> first run id
    _owns_directory: bool = False

    def cleanup(self) -> None:
        """Delete the request files (the directory too when the plan made it)."""
        if self._owns_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        else:
            for f in self.files:
                try:
                    f.path.unlink()
                except OSError:
                    pass


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


# --- planning -------------------------------------------------------------------------


def request_body(compiler: Any, messages: list[dict[str, str]], outcome: str, mode: str) -> dict[str, Any]:
    """The chat request body the live path would send for these messages (one source of truth)."""
    return compiler.request_body(messages, outcome, mode)


def _key(compiler: Any, messages: list[dict[str, str]], mode: str) -> str:
    return compiler.cache_key_for(messages, mode)


def _mode_of(body: dict[str, Any]) -> str:
    fmt = body.get("response_format")
    kind = fmt.get("type") if isinstance(fmt, dict) else None
    return kind if kind in ("json_schema", "json_object") else "text"


def plan_batch(runs: Iterable[Run], compiler: Any, directory: str | os.PathLike[str] | None = None, *,
               max_requests: int = MAX_REQUESTS_PER_FILE, max_bytes: int = MAX_BYTES_PER_FILE,
               on_run: Callable[[Run], None] | None = None) -> BatchPlan:
    """Write the batch request files for the runs whose answer is not cached yet.

    Runs are streamed: only the current file handle, the set of keys seen and a
    key -> run id map stay in memory. ``directory`` defaults to a new temporary
    folder (removed by ``BatchPlan.cleanup``).
    """
    if getattr(compiler, "cache", None) is None:
        raise BatchError("--batch needs the response cache; do not combine it with --no-cache")
    if max_requests < 1 or max_bytes < 1:
        raise ValueError("max_requests and max_bytes must be positive")
    owns = directory is None
    folder = Path(tempfile.mkdtemp(prefix="wikitrace-batch-")) if owns else Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    config = getattr(compiler, "config", None)
    plan = BatchPlan(directory=folder, model=compiler.model, endpoint=getattr(config, "endpoint", ""),
                     mode=compiler.response_mode, _owns_directory=owns)
    mode = plan.mode
    fh = None
    current: BatchFile | None = None
    try:
        for run in runs:
            if on_run is not None:
                on_run(run)
            messages = compiler.render_messages(run, mode)
            key = _key(compiler, messages, mode)
            if key in plan.run_ids:
                plan.duplicates += 1
                continue
            if compiler.cache.get(key) is not None:
                plan.skipped_cached += 1
                continue
            line = {"custom_id": key, "method": "POST", "url": ENDPOINT,
                    "body": request_body(compiler, messages, run.outcome.label, mode)}
            data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
            if len(data) > max_bytes:
                plan.too_large.append(run.run_id)
                continue
            if current is None or current.requests >= max_requests or current.bytes + len(data) > max_bytes:
                if fh is not None:
                    fh.close()
                current = BatchFile(folder / f"requests-{len(plan.files) + 1:03d}.jsonl")
                plan.files.append(current)
                fh = open(current.path, "wb")
            fh.write(data)
            current.requests += 1
            current.bytes += len(data)
            plan.requests += 1
            plan.run_ids[key] = run.run_id
    except BaseException:
        if fh is not None:
            fh.close()
            fh = None
        plan.cleanup()
        raise
    finally:
        if fh is not None:
            fh.close()
    return plan


# --- the API --------------------------------------------------------------------------


def make_client(compiler: Any, timeout: float = 600.0) -> Any:
    """A synchronous client for the Batch API with the compiler's endpoint and key."""
    from ..llm.client import batch_client

    return batch_client(compiler.config, timeout)


def _api_error(what: str, exc: Exception) -> BatchError:
    status = getattr(exc, "status_code", None)
    detail = " ".join(str(getattr(exc, "message", "") or exc).split())[:200]
    hint = ""
    if status in (404, 405, 501):
        hint = " (this endpoint may not offer the Batch API; drop --batch to compile live)"
    elif status in (401, 403):
        hint = " (check OPENAI_API_KEY)"
    elif status is None and type(exc).__name__ in ("APIConnectionError", "APITimeoutError"):
        hint = (" (nothing answered at the endpoint: check OPENAI_BASE_URL; submitted batches keep running, "
                "collect them later with --resume-batch)")
    return BatchError(f"{what} failed: {f'HTTP {status}: ' if status else ''}{detail}{hint}")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def write_state(path: str | os.PathLike[str], batch_ids: list[str], *, model: str, endpoint: str,
                created_at: str | None = None, requests: int | None = None) -> None:
    """Record the batches of a build, atomically, so a restart can resume them."""
    from ..fsio import write_atomic

    state = {"format": STATE_FORMAT, "batch_ids": list(batch_ids), "created_at": created_at or _now(),
             "model": model, "endpoint": endpoint}
    if requests is not None:
        state["requests"] = requests
    write_atomic(Path(path), json.dumps(state, indent=1) + "\n")


def read_state(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The state written by ``write_state``, or ``None`` when absent or unreadable."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("batch_ids"), list) or not data["batch_ids"]:
        return None
    if not all(isinstance(i, str) and i for i in data["batch_ids"]):
        return None
    return data


def submit(plan: BatchPlan, client: Any, *, state_path: str | os.PathLike[str] | None = None) -> list[str]:
    """Upload each request file and create its batch. Returns the batch ids.

    With ``state_path``, the ids are written there after each batch is created,
    so even a crash between two batches loses none of them.
    """
    from ..llm.client import sdk_errors

    sdk = sdk_errors()

    ids: list[str] = []
    created_at = _now()
    total = len(plan.files)
    for n, f in enumerate(plan.files, 1):
        try:
            with open(f.path, "rb") as fh:
                uploaded = client.files.create(file=(f.path.name, fh, "application/jsonl"), purpose="batch")
        except sdk.APIError as exc:
            raise _api_error(f"uploading batch file {n} of {total}", exc) from None
        try:
            batch = client.batches.create(input_file_id=uploaded.id, endpoint=ENDPOINT,
                                          completion_window=COMPLETION_WINDOW,
                                          metadata={"source": "wikitrace", "part": f"{n}/{total}"})
        except sdk.APIError as exc:
            raise _api_error(f"creating batch {n} of {total}", exc) from None
        ids.append(batch.id)
        if state_path is not None:
            write_state(state_path, ids, model=plan.model, endpoint=plan.endpoint, created_at=created_at,
                        requests=sum(x.requests for x in plan.files[:n]))
    return ids


def _counts(batch: Any) -> tuple[int, int]:
    rc = getattr(batch, "request_counts", None)
    total = getattr(rc, "total", None) or 0
    done = (getattr(rc, "completed", None) or 0) + (getattr(rc, "failed", None) or 0)
    return done, total


def poll(batch_ids: list[str], client: Any, progress: Any = None, interval: float = 30.0, *,
         timeout: float | None = None, sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Check the batches every ``interval`` seconds until each has a terminal status.

    Returns ``{batch_id: batch}`` (the openai ``Batch`` objects). ``progress`` may
    be a ``rich.progress.Progress`` (one bar per batch) or a callable called as
    ``progress(batch_id, status, done, total)`` after each check. Transient
    errors are retried; after ``MAX_POLL_ERRORS`` in a row, or past ``timeout``
    seconds, ``BatchError`` is raised (the batches keep running: resume later).
    """
    from ..llm.client import sdk_errors

    sdk = sdk_errors()

    pending = list(dict.fromkeys(batch_ids))
    final: dict[str, Any] = {}
    bars: dict[str, Any] = {}
    errors = 0
    reached = False  # some status check has been answered
    start = time.monotonic()
    while True:
        for bid in list(pending):
            try:
                batch = client.batches.retrieve(bid)
            except sdk.NotFoundError as exc:
                raise _api_error(f"looking up batch {bid}", exc) from None
            except (sdk.APIConnectionError, sdk.APIStatusError) as exc:
                errors += 1
                unreachable = isinstance(exc, sdk.APIConnectionError) and not reached
                if unreachable or errors >= MAX_POLL_ERRORS or (isinstance(exc, sdk.APIStatusError)
                                                                 and exc.status_code in (401, 403)):
                    # never reached at all: an endpoint that is down or mistyped, said now, not after minutes
                    raise _api_error(f"checking batch {bid} ({errors} {'try' if errors == 1 else 'tries'})",
                                     exc) from None
                sys.stderr.write(f"wikitrace: checking batch {bid} failed ({type(exc).__name__}); trying again "
                                 f"in {interval:.0f} s ({errors} of {MAX_POLL_ERRORS})\n")
                continue
            errors = 0
            reached = True
            status = str(batch.status)
            done, total = _counts(batch)
            _show(progress, bars, bid, status, done, total)
            if status in TERMINAL:
                final[bid] = batch
                pending.remove(bid)
        if not pending:
            return {bid: final[bid] for bid in dict.fromkeys(batch_ids)}
        if timeout is not None and time.monotonic() - start > timeout:
            raise BatchError(f"batches still running after {timeout:.0f} s: {', '.join(pending)} "
                             f"(resume later with --resume-batch)")
        sleep(interval)


def _show(progress: Any, bars: dict[str, Any], bid: str, status: str, done: int, total: int) -> None:
    if progress is None:
        return
    if hasattr(progress, "add_task"):
        label = f"batch {bid[-10:]} {status}"
        if bid not in bars:
            bars[bid] = progress.add_task(label, total=total or None)
        progress.update(bars[bid], description=label, completed=done, total=total or None)
    else:
        progress(bid, status, done, total)


# --- results into the cache -----------------------------------------------------------


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


# --- entry points ---------------------------------------------------------------------


def _ids_from(batch_id_or_state: str | os.PathLike[str]) -> tuple[list[str], dict[str, Any] | None]:
    text = os.fspath(batch_id_or_state)
    if isinstance(batch_id_or_state, Path) or text.endswith(".json") or os.path.isfile(text):
        state = read_state(text)
        if state is None:
            raise BatchError(f"{text} is not a readable batch state file")
        return list(state["batch_ids"]), state
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids:
        raise BatchError("no batch id given")
    return ids, None


def _check_state(state: dict[str, Any], compiler: Any, where: str) -> None:
    endpoint = getattr(getattr(compiler, "config", None), "endpoint", "")
    if state.get("model") and state["model"] != compiler.model:
        raise BatchError(f"{where} holds batches for model {state['model']}, not {compiler.model}; "
                         f"use --model {state['model']} to collect them, or delete {where} to start over")
    if state.get("endpoint") and endpoint and state["endpoint"] != endpoint:
        raise BatchError(f"{where} holds batches at {state['endpoint']}, not {endpoint}; "
                         f"point --base-url there to collect them, or delete {where} to start over")


def resume(batch_id_or_state: str | os.PathLike[str], compiler: Any, *, client: Any = None,
           poll_interval: float = 30.0, progress: Any = None, timeout: float | None = None) -> BatchReport:
    """Wait for batches submitted earlier and store their answers; submits nothing.

    ``batch_id_or_state`` is a batch id, several joined by commas, or the path of
    a state file written by ``submit``.
    """
    ids, state = _ids_from(batch_id_or_state)
    if state is not None:
        _check_state(state, compiler, os.fspath(batch_id_or_state))
    client = client or make_client(compiler)
    batches = poll(ids, client, progress, poll_interval, timeout=timeout)
    report = download_into_cache(ids, compiler, client=client, batches=batches)
    report.resumed = True
    return report


def prefill_cache(runs: Iterable[Run], compiler: Any, state_path: str | os.PathLike[str],
                  resume_batch: str | None = None, poll_interval: float = 30.0, progress: Any = None, *,
                  client: Any = None, work_dir: str | os.PathLike[str] | None = None,
                  max_requests: int = MAX_REQUESTS_PER_FILE, max_bytes: int = MAX_BYTES_PER_FILE,
                  timeout: float | None = None, live_if_rejected: bool = False) -> BatchReport:
    """Fill ``compiler.cache`` through the Batch API; the build that follows does the rest.

    - ``resume_batch`` (a batch id, or ids joined by commas): collect those batches
      and submit nothing;
    - else, a state file at ``state_path`` from an interrupted earlier call: collect
      its batches and submit nothing (``BatchError`` if it was made for another
      model or endpoint);
    - else plan the runs (skipping cached ones), submit, record the ids at
      ``state_path``, wait, download.

    The state file is removed once its batches are all stored. ``runs`` must be
    the runs the build will compile, with the same defaults applied, or their
    keys will not match. Raises ``BatchError``; a Ctrl-C while waiting leaves the
    state file in place for the next call.

    A batch the API fails as a whole (a malformed file, or more tokens queued than
    the organisation's batch limit) raises ``BatchError`` after the other batches
    are stored, unless ``live_if_rejected``: otherwise all its runs would quietly
    be compiled live at full price. Single failed items always go live.
    """
    state_path = Path(state_path)
    if getattr(compiler, "cache", None) is None:
        raise BatchError("--batch needs the response cache; do not combine it with --no-cache")
    state = read_state(state_path)
    ids: list[str] | None = None
    if resume_batch:
        ids, _ = _ids_from(resume_batch)
    elif state is not None:
        _check_state(state, compiler, str(state_path))
        ids = list(state["batch_ids"])
    if ids:
        client = client or make_client(compiler)
        report = resume(",".join(ids), compiler, client=client, poll_interval=poll_interval,
                        progress=progress, timeout=timeout)
        if state is not None and set(state["batch_ids"]) <= set(ids):
            _unlink(state_path)
        return _check_rejected(report, live_if_rejected)

    planning = None
    if progress is not None and hasattr(progress, "add_task"):
        planning = progress.add_task("planning batch requests", total=None)
    plan = plan_batch(runs, compiler, work_dir, max_requests=max_requests, max_bytes=max_bytes,
                      on_run=(lambda _run: progress.advance(planning)) if planning is not None else None)
    try:
        if plan.requests == 0:
            return BatchReport(skipped_cached=plan.skipped_cached, duplicates=plan.duplicates,
                               too_large=list(plan.too_large))
        client = client or make_client(compiler)
        ids = submit(plan, client, state_path=state_path)
        batches = poll(ids, client, progress, poll_interval, timeout=timeout)
        inputs = {bid: f.path for bid, f in zip(ids, plan.files)}
        report = download_into_cache(ids, compiler, client=client, batches=batches, inputs=inputs)
    finally:
        plan.cleanup()
    report.skipped_cached = plan.skipped_cached
    report.duplicates = plan.duplicates
    report.too_large = list(plan.too_large)
    for item in report.failed:
        item.run_id = plan.run_ids.get(item.custom_id)
    _unlink(state_path)
    return _check_rejected(report, live_if_rejected)


def _check_rejected(report: BatchReport, live_if_rejected: bool) -> BatchReport:
    if report.rejected and not live_if_rejected:
        n = sum(1 for f in report.failed if f.reason.startswith("no result (batch failed"))
        first_id, first = next(iter(report.rejected.items()))
        raise BatchError(
            f"the Batch API rejected {len(report.rejected)} of {len(report.batch_ids)} batches "
            f"({first_id}: {first}); {n} runs got no answer. The answers of the other batches "
            f"({report.succeeded}) are cached: run again with --batch to resubmit the rest, "
            f"or without --batch to compile them live at the full price")
    return report


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
