"""Capture at the end of a session: what a hook's ``wikitrace add`` needs beyond add itself.

A hook runs unattended, so two things matter more than for an add typed by hand:

- the first session a hook sees may arrive before any corpus exists: an add to a folder
  that does not exist yet (or holds only wikitrace's own state folder) compiles the run
  into a new corpus there, with ``compile``'s defaults;
- a failure must be seen by someone: every failed add leaves one line (time, run file,
  the error line) in ``.wikitrace/add-failures.log`` of the corpus folder, which
  ``wikitrace check`` reports until the file is deleted.
"""

from __future__ import annotations

import time
from pathlib import Path

from .publish import STATE

FAILURE_LOG = f"{STATE}/add-failures.log"


def is_fresh(root: Path) -> bool:
    """No corpus here yet and nothing of a user's either: the folder is missing, or holds
    at most wikitrace's state folder (where a failure log may already be)."""
    if (root / "corpus.json").exists() or (root / STATE / "runs.json").exists():
        return False
    if not root.exists():
        return True
    if not root.is_dir():
        return False
    return all(child.name == STATE for child in root.iterdir())


def create(opts):
    """Compile RUN_FILE into a new corpus at ``opts.corpus`` (the add that finds no corpus)."""
    from ..build import BuildError, BuildOptions, build
    from ..errors import Failed, InputError
    from ..llm.config import LLMConfigError
    from ..runs.model import RunError
    from ..runs.outcomes import parse_verdict
    from .add import OUTCOME_HELP, AddResult, _EveryRun

    try:
        verdict = parse_verdict(opts.outcome, "--outcome") if opts.outcome is not None else None
    except (LLMConfigError, RunError) as exc:
        raise InputError(str(exc)) from None
    bopts = BuildOptions(inputs=[opts.run_file], out=opts.corpus, fmt=opts.fmt, templates=opts.templates,
                         offline=opts.offline, model=opts.model, base_url=opts.base_url, cache_dir=opts.cache_dir,
                         max_tokens=opts.max_tokens, timeout=opts.timeout, quiet=True, strict=True,
                         outcomes=_EveryRun(verdict) if verdict is not None else None)
    try:
        built = build(bopts)
    except BuildError as exc:
        raise Failed(str(exc)) from None
    except (LLMConfigError, RunError) as exc:
        if verdict is None and "no outcome for run" in str(exc):  # strict: the run has no verdict of its own
            raise InputError("the run carries no verdict of its own", f"pass --outcome {OUTCOME_HELP}; no corpus "
                             f"was created", where=opts.run_file) from None
        raise InputError(str(exc)) from None
    from .publish import read_corpus_json

    data = read_corpus_json(built.out)
    result = AddResult(corpus=built.out, skipped=list(built.skipped), runs=built.runs, insights=built.insights,
                       stats=built.stats, compiler=built.compiler, created=True)
    result.added = [{**{k: r[k] for k in ("run_id", "step", "outcome", "insights", "compiler")}, "replaced": False}
                    for r in data["runs"]]
    return result


def log_failure(corpus: Path | None, run_file: Path | None, message: str) -> None:
    """One line in the corpus folder's failure log; never raises (the error itself is what counts)."""
    if corpus is None:
        return
    try:
        root = Path(corpus)
        if not ((root / STATE).is_dir() or (root / "corpus.json").is_file() or is_fresh(root)):
            return  # a folder of someone else's files: left alone
        log = root / FAILURE_LOG
        log.parent.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        where = "" if run_file is None or message.startswith(str(run_file)) else f"{run_file}: "
        line = " ".join(f"{stamp} {where}{message}".split())
        from ..redact import scrub

        line = scrub(line)  # the file name or a quoted record may hold a key; the log stays in the corpus
        with open(log, "a", encoding="utf-8", errors="replace") as fh:
            fh.write(line + "\n")
    except OSError:
        pass


def logged_failures(root: Path) -> list[str]:
    """The problem line ``wikitrace check`` prints for a non-empty failure log."""
    log = Path(root) / FAILURE_LOG
    try:
        lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return []
    if not lines:
        return []
    return [f"{FAILURE_LOG}: {len(lines)} failed `wikitrace add`{'s' if len(lines) != 1 else ''} logged (last: "
            f"{lines[-1][:300]}); fix the cause, add those runs again, then delete the file"]
