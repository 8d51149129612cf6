"""Writing corpus files: stable frontmatter, atomic replacement, read-only results."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

FILE_MODE = 0o444
DIR_MODE = 0o555


class _Dumper(yaml.SafeDumper):
    """Block style, insertion order kept, long lines unwrapped: diffs stay small."""


def _str_representer(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str_representer)


def dump_frontmatter(fields: dict[str, Any]) -> str:
    """YAML for a frontmatter block, keys in the order given, None values left out."""
    kept = {k: v for k, v in fields.items() if v is not None}
    return yaml.dump(kept, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)


def write_atomic(path: Path, text: str, mode: int | None = None) -> None:
    """Write via a temp file in the same folder and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def make_read_only(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), FILE_MODE)
        os.chmod(dirpath, DIR_MODE)


def make_writable(root: Path) -> None:
    """Undo make_read_only so a tree can be removed (non-root users need this)."""
    if not root.exists():
        return
    os.chmod(root, 0o755)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                os.chmod(p, 0o644)


def remove_tree(root: Path) -> None:
    import shutil

    make_writable(root)
    shutil.rmtree(root, ignore_errors=False)
