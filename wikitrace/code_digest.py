"""The digest of the package's own modules: what a kept result (a build's pages, the pattern
counts, the same-task comparisons) was made by. A development checkout changes the code without
changing ``__version__``, and a result made by other code must not be reused."""

from __future__ import annotations

import hashlib
from pathlib import Path

_digest: str | None = None


def code_digest() -> str:
    """sha256 over every module of the package (folders with an ``__init__.py``: not the agent
    tools a wheel bundles inside it), worked out once per process (a few ms)."""
    global _digest
    if _digest is None:
        package = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for path in sorted(package.rglob("*.py")):
            if (path.parent / "__init__.py").is_file():
                h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
        _digest = h.hexdigest()
    return _digest
