"""Regular expressions compiled on first use.

The offline reading holds hundreds of patterns, most of which only some runs ever reach. A
build reads thousands of runs and compiles each pattern once either way; a short command
(``add`` of one run) imports the same modules and reaches a third of them, and compiling the
rest at import was a tenth of its time. A pattern written as ``lazy_re.compile(...)`` is
compiled the first time one of its methods is used; from then on those methods are the
compiled pattern's own, bound on the object, so a call costs what it cost before.
"""

from __future__ import annotations

import re

# what callers read of a pattern besides ``pattern`` (set at once: modules build patterns from it)
_FROM_COMPILED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
                  "flags", "groups", "groupindex")


class LazyPattern:
    """A ``re.Pattern`` made when first used. Not a ``re.Pattern``: pass ``.compiled`` where one
    is required (``re.sub(PATTERN, ...)``, ``isinstance``)."""

    def __init__(self, pattern: str, flags: int = 0):
        self.pattern = pattern
        self._flags = flags

    def __getattr__(self, name: str):
        if name.startswith("__") or name not in _FROM_COMPILED + ("compiled",):
            raise AttributeError(name)
        compiled = re.compile(self.pattern, self._flags)
        self.compiled = compiled
        for attr in _FROM_COMPILED:
            setattr(self, attr, getattr(compiled, attr))
        return getattr(self, name)

    def __repr__(self) -> str:
        return f"lazy_re.compile({self.pattern!r}, {self._flags!r})"


def compile(pattern: str, flags: int = 0) -> LazyPattern:  # noqa: A001 - re.compile's name, as a drop-in
    return LazyPattern(pattern, flags)
