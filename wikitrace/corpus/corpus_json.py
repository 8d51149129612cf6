"""How corpus.json is laid out, shared by the build and the prompt index.

Small blocks are indented; the ``runs`` and ``insights`` arrays hold one entry
per line, so adding a run is a one-line diff and the whole file is written by
the C JSON encoder. The prompt index hashes the runs/insights region exactly as
written here to tell whether it is stale.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

from ..controls import json_visible


def _dump_entry(entry: dict) -> str:
    """One run or insight entry as corpus.json holds it: one line each (C-encoded, and a
    change to one run is a one-line diff)."""
    return json_visible(json.dumps(entry, ensure_ascii=False))


def corpus_region(runs: Sequence[dict], insights: Sequence[dict]) -> tuple[bytes, list[int], list[int]]:
    """The bytes of ``"runs": [...],\\n "insights": [...]`` as build writes them into
    corpus.json (from the space before ``"runs"``), and each entry's (start, end) offsets."""
    out = bytearray()
    spans: dict[str, list[int]] = {"runs": [], "insights": []}
    for key, entries in (("runs", runs), ("insights", insights)):
        if key == "insights":
            out += b",\n"
        if not entries:
            out += f' "{key}": []'.encode()
            continue
        out += f' "{key}": ['.encode()
        for k, entry in enumerate(entries):
            out += b"\n  " if k == 0 else b",\n  "
            start = len(out)
            out += _dump_entry(entry).encode("utf-8")
            spans[key] += (start, len(out))
        out += b"\n ]"
    return bytes(out), spans["runs"], spans["insights"]


def dumps(data: dict[str, Any]) -> tuple[str, tuple[bytes, list[int], list[int]]]:
    """corpus.json text for ``data`` (keys in order; ``runs`` then ``insights`` adjacent),
    and the region tuple ``corpus_region`` made for it."""
    keys = list(data)
    at = keys.index("runs")
    assert keys[at + 1] == "insights", "runs and insights must be adjacent"
    region = corpus_region(data["runs"], data["insights"])

    def block(names: list[str]) -> str:
        return ",\n".join(f" {json.dumps(k)}: " + json_visible(json.dumps(data[k], ensure_ascii=False, indent=1))
                          .replace("\n", "\n ") for k in names)

    parts = [block(keys[:at]), region[0].decode("utf-8"), block(keys[at + 2:])]
    # joined in one step: adding the pieces up copied the whole text once per step
    pieces = ["{\n"]
    for part in (p for p in parts if p):
        pieces += [part, ",\n"]
    pieces[-1] = "\n}\n"
    return "".join(pieces), region
