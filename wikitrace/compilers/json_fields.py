"""Every scalar of a parsed JSON answer with its field, nesting depth and holding record, in
one walk.

``picked_values._fields_at_depth`` defines these from the path strings ``leaves`` builds
(``reservations[0].origin``): the field is the path's last name, the depth its count of
steps, the record the path without its last step. Parsing a path string per scalar was
most of the time spent on a large answer (a flight search); this walk carries the three
along instead and gives the same tuples, in the same order. Keys that would make the
path strings ambiguous (empty, or holding ``.``, ``[`` or ``]``) are left to the path
strings: ``None`` is returned and the caller reads them the slow way.
"""

from __future__ import annotations

from typing import Any


class _Unclear(Exception):
    """A key whose path string would not split back into the key."""


def _clear(key: Any) -> str:
    if type(key) is not str or not key or "." in key or "[" in key or "]" in key:
        raise _Unclear
    return key


def fields_at_depth(data: Any) -> list[tuple[str, int, Any, str]] | None:
    """(field, depth, scalar, path of the record holding it) for every scalar of ``data``, as
    the path strings give them; None when a key makes the path strings ambiguous."""
    out: list[tuple[str, int, Any, str]] = []
    try:
        if isinstance(data, (dict, list)):
            _walk(data, "", 0, "", out)
        else:
            out.append(("", 0, data, ""))
    except (_Unclear, RecursionError):
        return None
    return out


def _walk(node: Any, path: str, depth: int, piece: str, out: list) -> None:
    """``path``: the node's path string; ``depth``: its count of steps; ``piece``: the last
    name the path string splits into (a key, ``3]`` after an index, or empty at the top)."""
    append = out.append
    if isinstance(node, dict):
        step = depth + 1 if path else depth
        for key, value in node.items():
            key = _clear(key)
            if isinstance(value, (dict, list)):
                _walk(value, f"{path}.{key}" if path else key, step, key, out)
            else:
                append((key, step, value, path or key))
    else:
        step = depth + 1
        for i, value in enumerate(node):
            if isinstance(value, (dict, list)):
                _walk(value, f"{path}[{i}]", step, f"{i}]", out)
            else:
                append((piece, step, value, path))
