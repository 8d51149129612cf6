"""Shared by the tests: paths to example and real data, and small tree utilities."""

import json
import os
import stat
from pathlib import Path


REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples" / "runs.jsonl"
# The shared data sits beside the main checkout; a worktree elsewhere points at it with WIKITRACE_DATA.
SHARED_DATA = Path(os.environ.get("WIKITRACE_DATA") or REPO.parent / "shared" / "data")
TAU_BENCH = SHARED_DATA / "runs-dev" / "tau-bench-airline" / "gpt-4o-airline.json"
# .ci/run sets it for its second pass: the expensive property tests at full size.
THOROUGH = os.environ.get("WIKITRACE_THOROUGH") == "1"


def examples(full: int, everyday: int) -> int:
    """How many examples an expensive property test draws: ``everyday`` in the default run,
    ``full`` with WIKITRACE_THOROUGH=1."""
    return full if THOROUGH else everyday


def example_runs() -> list[dict]:
    return [json.loads(line) for line in EXAMPLES.read_text().splitlines() if line.strip()]


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file's bytes by path, leaving out the build's own state folder (.wikitrace/)."""
    return {rel: p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not (rel := p.relative_to(root).as_posix()).startswith(".wikitrace/")}


def make_writable_copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    for p in [dst, *dst.rglob("*")]:
        os.chmod(p, (stat.S_IRWXU if p.is_dir() else stat.S_IRUSR | stat.S_IWUSR))
    return dst


def without_build_stamp(files: dict) -> dict:
    """A tree_bytes() mapping with corpus.json's build block (times, counts of this build) left out."""
    files = dict(files)
    data = json.loads(files.pop("corpus.json"))
    data.pop("build")
    files["corpus.json"] = json.dumps(data, sort_keys=True).encode()
    return files


def run_cli(*args: str, stdin: str = "") -> tuple[int, str, str]:
    """``wikitrace ARGS`` in this process, the way ``main`` runs it (the one error path, the
    redacting stdout and stderr): (exit code, stdout, stderr)."""
    import io
    import sys
    from unittest import mock

    from wikitrace import cli

    out, err = io.StringIO(), io.StringIO()
    with mock.patch.object(sys, "argv", ["wikitrace", *args]), mock.patch.object(sys, "stdout", out), \
            mock.patch.object(sys, "stderr", err), mock.patch.object(sys, "stdin", io.StringIO(stdin)):
        try:
            cli.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()
