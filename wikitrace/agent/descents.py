"""Find descents in an agent transcript and label the run Descent or Stay (paper §5.1).

A *memory call* is a tool call whose arguments read, grep, cat or list a path under the
mount path (default ``/work/corpus``) or run one of the corpus tools (``/work/tools/*``).
Every other tool call is an *environment action*. Consecutive memory calls up to the next
environment action form one *descent*; assistant messages in between do not split it.

A descent *opens a compilation* when it reads a ``compilation/step-NNNN.md`` document and
*opens a raw run* when it reads a file of ``raw/step-NNNN/`` or runs
``/work/tools/actions`` / ``/work/tools/turn`` on a step. Listing folders, reading the
``_index.md`` files, reading insights and grepping across a layer are memory calls that
open nothing. A run with at least one descent that opened a compilation or a raw run is
labelled **Descent**; any other run (including one that only read indexes or insights)
is labelled **Stay**.

Accepted transcripts: the corpus turn log (``solver.full.jsonl``: one turn object per
line, or a JSON array of them), OpenAI chat messages (a JSON array, JSONL, or an object
with ``messages``/``traj``), or a file of many such runs (tau-bench's
``[{task_id, trial, reward, traj}, ...]``), each run reported separately.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ..runs.model import RunError, Turn
from ..runs.chat_messages import messages_to_turns
from ..runs.turnlog import parse_turns

DEFAULT_MOUNT = "/work/corpus"
DEFAULT_TOOLS = "/work/tools"
_READERS = {"cat", "head", "tail", "less", "more", "sed", "awk", "jq", "nl", "bat", "view", "tac", "cut",
            "grep", "egrep", "rg", "python", "python3", "read", "open", "read_file", "view_file"}
_SEARCHERS = {"grep", "egrep", "rg"}
_FOR = re.compile(r"for\s+(\w+)\s+in\s+([^;\n]+?)\s*;\s*do\b")


@dataclass
class Descent:
    index: int
    first_turn: int
    last_turn: int
    calls: int
    opened_compilations: list[str] = field(default_factory=list)
    opened_raw: list[str] = field(default_factory=list)
    opened_insights: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)   # layers grepped / listed
    after_failed_action: bool = False                    # the previous environment action failed
    next_action_turn: int | None = None

    @property
    def opened(self) -> bool:
        return bool(self.opened_compilations or self.opened_raw)


@dataclass
class DescentReport:
    name: str
    label: str                      # "Descent" | "Stay"
    descents: list[Descent]
    memory_calls: int
    environment_actions: int

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for item, desc in zip(d["descents"], self.descents):
            item["opened"] = desc.opened
        return d


# --- reading transcripts -------------------------------------------------------------

def _is_turn(rec: Any) -> bool:
    return isinstance(rec, dict) and "turn" in rec and "type" in rec


def _is_run(rec: Any) -> bool:
    return isinstance(rec, dict) and isinstance(rec.get("traj", rec.get("messages", rec.get("turns"))), list)


def _run_name(rec: dict, i: int) -> str:
    if rec.get("run_id"):
        return str(rec["run_id"])
    if rec.get("task_id") is not None:
        trial = rec.get("trial")
        return f"task-{rec['task_id']}" + (f"-trial-{trial}" if trial is not None else "")
    return f"run-{i}"


def _turns_of(records: list[Any], where: str) -> list[Turn]:
    if records and all(_is_turn(r) for r in records):
        return parse_turns("\n".join(json.dumps(r) for r in records), where)
    return messages_to_turns(records, where)


def _not_a_transcript(path: Path, line: int | None = None) -> Exception:
    from ..errors import InputError

    return InputError("not a transcript (JSON or JSONL of turns, chat messages or runs)",
                      "give a JSON list or JSONL of turn records ({\"turn\", \"type\", \"name\", ...}) or "
                      "chat messages ({\"role\", \"content\"})",
                      where=path, line=line)


def read_transcripts(path: Path) -> list[tuple[str, list[Turn]]]:
    """(name, turns) for every run in the file."""
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    records: Any
    try:
        records = json.loads(text) if stripped[:1] in "[{" else None
    except json.JSONDecodeError:
        records = None
    if records is None:  # JSONL
        records = []
        for n, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    raise _not_a_transcript(path, n) from None
    if isinstance(records, dict):
        records = [records] if _is_run(records) else records
    if not isinstance(records, list):
        raise _not_a_transcript(path)
    if records and all(_is_run(r) for r in records):
        out = []
        for i, rec in enumerate(records):
            msgs = rec.get("traj", rec.get("messages", rec.get("turns")))
            out.append((_run_name(rec, i), _turns_of(msgs, f"{path}: run {i}")))
        return out
    return [(path.name, _turns_of(records, str(path)))]


# --- classifying one tool call ---------------------------------------------------------

def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _expand_loops(cmd: str) -> list[str]:
    """``for s in 0002 0017; do cat .../step-$s.md; done`` -> one command per value."""
    m = _FOR.search(cmd)
    if not m:
        return [cmd]
    var, values = m.group(1), m.group(2).split()
    body = cmd[m.end():]
    return [re.sub(r"\$\{?" + var + r"\}?\b", v, body) for v in values] or [cmd]


def _segments(cmd: str) -> list[list[str]]:
    out = []
    for expanded in _expand_loops(cmd):
        for seg in re.split(r"\|\||&&|[|;\n]", expanded):
            try:
                words = shlex.split(seg, posix=True)
            except ValueError:
                words = seg.split()
            while words and words[0] in ("sudo", "xargs", "do", "then", "time", "command"):
                words = words[1:]
            if words:
                out.append(words)
    return out


@dataclass
class _CallInfo:
    memory: bool = False
    compilations: list[str] = field(default_factory=list)
    raw: list[str] = field(default_factory=list)
    insights: list[str] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)


class _Classifier:
    def __init__(self, mount: str, tools: str):
        self.mount = mount.rstrip("/") or "/"
        self.tools = tools.rstrip("/")
        m, t = re.escape(self.mount), re.escape(self.tools)
        self.mount_re = re.compile(m + r"(?=/|\s|$|['\"])")
        self.tools_re = re.compile(t + r"/(\w[\w.-]*)")
        self.doc_re = re.compile(r"(?:^|" + m + r"/|(?<![\w/])\./?|(?<![\w/]))"
                                 r"(compilation|raw|insight)/((?:step|insight)-[0-9]+)")

    def _doc(self, arg: str) -> tuple[str, str] | None:
        m = self.doc_re.search(arg)
        return (m.group(1), m.group(2)) if m else None

    def classify(self, turn: Turn) -> _CallInfo:
        info = _CallInfo()
        texts = list(_strings(turn.arguments)) + ([turn.arguments] if isinstance(turn.arguments, str) else [])
        joined = "\n".join(texts)
        in_mount = bool(self.mount_re.search(joined))
        tool_hit = bool(self.tools_re.search(joined))
        if not (in_mount or tool_hit):
            return info
        info.memory = True
        name = (turn.name or "").lower()
        if name in _READERS:  # a read/open tool whose argument is a path
            for s in texts:
                self._record(info, "cat", [s])
        for s in texts:
            for words in _segments(s):
                verb = words[0].rsplit("/", 1)[-1]
                if re.fullmatch(re.escape(self.tools) + r"/\w[\w.-]*", words[0]):
                    self._tool(info, verb, words[1:])
                else:
                    self._record(info, verb, words[1:])
        for attr in ("compilations", "raw", "insights", "searched"):
            setattr(info, attr, list(dict.fromkeys(getattr(info, attr))))
        return info

    def _tool(self, info: _CallInfo, tool: str, args: list[str]) -> None:
        steps = [a for a in args if re.fullmatch(r"step-[0-9]+", a)]
        if tool in ("actions", "turn"):
            info.raw.extend(steps)
        elif tool == "grep":
            layer = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "--layer"), None)
            layer = layer or next((a.split("=", 1)[1] for a in args if a.startswith("--layer=")), "all")
            info.searched.append(layer)

    def _record(self, info: _CallInfo, verb: str, args: list[str]) -> None:
        if verb not in _READERS and verb not in ("ls", "find", "tree"):
            return
        for arg in args:
            if arg.startswith("-"):
                continue
            doc = self._doc(arg)
            if doc is None:
                m = re.search(r"(compilation|raw|insight)/?$", arg)
                if m and (self.mount in arg or not arg.startswith("/")) and verb in _SEARCHERS | {"ls", "find", "tree"}:
                    info.searched.append(m.group(1))
                continue
            layer, ident = doc
            if verb in ("ls", "find", "tree"):
                info.searched.append(layer)
                continue
            if verb in _SEARCHERS and not re.search(r"\.(md|jsonl)$", arg):
                info.searched.append(layer)  # grep -r over a run's folder: a search, not a reading
                continue
            {"compilation": info.compilations, "raw": info.raw, "insight": info.insights}[layer].append(ident)


# --- grouping ------------------------------------------------------------------------

def analyse_turns(turns: list[Turn], name: str = "run", mount_path: str = DEFAULT_MOUNT,
                  tools_path: str = DEFAULT_TOOLS) -> DescentReport:
    clf = _Classifier(mount_path, tools_path)
    descents: list[Descent] = []
    current: Descent | None = None
    memory_calls = env_actions = 0
    last_action_failed = False
    for t in turns:
        if not t.is_action:
            continue
        info = clf.classify(t)
        if info.memory:
            memory_calls += 1
            if current is None:
                current = Descent(index=len(descents), first_turn=t.turn, last_turn=t.turn, calls=0,
                                  after_failed_action=last_action_failed)
                descents.append(current)
            current.calls += 1
            current.last_turn = t.turn
            for src, dst in (("compilations", "opened_compilations"), ("raw", "opened_raw"),
                             ("insights", "opened_insights"), ("searched", "searched")):
                target = getattr(current, dst)
                target.extend(x for x in getattr(info, src) if x not in target)
        else:
            env_actions += 1
            if current is not None:
                current.next_action_turn = t.turn
                current = None
            last_action_failed = bool(t.is_error)
    label = "Descent" if any(d.opened for d in descents) else "Stay"
    return DescentReport(name=name, label=label, descents=descents, memory_calls=memory_calls,
                         environment_actions=env_actions)


def analyse_file(path: str | Path, mount_path: str = DEFAULT_MOUNT, tools_path: str = DEFAULT_TOOLS) -> list[DescentReport]:
    return [analyse_turns(turns, name, mount_path, tools_path) for name, turns in read_transcripts(Path(path))]


def descents_command(path: Path, mount_path: str, tools_path: str, as_json: bool) -> int:
    from rich.console import Console
    from rich.table import Table

    from ..errors import InputError

    try:
        reports = analyse_file(path, mount_path, tools_path)
    except UnicodeDecodeError:
        raise InputError("not UTF-8 text", "give the transcript as UTF-8 JSON or JSONL", where=path) from None
    except RunError as exc:  # a record of the wrong shape inside a transcript
        raise InputError(str(exc), "give the agent's turn log or chat messages") from None
    if as_json:
        print(json.dumps([r.to_dict() for r in reports], indent=2))
        return 0
    table = Table(title=f"Descents in {path.name}")
    for col in ("run", "label", "descents", "opened C", "opened R", "memory calls", "env actions"):
        table.add_column(col, justify="left" if col in ("run", "label") else "right")
    for r in reports:
        comps = sorted({c for d in r.descents for c in d.opened_compilations})
        raws = sorted({c for d in r.descents for c in d.opened_raw})
        table.add_row(r.name, r.label, str(len(r.descents)), ", ".join(comps) or "-", ", ".join(raws) or "-",
                      str(r.memory_calls), str(r.environment_actions))
    console = Console()
    console.print(table)
    n = sum(r.label == "Descent" for r in reports)
    console.print(f"{n} Descent, {len(reports) - n} Stay")
    return 0
