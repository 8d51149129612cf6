"""Explicit outcomes for runs whose input format carries no verdict.

``--outcomes FILE`` maps run ids to a verdict. Accepted files:

- a JSON object ``{"run-id": "success" | "failure" | true | false | 0.5 | {"success": .., "score": ..}}``
- a SWE-bench evaluation report: a JSON object with id lists ``resolved``/``resolved_ids``
  (success) and ``unresolved``/``unresolved_ids``, ``error_ids``, ``empty_patch_ids``,
  ``completed_ids``, ``applied``, ``generated``, ``with_logs``, ``no_generation``, ``no_apply``,
  ``install_fail``, ``test_errored``, ``test_timeout``, ``reset_failed`` (failure unless also resolved)
- a JSON array or JSONL of objects ``{"run_id" | "id" | "instance_id": .., "outcome" | "success" |
  "resolved" | "label": .., "score" | "reward": ..}``
- CSV or TSV with a header naming the same columns

Verdict words: success, succeeded, pass, passed, resolved, correct, true, yes, 1 and
failure, failed, fail, unresolved, incorrect, halted, false, no, 0. A bare score
counts as success only at full marks (>= 1.0), the rule the OpenAI-chat importer
uses for rewards; the score is kept either way. Anything else is an error: an
outcome is never guessed.

A run takes its verdict from the entry for its ``run_id``, else for one of the
ids its importer lists in ``run.source['outcome_keys']`` (e.g. a SWE-bench
``instance_id``), else for its ``task.id``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ._common import parse_json, read_text
from .model import Outcome, Run, RunError, count_steps

_YES = {"success", "succeeded", "successful", "pass", "passed", "resolved", "correct", "true", "yes", "1", "1.0"}
_NO = {"failure", "failed", "fail", "unresolved", "incorrect", "halted", "false", "no", "0", "0.0"}
_ID_KEYS = ("run_id", "id", "instance_id", "task_id", "session_id")
_VERDICT_KEYS = ("success", "outcome", "resolved", "label", "verdict", "result")
_SCORE_KEYS = ("score", "reward")
_REPORT_SUCCESS = ("resolved", "resolved_ids")
# Ids a report lists without judging them: submitted, never evaluated to the end.
_REPORT_PENDING = ("incomplete_ids",)
_REPORT_FAILURE = (
    "unresolved", "unresolved_ids", "error_ids", "empty_patch_ids", "completed_ids", "applied", "generated", "with_logs",
    "no_generation", "no_apply", "install_fail", "test_errored", "test_timeout", "reset_failed",
)


@dataclass(frozen=True)
class Verdict:
    success: bool
    score: float | None = None
    where: str = ""  # file:line the verdict came from


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def parse_verdict(value: Any, where: str, score: Any = None) -> Verdict:
    """One verdict from a word, a boolean, a score or an object with those; a score that is
    not a finite number (NaN, Infinity) is refused, never read as a failure."""
    verdict = _verdict(value, where, score)
    if verdict.score is not None and not math.isfinite(verdict.score):
        raise RunError(f"{where}: score {verdict.score} is not a finite number — give a score such as 0.0 or 1.0, "
                       f"or success/failure")
    return verdict


def _verdict(value: Any, where: str, score: Any = None) -> Verdict:
    if isinstance(value, dict):
        inner = next((value[k] for k in _VERDICT_KEYS if k in value), None)
        inner_score = next((value[k] for k in _SCORE_KEYS if k in value), None)
        return _verdict(inner, where, inner_score)
    sc = None
    if score is not None and score != "":
        sc = _number(score)
        if sc is None:
            raise RunError(f"{where}: score {score!r} is not a number")
    if isinstance(value, bool):
        return Verdict(value, sc, where)
    if value is None or value == "":
        if sc is None:
            raise RunError(f"{where}: no verdict; give success/failure or a score")
        return Verdict(sc >= 1.0, sc, where)
    if isinstance(value, (int, float)):
        return Verdict(float(value) >= 1.0, sc if sc is not None else float(value), where)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _YES:
            return Verdict(True, sc, where)
        if word in _NO:
            return Verdict(False, sc, where)
        num = _number(word)
        if num is not None:
            return Verdict(num >= 1.0, sc if sc is not None else num, where)
    raise RunError(f"{where}: verdict {value!r} is not one of success/failure, true/false or a score")


def _entry(obj: Any, where: str) -> tuple[str, Verdict]:
    if not isinstance(obj, dict):
        raise RunError(f"{where}: expected an object with run_id and outcome")
    key = next((obj[k] for k in _ID_KEYS if obj.get(k) not in (None, "")), None)
    if key is None:
        raise RunError(f"{where}: no run id (one of {', '.join(_ID_KEYS)})")
    if not isinstance(key, (str, int)) or isinstance(key, bool):
        raise RunError(f"{where}: run id must be a string")
    verdict = next((obj[k] for k in _VERDICT_KEYS if k in obj), None)
    score = next((obj[k] for k in _SCORE_KEYS if k in obj), None)
    return str(key), parse_verdict(verdict, where, score)


class Table(dict):
    """run id -> Verdict, plus the ids a report names without a verdict.

    ``pending`` maps such an id to why it has none (a SWE-bench run listed in
    ``incomplete_ids``: submitted, but its evaluation did not finish); ``where``
    is the file the table came from.
    """

    def __init__(self, *args, where: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.where = where
        self.pending: dict[str, str] = {}


def is_swebench_report(obj: Any) -> bool:
    return isinstance(obj, dict) and any(isinstance(obj.get(k), list) for k in _REPORT_SUCCESS)


def from_swebench_report(obj: dict, where: str) -> Table:
    table = Table(where=where)
    for key in _REPORT_PENDING:
        for iid in obj.get(key) or []:
            if isinstance(iid, str):
                table.pending[iid] = (f"{where} lists it in {key}: it was submitted but its evaluation did not "
                                      f"finish, so there is no verdict")
    for key in _REPORT_FAILURE:
        for iid in obj.get(key) or []:
            if isinstance(iid, str):
                table[iid] = Verdict(False, None, f"{where}: {iid} in {key}")
    for key in _REPORT_SUCCESS:
        for iid in obj.get(key) or []:
            if isinstance(iid, str):
                table[iid] = Verdict(True, None, f"{where}: {iid} in {key}")
    for iid in table:
        table.pending.pop(iid, None)
    return table


def why_missing(run: Run, table: Mapping[str, Verdict]) -> str | None:
    """Why ``table`` gives ``run`` no verdict, when the table knows (see ``Table.pending``)."""
    pending = getattr(table, "pending", None) or {}
    keys = [run.run_id, *[str(k) for k in run.source.get("outcome_keys", [])], run.task.id]
    return next((pending[k] for k in keys if k in pending), None)


def _add(table: dict[str, Verdict], key: str, verdict: Verdict) -> None:
    old = table.get(key)
    if old is not None and (old.success, old.score) != (verdict.success, verdict.score):
        raise RunError(f"{verdict.where}: run {key!r} already has a different verdict at {old.where}")
    table[key] = verdict


def parse_outcomes(text: str, where: str, suffix: str = "") -> dict[str, Verdict]:
    table: dict[str, Verdict] = Table(where=where)
    stripped = text.lstrip()
    if suffix in (".csv", ".tsv") or (stripped[:1] not in ("{", "[") and stripped):
        dialect = "excel-tab" if suffix == ".tsv" or ("\t" in stripped.split("\n", 1)[0]) else "excel"
        rows = csv.DictReader(io.StringIO(text), dialect=dialect)
        fields = [f.strip().lower() for f in (rows.fieldnames or [])]
        if not any(k in fields for k in _ID_KEYS):
            raise RunError(f"{where}:1: the header needs a run id column ({', '.join(_ID_KEYS)})")
        for lineno, row in enumerate(rows, start=2):
            row = {(k or "").strip().lower(): (v.strip() if isinstance(v, str) else v) for k, v in row.items()}
            if not any(row.values()):
                continue
            key, verdict = _entry(row, f"{where}:{lineno}")
            _add(table, key, verdict)
        return table
    try:
        whole = None if suffix == ".jsonl" else json.loads(text)
    except (ValueError, RecursionError):
        whole = None
        if not stripped.startswith("{"):
            parse_json(text, where)  # raises with the line of the problem
    if isinstance(whole, dict) and any(k in whole for k in _ID_KEYS) and any(
            k in whole for k in _VERDICT_KEYS + _SCORE_KEYS):
        whole = None  # a one-line JSONL file: a single entry, not a mapping
    if isinstance(whole, dict):
        if is_swebench_report(whole):
            return from_swebench_report(whole, where)
        for key, value in whole.items():
            _add(table, str(key), parse_verdict(value, f"{where}: {key!r}"))
        return table
    if isinstance(whole, list):
        for i, obj in enumerate(whole):
            key, verdict = _entry(obj, f"{where}: entry {i}")
            _add(table, key, verdict)
        return table
    if whole is not None:
        raise RunError(f"{where}: expected a JSON object or array of outcomes")
    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            key, verdict = _entry(parse_json(line, f"{where}:{lineno}", single_line=True), f"{where}:{lineno}")
            _add(table, key, verdict)
    return table


def load_outcomes(path: Path | str) -> dict[str, Verdict]:
    """Read an outcomes file; any bad entry raises RunError (``file:line: reason``)."""
    path = Path(path)
    return parse_outcomes(read_text(path), str(path), path.suffix.lower())


def match(run: Run, table: Mapping[str, Verdict]) -> tuple[str, Verdict] | None:
    """(key, verdict) of the table entry for ``run``: its run id, its importer's keys, its task id."""
    keys = [run.run_id, *[str(k) for k in run.source.get("outcome_keys", [])], run.task.id]
    for key in keys:
        if key in table:
            return key, table[key]
    return None


def lookup(run: Run, table: Mapping[str, Verdict]) -> Verdict | None:
    found = match(run, table)
    return found[1] if found else None


def apply(run: Run, verdict: Verdict) -> Run:
    run.outcome = Outcome(
        success=verdict.success, steps=count_steps(run.turns), score=verdict.score,
        ended_by=run.source.get("ended_by"),
    )
    run.source["outcome_from"] = verdict.where
    return run


def tally(runs: Iterable[Run]) -> Counter:
    """Count runs by outcome label (success / failure / unknown) before compiling."""
    counts: Counter = Counter({"success": 0, "failure": 0})
    for run in runs:
        counts[run.outcome.label if run.outcome is not None else "unknown"] += 1
    return counts


def summary(counts: Mapping[str, int]) -> str:
    total = sum(counts.values())
    parts = [f"{counts.get('success', 0)} success", f"{counts.get('failure', 0)} failure"]
    if counts.get("unknown"):
        parts.append(f"{counts['unknown']} without outcome")
    return f"{total} runs: " + ", ".join(parts)


def nearby_report(path: Path, levels: int = 3, name: str = "results.json") -> tuple[dict[str, Verdict] | None, Path | None]:
    """The SWE-bench style ``results.json`` in the file's folder or up to ``levels`` folders above,
    directly or in a ``results/`` folder there (an experiment folder: ``trajs/`` beside
    ``results/results.json``).

    Returns (table, report path) or (None, None) when there is none; a report that
    exists but cannot be read raises RunError (once; later lookups pass it over).
    Files without resolved lists are not reports and are passed over.
    """
    folder = path.parent
    for _ in range(levels):
        for candidate in (folder / name, folder / "results" / name):
            found = _report_at(candidate)
            if found is not None:
                return found, candidate
        if folder.parent == folder:
            break
        folder = folder.parent
    return None, None


def _report_at(candidate: Path) -> dict[str, Verdict] | None:
    """The verdict table of one candidate report file (cached by mtime), or None."""
    if not candidate.is_file():
        return None
    key = str(candidate.resolve())
    try:
        stamp = candidate.stat().st_mtime_ns
    except OSError:
        stamp = 0
    cached = _REPORTS.get(key)
    if cached is None or cached[0] != stamp:
        try:
            obj = parse_json(read_text(candidate), str(candidate))
        except RunError:
            _REPORTS[key] = (stamp, None)  # reported once, then passed over
            raise
        table = from_swebench_report(obj, str(candidate)) if is_swebench_report(obj) else None
        cached = (stamp, table)
        _REPORTS[key] = cached
    return cached[1]


_REPORTS: dict[str, tuple[int, dict[str, Verdict] | None]] = {}
