"""Dialogue inputs: LoCoMo (flat ``conv-NN.json`` and nested ``locomo10.json``) and a
generic JSONL of messages (``id, speaker, text, timestamp, session``, optional ``sample``).

Messages keep their source ids (``D8:4``). A shared photo is kept as text:
``[shares a photo: <blip_caption>]`` appended to the message."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError
from .dates import parse_date


@dataclass
class Message:
    id: str
    speaker: str
    text: str
    session: str
    timestamp: str | None = None      # as given (e.g. "1:56 pm on 8 May, 2023")
    date: str | None = None           # ISO date parsed from the timestamp, when possible
    index: int = 0                    # position in the whole dialogue

    def line(self) -> str:
        when = f" ({self.date})" if self.date else ""
        return f"[{self.id}] {self.speaker}{when}: {self.text}"


@dataclass
class Dialogue:
    sample_id: str
    speakers: list[str]
    messages: list[Message]
    sessions: list[dict] = field(default_factory=list)   # {id, timestamp, date, first, count}
    qa: list[dict] = field(default_factory=list)
    source: str = ""
    source_format: str = ""
    repaired: int = 0  # characters that could not be encoded, replaced with U+FFFD when read
    redactions: Counter = field(default_factory=Counter)  # secrets replaced, by kind
    notes: Counter = field(default_factory=Counter)  # messages cut or skipped when read, by what was done


class DialogueInputError(InputError):
    """A dialogue input the loader cannot read; the message names the file and the fix."""


def _slug(s: str) -> str:
    """A sample id from input, made safe as one folder name (no '..', no dot-names, bounded)."""
    from ..safe_names import safe_name

    return safe_name(re.sub(r"[^A-Za-z0-9._-]+", "-", str(s)).strip("-") or "sample")


# A message longer than this is cut (and the cut counted): conversation messages are
# sentences, and every later step costs time with the length of the longest one.
MAX_MESSAGE_CHARS = 64 * 1024


def _message_text(turn: dict, where: str) -> str:
    raw = turn.get("text", turn.get("clean_text"))
    if raw is None and not turn.get("blip_caption"):
        raise DialogueInputError(f"{where}: field 'text' is {'null' if 'text' in turn else 'missing'} — "
                                 f"give the message's text (an empty string for a photo with a caption)")
    if raw is not None and not isinstance(raw, str):
        raise DialogueInputError(f"{where}: field 'text' must be a string, got {type(raw).__name__} — "
                                 f"write the message as text")
    text = (raw or "").strip()
    cap = turn.get("blip_caption")
    if cap:
        if not isinstance(cap, str):
            raise DialogueInputError(f"{where}: field 'blip_caption' must be a string, got {type(cap).__name__}")
        text = (text + " " if text else "") + f"[shares a photo: {cap.strip()}]"
    return text


def _clipped(text: str, counts: Counter) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    counts[f"message(s) longer than {MAX_MESSAGE_CHARS} characters cut there"] += 1
    return text[:MAX_MESSAGE_CHARS] + f" (wikitrace: cut {len(text) - MAX_MESSAGE_CHARS} characters)"


def _date(value, where: str):
    """``parse_date`` whose failure (``day is out of range for month``, a text that holds no
    date) names the file and field; no date at all is allowed."""
    if value is not None and not isinstance(value, str):
        raise DialogueInputError(f"{where}: expected a date text such as '1:56 pm on 8 May, 2023', "
                                 f"got {type(value).__name__}")
    try:
        parsed = parse_date(value)
    except (ValueError, OverflowError) as exc:
        raise DialogueInputError(f"{where}: {value!r} is not a valid date ({exc}) — fix the date") from None
    if parsed is None and value and value.strip():
        raise DialogueInputError(f"{where}: {value[:80]!r} holds no date wikitrace reads — write it like "
                                 f"'1:56 pm on 8 May, 2023' or 2023-05-08, or leave the field out")
    return parsed


def _speaker(value, where: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise DialogueInputError(f"{where}: a speaker must be a name (text), got {type(value).__name__}")
    return str(value)


def _from_locomo(conv: dict, sample_id: str, qa: list, source: str, fmt: str) -> Dialogue:
    speakers = [s for s in (_speaker(conv.get(k), f"{source}: field '{k}'") for k in ("speaker_a", "speaker_b")) if s]
    nums = sorted(int(m.group(1)) for k in conv if (m := re.fullmatch(r"session_(\d+)", k)))
    for n in nums:
        if not isinstance(conv[f"session_{n}"], list):
            raise DialogueInputError(f"{source}: field 'session_{n}' is {type(conv[f'session_{n}']).__name__}, not a "
                                     f"list of turns — give the session as a list of {{speaker, dia_id, text}}")
    counts: Counter = Counter()
    messages: list[Message] = []
    sessions = []
    seen_ids: dict[str, str] = {}
    for n in nums:
        ts = conv.get(f"session_{n}_date_time")
        d = _date(ts, f"{source}: field 'session_{n}_date_time'")
        first = len(messages)
        for i, turn in enumerate(conv[f"session_{n}"]):
            where = f"{source}: session_{n}[{i}]"
            if not isinstance(turn, dict):
                raise DialogueInputError(f"{where}: a turn must be an object with speaker, dia_id and text, "
                                         f"got {type(turn).__name__}")
            mid = str(turn.get("dia_id") or f"D{n}:{i + 1}")
            if mid in seen_ids:
                raise DialogueInputError(f"{where}: dia_id {mid!r} is used again (first at {seen_ids[mid]}); "
                                         f"message ids must be unique")
            seen_ids[mid] = f"session_{n}[{i}]"
            speaker = _speaker(turn.get("speaker"), f"{where}: field 'speaker'")
            if speaker is None:
                raise DialogueInputError(f"{where}: field 'speaker' is missing or empty — name who wrote the message")
            text = _clipped(_message_text(turn, where), counts)
            if not text:
                counts["empty messages skipped"] += 1
                continue
            messages.append(Message(id=mid, speaker=speaker, text=text,
                                    session=str(n), timestamp=ts, date=d.isoformat() if d else None,
                                    index=len(messages)))
        sessions.append({"id": str(n), "timestamp": ts, "date": d.isoformat() if d else None,
                         "first": first, "count": len(messages) - first})
    for m in messages:
        if m.speaker not in speakers:
            speakers.append(m.speaker)
    return Dialogue(sample_id=sample_id, speakers=speakers, messages=messages, sessions=sessions,
                    qa=list(qa or []), source=source, source_format=fmt, notes=counts)


def _read_text(path: Path) -> str:
    """The file's text: UTF-8, or UTF-16/32 with a byte-order mark; bytes that are not
    UTF-8 arrive as lone surrogates, which ``_repaired`` replaces and counts."""
    from ..runs._common import MAX_INPUT_BYTES, as_utf8, not_a_file

    why = not_a_file(path)
    if why:
        raise DialogueInputError(why)
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise DialogueInputError(f"{path}: {size} bytes is more than the {MAX_INPUT_BYTES} a dialogue file may "
                                     f"have — split the conversation into several files")
        data = as_utf8(path.read_bytes())
    except OSError as exc:
        raise DialogueInputError(f"{path}: cannot read ({exc.strerror or exc.__class__.__name__})") from None
    text = data.decode("utf-8", errors="surrogateescape")
    return text[1:] if text.startswith("\ufeff") else text


def _repaired(data):
    """(data, repairs): lone surrogates and control characters replaced with U+FFFD."""
    from ..runs import repair

    return repair.value(data)


def _from_jsonl(path: Path, default_session: str = "1", id_offset: int = 0) -> list[Dialogue]:
    """``default_session``/``id_offset``: a row without ``session``/``id`` (a session appended
    to a compiled conversation continues its numbering)."""
    by_sample: dict[str, list[dict]] = {}
    repairs: dict[str, int] = {}
    for lineno, line in enumerate(_read_text(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise DialogueInputError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
        except _NotANumber as exc:
            raise DialogueInputError(f"{path}:{lineno}: {exc} — write a number, or null") from None
        except RecursionError:
            raise DialogueInputError(f"{path}:{lineno}: JSON nested too deeply to read") from None
        if not isinstance(obj, dict) or "text" not in obj or "speaker" not in obj:
            raise DialogueInputError(f"{path}:{lineno}: a message needs 'speaker' and 'text'")
        obj, n = _repaired(obj)
        if _speaker(obj.get("speaker"), f"{path}:{lineno}: field 'speaker'") is None:
            raise DialogueInputError(f"{path}:{lineno}: field 'speaker' is empty — name who wrote the message")
        sample = str(obj.get("sample") or path.stem)
        obj["_line"] = lineno
        by_sample.setdefault(sample, []).append(obj)
        repairs[sample] = repairs.get(sample, 0) + n
    out = []
    for sample, rows in by_sample.items():
        messages: list[Message] = []
        sessions: dict[str, dict] = {}
        speakers: list[str] = []
        counts: Counter = Counter()
        for i, r in enumerate(rows):
            sess = str(r.get("session") if r.get("session") is not None else default_session)
            ts = r.get("timestamp")
            d = _date(ts, f"{path}: sample {sample}, message {i + 1}: field 'timestamp'")
            mid = str(r.get("id") or f"M{id_offset + i + 1}")
            text = _clipped(_message_text(r, f"{path}:{r.pop('_line')}"), counts)
            if not text:
                counts["empty messages skipped"] += 1
                continue
            if sess not in sessions:
                sessions[sess] = {"id": sess, "timestamp": ts, "date": d.isoformat() if d else None,
                                  "first": len(messages), "count": 0}
            sessions[sess]["count"] += 1
            spk = str(r["speaker"])
            if spk not in speakers:
                speakers.append(spk)
            messages.append(Message(id=mid, speaker=spk, text=text, session=sess, timestamp=ts,
                                    date=d.isoformat() if d else None, index=len(messages)))
        ids = [m.id for m in messages]
        if len(set(ids)) != len(ids):
            raise DialogueInputError(f"{path}: duplicate message ids in sample {sample}")
        out.append(Dialogue(sample_id=_slug(sample), speakers=speakers, messages=messages,
                            sessions=list(sessions.values()), source=str(path), source_format="jsonl",
                            repaired=repairs.get(sample, 0), notes=counts))
    return out


class _NotANumber(ValueError):
    pass


def _no_constant(name: str):
    """NaN and Infinity are not JSON: a score or count written so is refused, not read."""
    raise _NotANumber(f"{name} is not a JSON number")


def read_json(path: Path):
    """The JSON value in ``path``; a file that is not JSON is one DialogueInputError naming it."""
    try:
        return json.loads(_read_text(path), parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise DialogueInputError(f"{path}:{exc.lineno}: not JSON ({exc.msg})") from None
    except _NotANumber as exc:
        raise DialogueInputError(f"{path}: {exc} — write a number, or null") from None
    except (ValueError, RecursionError) as exc:
        raise DialogueInputError(f"{path}: not JSON the reader accepts ({exc.__class__.__name__})") from None


def load_file(path: Path) -> list[Dialogue]:
    path = Path(path)
    if path.suffix == ".jsonl":
        return _from_jsonl(path)
    data = read_json(path)
    if isinstance(data, list):                       # locomo10.json
        out = []
        for i, item in enumerate(data):
            if not isinstance(item, dict) or not isinstance(item.get("conversation"), dict):
                raise DialogueInputError(f"{path}[{i}]: expected {{sample_id, conversation, qa}}")
            item, repairs = _repaired(item)
            sid = _slug(item.get("sample_id") or f"{path.stem}-{i}")
            out.append(_from_locomo(item["conversation"], sid, item.get("qa") or [], f"{path}[{i}]", "locomo10"))
            out[-1].source, out[-1].repaired = str(path), repairs
        return out
    data, repairs = _repaired(data)
    out = _one_conversation(path, data)
    out[0].repaired = repairs
    return out


def _one_conversation(path: Path, data) -> list[Dialogue]:
    if isinstance(data, dict) and isinstance(data.get("conversation"), dict):
        sid = _slug(data.get("sample_id") or path.stem)
        return [_from_locomo(data["conversation"], sid, data.get("qa") or [], str(path), "locomo10")]
    if isinstance(data, dict) and any(re.fullmatch(r"session_\d+", k) for k in data):
        sid = _slug(data.get("sample_id") or path.stem)
        return [_from_locomo(data, sid, data.get("qa") or [], str(path), "locomo-flat")]
    raise DialogueInputError(f"{path}: not a LoCoMo conversation or a JSONL of messages")


def load_inputs(paths, skipped: list[str] | None = None) -> list[Dialogue]:
    """Every dialogue in ``paths`` (files, or folders of .json/.jsonl), secrets redacted.

    A folder's symlinks that lead out of it are not followed (listed in ``skipped``)."""
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            inside = p.resolve()
            for q in sorted(q for q in p.iterdir() if q.suffix in (".json", ".jsonl")):
                if q.is_symlink() and not q.resolve().is_relative_to(inside):
                    if skipped is not None:
                        skipped.append(f"{q}: symlink leading out of {p}; not followed")
                    continue
                files.append(q)
        elif p.exists():
            files.append(p)
        else:
            raise DialogueInputError(f"{p}: no such file or folder — check the path")
    out: list[Dialogue] = []
    seen: set[str] = set()
    for f in files:
        for d in load_file(f):
            _redact(d)
            if skipped is not None:
                skipped.extend(f"{d.source}: sample {d.sample_id}: {n} {what}" for what, n in sorted(d.notes.items()))
            if d.sample_id in seen:
                raise DialogueInputError(f"{f}: sample {d.sample_id} given twice")
            seen.add(d.sample_id)
            out.append(d)
    return out


def _redact(d: Dialogue) -> None:
    """Secrets in messages, questions, ids, dates and the source name become typed placeholders
    before anything is compiled, cached, sent to a model or written (as for agent runs)."""
    from ..redact import default_redactor

    r = default_redactor()
    counts = d.redactions
    for m in d.messages:
        m.text = r.text(m.text, counts)
        m.speaker = r.text(m.speaker, counts)
        m.id = r.text(m.id, counts)
        m.session = r.text(m.session, counts)
        if m.timestamp is not None:
            m.timestamp = r.text(m.timestamp, counts)
    d.sessions = r.value(d.sessions, counts)
    d.sample_id = r.text(d.sample_id, counts)
    d.speakers = [r.text(s, counts) for s in d.speakers]
    d.source = r.text(d.source, counts)
    d.qa = r.value(d.qa, counts)
