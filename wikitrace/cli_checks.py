"""Checks of command-line values made before any work starts, each failing as one
UsageError that names the option: a typo in a path or a regex should cost a second,
not a build."""

from __future__ import annotations

from pathlib import Path


def existing_folder(path: Path | None, option: str) -> Path | None:
    """``path`` if it is a folder (or None); a missing folder is an error, never ignored."""
    from .errors import UsageError

    if path is None:
        return None
    if not path.exists():
        raise UsageError("no such folder", f"give an existing folder to {option}", where=path)
    if not path.is_dir():
        raise UsageError("is a file, not a folder", f"give a folder to {option}", where=path)
    return path


def valid_patterns(patterns: list[str]) -> tuple[str, ...]:
    """Each --redact-pattern compiled once here, so a bad one stops the build before it reads."""
    import re

    from .errors import UsageError

    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise UsageError(f"{pattern!r} is not a valid regular expression ({exc})",
                             "fix the pattern (Python re syntax; escape ( [ { . * + ? with a backslash)",
                             where="--redact-pattern") from None
    return tuple(patterns)


def writable_file(path: Path | None, option: str) -> Path | None:
    """``path`` if its folder exists and is a folder, checked before the work that feeds it."""
    from .errors import UsageError

    if path is None:
        return None
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"the folder {parent} does not exist", f"create it or choose another {option} path",
                         where=path)
    if path.is_dir():
        raise UsageError("is a folder", f"give {option} a file name", where=path)
    return path


_FLAG_WORDS = {"true", "false", "yes", "no", "on", "off"}


def flag_values(inputs) -> None:
    """``--offline true``: flags take no value, so the word would be read as an input path.
    Said as a usage error instead of a missing input the build skips."""
    from .errors import UsageError

    for path in inputs:
        if str(path).lower() in _FLAG_WORDS and not Path(path).exists():
            raise UsageError(f"{str(path)!r} is not an input: flags such as --offline take no value",
                             f"drop {str(path)!r} (write --offline alone)", where="INPUT")
