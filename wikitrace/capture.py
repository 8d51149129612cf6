"""Capture at the end of a session: what a hook's ``wikitrace add`` needs beyond add itself.

A hook runs unattended, so three things matter more than for an add typed by hand:

- the run file arrives as a JSON payload on stdin (``transcript_from_hook``);
- the first session a hook sees may arrive before any corpus exists: ``is_fresh`` tells
  add that the folder does not exist yet (or holds only wikitrace's own state folder),
  and add then compiles the run into a new corpus there, with ``compile``'s defaults;
- a failure must be seen by someone: every failed add leaves one line (time, run file,
  the error line) in ``.wikitrace/add-failures.log`` of the corpus folder, which
  ``wikitrace check`` reports until the file is deleted.

Nothing here imports add: add and the check read these helpers.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from .corpus.publish import STATE
from .errors import InputError

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


def transcript_from_hook(fd: int = 0, wait: float = 10.0) -> Path:
    """The session file a Claude Code hook names: its JSON payload on stdin carries
    ``transcript_path`` (with ``session_id``, ``cwd``, ``hook_event_name``). Read until the
    object is complete, not until EOF: a hook's stdin is not always closed."""
    import select

    where = "--claude-code-hook"
    data, deadline = b"", time.monotonic() + wait
    while True:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        chunk = os.read(fd, 1 << 16) if ready else b""
        data += chunk
        try:
            payload = json.loads(data.decode("utf-8"))
            break
        except ValueError:
            if not chunk:
                raise InputError("stdin holds no hook payload (a JSON object with transcript_path)",
                                 "run this from a Claude Code hook, or give RUN_FILE instead", where=where) from None
    path = payload.get("transcript_path") if isinstance(payload, dict) else None
    if not isinstance(path, str) or not path:
        raise InputError("the hook payload has no transcript_path",
                         "use it in a hook that carries one (SessionEnd, Stop), or give RUN_FILE", where=where)
    return Path(os.path.expanduser(path))


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
        from .redact import scrub

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
