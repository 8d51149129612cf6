"""A loopback fake of OpenAI's Files and Batch APIs, on top of ``FakeOpenAI``.

Besides everything ``FakeOpenAI`` answers (``/v1/chat/completions`` for the live
path, ``/v1/models``), it serves:

- ``POST /v1/files`` (multipart, purpose ``batch``): stores the uploaded JSONL;
- ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content``;
- ``POST /v1/batches``: validates the input file as the real API does (one
  endpoint, one model, unique ``custom_id``s, at most ``max_requests`` lines)
  and creates a batch in ``validating``;
- ``GET /v1/batches/{id}``: each check moves the batch on: ``validating`` ->
  ``in_progress`` -> ... -> ``completed`` after ``polls_to_complete`` checks (or
  ``final_status``, e.g. ``expired``), when its output and error files appear.

What each request line gets is decided by ``batch_responder(custom_id, body)``:

- a dict or str: a 200 chat completion with that content (default: a valid
  compilation for the run's outcome);
- ``line_status(500, "msg")``: an output line whose response has that status;
- ``line_error("code", "msg")``: an error-file line (``response: null``);
- ``MISSING``: no line anywhere (as for requests an expired batch never ran).

``fake.count("POST", "/files")`` counts requests by method and path prefix.
"""

from __future__ import annotations

import email
import email.policy
import itertools
import json
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable

import pytest

from fake_openai import API_KEY, FakeOpenAI, FakeResponse, completion, valid_answer

MISSING = object()


@dataclass
class LineStatus:
    status: int
    message: str = "server error"


@dataclass
class LineError:
    code: str
    message: str = "failed"


def line_status(status: int, message: str = "server error") -> LineStatus:
    return LineStatus(status, message)


def line_error(code: str, message: str = "failed") -> LineError:
    return LineError(code, message)


def default_batch_answer(custom_id: str, body: dict[str, Any]) -> Any:
    """A valid compilation for whatever run the request is about."""
    system = body["messages"][0]["content"]
    outcome = "failure" if "failure_causes" in system else "success"
    return valid_answer(outcome, turns=[2])


class FakeBatchAPI(FakeOpenAI):
    def __init__(self) -> None:
        super().__init__()
        self.files: dict[str, dict[str, Any]] = {}  # id -> {"meta": FileObject, "data": bytes}
        self.batches: dict[str, dict[str, Any]] = {}  # id -> {"obj": Batch, "polls": int}
        self.batch_responder: Callable[[str, dict[str, Any]], Any] = default_batch_answer
        self.polls_to_complete = 3
        self.final_status = "completed"  # or "expired" / "cancelled" / "failed"
        self.max_requests = 50_000
        self._ids = itertools.count(1)
        fake = self
        Base = self._server.RequestHandlerClass

        class BatchHandler(Base):  # type: ignore[misc, valid-type]
            def do_GET(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                if "/files/" in path or "/batches/" in path:
                    fake._record(self, None)
                    self._send(fake._get(path))
                else:
                    super().do_GET()

            def do_POST(self) -> None:
                path = self.path.split("?")[0].rstrip("/")
                if not (path.endswith("/files") or path.endswith("/batches")):
                    super().do_POST()
                    return
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if path.endswith("/files"):
                    fields = _multipart(self.headers.get("Content-Type", ""), raw)
                    fake._record(self, {k: (v if k != "file" else f"<{len(v[1])} bytes>") for k, v in fields.items()})
                    self._send(fake._upload(fields))
                else:
                    body = json.loads(raw or b"null")
                    fake._record(self, body)
                    self._send(fake._create_batch(body))

        self._server.RequestHandlerClass = BatchHandler

    # --- inspection ------------------------------------------------------------------

    def count(self, method: str, path_prefix: str) -> int:
        """Requests with this method whose path (after ``/v1``) starts with ``path_prefix``."""
        with self._lock:
            return sum(1 for r in self.requests if r["method"] == method
                       and r["path"].split("?")[0].removeprefix("/v1").startswith(path_prefix))

    def endpoint_counts(self) -> Counter:
        with self._lock:
            paths = [(r["method"], r["path"].split("?")[0]) for r in self.requests]
        out: Counter = Counter()
        for method, path in paths:
            parts = path.removeprefix("/v1/").split("/")
            shape = "/".join(p if i == 0 or p in ("content",) else "{id}" for i, p in enumerate(parts))
            out[f"{method} /v1/{shape}"] += 1
        return out

    def input_lines(self, batch_id: str) -> list[dict[str, Any]]:
        obj = self.batches[batch_id]["obj"]
        return _lines(self.files[obj["input_file_id"]]["data"])

    def uploaded_bytes(self) -> list[bytes]:
        return [f["data"] for f in self.files.values() if f["meta"]["purpose"] == "batch"]

    # --- the endpoints ---------------------------------------------------------------

    def _new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids):06d}"

    def _store(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        meta = {"id": self._new_id("file-"), "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": filename, "purpose": purpose, "status": "processed"}
        with self._lock:
            self.files[meta["id"]] = {"meta": meta, "data": data}
        return meta

    def _upload(self, fields: dict[str, Any]) -> FakeResponse:
        if "file" not in fields or fields.get("purpose") != "batch":
            return FakeResponse(400, {"error": {"message": "need a file and purpose=batch"}})
        filename, data = fields["file"]
        return FakeResponse(200, self._store(data, filename, "batch"))

    def _create_batch(self, body: Any) -> FakeResponse:
        if not isinstance(body, dict) or body.get("input_file_id") not in self.files:
            return FakeResponse(400, {"error": {"message": "unknown input_file_id"}})
        if body.get("completion_window") != "24h" or body.get("endpoint") != "/v1/chat/completions":
            return FakeResponse(400, {"error": {"message": "bad completion_window or endpoint"}})
        now = int(time.time())
        obj = {
            "id": self._new_id("batch_"), "object": "batch", "endpoint": body["endpoint"], "errors": None,
            "input_file_id": body["input_file_id"], "completion_window": "24h", "status": "validating",
            "output_file_id": None, "error_file_id": None, "created_at": now, "expires_at": now + 86400,
            "request_counts": {"total": 0, "completed": 0, "failed": 0}, "metadata": body.get("metadata"),
        }
        with self._lock:
            self.batches[obj["id"]] = {"obj": obj, "polls": 0}
        return FakeResponse(200, obj)

    def _get(self, path: str) -> FakeResponse:
        parts = path.removeprefix("/v1/").split("/")
        if parts[0] == "files" and len(parts) >= 2 and parts[1] in self.files:
            f = self.files[parts[1]]
            if len(parts) == 3 and parts[2] == "content":
                return FakeResponse(200, f["data"])
            return FakeResponse(200, f["meta"])
        if parts[0] == "batches" and len(parts) == 2 and parts[1] in self.batches:
            return FakeResponse(200, self._advance(parts[1]))
        return FakeResponse(404, {"error": {"message": f"no such object {path}"}})

    def _advance(self, batch_id: str) -> dict[str, Any]:
        entry = self.batches[batch_id]
        obj = entry["obj"]
        if obj["status"] in ("completed", "failed", "expired", "cancelled"):
            return obj
        entry["polls"] += 1
        lines = _lines(self.files[obj["input_file_id"]]["data"])
        problem = self._validate(lines)
        if problem:
            obj.update(status="failed", errors={"object": "list", "data": [
                {"code": "invalid_request", "message": problem, "line": None, "param": None}]})
            return obj
        obj["request_counts"]["total"] = len(lines)
        if entry["polls"] < self.polls_to_complete:
            obj["status"] = "validating" if entry["polls"] == 1 else "in_progress"
            obj["request_counts"]["completed"] = len(lines) * (entry["polls"] - 1) // self.polls_to_complete
            return obj
        self._finish(obj, lines)
        return obj

    def _validate(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return "the input file is empty"
        if len(lines) > self.max_requests:
            return f"{len(lines)} requests; the limit is {self.max_requests}"
        ids = [ln.get("custom_id") for ln in lines]
        if len(set(ids)) != len(ids):
            return "duplicate custom_id"
        if any(len(str(i)) > 64 for i in ids):
            return "custom_id longer than 64 characters"
        if {ln.get("url") for ln in lines} != {"/v1/chat/completions"} or {ln.get("method") for ln in lines} != {"POST"}:
            return "every line must POST to /v1/chat/completions"
        if len({ln["body"].get("model") for ln in lines}) != 1:
            return "all lines must use the same model"
        return None

    def _finish(self, obj: dict[str, Any], lines: list[dict[str, Any]]) -> None:
        out, err = [], []
        for n, ln in enumerate(lines):
            cid = ln["custom_id"]
            item = self.batch_responder(cid, ln["body"])
            rid = f"batch_req_{n:06d}"
            if item is MISSING:
                continue
            if isinstance(item, LineStatus):
                out.append({"id": rid, "custom_id": cid, "error": None, "response": {
                    "status_code": item.status, "request_id": f"req_{n}",
                    "body": {"error": {"message": item.message, "type": "server_error"}}}})
            elif isinstance(item, LineError):
                err.append({"id": rid, "custom_id": cid, "response": None,
                            "error": {"code": item.code, "message": item.message}})
            else:
                text = item if isinstance(item, str) else json.dumps(item)
                out.append({"id": rid, "custom_id": cid, "error": None, "response": {
                    "status_code": 200, "request_id": f"req_{n}",
                    "body": completion(text, model=ln["body"]["model"])}})
        ok = sum(1 for o in out if o["response"]["status_code"] == 200)
        obj["request_counts"] = {"total": len(lines), "completed": ok, "failed": len(lines) - ok}
        if out:
            obj["output_file_id"] = self._store(_jsonl(out), "batch_output.jsonl", "batch_output")["id"]
        if err:
            obj["error_file_id"] = self._store(_jsonl(err), "batch_errors.jsonl", "batch_output")["id"]
        obj["status"] = self.final_status
        obj[f"{self.final_status}_at"] = int(time.time())


def _jsonl(records: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in records).encode()


def _lines(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.splitlines() if line.strip()]


def _multipart(content_type: str, raw: bytes) -> dict[str, Any]:
    """The fields of a multipart/form-data body: text fields as str, files as (filename, bytes)."""
    msg = email.message_from_bytes(b"Content-Type: " + content_type.encode() + b"\r\n\r\n" + raw,
                                   policy=email.policy.HTTP)
    fields: dict[str, Any] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        data = part.get_payload(decode=True) or b""
        filename = part.get_filename()
        fields[name] = (filename, data) if filename is not None else data.decode()
    return fields


@pytest.fixture
def fake_batch(monkeypatch: pytest.MonkeyPatch, tmp_path: Any):
    """A running ``FakeBatchAPI``; the environment points at it and at a private cache."""
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    monkeypatch.setenv("WIKITRACE_CACHE_DIR", str(tmp_path / "llm-cache"))
    with FakeBatchAPI() as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        yield fake
