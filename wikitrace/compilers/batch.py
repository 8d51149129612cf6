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

Planning and the entry points live here; talking to the API (``submit``, ``poll``, the
state file) in ``batch_api``, storing what came back in ``batch_results``.

``prefill_cache`` runs them all, or resumes from a batch id or a state file so
that a build interrupted while waiting never submits (and pays for) the same
requests twice. It is synchronous: call it before the build's event loop.

Request lines never hold the API key; only the model, messages and response format.
The SDK client and its error classes come from the model gateway (``wikitrace.llm.client``),
which imports ``openai`` only when a client is made.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from ..runs.model import Run
from .batch_api import ENDPOINT, BatchError, make_client, poll, read_state, submit, write_state
from .batch_results import BatchReport, FailedItem, download_into_cache

__all__ = ["BatchError", "BatchFile", "BatchPlan", "BatchReport", "FailedItem", "download_into_cache",
           "make_client", "plan_batch", "poll", "prefill_cache", "read_state", "resume", "submit", "write_state"]

# OpenAI's limits per batch input file: 50,000 requests and 200 MB. The byte limit
# is kept a little under 200 MiB so that either reading of "MB" is respected.
MAX_REQUESTS_PER_FILE = 50_000
MAX_BYTES_PER_FILE = 200_000_000


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


# --- planning -------------------------------------------------------------------------


def request_body(compiler: Any, messages: list[dict[str, str]], outcome: str, mode: str) -> dict[str, Any]:
    """The chat request body the live path would send for these messages (one source of truth)."""
    return compiler.request_body(messages, outcome, mode)


def _key(compiler: Any, messages: list[dict[str, str]], mode: str) -> str:
    return compiler.cache_key_for(messages, mode)


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
