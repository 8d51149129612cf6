"""Trials of one task that changed the same files, told apart by what their edits wrote.

Two coding trials often edit the same file, one successfully and one not; which file they
changed then says nothing, and the lines each edit took out and put in (compilers/edit_lines.py,
kept in each run's decisive record) are the difference a reader can act on: the line the
successful trial replaced that this run left as it was, or the same line replaced by other text.
"""

from __future__ import annotations

import re

from ..compilers.test_edits import is_test_path
from ..compilers.text import base_name
from ..controls import visible
from ..templates import md_text


_TOKEN = re.compile(r"\w+|[^\w\s]")


def _t(text: str) -> str:
    return visible(md_text(text))



def changed_files(entry: dict) -> list[str]:
    """The base names of the files a run's recorded changes edited, in order."""
    changes = (entry.get("decisive") or {}).get("changes") or []
    return list(dict.fromkeys(base_name(c["file"]) for c in changes if c.get("file")))


def same_calls(entry: dict, apart: str = "") -> str:
    """What trials with no difference from ``entry`` did alike, as a phrase after their subject,
    then what did separate them (``apart``) or that it is not in those calls."""
    record = entry.get("decisive") or {}
    if not record.get("changes") and not record.get("answer"):
        return ("made no state-changing call either; what separated them: " + apart if apart else
                "made no state-changing call either: what separated them from this run is not in such calls")
    what = "state-changing calls and answer" if record.get("answer") else "state-changing calls"
    files = changed_files(entry)
    if files:  # an edit's text is not compared: the same file may have been changed otherwise
        alike = f"changed the same file{'s' if len(files) > 1 else ''} as this run ({', '.join(files[:3])})"
        return (alike + "; what separated them: " + apart if apart else
                alike + ": what separated them is in what the edits wrote, not in which files they changed")
    return (f"made the same {what} as this run; what separated them: " + apart if apart else
            f"made the same {what} as this run: what separated them is not in those calls")


def _by_file(entry: dict) -> dict[str, dict]:
    """file -> {"removed", "added", "function", "turns"} over a run's recorded edits of it."""
    out: dict[str, dict] = {}
    for c in (entry.get("decisive") or {}).get("changes") or []:
        if not c.get("file"):
            continue
        f = out.setdefault(c["file"], {"removed": [], "added": [], "function": None, "turns": [], "known": False})
        f["known"] = f["known"] or "removed" in c
        f["removed"] += [x for x in c.get("removed") or () if x not in f["removed"]]
        f["added"] += [x for x in c.get("added") or () if x not in f["added"]]
        f["function"] = f["function"] or c.get("function")
        f["turns"].append(c["turn"])
        f["unseen"] = f.get("unseen", []) + [x for x in c.get("unseen") or () if x not in f.get("unseen", [])]
    return out


SHOWN_LINES = 4  # lines of an edit written out whole: a short fix is read, not counted ("and 3 more lines")
_SHOWN_WIDTH = 320  # characters of them at most


def _code(lines: list[str]) -> str:
    """The lines an edit wrote, each as code, one after another ("`n = len(s)` / `mid = n // 2`"),
    so a reader sees how the code behaves; past ``SHOWN_LINES`` or ``_SHOWN_WIDTH``, the first and a
    count of the rest."""
    kept = [x.strip() for x in lines if x.strip()] or lines[:1]
    if len(kept) <= SHOWN_LINES and sum(len(x) for x in kept) <= _SHOWN_WIDTH:
        return " / ".join(f"`{_t(x)}`" for x in kept)
    more = len(lines) - 1
    return f"`{_t(lines[0])}`" + (f" (and {more} more line{'s' if more > 1 else ''})" if more > 0 else "")


def _both_unseen(theirs: dict, mine: dict) -> str:
    """Where both edits wrote a name their logs showed only with another spelling: said of both, so that
    neither page reads writing an unseen name as one run's slip alone. Which of the two names is
    defined as written the logs do not show, so nothing is concluded from it either way."""
    if not (theirs.get("unseen") and mine.get("unseen")):
        return ""
    return (f"; each wrote a name its log had shown only with another spelling (`{_t(theirs['unseen'][0])}`, and this "
            f"run `{_t(mine['unseen'][0])}`)")


# a quoted literal is one token: two lines that differ inside one differ in that literal
_CODE_TOKEN = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|\w+|[^\w\s]")


def _spans(line: str) -> list[tuple[int, int]]:
    return [m.span() for m in _CODE_TOKEN.finditer(line)]


def _uncut(line: str) -> str:
    """A line the record cut short, back to before a quoted literal the cut left open."""
    line = line.removesuffix("\u2026")
    for q in "'\"":
        if line.count(q) % 2:
            line = line[:line.rfind(q)]
    return line


def differing_parts(a: str, b: str) -> tuple[str, str] | None:
    """Where two versions of one code line differ, token by token: the part of each between the
    tokens they share at the start and at the end (``padding != Padding.OPTIONAL`` against
    ``!_paddingOptional``). A line the record cut short (ending in "…") is matched at its end by its
    last whole tokens found in the other line. None when they share neither end, or when one
    holds all of the other."""
    cut = [x.endswith("\u2026") for x in (a, b)]
    if all(cut):
        return None
    a, b = (_uncut(x) if c else x for x, c in zip((a, b), cut))
    ta, tb = _spans(a), _spans(b)
    if cut[0]:
        ta = ta[:-1]  # its last token may be a word cut in two
    if cut[1]:
        tb = tb[:-1]
    wa, wb = [a[i:j] for i, j in ta], [b[i:j] for i, j in tb]
    head = 0
    while head < min(len(wa), len(wb)) and wa[head] == wb[head]:
        head += 1
    if any(cut):  # the cut line's last tokens, found again further on in the whole one
        short, whole = (wa, wb) if cut[0] else (wb, wa)
        found = next(((len(short) - t, k) for t in range(len(short) - head - 1, 1, -1)
                      for k in range(head + 1, len(whole) - t + 1) if whole[k:k + t] == short[len(short) - t:]), None)
        if found is None or not head:
            return None
        ends = (found[0], found[1]) if cut[0] else (found[1], found[0])
    else:
        tail = 0
        while tail < min(len(wa), len(wb)) - head and wa[-1 - tail] == wb[-1 - tail]:
            tail += 1
        if head + tail >= min(len(wa), len(wb)) or head + tail < max(len(wa), len(wb)) - head - tail:
            return None  # one holds all of the other, or the lines share less than they differ in
        ends = (len(wa) - tail, len(wb) - tail)
    return a[ta[head][0]:ta[ends[0] - 1][1]], b[tb[head][0]:tb[ends[1] - 1][1]]


def edits_apart(won: dict, failed: dict, on_success: bool = False) -> tuple[str, list[int]] | None:
    """(a phrase after "The successful trial S of this task", this run's edit turns it cites) for
    the page of ``failed`` when it changed the same files as ``won``: the line the success
    replaced that the failed run's edits left, or what each wrote in place of the same line.
    ``on_success``: the phrase follows "The failed trial, S," on the page of ``won``. None when
    the records do not show the lines, or show no difference."""
    mine, theirs = _by_file(failed), _by_file(won)
    for path in theirs:
        if path not in mine or not (theirs[path]["known"] and mine[path]["known"]):
            continue
        a, b = theirs[path], mine[path]
        cited = (a if on_success else b)["turns"][:3]
        where = _t(base_name(path)) + (f", in `{_t(a['function'])}`" if a["function"] else "")
        left = [x for x in a["removed"] if x not in b["removed"]]
        instead = [x for x in b["removed"] if x not in a["removed"]]
        if left and on_success:
            text = (f"changed the same file as this run ({where}) but left {_code(left)} as "
                    f"{'it was' if len(left) == 1 else 'they were'}, which this run replaced")
            return text + (f"; it replaced {_code(instead)} instead" if instead else
                           f"; it wrote {_code(b['added'])}" if b["added"] else ""), cited
        if left:
            text = (f"changed the same file as this run ({where}), and replaced {_code(left)} there, which this "
                    f"run's edits left as {'it was' if len(left) == 1 else 'they were'}")
            return text + (f"; this run replaced {_code(instead)} instead" if instead else
                           f"; this run wrote {_code(b['added'])}" if b["added"] else ""), cited
        if a["added"] and b["added"] and a["added"] != b["added"]:
            same = (f" in place of the same line{'s' if len(a['removed']) > 1 else ''} ({_code(a['removed'])})"
                    if a["removed"] else " there")
            first, then = (b, a) if on_success else (a, b)
            parts = (differing_parts(first["added"][0], then["added"][0])
                     if len(first["added"]) == len(then["added"]) == 1 else None)
            if parts is not None:  # one line written two ways: the words that differ are the thing to check
                line = (f"replaced the same line ({_code(a['removed'])}) with the line this run wrote"
                        if a["removed"] else "wrote the same line as this run")
                return (f"changed the same file as this run ({where}) and {line} but for `{_t(parts[0])}`, where this "
                        f"run wrote `{_t(parts[1])}`" + _both_unseen(first, then)), cited
            return (f"changed the same file as this run ({where}) and wrote {_code(first['added'])}{same}; "
                    f"this run wrote {_code(then['added'])}" + _both_unseen(first, then)), cited
    return None


def _alike(a: str, b: str) -> float:
    """How much two code lines share, as the Jaccard overlap of their tokens."""
    x, y = set(_TOKEN.findall(a)), set(_TOKEN.findall(b))
    return len(x & y) / len(x | y) if x | y else 0.0


def other_way(won: dict, other: dict) -> tuple[str, list[int]] | None:
    """(a phrase after "The other successful trial S of this task", this run's edit turns) for the
    page of the success ``won`` when ``other``, a successful trial of the same task, replaced the same
    line of the same file with a line much like but unlike the one ``won`` wrote (the same calls in
    another order, another constant): two ways both accepted. None otherwise."""
    mine, theirs = _by_file(won), _by_file(other)
    for path in sorted(set(mine) & set(theirs)):
        a, b = mine[path], theirs[path]
        place = [x for x in a["removed"] if x in b["removed"]]
        pairs = [(_alike(x, y), x, y) for x in a["added"] if x not in b["added"]
                 for y in b["added"] if y not in a["added"]]
        best = max(pairs, default=None)
        if not place or best is None or best[0] < 0.6:
            continue
        where = _t(base_name(path)) + (f", in `{_t(b['function'] or a['function'])}`" if b["function"] or a["function"]
                                       else "")
        return (f"replaced the same line ({_code(place[:1])} in {where}) with {_code([best[2]])} where this run "
                f"wrote {_code([best[1]])}"), a["turns"][:3]
    return None


def code_instead(failed: dict, won: list[dict], link, said: str = "") -> str:
    """`` The successful trial S changed A.java, which is not a test file; this run changed only
    test files.`` for the page of a failed run that changed only test files, when a successful
    trial of its task changed a file outside the tests (the first such trial of ``won``, ordered
    closest first; ``link`` makes a step's link). The trial is not named again when ``said``, the
    line so far, names it and that file already. "" otherwise."""
    if not (failed.get("decisive") or {}).get("tests_only"):
        return ""
    for w in won:
        code = list(dict.fromkeys(base_name(c["file"]) for c in (w.get("decisive") or {}).get("changes") or []
                                  if c.get("file") and not is_test_path(c["file"])))
        if code:
            files, one = _t(", ".join(code[:3])), len(code) == 1
            named = link(w["step"]) in said and all(re.search(rf"(?<![\w.-]){re.escape(_t(f))}(?![\w-])", said)
                                                    for f in code[:3])
            kind = "is not a test file" if one else "are not test files"
            head = (f" {files} {kind}" if named else f" The successful trial {link(w['step'])} changed {files}, "
                    + ("which is not a test file" if one else "none of them a test file"))
            return head + "; this run changed only test files."
    return ""
