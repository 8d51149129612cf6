"""Reading trace export files: the documents in them, and credentials masked before anything else.

Tracing exports come as one JSON document, a JSON array, or one object per line
(a collector's file exporter, JSONL dumps); ``documents`` yields each. Trace
attributes and metadata carry request headers and client configuration, so
``mask_credentials`` replaces the values of keys that name a credential before
an importer reads further.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from ._common import iter_json_lines, parse_json, read_text
from .model import RunError


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


# The last part of an attribute or metadata key that names a credential: request headers
# (``http.request.header.authorization``, ``x-api-key``, cookies) and configuration keys
# (``api_key``, ``client_secret``, ``password``). Their values are masked whatever their shape,
# because a bare token (``Bearer 3f9c…``) has no shape the text redactor could recognise.
_CREDENTIAL_KEY = re.compile(
    r"(?:^|[._-])(?:(?:proxy[_-])?authorization|(?:set[_-])?cookie|x[_-](?:[a-z]+[_-])?(?:api[_-]?)?key|"
    r"api[_-]?key|(?:client[_-])?secret|password|passwd|(?:access|refresh|session|bearer|auth)[_-]?token)$", re.I)
MASK = "[REDACTED:credential]"


def is_credential_key(key: Any) -> bool:
    return isinstance(key, str) and bool(_CREDENTIAL_KEY.search(key.strip()))


def mask_credentials(value: Any) -> int:
    """Mask, in place, the values of credential keys in nested JSON (plain objects and OTLP's
    ``{"key": .., "value": ..}`` pairs); returns how many were masked."""
    masked = 0
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if is_credential_key(node.get("key")) and "value" in node and len(node) <= 3:
                if node["value"] != {"stringValue": MASK}:
                    node["value"] = {"stringValue": MASK} if isinstance(node["value"], dict) else MASK
                    masked += 1
                continue
            for k in list(node):
                if is_credential_key(k) and node[k] not in (None, "", MASK):
                    node[k] = MASK
                    masked += 1
                else:
                    stack.append(node[k])
        elif isinstance(node, list):
            stack.extend(node)
    return masked


def first_record(whole, first):
    """The first record of an export as the sniffer saw it: a whole document, a ``{"data": [...]}``
    page, a JSON array, or the first JSONL line."""
    obj = whole if whole is not None else first
    if isinstance(obj, dict) and isinstance(obj.get("data"), list) and obj["data"]:
        obj = obj["data"][0]
    if isinstance(obj, list) and obj:
        obj = obj[0]
    return obj
