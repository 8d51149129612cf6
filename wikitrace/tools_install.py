"""Copy the agent-side tools (``actions``, ``turn``, ``grep``) into a folder.

The tools are stdlib-only scripts that ship in the wheel (``tools/`` at the repo
top). The three launchers import ``_corpus.py`` from their own folder, so the
whole folder is copied, not single scripts. The modules (``_*.py``) are then
byte-compiled in place: an agent's sandbox usually mounts the tools read-only,
where Python could not cache the compiled modules itself and would recompile them
on every call (the pyc is only used by the same Python version; any other
version ignores it and still works).
"""

from __future__ import annotations

import os
import py_compile
import shutil
from pathlib import Path

from .templates import bundled_dir

_EXECUTABLE = 0o755
_MODULE = 0o644


def tool_files(source: Path | None = None) -> list[Path]:
    """The files that make up the tools: every regular, non-hidden file at the top of the
    folder (so no __pycache__), no compiled caches."""
    folder = Path(source) if source is not None else bundled_dir("tools")
    return sorted(
        path for path in folder.iterdir()
        if path.is_file() and not path.is_symlink() and not path.name.startswith(".")
        and path.suffix not in (".pyc", ".pyo")
    )


def _same(source: Path, target: Path) -> bool:
    try:
        return target.is_file() and target.read_bytes() == source.read_bytes()
    except OSError:
        return False


def install_command(dest: Path, force: bool, as_json: bool) -> int:
    """``wikitrace tools install``: the paths written, one a line (or a JSON object)."""
    written = install(dest, force=force)
    if as_json:
        import json

        print(json.dumps({"dest": str(dest), "written": [str(p) for p in written]}, indent=2))
    else:
        for path in written:
            print(path)
    return 0


def install(dest: Path, force: bool = False) -> list[Path]:
    """Copy the tools into ``dest`` (created if needed); return the paths written.

    Scripts (no ``.py`` suffix) end up mode 0755, the shared module 0644. A file
    already in ``dest`` with the same name and other content is a user's file or an
    older install: nothing is written unless ``force``. Other files are left alone.
    """
    from .errors import UsageError

    dest = Path(dest)
    if dest.exists() and not dest.is_dir():
        raise UsageError("is a file, not a folder", "pass a folder (it is created if missing)", where=dest)
    sources = tool_files()
    differing = [dest / s.name for s in sources if (dest / s.name).exists() and not _same(s, dest / s.name)]
    if differing and not force:
        names = ", ".join(p.name for p in differing)
        raise UsageError(f"{len(differing)} file(s) there differ from the bundled tools ({names})",
                         "pass --force to replace them, or choose an empty folder", where=dest)
    dest.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for source in sources:
        target = dest / source.name
        temp = dest / f".{source.name}.tmp-{os.getpid()}"
        try:
            shutil.copyfile(source, temp)
            # Keep the source's mtime so the pyc written below stays valid wherever
            # the folder is copied or mounted with its timestamps.
            shutil.copystat(source, temp, follow_symlinks=True)
            os.chmod(temp, _MODULE if source.suffix == ".py" else _EXECUTABLE)
            os.replace(temp, target)
        finally:
            if temp.exists():
                temp.unlink()
        written.append(target)
    for target in list(written):
        if target.suffix == ".py":
            try:
                cached = py_compile.compile(str(target), doraise=True)
            except (py_compile.PyCompileError, OSError):
                continue  # an optimisation only: the tools run without it
            if cached:
                written.append(Path(cached))
    return written
