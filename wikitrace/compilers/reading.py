"""What the offline compiler reads off a turn log before it writes a word.

Each agent call is classified once (a ``Call``): is it the agent's own action or
a harness step, did the environment answer with an error, does it change state,
did the user agree just before it. Nothing here knows a benchmark: tool names,
argument keys and the run's own system prompt are the only vocabulary.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any

from .. import lazy_re
from ..runs.errors import is_test_report
from ..runs.model import Run, Turn
from .consent import Consent, Unagreed
from .text import signature, sorted_json_text

if TYPE_CHECKING:
    from .arguments import ArgCheck

# First words of tool names (or shell commands) that read state rather than change it.
_READ_WORDS = frozenset((
    "get", "search", "list", "find", "read", "look", "lookup", "view", "show", "fetch", "query",
    "check", "calculate", "compute", "think", "inventory", "examine", "ls", "cat", "grep",
    "describe", "count", "retrieve", "browse", "info", "head", "tail", "pwd", "echo", "which",
    "open", "scroll", "goto", "rg", "tree", "stat", "wc", "diff",
    "env", "printenv", "whoami", "uname", "du", "df", "locate", "glob",
))
# First words of tool names that change state: a name that opens with one (``send_search_report``)
# changes something whatever word it ends with.
_CHANGE_WORDS = frozenset((
    "add", "apply", "book", "buy", "cancel", "create", "delete", "edit", "exchange", "insert", "modify",
    "move", "pay", "post", "purchase", "put", "refund", "remove", "rename", "replace", "reset", "return",
    "save", "send", "set", "submit", "transfer", "update", "upload", "write",
))
# Words naming the agent's own working notes: a tool that keeps them changes nothing the task is about.
_OWN_NOTES = frozenset(("todo", "todos", "plan", "scratchpad"))
# Words that, ending a tool name, say it looks up what the words before name (``order_status_get``).
_LOOKUP_ENDINGS = frozenset(("get", "search", "list", "find", "read", "lookup", "view", "show", "fetch", "query",
                             "retrieve", "info", "details", "status", "describe", "count"))
_NAME_WORDS = lazy_re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_GIT_READS = frozenset(("diff", "status", "log", "show", "grep", "blame"))
# Shell-like tools whose first command word says what the call does.
_SHELL_TOOLS = frozenset(("bash", "shell", "sh", "run", "execute", "exec", "terminal", "cmd", "command",
                          "cd"))  # SWE-agent names a call by its first word: ``cd /r && pytest``
# a command line that writes a file whatever it starts with: sed -i, tee, a redirect to a file (not /dev/null)
_WRITES_FILE = lazy_re.compile(r"\bsed\s+-i|\btee\s|(?<![<>&0-9])>>?\s*(?!/dev/|&)[\w./~-]")
# shell programs that read, as SWE-agent names a command line by its first word
_SHELL_READERS = frozenset(("cat", "grep", "echo", "head", "tail", "ls", "sort", "find", "rg", "diff", "wc", "tree",
                            "stat", "env", "printenv", "awk", "cut", "uniq"))
_QUOTED_TEXT = lazy_re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")
_MOVES = frozenset(("cd", "pushd", "popd"))  # a shell moving between folders changes nothing
_COMMAND_KEYS = ("command", "cmd", "script", "code", "input")
_COMMAND_KEY_SET = frozenset(_COMMAND_KEYS)
# A conservative reading of an observation that has no error flag of its own:
# only an opening that announces a failure, never a word in the middle of output.
_ERROR_OPENING = lazy_re.compile(
    r"^\s*(?:error\b|\w*error:|exception\b|traceback \(most recent call last\)|"
    r"[\w./-]+: command not found|bash: .*: command not found|fatal:|failed\b|invalid\b)",
    re.I,
)
# SWE-agent style exits and other harness steps that some logs record as calls.
_HARNESS_CALL = lazy_re.compile(r"^(exit_(cost|context|format|error|api|timeout)|autosubmi\w*|env(ironment)?_reset|"
                                r"reset_env\w*)$", re.I)


def is_harness_turn(turn: Turn) -> bool:
    """A step the harness took (a limit, a format exit, an autosubmission), not the agent."""
    if turn.type == "episode_over":
        return turn.role == "harness" or str(turn.extra.get("ended_by", "")).startswith("harness")
    return turn.type == "function_call" and bool(_HARNESS_CALL.match(turn.name or ""))


def looks_like_error(turn: Turn) -> bool:
    """The format's own flag when it has one; else only an observation that opens with a failure."""
    if turn.is_error is not None:
        return turn.is_error
    return bool(_ERROR_OPENING.match(turn.result or ""))


_LEADING_LETTERS = lazy_re.compile(r"[a-z]*")


@lru_cache(maxsize=4096)
def _head_word(text: str) -> str:
    """The leading a-z letters of a tool name or command, lower case (asked many times per call)."""
    return _LEADING_LETTERS.match(text.lower().lstrip()).group()


def command_of(turn: Turn) -> str | None:
    """The command text of a shell-like call, if it has one."""
    args = turn.arguments
    if isinstance(args, str):
        return args
    if isinstance(args, dict) and not _COMMAND_KEY_SET.isdisjoint(args):
        for key in _COMMAND_KEYS:
            if isinstance(args.get(key), str):
                return args[key]
    return None


_CODE_TOOLS = frozenset(("python", "ipython", "jupyter", "repl"))  # tools that run the code they are given
# a line of code that only works a value out or prints it: "print(x)", "n = 13*60 + 5"
_PURE_LINE = lazy_re.compile(r"^\s*(?:#.*|print\(.*\)\s*|[A-Za-z_]\w*\s*=\s*[^()=]+)?$")


def _only_prints(code: str) -> bool:
    """Code that computes and prints and nothing else (no call but print): it changes nothing."""
    return all(_PURE_LINE.match(line) for line in code.splitlines()) and "print(" in code and "open(" not in code


@lru_cache(maxsize=4096)
def _name_reads(name: str) -> bool:
    """A tool name that says it looks something up: its first word is a look-up verb
    (``get_user``, ``searchFlights``), or it names a thing and then the look-up
    (``calendar_lookup``, ``order_status_get``) with no change verb first. An MCP tool's
    server prefix (``mcp__pager__``) is no part of what it does."""
    words = [w.lower() for w in _NAME_WORDS.findall(name.rsplit("__", 1)[-1])]
    if any(w in _OWN_NOTES for w in words):  # the agent's own to-do list or plan (TodoWrite): nothing outside it
        return True
    if not words or words[0] in _CHANGE_WORDS:
        return False
    return words[0] in _READ_WORDS or words[-1] in _LOOKUP_ENDINGS


def is_read_only(turn: Turn) -> bool:
    """Judged from the tool name (``get_user``, ``searchFlights``, ``calendar_lookup``), and for
    shell-like tools, code runners and editors from the command (``ls``, ``cat``, ``view``,
    python's ``print(...)``): everything else changes state."""
    if turn.extra.get("submits"):  # the importer saw the format submit the run with this call
        return False
    name = (turn.name or "").lower()
    head = _head_word(name)
    if name in _SHELL_READERS and isinstance(turn.arguments, str) \
            and _WRITES_FILE.search(_QUOTED_TEXT.sub("''", turn.arguments)):
        return False  # SWE-agent names a command by its first word: ``cat a.java | sed 's/x//' > b.java`` writes b
    if head in _READ_WORDS or name.startswith(("get", "search", "list", "find")) or _name_reads(turn.name or ""):
        return True
    command = command_of(turn)
    if command is not None and head in _CODE_TOOLS and _only_prints(command):
        return True
    if command is not None and (head in _SHELL_TOOLS or "edit" in name or "editor" in name):
        command = re.sub(r"^\s*cd\s+\S+\s*(?:&&|;)\s*", "", command)  # where it runs is not what it does
        if isinstance(turn.arguments, str) and name not in _MOVES and command.lower().startswith(name):
            command = command[len(name):]  # SWE-agent's ``str_replace_editor view /x``: the subcommand says
        if _WRITES_FILE.search(_QUOTED_TEXT.sub("''", command)):  # ``cat a | sed 's/x//' > b.java`` writes a file
            return False
        words = command.split()
        if words[:1] == ["git"]:
            return len(words) > 1 and words[1] in _GIT_READS
        return _head_word(command) in _READ_WORDS or (0 < len(words) <= 2 and words[0] in _MOVES)
    return False


def user_replies(run: Run) -> set[int]:
    """The user messages a person wrote in answer to the agent: those after the agent's first
    turn. The task statement before it (SWE-agent's and mini-swe-agent's instruction template
    is a user message in form) answers nobody, and a message the importer marks as written
    by the harness (a format reminder) is no person's reply."""
    started, out = False, set()
    for t in run.turns:
        if t.type == "function_call" or (t.type == "message" and t.role == "assistant"):
            started = True
        elif started and t.type == "message" and t.role == "user" and t.extra.get("written_by") != "harness":
            out.add(t.turn)
    return out


@dataclass
class Call:
    turn: Turn
    error: bool
    writes: bool  # changes state (or the outcome), as far as the name and command tell
    confirmed: bool  # the user's last message before it agreed (one yes covers every call up to the next message)
    agreed_at: int | None = None  # that agreeing message's turn
    unagreed: Unagreed | None = None  # set only when it plainly went ahead without agreement (None in doubt)
    # the call's turn and tool name ("?" for none), read more than anything else of a call: set once
    n: int = field(init=False, repr=False, compare=False)
    name: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.n, self.name = self.turn.turn, self.turn.name or "?"

    @cached_property
    def sig(self) -> str:
        """``text.signature`` of the call, encoded once: repeats, retries and errors each compare it."""
        return signature(self.turn)


@dataclass
class Reading:
    run: Run
    calls: list[Call]  # the agent's own calls, harness steps left out
    harness: list[Turn]  # harness steps, in order
    system: Turn | None  # the run's system prompt, when the log has one
    facts: list[Turn] = field(default_factory=list)  # observations and user messages, in order
    checks: dict[int, list[ArgCheck]] = field(default_factory=dict)  # check_arguments, by call turn
    _lower: dict[int, str] = field(default_factory=dict)
    _all: list[str] = field(default_factory=list)  # every fact's lower-case text, joined (built once)
    _ends: list[tuple[int, int]] = field(default_factory=list)  # (turn, end offset in _all[0])
    memo: dict[str, Any] = field(default_factory=dict)  # things the lessons compute once per run
    replies: set[int] = field(default_factory=set)  # user messages that answer the agent (user_replies)
    _turns: list[int] | None = None  # the turns of _ends when in order (else empty), for bisection
    _starts: list[int] = field(default_factory=list)  # where each fact begins in _all[0]
    _holding: dict[str, list[int]] = field(default_factory=dict)  # facts_holding, by needle

    @property
    def has_interlocutor(self) -> bool:
        """A person answered the agent in this log: only then can a page say what the user did."""
        return bool(self.replies)

    def _joined(self) -> str:
        """Every fact's lower-case text, joined by line breaks (made once)."""
        if not self._all:
            ends, parts, size = [], [], 0
            for f in self.facts:
                parts.append(self.lower(f))
                size += len(parts[-1]) + 1
                ends.append((f.turn, size))
            self._all.append("\n".join(parts))
            self._ends.extend(ends)
            self._starts = [0] + [e for _t, e in ends[:-1]]
        return self._all[0]

    def facts_holding(self, needle: str) -> list[int] | None:
        """The places in ``facts`` of the facts whose lower-case text holds ``needle`` (lower
        case), in order: found in the facts joined once, where testing every fact for every value
        asked about cost the most; kept per needle, since the argument checks, the value sources
        and the picks ask about the same values. None for a needle that could span two facts (a
        line break) or is empty: test each fact then."""
        if not needle or "\n" in needle:
            return None
        out = self._holding.get(needle)
        if out is None:
            whole = self._joined()
            starts, out = self._starts, []
            i = whole.find(needle)
            while i != -1:  # the needle lies inside one fact: on to the next fact
                k = bisect_right(starts, i) - 1
                out.append(k)
                i = whole.find(needle, starts[k + 1]) if k + 1 < len(starts) else -1
            self._holding[needle] = out
        return out

    def anywhere_before(self, needle: str, turn: int) -> bool:
        """A cheap filter: does ``needle`` occur (lower case) in any fact before ``turn``?"""
        self._joined()
        if self._turns is None:  # the facts' turns, when in order: the end is then found by bisection
            turns = [t for t, _e in self._ends]
            self._turns = turns if all(a <= b for a, b in zip(turns, turns[1:])) else []
        if self._turns:
            k = bisect_left(self._turns, turn)
            end = self._ends[k - 1][1] if k else 0
        else:
            end = 0
            for t, e in self._ends:
                if t >= turn:
                    break
                end = e
        return self._all[0].find(needle.lower(), 0, end) != -1

    def lower(self, fact: Turn) -> str:
        """An observation's or user message's text in lower case, made once."""
        hit = self._lower.get(fact.turn)
        if hit is None:
            body = fact.result if fact.type == "function_call" else fact.content
            hit = self._lower[fact.turn] = (body or "").lower()
        return hit


def read_run(run: Run) -> Reading:
    _KEPT_LEAVES.clear()  # the last run's containers: no longer asked about
    calls, harness = [], []
    facts = []  # observations and user messages, in order (a harness step is never one)
    replies = user_replies(run)
    consent = Consent()
    for t in run.turns:
        if t.type == "message" and t.role == "user" and t.content:
            facts.append(t)
        if is_harness_turn(t):
            harness.append(t)
        elif t.type == "function_call":
            if t.result:
                facts.append(t)
            writes = not is_read_only(t)
            # a test run checks the code: no user's yes is needed for it, so none is claimed for it
            asks_consent = writes and not (runs_a_command(t) and is_test_report(t.result))
            call = Call(t, looks_like_error(t), writes, asks_consent and consent.agreed_at is not None,
                        consent.agreed_at if asks_consent else None, consent.breach(t.name) if asks_consent else None)
            calls.append(call)
            if asks_consent and not call.error:
                consent.changed()
        elif t.type == "message" and t.role == "assistant":
            consent.told(t.content or "")
        elif t.type == "message" and t.role == "user" and t.extra.get("written_by") != "harness":
            consent.heard(t, t.turn in replies)
    first = run.turns[0] if run.turns else None
    system = first if first is not None and first.type == "message" and first.role in ("system", "developer") else None
    return Reading(run, calls, harness, system, facts, replies=replies)


def harness_reason(reading: Reading) -> str | None:
    """The real reason the harness ended the run, from ``ended_by`` or its last step."""
    ended = reading.run.outcome.ended_by or ""
    if ended.startswith("harness"):
        reason = ended.split(":", 1)[1].strip() if ":" in ended else ""
        if reason:
            return reason
    if reading.harness:
        last = reading.harness[-1]
        text = " ".join((last.content or last.result or "").split())
        return text[:120] or (last.name or "").replace("_", " ") or "a harness step"
    return "no reason given" if ended.startswith("harness") else None


# --- calls and their arguments ------------------------------------------------------------


def full_arguments(turn: Turn) -> str:
    """Every argument of a call, exactly, as one JSON line (a string argument as itself)."""
    args = turn.arguments
    if args is None:
        return ""
    if isinstance(args, str):
        return args
    return sorted_json_text(args)


def leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """(path, scalar) for every scalar inside nested arguments: ``passengers[0].first_name``.

    A list filled by one recursion over the containers: nested generators handed every
    scalar up through each level, and large JSON observations are walked this way. The
    lessons ask for the same call's arguments (and the same parsed answer) about five times
    each, so a container's list is kept while its run is read (``read_run`` starts afresh):
    callers only read it, and nothing changes a run's turns while they are read."""
    if path or not isinstance(value, (dict, list)):
        out: list[tuple[str, Any]] = []
        _add_leaves(value, path, out)
        return out
    hit = _KEPT_LEAVES.get(id(value))
    if hit is not None and hit[0] is value:
        return hit[1]
    out = []
    _add_leaves(value, path, out)
    if len(_KEPT_LEAVES) >= _KEPT_MAX:
        _KEPT_LEAVES.clear()
    _KEPT_LEAVES[id(value)] = (value, out)  # the container kept alive, so its id is not another's
    return out


_KEPT_LEAVES: dict[int, tuple[Any, list]] = {}
_KEPT_MAX = 4096


def _add_leaves(value: Any, path: str, out: list) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            here = f"{path}.{k}" if path else str(k)
            if isinstance(v, (dict, list)):
                _add_leaves(v, here, out)
            else:
                out.append((here, v))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, (dict, list)):
                _add_leaves(v, f"{path}[{i}]", out)
            else:
                out.append((f"{path}[{i}]", v))
    else:
        out.append((path, value))


_FIND_TRIES = 8  # places a needle is tested at by hand before its regex is worth compiling


def _occurs(value: str, low: str) -> bool:
    """``value`` as a whole word of ``low`` (a text already in lower case).

    The places the needle occurs are tested by hand (no letter, digit, ``_`` or ``.``
    just before; no letter, digit or ``_`` just after): most values are run-specific (an
    id, a name), so compiling a regex for each cost more than the few places it occurs.
    A needle found more often than that is left to its compiled regex."""
    if not value:
        return True
    needle = value.lower()
    at = low.find(needle)
    if at == -1:  # the cheap test first: most values are absent from most turns
        return False
    size, end_of_text = len(needle), len(low)
    for _ in range(_FIND_TRIES):
        before = low[at - 1] if at else ""
        if not before or (before != "." and before != "_" and not before.isalnum()):
            end = at + size
            if end == end_of_text or (low[end] != "_" and not low[end].isalnum()):
                return True
        at = low.find(needle, at + 1)
        if at == -1:
            return False
    return _whole_word(needle).search(low, at) is not None


@lru_cache(maxsize=4096)
def _whole_word(needle: str) -> re.Pattern:
    return re.compile(r"(?<![\w.])" + re.escape(needle) + r"(?![\w])")


def runs_a_command(call: Turn) -> bool:
    """A shell or editor call: its arguments are a program the agent wrote, not looked-up values."""
    args = call.arguments
    if isinstance(args, dict):  # a loop, not any(): asked of every call many times per run
        if _COMMAND_KEY_SET.isdisjoint(args):  # most calls send none of these keys: one C-level test
            return False
        for key in _COMMAND_KEYS:
            if isinstance(args.get(key), str):
                return True
        return False
    return isinstance(args, str) and is_command_line(call)


def is_command_line(call: Turn) -> bool:
    """A plain-string argument that is a command line: a shell tool's, or one that starts with
    the tool's own name (``edit 12:12 ...`` for ``edit``, as SWE-agent logs write them)."""
    args, name = call.arguments, (call.name or "").lower()
    if not isinstance(args, str):
        return False
    return _head_word(name) in _SHELL_TOOLS or (bool(name) and _opens_with(args, name))


@lru_cache(maxsize=4096)
def _opens_with(text: str, name: str) -> bool:
    """Whether a text, in lower case, opens with ``name``: asked of every call many times per run,
    and lowering a long argument each time cost more than the rest of the test."""
    return text.lstrip().lower().startswith(name)


def t_is_user(turn: Turn) -> bool:
    return turn.type == "message" and turn.role == "user"
