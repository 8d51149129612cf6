"""``wikitrace cite record``: put one finished episode in the corpus's usage ledger.

The episode's citation is read from the agent's answer (the same tolerant parser as
``cite parse``), checked against the corpus, and stored as ids only with the episode's
outcome (corpus/ledger.py). The insight pages whose counts change are rewritten at
once through the corpus publisher, with the same bytes a rebuild would write.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..corpus import ledger, recount

LOCK_WAIT = 60.0  # seconds to wait for a build (or another record) holding the corpus


@dataclass
class RecordResult:
    corpus: str
    episode: dict
    status: str  # recorded | unchanged | updated
    unknown: list[dict] = field(default_factory=list)  # cited ids the corpus does not hold (not stored)
    notes: list[str] = field(default_factory=list)
    pages: list[str] = field(default_factory=list)  # insight pages rewritten with new counts
    counts: dict[str, dict] = field(default_factory=dict)  # cited insight id -> {"episodes", "succeeded"}

    def to_dict(self) -> dict:
        return asdict(self)


def episode_key(run_id: str, answer: str) -> str:
    """The episode's name: its run and its answer (both redacted before hashing, so no
    digest of a secret reaches the corpus)."""
    h = hashlib.sha256(run_id.encode("utf-8") + b"\0" + answer.encode("utf-8"))
    return "sha256:" + h.hexdigest()[:32]


def _lock(root: Path):
    """The corpus's build lock, waiting up to LOCK_WAIT for whoever holds it."""
    from ..corpus.publish import BuildLock, PublishError

    deadline = time.monotonic() + LOCK_WAIT
    while True:
        lock = BuildLock(root)
        try:
            return lock.__enter__()
        except PublishError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


def record_episode(corpus: Path, answer: str, run_id: str, outcome: str, *, method: str = "wikitrace",
                   task: str | None = None, suite: str = "default", trial: str | None = None) -> RecordResult:
    """Record one episode; raises errors.UsageError / errors.Failed the CLI prints."""
    from ..corpus.publish import PublishError, corpus_root, read_corpus_json
    from ..errors import Failed, InputError, UsageError
    from ..redact import default_redactor
    from ..runs.model import RunError
    from ..runs.outcomes import parse_verdict
    from .cite import CitationError, Citation, check_citation, parse_citation
    from .index import prompt_index_bytes

    root = corpus_root(corpus)
    try:
        data = read_corpus_json(root)
    except PublishError as exc:
        raise InputError(str(exc)) from None
    if data is None:
        raise InputError("no corpus.json here", f"compile a corpus first (wikitrace compile ... --out {corpus})",
                         where=corpus)
    try:
        verdict = parse_verdict(outcome, "--outcome")
    except RunError as exc:
        raise UsageError(str(exc).split(": ", 1)[-1], "give success, failure or a score (1.0 = solved)",
                         where="--outcome") from None
    if not run_id.strip():
        raise UsageError("the run id is empty", "give the episode's run id", where="--run")
    notes: list[str] = []
    try:
        cit = parse_citation(answer)
    except CitationError as exc:
        cit = Citation()
        notes.append(f"no citation in the answer ({exc}); the episode is recorded as citing nothing")
    check_citation(cit, data)
    red = default_redactor()
    run_label, answer_red = red.text(run_id), red.text(answer)
    if task is None:  # the run's own task, when the run is in the corpus (e.g. added with `wikitrace add`)
        task = next((r.get("task_id") for r in data.get("runs", []) if r.get("run_id") == run_id), None) or run_id
    key = episode_key(run_label, answer_red)

    lock = _lock(root)
    try:
        lines, problems = ledger.read_ledger(root)
        notes += [f"skipped unreadable ledger line: {p}" for p in problems]
        episodes = ledger.fold(lines)
        before = episodes.get(key)
        labels = dict(suite=red.text(suite), task_id=red.text(str(task)), method=red.text(method))
        if trial is None:
            trial = before.trial if before else str(sum(
                1 for e in episodes.values() if (e.suite, e.task_id, e.method) ==
                (labels["suite"], labels["task_id"], labels["method"])))
        ep = ledger.Episode(episode=key, run=run_label, trial=red.text(str(trial)),
                            outcome="success" if verdict.success else "failure", success=verdict.success,
                            score=verdict.score, R=cit.R, C=cit.C, I=cit.I, **labels)
        status = "unchanged" if before is not None and before.same_as(ep) else "updated" if before else "recorded"
        if status != "unchanged":
            ledger.append(root, ep)
            episodes[key] = ep
        counts = ledger.tally(episodes.values())
        pages = recount.publish_counts(root, counts, [i["id"] for i in data.get("insights", []) if isinstance(i, dict)],
                                              notes, prompt_index_bytes)
    except ledger.LedgerError as exc:
        raise Failed(str(exc)) from None
    finally:
        lock.__exit__(None, None, None)
    return RecordResult(
        corpus=str(root), episode={k: getattr(ep, k) for k in ledger.KEYS}, status=status,
        unknown=cit.unknown, notes=notes, pages=pages,
        counts={i: {"episodes": counts[i][0], "succeeded": counts[i][1]} for i in ep.I if i in counts})


def cite_record_command(source: str, corpus: Path, run_id: str, outcome: str, method: str, task: str | None,
                        suite: str, trial: str | None, as_json: bool) -> int:
    """CLI body: 0 recorded (or already recorded), 1 when cited ids were unknown (the
    episode is recorded without them)."""
    import json
    import sys

    from ..errors import InputError

    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", "give the agent's answer as UTF-8", where=source) from None
    res = record_episode(corpus, text, run_id, outcome, method=method, task=task, suite=suite, trial=trial)
    if as_json:
        print(json.dumps(res.to_dict(), indent=2, ensure_ascii=False))
    ep = res.episode
    err = sys.stderr.write
    verb = {"recorded": "recorded", "updated": "updated (replaces the earlier line)",
            "unchanged": "already recorded; nothing changed"}[res.status]
    err(f"episode {ep['run']} ({ep['outcome']}): {verb} in {ledger.LEDGER}\n")
    for key in ("R", "C", "I"):
        err(f"  {key}: {', '.join(ep[key]) or '-'}\n")
    for iid, c in res.counts.items():
        err(f"  {iid}: cited in {c['episodes']} episode(s), {c['succeeded']} succeeded\n")
    for u in res.unknown:
        err(f"  unknown {u['key']}: {u['id']} ({u['reason']}); not recorded\n")
    for note in res.notes:
        err(f"note: {note}\n")
    return 1 if res.unknown else 0
