"""Records for one agent run: its task, its turn log and its outcome.

A run is what the compiler reads and what ``raw/step-NNNN/`` preserves. The turn
log follows the WikiTrace ``solver.full.jsonl`` shape: one JSON object per turn,
numbered from 0, of type ``message``, ``function_call``, ``episode_over`` or
``answer``. Keys we do not model are kept in ``extra`` so nothing is lost.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

TURN_TYPES = ("message", "function_call", "episode_over", "answer")

# Stable key order for a turn record, so the same run always serialises to the
# same bytes (git diff of a corpus shows only real changes).
_TURN_KEYS = (
    "turn", "type", "role", "content", "name", "arguments", "reasoning",
    "result", "is_error",
)
_FIELDS = (*_TURN_KEYS, "extra")  # Turn's fields in order


class RunError(ValueError):
    """Input that cannot become a run; the message names where and how to fix it."""


@dataclass
class Turn:
    turn: int
    type: str
    role: str | None = None
    content: str | None = None
    name: str | None = None
    arguments: Any = None
    reasoning: str | None = None
    result: str | None = None
    is_error: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def is_action(self) -> bool:
        return self.type == "function_call"

    def __reduce__(self):
        """Pickled as its fields in order: runs cross between a build's processes pickled, and
        one call of the constructor unpickles a turn in a fifth less CPU than an empty object
        given its attribute dict (each of the build's main process and the page writer unpickles
        every run). Anything else in its ``__dict__`` goes along as before."""
        fields = self.__dict__
        values = tuple([fields[key] for key in _FIELDS])
        rest = {k: v for k, v in fields.items() if k not in _FIELDS} if len(fields) != len(_FIELDS) else None
        return (Turn, values, rest)

    def to_record(self) -> dict[str, Any]:
        fields = self.__dict__  # read directly: this runs for every turn of every run, twice
        rec = {key: fields[key] for key in _TURN_KEYS if fields[key] is not None}
        extra = self.extra
        if extra:
            for key in sorted(extra):
                rec[key] = extra[key]
        return rec

    @classmethod
    def from_record(cls, rec: dict[str, Any], where: str = "turn") -> "Turn":
        if not isinstance(rec, dict):
            raise RunError(f"{where}: a turn must be a JSON object, got {type(rec).__name__}")
        kind = rec.get("type")
        if kind not in TURN_TYPES:
            raise RunError(f"{where}: field 'type' is {kind!r}; use one of {', '.join(TURN_TYPES)}")
        turn = rec.get("turn")
        if not isinstance(turn, int) or isinstance(turn, bool) or turn < 0:
            raise RunError(f"{where}: field 'turn' must be a non-negative integer, got {turn!r}")
        known = {k: rec.get(k) for k in _TURN_KEYS}
        for key in ("role", "content", "name", "reasoning", "result"):
            value = known[key]
            if value is not None and not isinstance(value, str):
                known[key] = _as_text(value)
        if known["is_error"] is not None:
            known["is_error"] = bool(known["is_error"])
        extra = {k: v for k, v in rec.items() if k not in _TURN_KEYS}
        return cls(**known, extra=extra)


def _as_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@dataclass
class Task:
    id: str
    instruction: str
    task_type: str | None = None
    apps: list[str] | None = None
    initial_observation: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Outcome:
    """How the run ended. ``success`` is the verdict the input gave, never a guess."""

    success: bool
    steps: int
    score: float | None = None
    ended_by: str | None = None  # e.g. "agent", "user", "harness: step limit"

    @property
    def label(self) -> str:
        return "success" if self.success else "failure"


@dataclass
class Run:
    run_id: str
    task: Task
    turns: list[Turn]
    # None only between an importer and the loader: formats that carry no verdict
    # (Claude Code, ATIF, ...) leave it unset and ``load.iter_runs`` fills it from
    # ``--outcomes`` or skips the run. Every run the loader yields has an outcome.
    outcome: Outcome | None
    source: dict[str, Any] = field(default_factory=dict)  # format, file, record index

    @property
    def actions(self) -> list[Turn]:
        return [t for t in self.turns if t.is_action]


def count_steps(turns: list[Turn]) -> int:
    """A step is one environment call, as in the paper's 'steps: 20 act calls'."""
    return sum(1 for t in turns if t.is_action)


def reused_encoder(options: json.JSONEncoder):
    """``options.encode`` for lists and dicts, with the C encoder built once: ``encode`` builds
    it anew on every call, which costs as much as encoding a short turn record."""
    from json import encoder as _json

    markers: dict = {}
    try:
        make = _json.c_make_encoder
        basestring = _json.encode_basestring_ascii if options.ensure_ascii else _json.encode_basestring
        one_shot = make(markers, options.default, basestring, None, options.key_separator,
                        options.item_separator, options.sort_keys, options.skipkeys, options.allow_nan)
    except (AttributeError, TypeError):  # no C speedups, or another signature: the plain way
        return options.encode

    def encode(value) -> str:
        try:
            return "".join(one_shot(value, 0))
        except BaseException:
            markers.clear()  # what the failed call left marked would read as a cycle next time
            raise

    return encode


# json.dumps(sort_keys=True, ensure_ascii=False, default=str), set up once
_FINGERPRINT_JSON = reused_encoder(json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str))


def fingerprint(run: Run) -> str:
    """Content hash of a run (task, turns, outcome), ignoring where it was read from."""
    t = run.task
    head = [t.id, t.instruction, t.task_type, t.apps, t.initial_observation, t.metadata,
            run.outcome.__dict__ if run.outcome is not None else None]
    encode = _FINGERPRINT_JSON
    # one text hashed at once: the same bytes as hashing each part in turn, in one call
    text = "".join([encode(head), *[encode(turn.to_record()) for turn in run.turns]])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def content_hash(run: Run) -> str:
    """The run's fingerprint as the corpus and the response cache tag it, computed once
    per run (the loader stores it in ``run.source``)."""
    return "sha256:" + (run.source.get("fingerprint") or fingerprint(run))
