"""The Batch API itself, for ``wikitrace compile --batch`` (compilers/batch.py): upload the
request files, create the batches, record their ids in a state file, and poll them until
each is finished. Errors become one ``BatchError`` line that says what to do; the SDK
client and its error classes come from the model gateway (``wikitrace.llm.client``).
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from .batch import BatchPlan

ENDPOINT = "/v1/chat/completions"
COMPLETION_WINDOW = "24h"
TERMINAL = frozenset({"completed", "failed", "expired", "cancelled"})
STATE_FORMAT = "wikitrace-batch-state/1"
# Consecutive failed status checks tolerated while polling before giving up
# (the batches keep running; the state file lets a later run resume them).
MAX_POLL_ERRORS = 10


class BatchError(RuntimeError):
    """The batch path cannot go on; the message says what to do."""


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
