"""What a call ran and what it changed, read off its arguments and its answer.

A page names an edit by the file it touched and, when the edit's text or the snippet
the editor printed back shows it, the function it sits in. A shell
call is named by the program it ran (``pytest``, ``javac``), not by the shell tool,
so "a later call went through" means a later run of the same program. Nothing here
knows a benchmark: argument keys, command lines, declaration keywords of common
languages and the editors' own echo shapes are the vocabulary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import lazy_re
from ..runs.model import Turn
from .reading import _SHELL_TOOLS, _head_word, command_of, is_command_line

_CD = lazy_re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")
_SEQUENCE = lazy_re.compile(r"\s*;\s*")
_QUOTED = lazy_re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_PATH_KEYS = ("file_path", "path", "filename", "file", "target_file", "notebook_path")
_EDIT_WORDS = lazy_re.compile(r"edit|write|replace|insert|patch|create|append|apply", re.I)
_READ_SUBCOMMANDS = frozenset(("view", "read", "show", "cat", "list", "undo_edit"))
# the file an editor says it changed: SWE-agent's "[File: /x (N lines total)]", "The file /x has been edited/updated"
_FILE_ECHO = lazy_re.compile(r"\[File: (\S+?) \(\d+ lines total\)\]|\bThe file (\S+?) has been (?:edited|updated|created)\b"
                             r"|File created successfully at: (\S+)")
# a shell command that writes a file: sed -i, a redirect, tee
_SHELL_WRITE = lazy_re.compile(r"\bsed\s+-i\S*\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+([\w./-]+)|(?<![<>&0-9])>>?\s*([\w./-]+\.\w+)"
                               r"|\btee\s+(?:-a\s+)?([\w./-]+)")
# a line of a numbered listing: "117:  code", "    42\tcode", "    12→code"
_NUMBERED = lazy_re.compile(r"^\s*(\d+)(?::|\t|→)")
_DECLARATION = lazy_re.compile(
    r"^\s*(?:async\s+)?def\s+(\w+)\s*\("  # Python
    r"|\bfunction\s+(\w+)\s*\("  # JavaScript, PHP
    r"|^\s*func\s+(?:\([^)]*\)\s*)?(\w+)\s*\("  # Go
    r"|^\s*(?:pub(?:\([\w:]+\))?\s+)?(?:async\s+)?fn\s+(\w+)"  # Rust
    r"|^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|override|internal)\s+)+"
    r"[\w<>\[\],.?]+(?:\s*<[^>]*>)?\s+(\w+)\s*\(",  # Java, C#, Kotlin-like methods
)
_NEW_TEXT_FLAG = lazy_re.compile(r"--(?:new_str|file_text|new_string)\s+(['\"])(.*?)\1(?=\s|$)", re.S)


_DIFF_HEAD = lazy_re.compile(r"^diff --git a/(\S+)(?: b/(\S+))?[ \t]*$", re.M)  # a cut log may keep only the a/ side


def diff_files(text: str | None) -> list[tuple[str, bool]]:
    """The files a git diff in a call's answer changes (a submit answers with the patch), each
    with whether the diff creates it; empty when the answer holds no diff."""
    heads = list(_DIFF_HEAD.finditer(text or ""))
    out = []
    for i, m in enumerate(heads):
        block = text[m.end(): heads[i + 1].start() if i + 1 < len(heads) else len(text)]
        header = block.split("\n@@", 1)[0]  # the lines before the first hunk
        out.append((m.group(2) or m.group(1), bool(re.search(r"^new file mode", header, re.M))))
    return out


def _name_of(line: str) -> str | None:
    m = _DECLARATION.search(line)
    return next((g for g in m.groups() if g), None) if m else None


def what_ran(turn: Turn) -> str:
    """The program a shell call ran (``pytest`` for ``bash`` running ``cd /r && pytest -q``, and
    for SWE-agent's ``cd /r && pytest`` line), else the tool's name (SWE-agent already names
    the tool by its program; an editor's subcommand is no program)."""
    name = turn.name or "?"
    command = command_of(turn)
    shell = _head_word(name) in _SHELL_TOOLS or name == "cd"
    if command is None or not shell:
        return name
    command = _CD.sub("", command)
    if "\n" not in command.strip() and ";" in command:  # ``env | grep aws; python warm.py``: the shell reports
        parts = [p for p in _SEQUENCE.split(_QUOTED.sub("''", command)) if p.strip()]  # the last one's status
        command = _CD.sub("", parts[-1]) if parts else command
    words = command.split()
    if words[:1] == ["sudo"] and len(words) > 1 and not words[1].startswith("-"):  # the program sudo ran
        words = words[1:]
    if not words:
        return name
    return words[0].rsplit("/", 1)[-1] if words[0].startswith("/") else words[0]  # /usr/bin/cat runs cat


@dataclass
class Edit:
    """A call that changed a file: the file, and the function when the log shows it."""

    file: str
    function: str | None = None

    def phrase(self) -> str:
        return f"`{self.file}`" + (f" (in `{self.function}`)" if self.function else "")


@lru_cache(maxsize=1024)
def _edits_by_name(name: str) -> bool:
    """A tool whose name says it writes files: asked of every call of a run many times."""
    return bool(_EDIT_WORDS.search(name))


def edit_of(turn: Turn) -> Edit | None:
    """The file (and function) a call changed, or None when it changed no file it names."""
    args, name, result = turn.arguments, turn.name or "", turn.result or ""
    texts: list[str] = []
    path = None
    if isinstance(args, dict):
        sub = str(args.get("command") or "")
        editing = _edits_by_name(name) and sub.lower() not in _READ_SUBCOMMANDS
        path = next((args[k] for k in _PATH_KEYS if isinstance(args.get(k), str) and args[k].strip()), None) \
            if editing else None
        if path is None:
            return _shell_edit(turn)
        # the new text first: the editor's echo shows it, not the old one
        texts = [str(args[k]) for k in ("new_string", "new_str", "content", "file_text", "insert_text", "new_source",
                                        "old_string", "old_str") if isinstance(args.get(k), str)]
        for e in args.get("edits") if isinstance(args.get("edits"), list) else []:
            if isinstance(e, dict):
                texts += [str(e.get("new_string", "")), str(e.get("old_string", ""))]
    elif isinstance(args, str) and is_command_line(turn):
        words = args.split()
        sub = words[1] if len(words) > 1 else ""
        if not _EDIT_WORDS.search(name) or sub.lower() in _READ_SUBCOMMANDS:
            return _shell_edit(turn)
        echo = _FILE_ECHO.search(result)
        path = next((g for g in echo.groups() if g), None) if echo else None
        if path is None and len(words) > 2 and "/" in words[2]:
            path = words[2]  # str_replace_editor str_replace /r/a.py ...
        if path is None:
            return None
        quoted = _NEW_TEXT_FLAG.search(args)  # SWE-agent 1.x: ``--new_str '...'`` on the command line
        texts = [quoted.group(2) if quoted else args.split("\n", 1)[1] if "\n" in args else args]
    else:
        return None
    return Edit(path, _function_in(texts, result))


def _shell_edit(turn: Turn) -> Edit | None:
    """A shell call that writes a file (``sed -i``, a redirect, ``tee``); other tools' text is no command."""
    command = command_of(turn)
    name = turn.name or ""
    if command is None or not (_head_word(name) in _SHELL_TOOLS or is_command_line(turn)):
        return None
    m = _SHELL_WRITE.search(command)
    target = next((g for g in m.groups() if g), None) if m else None
    return Edit(target) if target and not target.startswith("/dev/") else None


def _function_in(texts: list[str], result: str) -> str | None:
    """The function an edit sits in: one its own text declares, else the last declaration
    above the edited line in the snippet the editor printed back."""
    for text in texts:
        for line in text.splitlines():
            name = _name_of(line)
            if name:
                return name
    new_lines = [ln.strip() for t in texts[:1] for ln in t.splitlines() if ln.strip()]
    if not new_lines:
        return None
    listing = [(m.group(0), line[m.end():]) for line in result.splitlines() if (m := _NUMBERED.match(line))]
    found = None
    for _, code in listing:
        if code.strip() == new_lines[0]:
            return found
        found = _name_of(code) or found
    return None
