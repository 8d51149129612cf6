"""Shared reading helpers for the importers: safe text/JSON loading and small conversions.

Everything here turns bad input into a ``RunError`` whose message starts with
``file:line:`` where a line is known, so the loader can report it in one line
and go on with the next file.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from .model import RunError, Turn

# A file larger than this is refused rather than read into memory.
MAX_INPUT_BYTES = 512 * 1024 * 1024
# A single text field of a turn (content, result, reasoning) longer than this is
# clipped in the turn log; the original record keeps the full text.
MAX_FIELD_CHARS = 8 * 1024 * 1024
# How much of a file detection looks at.
SNIFF_BYTES = 1 << 16

_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"),
)


@dataclass
class Carried:
    """A JSONL record whose exact bytes the published corpus already compiled.

    Readers given ``known`` digests yield this instead of parsing the record, so a
    rebuild of a large corpus pays only for new or changed records.
    """

    record_digest: str
    run_id: str
    outcome: str  # "success" | "failure", as compiled before


def not_a_file(path: Path) -> str | None:
    """Why ``path`` cannot be read as an input file (a named pipe, a device, a socket), or
    None. Checked before opening: reading a FIFO blocks until a writer comes and a device
    such as /dev/zero never ends. A symlink is judged by what it points to."""
    import os
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # missing or unreadable: the open that follows says which
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "a socket" if stat.S_ISSOCK(mode) else "not a regular file")
    return f"{path}: is {kind}, not a file — save what it holds to a regular file and give that file"


def record_digest(raw: bytes) -> str:
    import hashlib

    return hashlib.sha256(raw.strip()).hexdigest()


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """(line number, raw line) of a JSONL file, streamed; split on b"\n" only
    (JSON allows U+2028 and friends raw inside strings)."""
    why = not_a_file(path)
    if why:
        raise RunError(why)
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__}) — check the path and "
                       f"that you may read it") from None
    with fh:
        if any(fh.read(4).startswith(bom) for bom, _ in _BOMS):
            fh.close()
            for lineno, raw in enumerate(read_bytes(path).split(b"\n"), start=1):
                if raw.strip():
                    yield lineno, raw
            return
        fh.seek(0)
        for lineno, raw in enumerate(fh, start=1):
            if raw.strip():
                yield lineno, raw


class NotText(RunError):
    """The file is binary or in an encoding other than UTF-8."""


def _line_of(data: bytes | str, pos: int) -> int:
    return data.count(b"\n" if isinstance(data, bytes) else "\n", 0, pos) + 1


def looks_binary(data: bytes) -> bool:
    """NUL bytes in text that has no UTF-16/32 byte-order mark: not a text file."""
    if any(data.startswith(bom) for bom, _ in _BOMS):
        return False
    return b"\x00" in data[:8192]


def decode(data: bytes, where: str) -> str:
    """Text of a file: UTF-8 (with or without BOM), or UTF-16/32 with a byte-order mark.

    Bytes that are not UTF-8 never stop the read: they arrive as lone surrogates
    (``surrogateescape``), which ``repair.run`` replaces and counts per run. Only a
    binary file (NUL bytes without a UTF-16/32 mark) is refused.
    """
    data = as_utf8(data)
    if looks_binary(data):
        raise NotText(f"{where}: binary file (NUL bytes), not a text run log; remove it from the input")
    text = data.decode("utf-8", errors="surrogateescape")
    return text[1:] if text.startswith("\ufeff") else text


def as_utf8(data: bytes) -> bytes:
    """UTF-16/32 text with a byte-order mark, re-encoded as UTF-8; other bytes unchanged."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            text = data.decode(name.lower().replace("-", ""), errors="replace")
            return text.lstrip("\ufeff").encode("utf-8")
    return data


def read_bytes(path: Path) -> bytes:
    """The file's bytes, UTF-8 (UTF-16/32 files are converted)."""
    why = not_a_file(path)
    if why:
        raise RunError(why)
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise RunError(f"{path}: {size} bytes is more than the {MAX_INPUT_BYTES} a single input file may have "
                           f"— split it into several files")
        return as_utf8(path.read_bytes())
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__}) — check the path and "
                       f"that you may read it") from None


def read_text(path: Path) -> str:
    return decode(read_bytes(path), str(path))


def parse_json(text: str, where: str, single_line: bool = False) -> Any:
    """``json.loads`` whose every failure is a RunError with a line number.

    With ``single_line`` the text is one line of a JSONL file whose line number is
    already in ``where``.
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        hint = ""
        if exc.pos >= len(text.rstrip()) - 1:
            hint = "; the line looks cut off" if single_line else "; the file looks truncated"
        at = where if single_line else f"{where}:{exc.lineno}"
        raise RunError(f"{at}: not valid JSON ({exc.msg}, column {exc.colno}){hint} — fix or remove that "
                       f"{'line' if single_line else 'file'}") from None
    except RecursionError:
        raise RunError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise RunError(f"{where}: not valid JSON ({exc}) — fix or remove it") from None


def load_json(path: Path) -> Any:
    return parse_json(read_text(path), str(path))


def iter_json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    """(line number, object) per non-blank line; a bad line gives (line, RunError)."""
    data = read_bytes(path)
    if any(data.startswith(bom) for bom, _ in _BOMS):
        lines = decode(data, str(path)).split("\n")
    else:
        if looks_binary(data):
            decode(data, str(path))  # raises with the reason
        if data.startswith(codecs.BOM_UTF8):
            data = data[len(codecs.BOM_UTF8):]
        lines = [raw.decode("utf-8", errors="surrogateescape") for raw in data.split(b"\n")]
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            yield lineno, parse_json(line, where, single_line=True)
        except RunError as exc:
            yield lineno, exc


def session_lines(path: Path, what: str, original: list[Any]) -> list[tuple[int, dict] | RunError]:
    """The lines of a one-run-per-file JSONL log (a Claude Code transcript, a Codex rollout).

    (line number, object) for each JSON object, in file order, and a ``RunError``
    naming the line for one that is not JSON or not an object (``what`` names the
    line kind in that message). Every line that parses is appended to ``original``,
    shape errors included, because the run keeps the file as it was. A file that is
    not text at all raises its ``RunError``: there is no line to report.
    """
    found: list[tuple[int, dict] | RunError] = []
    for lineno, obj in iter_json_lines(path):
        if isinstance(obj, RunError):
            found.append(obj)
            continue
        original.append(obj)
        if isinstance(obj, dict):
            found.append((lineno, obj))
        else:
            found.append(RunError(f"{path}:{lineno}: a {what} line must be a JSON object"))
    return found


class DuplicateRun(RunError):
    """Not a problem: an importer met an exact copy of a run it already yielded.

    Importers yield it instead of the copy; the loader counts it in
    ``LoadReport.deduplicated`` and does not list it as an error.
    """


# -- sniffing ---------------------------------------------------------------------------

@dataclass
class Sniff:
    """What detection sees of a file: its name, its head and the first JSON record if any."""

    path: Path
    head: str  # the first SNIFF_BYTES, decoded leniently
    first: Any = None  # first array element, first JSON line, or the whole object
    whole: Any = None  # the whole parsed JSON document when the head is the entire file
    complete: bool = False  # the head is the entire file


# A first record is read whole for detection, however long (the file cap bounds it).
_FIRST_LINE_LIMIT = MAX_INPUT_BYTES


def sniff(path: Path) -> Sniff:
    why = not_a_file(path)
    if why:
        raise RunError(why)
    try:
        with path.open("rb") as fh:
            raw = fh.read(SNIFF_BYTES + 1)
            line = raw.split(b"\n", 1)[0]
            if b"\n" not in raw and len(raw) > SNIFF_BYTES:
                # A JSONL file whose first record is long: read that whole line.
                fh.seek(0)
                line = fh.readline(_FIRST_LINE_LIMIT)
    except OSError as exc:
        raise RunError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__}) — check the path and "
                       f"that you may read it") from None
    if any(raw.startswith(bom) for bom, _ in _BOMS):  # UTF-16/32: look at it as UTF-8
        raw = read_bytes(path)
        line = raw.split(b"\n", 1)[0]
    complete = len(raw) <= SNIFF_BYTES
    raw = raw[:SNIFF_BYTES]
    if looks_binary(raw):
        decode(raw, str(path))  # raises: binary
    head = raw.decode("utf-8", errors="replace").lstrip("\ufeff")
    s = Sniff(path=path, head=head, complete=complete)
    stripped = head.lstrip()
    decoder = json.JSONDecoder()
    try:
        if stripped.startswith("["):
            try:
                s.first, _ = decoder.raw_decode(stripped[1:].lstrip())
            except ValueError:
                if complete:
                    raise
                # The first element is longer than the head: look further, within reason.
                with path.open("rb") as fh:
                    more = fh.read(_FIRST_LINE_LIMIT).decode("utf-8", errors="replace").lstrip("\ufeff").lstrip()
                s.first, _ = decoder.raw_decode(more[1:].lstrip())
        elif stripped.startswith("{"):
            try:
                s.first = json.loads(line.decode("utf-8", errors="replace").lstrip("\ufeff"))
            except ValueError:
                s.first, _ = decoder.raw_decode(stripped)
    except (ValueError, RecursionError, OSError):
        pass
    if complete and stripped[:1] in ("[", "{"):
        try:
            s.whole = json.loads(stripped)
        except (ValueError, RecursionError):
            pass
    return s


# -- small conversions ------------------------------------------------------------------

def text_of(content: Any) -> str | None:
    """Chat content: a string, None, or a list of typed parts (text kept, others named)."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict):
                kind = part.get("type")
                if isinstance(part.get("text"), str):
                    parts.append(part["text"])
                elif isinstance(part.get("content"), (str, list)):
                    parts.append(text_of(part["content"]) or "")
                elif kind in ("image", "image_url", "input_image"):
                    parts.append("[image]")
                else:
                    parts.append(json.dumps(part, ensure_ascii=False, sort_keys=True))
            else:
                parts.append(json.dumps(part, ensure_ascii=False, sort_keys=True))
        return "\n".join(p for p in parts if p)
    return json.dumps(content, ensure_ascii=False, sort_keys=True)


def as_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def clip_turns(turns: list[Turn], limit: int = MAX_FIELD_CHARS) -> int:
    """Clip over-long text fields in place; returns how many fields were clipped.

    The turn records which field lost how many characters in ``extra['clipped']``.
    """
    clipped = 0
    for t in turns:
        for key in ("content", "result", "reasoning"):
            value = getattr(t, key)
            if isinstance(value, str) and len(value) > limit:
                lost = len(value) - limit
                setattr(t, key, value[:limit] + f"\n[wikitrace: clipped {lost} characters; the full text is in the raw original]")
                t.extra.setdefault("clipped", {})[key] = lost
                clipped += 1
    return clipped


def unanswered(turns: list[Turn]) -> None:
    """Calls that never got a result: empty result, marked as errors (as openai-chat does)."""
    for t in turns:
        if t.type == "function_call" and t.result is None:
            t.result = ""
            t.is_error = True
            t.extra["unanswered"] = True


def parse_arguments(raw: Any) -> Any:
    """Tool-call arguments as logged: a JSON string becomes its value, anything else stays."""
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            return raw
    return raw


def read_single(path: Path, to_run, attach_outcome) -> Iterator[Any]:
    """One run per JSON file (SWE-agent, mini-swe-agent, ATIF): parse it, then let the
    format find its verdict in the files beside it. A verdict problem is reported and
    the run is still yielded (the loader skips it if no outcome was found)."""
    try:
        run = to_run(load_json(path), path, str(path))
    except RunError as exc:
        yield exc
        return
    problem = attach_outcome(run, path)
    if problem is not None:
        yield problem
    yield run


def jsonl_records(path: Path, known: dict | None = None, kept: bool = False) -> Iterator[Any]:
    """Each line of a JSONL file as ``(where, lineno, record, digest, clean)``; a bad line as a
    RunError; a line whose digest is in ``known`` as its ``Carried``, unparsed. With ``kept``
    (the record is kept as the run's original), ``clean`` is ``repair.clean_json`` of the line
    as read, else False."""
    from .repair import clean_json

    for lineno, raw in iter_lines(path):
        where = f"{path}:{lineno}"
        digest = record_digest(raw)
        if known and digest in known:
            yield known[digest]
            continue
        try:
            record = parse_json(decode(raw, where), where, single_line=True)
        except RunError as exc:
            yield exc
            continue
        yield where, lineno, record, digest, kept and clean_json(raw)
