"""How corpus.json is laid out, shared by the build and the prompt index.

Small blocks are indented; the ``runs`` and ``insights`` arrays hold one entry
per line, so adding a run is a one-line diff and the whole file is written by
the C JSON encoder. The prompt index hashes the runs/insights region exactly as
written here to tell whether it is stale.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..controls import json_visible


def _dump_entry(entry: dict) -> str:
    """One run or insight entry as corpus.json holds it: one line each (C-encoded, and a
    change to one run is a one-line diff)."""
    return json_visible(json.dumps(entry, ensure_ascii=False))


# id(entry) -> (the entry, its line as corpus.json holds it), or from published_lines (the entry,
# where its line lies in the published text)
Lines = Mapping[int, tuple]


Region = tuple[list, list[int], list[int]]  # (the region's bytes in pieces, run spans, insight spans)


def corpus_region(runs: Sequence[dict], insights: Sequence[dict],
                  known: Lines | None = None) -> tuple[bytes, list[int], list[int]]:
    """The bytes of ``"runs": [...],\\n "insights": [...]`` as build writes them into
    corpus.json (from the space before ``"runs"``), and each entry's (start, end) offsets
    (``region_pieces`` joined)."""
    pieces, run_spans, insight_spans = region_pieces(runs, insights, known)
    return b"".join(pieces), run_spans, insight_spans


def region_pieces(runs: Sequence[dict], insights: Sequence[dict], known: Lines | None = None) -> Region:
    """``corpus_region`` as pieces to write or hash one after another: the published stretch
    of an add's carried runs (tens of megabytes) is a view of the published text, never
    copied. ``known``: the lines of entries read from the published corpus.json, reused as
    they are (``published_lines``: entries that follow each other there are one stretch)."""
    known = known or {}
    text = known.text if isinstance(known, PublishedLines) else None
    out: list = []
    size = 0
    spans: dict[str, list[int]] = {"runs": [], "insights": []}
    stretch = [-1, -1]  # published text, [from, to), not in ``out`` yet

    def add(piece) -> None:
        nonlocal size
        out.append(piece)
        size += len(piece)

    def flush() -> None:
        if stretch[1] >= 0:
            add(memoryview(text)[stretch[0]:stretch[1]])
            stretch[:] = [-1, -1]

    for key, entries in (("runs", runs), ("insights", insights)):
        if key == "insights":
            add(b",\n")
        if not entries:
            add(f' "{key}": []'.encode())
            continue
        add(f' "{key}": ['.encode())
        for k, entry in enumerate(entries):
            line = known.get(id(entry))
            if line is None or line[0] is not entry:
                line = None
            elif text is not None:
                _entry, begin, end = line
                if k and stretch[1] >= 0 and begin == stretch[1] + len(_NEXT):  # the next line there too
                    stretch[1] = end
                else:
                    flush()
                    add(_NEXT if k else b"\n  ")
                    stretch[:] = [begin, end]
                    base = size - begin  # a published offset + base = its offset in the region
                spans[key] += (begin + base, end + base)
                continue
            if stretch[1] >= 0:
                flush()
            add(_NEXT if k else b"\n  ")
            start = size
            add(line[1] if line is not None else _dump_entry(entry).encode("utf-8"))
            spans[key] += (start, size)
        flush()
        add(b"\n ]")
    return out, spans["runs"], spans["insights"]


def dump_pieces(data: dict[str, Any], known: Lines | None = None,
                region: Region | tuple[bytes, list[int], list[int]] | None = None) -> tuple[list, Region]:
    """corpus.json's bytes for ``data`` (keys in order; ``runs`` then ``insights`` adjacent) as
    pieces to write one after another, and the region tuple ``corpus_region`` made for it (or
    given: made before for these same entries). Bytes all the way to the file: the runs' region
    is bytes already, and a text of tens of megabytes decoded and encoded again cost more than
    the rest of writing it; pieces, not one joined copy of the whole file, which a command that
    only writes it (``wikitrace add``) never needs."""
    keys = list(data)
    at = keys.index("runs")
    assert keys[at + 1] == "insights", "runs and insights must be adjacent"
    if region is None:
        region = region_pieces(data["runs"], data["insights"], known)

    def block(names: list[str]) -> bytes:
        return ",\n".join(f" {json.dumps(k)}: " + json_visible(json.dumps(data[k], ensure_ascii=False, indent=1))
                           .replace("\n", "\n ") for k in names).encode("utf-8")

    head, tail = block(keys[:at]), block(keys[at + 2:])
    pieces = [b"{\n"] + ([head, b",\n"] if head else [])
    pieces += region[0] if isinstance(region[0], list) else [region[0]]  # never empty: '"runs": [...'
    pieces += [b",\n", tail, b"\n}\n"] if tail else [b"\n}\n"]
    return pieces, region


def dump_bytes(data: dict[str, Any], known: Lines | None = None,
               region: Region | tuple[bytes, list[int], list[int]] | None = None) -> tuple[bytes, tuple[bytes, list[int], list[int]]]:
    """``dump_pieces`` joined (in one step: adding the pieces up copied the whole text once per
    step), and the region's bytes as ``corpus_region`` gives them."""
    pieces, (body, run_spans, insight_spans) = dump_pieces(data, known, region)
    return b"".join(pieces), (b"".join(body) if isinstance(body, list) else body, run_spans, insight_spans)


def dumps(data: dict[str, Any], known: Lines | None = None) -> tuple[str, tuple[bytes, list[int], list[int]]]:
    """``dump_bytes`` as text."""
    raw, region = dump_bytes(data, known)
    return raw.decode("utf-8"), region


class PublishedLines(dict):
    """id(entry) -> (the entry, start, end): where its line (without the indent) lies in
    ``text``, the published corpus.json's bytes (see ``published_lines``)."""

    def __init__(self, text: bytes = b""):
        super().__init__()
        self.text = text


_NEXT = b",\n  "  # between two entries' lines: the comma, the newline, the indent


def published_lines(text: bytes, runs: Sequence[dict]) -> PublishedLines:
    """Where each run entry's line lies in ``text`` (a corpus.json this module wrote, whose
    parsed ``runs`` are ``runs``), keyed for ``corpus_region``: an entry read from a file
    writes back to the same bytes, so a command that carries thousands of runs over
    (``wikitrace add``) need not encode them again, nor copy them one by one. Empty when
    the lines do not pair up with the runs (a file laid out otherwise: every entry is then
    encoded)."""
    opening = b'\n "runs": [\n'
    start = text.find(opening)
    end = text.find(b'\n ],\n "insights": ', start)
    if start < 0 or end < 0 or not runs:
        return PublishedLines()
    out = PublishedLines(text)
    at, last = start + len(opening), len(runs) - 1
    for k, entry in enumerate(runs):
        step = entry.get("step")
        # an entry is one line (JSON escapes its newlines): its end is the next newline (a byte
        # search much faster than for ",\n"), which follows its comma; the last one's is the array's
        stop = text.find(b"\n", at, end)
        if stop >= 0:
            stop -= 1
            if text[stop] != 44:  # a comma
                return PublishedLines()
        if (stop < 0) != (k == last) or not isinstance(step, str):
            return PublishedLines()
        head = b'  {"step": "%s",' % step.encode()
        if text[at:at + len(head)] != head:  # sliced, not startswith: ``text`` may be a map of the file
            return PublishedLines()
        stop = end if k == last else stop
        out[id(entry)] = (entry, at + 2, stop)
        at = stop + 2
    return out
