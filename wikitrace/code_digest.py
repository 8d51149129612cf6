"""The digest of the package's own modules: what a kept result (a build's pages, the pattern
counts, the same-task comparisons) was made by. A development checkout changes the code without
changing ``__version__``, and a result made by other code must not be reused."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_digest: str | None = None


def code_digest() -> str:
    """sha256 over every module of the package (folders with an ``__init__.py``: not the agent
    tools a wheel bundles inside it), worked out once per process (a few ms). The folders are
    listed with ``os.walk``: every ``add`` pays for this, and ``Path.rglob`` with a stat per file
    cost as much as reading and hashing the modules."""
    global _digest
    if _digest is None:
        package = str(Path(__file__).resolve().parent)
        modules = []  # (path parts under the package, file): the order sorted(rglob("*.py")) gives
        for folder, dirs, files in os.walk(package):
            if "__init__.py" not in files:
                continue
            rel = os.path.relpath(folder, package)
            parts = () if rel == "." else tuple(rel.split(os.sep))
            modules.extend((parts + (name,), os.path.join(folder, name)) for name in files if name.endswith(".py"))
        h = hashlib.sha256()
        for parts, path in sorted(modules):
            with open(path, "rb") as fh:
                h.update("/".join(parts).encode() + b"\0" + fh.read() + b"\0")
        _digest = h.hexdigest()
    return _digest
