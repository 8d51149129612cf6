"""What every insight of a run is built from: the tool (and command word) a call names, an
error answer with what is particular to the run masked, the system prompt's rules on a call
(worked out once per call), and the record itself."""

from __future__ import annotations

import hashlib
import re

from .reading import Call, Reading, command_of, runs_a_command
from .rules import rules_for
from .schema import CandidateInsight
from .text import clip, first_line, generic

_QUOTED = re.compile(r"\"[^\"]*(?:\"|$)|'[^']*(?:'|$)|`[^`]*(?:`|$)|\[[^\]]*(?:\]|$)|\([^)]*(?:\)|$)|\{[^}]*(?:\}|$)")
_PATH = re.compile(r"(?:[\w.~-]*/)+[\w.-]*|\b[\w-]+\.[A-Za-z]{1,5}\b")
_WORD = re.compile(r"[A-Za-z][\w.+-]{0,29}")


def verb(c: Call) -> str:
    """The tool, and for a shell or editor call the command word it ran: ``bash mvn``."""
    if not runs_a_command(c.turn):
        return c.name
    command = re.sub(r"^\s*cd\s+\S+\s*(?:&&|;)\s*", "", command_of(c.turn) or "")
    m = _WORD.match(command.strip())
    head = m.group(0) if m else ""
    return c.name if not head or head.lower() == c.name.lower() else f"{c.name} {head}"


def shape(c: Call) -> str:
    """What an error answer says with everything particular to the episode masked."""
    line = first_line(c.turn.result, 200)
    line = _QUOTED.sub("…", line)
    line = _PATH.sub("…", line)
    line = re.sub(r"…(?:[\s,;:/.-]*…)+", "…", generic(line))
    return clip(line, 80).replace('"', "'")


def rules_once(r: Reading, c: Call):
    """rules_for(r, c), computed once per call of the run (the lessons and the patterns both ask)."""
    key = f"insights.rules:{c.n}"
    if key not in r.memo:
        r.memo[key] = rules_for(r, c)
    return r.memo[key]


def short_hash(text: str) -> str:
    return hashlib.sha256(" ".join(text.split()).casefold().encode()).hexdigest()[:10]


def lookups_before(r: Reading, before: Call | None) -> list[str]:
    return list(dict.fromkeys(verb(c) for c in r.calls
                              if not c.writes and not c.error and (before is None or c.n < before.n)))


def kind_of_tasks(r: Reading) -> str:
    t = r.run.task
    kind = t.task_type or (", ".join(t.apps) if t.apps else "")
    return f"{kind} tasks" if kind else "tasks of this kind"


def make_insight(key: str, title: str, guideline: str, applicability: str, detail: str, worked: bool) -> CandidateInsight:
    return CandidateInsight(title=title, guideline=guideline, applicability=applicability, key=key,
                            detail=detail.replace("\n", " "), worked=worked)
