"""The lines a file edit took out and put in, read from the arguments the log holds: an editor's
old and new text (``old_str``/``new_str``, ``old_string``/``new_string``, MultiEdit's list), a
whole file written (``content``, ``file_text``: nothing known taken out), a patch's - and +
lines, and SWE-agent's ``edit a:b`` whose replaced lines the last listing of the file before it
printed. Trials of a task that edited the same file are told apart by these lines.
"""

from __future__ import annotations

import re

from .reading import Call, Reading, command_of

KEPT = 6  # lines kept per side of an edit
WIDTH = 100  # characters kept per line

_OLD_KEYS = ("old_string", "old_str")
_NEW_KEYS = ("new_string", "new_str", "content", "file_text", "insert_text", "new_source")
_FLAG = re.compile(r"--(old_str|new_str|file_text)\s+(['\"])(.*?)\2(?=\s+--|\s*$)", re.S)
_RANGE = re.compile(r"^\s*edit\s+(\d+):(\d+)\s*\n(.*?)\n?end_of_edit\s*$", re.S)
_LISTED = re.compile(r"^(\d+):(.*)$")


def _lines(text: str) -> list[str]:
    return [" ".join(ln.split()) for ln in text.splitlines() if ln.strip()]


def _net(old: list[str], new: list[str]) -> tuple[list[str], list[str]]:
    """The lines only one side holds: the context an edit repeats is no change."""
    return [x for x in old if x not in new], [x for x in new if x not in old]


def _clip(lines: list[str]) -> list[str]:
    return [x if len(x) <= WIDTH else x[: WIDTH - 1] + "…" for x in lines[:KEPT]]


def edit_lines(r: Reading, c: Call) -> tuple[list[str], list[str]] | None:
    """(lines taken out, lines put in) by an edit call, None when its arguments do not show them."""
    args = c.turn.arguments
    old: list[str] = []
    new: list[str] = []
    if isinstance(args, dict):
        old = [ln for k in _OLD_KEYS if isinstance(args.get(k), str) for ln in _lines(args[k])]
        new = [ln for k in _NEW_KEYS if isinstance(args.get(k), str) for ln in _lines(args[k])]
        for e in args.get("edits") if isinstance(args.get("edits"), list) else []:
            if isinstance(e, dict):
                old += _lines(str(e.get("old_string") or ""))
                new += _lines(str(e.get("new_string") or ""))
        patch = args.get("input") or args.get("patch")
        if not old and not new and isinstance(patch, str):
            old, new = _patch(patch)
    elif isinstance(args, str):
        flags = {m.group(1): m.group(3) for m in _FLAG.finditer(args)}
        ranged = _RANGE.match(args)
        if flags:
            old, new = _lines(flags.get("old_str", "")), _lines(flags.get("new_str") or flags.get("file_text") or "")
        elif ranged:
            old = _listed_before(r, c, int(ranged.group(1)), int(ranged.group(2)))
            new = _lines(ranged.group(3))
        elif "\n+" in args or "\n-" in args:
            old, new = _patch(args)
        else:
            command = command_of(c.turn) or ""
            if "\n" not in command:
                return None
    if not old and not new:
        return None
    out, put = _net(old, new)
    return _clip(out), _clip(put)


def _patch(text: str) -> tuple[list[str], list[str]]:
    """A patch's taken-out and put-in lines (its file headers left out)."""
    old = [ln[1:] for ln in text.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    new = [ln[1:] for ln in text.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
    return _lines("\n".join(old)), _lines("\n".join(new))


def _listed_before(r: Reading, c: Call, low: int, high: int) -> list[str]:
    """Lines ``low``..``high`` as the latest listing before ``c`` printed them (``N:code``)."""
    for x in reversed(r.calls):
        if x.n >= c.n:
            continue
        got = {}
        for line in (x.turn.result or "").splitlines():
            m = _LISTED.match(line)
            if m:
                got[int(m.group(1))] = m.group(2)
        if all(n in got for n in range(low, high + 1)):
            return _lines("\n".join(got[n] for n in range(low, high + 1)))
    return []
