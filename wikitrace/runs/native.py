"""The native input: a JSONL of run records, or one folder per run.

A run record (one JSON object per line, or ``run.json`` in a run folder)::

    {"run_id": "alfworld-0000",
     "task": {"id": "...", "instruction": "...", "task_type": "...", "apps": [...],
              "initial_observation": "...", "metadata": {...}},
     "outcome": {"success": true, "score": 1.0, "steps": 20, "ended_by": "agent"},
     "turns": [ {turn record}, ... ]}

In a run folder the turns may instead sit in ``solver.full.jsonl`` beside
``run.json``. ``outcome.steps`` defaults to the number of function calls. A call with
a result and no ``is_error`` is judged by ``errors.observation_is_error``; when
``outcome.ended_by`` names the harness, a closing ``episode_over`` without a role
becomes the harness turn (``role: harness``, the reason as ``content``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

from . import errors, harness
from ._common import Carried, jsonl_records, load_json
from .model import Outcome, Run, RunError, Task, Turn, count_steps
from .turnlog import check_numbering, read_turns


def _require(obj: dict, key: str, kind: type | tuple, where: str) -> Any:
    if key not in obj:
        raise RunError(f"{where}: missing field '{key}'")
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise RunError(f"{where}: field '{key}' must be {names}, got {type(value).__name__}")
    return value


def task_from_dict(obj: Any, where: str) -> Task:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: field 'task' must be an object")
    apps = obj.get("apps")
    if apps is not None and not (isinstance(apps, list) and all(isinstance(a, str) for a in apps)):
        raise RunError(f"{where}: field 'task.apps' must be a list of strings")
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise RunError(f"{where}: field 'task.metadata' must be an object")
    return Task(
        id=str(_require(obj, "id", (str, int), f"{where}: task")),
        instruction=_require(obj, "instruction", str, f"{where}: task"),
        task_type=obj.get("task_type"),
        apps=apps,
        initial_observation=obj.get("initial_observation"),
        metadata=meta,
    )


def outcome_from_dict(obj: Any, turns: list[Turn], where: str) -> Outcome:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: field 'outcome' must be an object with 'success' (true/false)")
    success = obj.get("success")
    if not isinstance(success, bool):
        raise RunError(f"{where}: field 'outcome.success' must be true or false, got {success!r}")
    score = obj.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise RunError(f"{where}: field 'outcome.score' must be a number")
    steps = obj.get("steps", count_steps(turns))
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise RunError(f"{where}: field 'outcome.steps' must be a non-negative integer")
    return Outcome(success=success, steps=steps, score=score, ended_by=obj.get("ended_by"))


def run_from_dict(obj: Any, where: str, turns: list[Turn] | None = None) -> Run:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: a run record must be a JSON object")
    run_id = _require(obj, "run_id", (str, int), where)
    if not str(run_id).strip():
        raise RunError(f"{where}: field 'run_id' is empty")
    if turns is None:
        raw_turns = _require(obj, "turns", list, where)
        turns = [Turn.from_record(t, where=f"{where}: turns[{i}]") for i, t in enumerate(raw_turns)]
        check_numbering(turns, where)
    task = task_from_dict(obj.get("task"), where)
    outcome = outcome_from_dict(obj.get("outcome"), turns, where)
    _complete(turns, outcome)
    return Run(run_id=str(run_id), task=task, turns=turns, outcome=outcome)


def _complete(turns: list[Turn], outcome: Outcome) -> None:
    """What the record leaves open, filled by the rules every importer follows: a call
    with a result but no ``is_error`` is judged by its text; a run the harness ended
    closes with a harness ``episode_over`` turn naming the reason."""
    for t in turns:
        if t.type == "function_call" and t.is_error is None and t.result is not None:
            t.is_error = errors.observation_is_error(t.result)
    last = turns[-1] if turns else None
    if (harness.is_harness(outcome.ended_by) and last is not None and last.type == "episode_over"
            and last.role is None and not last.content):
        last.role, last.content = "harness", harness.reason_of(outcome.ended_by)


def read_jsonl(path: Path, known: dict | None = None) -> Iterator[Run | RunError | Carried]:
    """Yield runs, or a RunError per bad line so the caller can report and go on.

    A line whose digest is in ``known`` (compiled before, byte for byte) comes
    back as ``Carried`` without being parsed.
    """
    try:
        for item in jsonl_records(path, known):
            if isinstance(item, (RunError, Carried)):
                yield item
                continue
            where, lineno, obj, digest, _clean = item
            try:
                run = run_from_dict(obj, where)
            except RunError as exc:
                yield exc
                continue
            run.source = {"format": "native-jsonl", "file": path.name, "line": lineno, "record_digest": digest}
            yield run
    except RunError as exc:  # the file could not be opened
        yield exc


def read_folder(path: Path) -> Run:
    meta_path = path / "run.json"
    obj = load_json(meta_path)
    log = path / "solver.full.jsonl"
    try:
        turns = read_turns(log) if log.exists() and "turns" not in obj else None
    except (ValueError, RecursionError, OSError) as exc:
        if isinstance(exc, RunError):
            raise
        raise RunError(f"{log}: cannot read the turn log ({exc.__class__.__name__})") from None
    run = run_from_dict(obj, str(meta_path), turns=turns)
    run.source = {"format": "native-folder", "file": path.name}
    return run


def is_run_folder(path: Path) -> bool:
    return path.is_dir() and (path / "run.json").is_file()
