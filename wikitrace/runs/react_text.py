"""ReAct / Reflexion plain-text logs (HotpotQA style).

Layout (see docs/input-formats.md)::

    BEGIN TRIAL 1
    Trial summary: Correct: 34, Incorrect: 56, Halted: 10
    ------------- BEGIN CORRECT AGENTS -------------
    Question: <question>[You have attempted to answer ... ]
    Reflections:                       (Reflexion only, from trial 2 on)
    - <reflection>
    Thought 1: ...
    Action 1: Search[...]
    Observation 1: ...                 (may run over several lines)
    ...
    Correct answer: <gold answer>

The section label is the outcome: CORRECT is success, INCORRECT failure ended
by the agent, HALTED failure ended by the harness (``HALTED``; a harness
``episode_over`` turn). The ``Answer is CORRECT|INCORRECT`` observation after
``Finish`` is a scoring line: it is removed from the call's result and gives the
verdict of a block outside any section (else there is none: pass ``--outcomes``).

Every trial reprints every agent, so identical blocks repeat: the first copy
becomes a run, every later copy comes back as ``DuplicateRun`` (the loader
counts it in ``LoadReport.deduplicated``). A run's id can be read and written
by hand: ``<file stem>-q<NNN>-t<trial>``, the question's number in order of first
appearance in the file and the trial the run first appears in. The same block listed
under two different labels (the base ReAct log lists a few agents as both
INCORRECT and HALTED) is reported once as an error and only the first is kept;
later copies of that conflicting entry count as duplicates.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Iterator

from . import errors, harness
from ._common import DuplicateRun, Sniff, read_text, unanswered
from .model import Outcome, Run, RunError, Task, Turn, count_steps

_TRIAL = re.compile(r"^\s*BEGIN TRIAL (\d+)")
_SECTION = re.compile(r"BEGIN (CORRECT|INCORRECT|HALTED) AGENTS")
_STEP = re.compile(r"^(Thought|Action|Observation) (\d+):[ \t]?(.*)$")
_ANSWER = re.compile(r"^Correct answer:[ \t]?(.*)$")
_CALL = re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\[(.*)\]\s*$", re.S)
_REFLECTION_MARK = "You have attempted to answer"
_VERDICT_OBS = re.compile(r"^Answer is (CORRECT|INCORRECT)\b")


def _sha(text: str, n: int) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:n]


def looks_like(s: Sniff) -> bool:
    head = s.head
    if s.first is not None or s.whole is not None:
        return False
    if re.search(r"^Question:", head, re.M) and re.search(r"^(Thought|Action) 1:", head, re.M):
        return True
    return bool(_TRIAL.search(head) and _SECTION.search(head))


def _split_blocks(lines: list[str]) -> Iterator[tuple[int, int | None, str | None, list[str]]]:
    """(first line number, trial, label, lines) for every ``Question:`` block."""
    trial: int | None = None
    label: str | None = None
    cur: list[str] | None = None
    start = 0
    for lineno, line in enumerate(lines, start=1):
        m_trial = _TRIAL.match(line)
        m_section = _SECTION.search(line)
        if m_trial or m_section or line.startswith("#####") or line.startswith("Trial summary:"):
            if cur is not None:
                yield start, trial, label, cur
                cur = None
            if m_trial:
                trial, label = int(m_trial.group(1)), None
            if m_section:
                label = m_section.group(1)
            continue
        if line.startswith("Question:"):
            if cur is not None:
                yield start, trial, label, cur
            cur, start = [line], lineno
        elif cur is not None:
            cur.append(line)
    if cur is not None:
        yield start, trial, label, cur


def _trim(lines: list[str]) -> list[str]:
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    return lines[:end]


def parse_block(lines: list[str], where: str) -> dict[str, Any]:
    """The fields of one block: question, reflections, steps, gold answer."""
    lines = _trim(lines)
    if not lines or not lines[0].startswith("Question:"):
        raise RunError(f"{where}: a run must start with 'Question:'")
    prompt = [lines[0][len("Question:"):].strip()]
    steps: list[dict[str, Any]] = []  # {"kind", "k", "text"}
    gold: str | None = None
    target: list[str] = prompt
    for line in lines[1:]:
        m = _STEP.match(line)
        if m:
            entry = {"kind": m.group(1), "k": int(m.group(2)), "lines": [m.group(3)]}
            steps.append(entry)
            target = entry["lines"]
            continue
        m = _ANSWER.match(line)
        if m:
            gold = m.group(1)
            target = []  # anything after the gold answer is ignored
            continue
        target.append(line)
    prompt_text = "\n".join(prompt).strip()
    question, reflections = prompt_text, []
    if _REFLECTION_MARK in prompt_text:
        question = prompt_text.split(_REFLECTION_MARK, 1)[0].strip()
        after = prompt_text.split("Reflections:", 1)[1] if "Reflections:" in prompt_text else ""
        for line in after.split("\n"):
            if line.startswith("- "):
                reflections.append(line[2:].strip())
            elif line.strip() and reflections:
                reflections[-1] += "\n" + line.strip()
    if not question:
        raise RunError(f"{where}: the question is empty")
    return {
        "question": question, "prompt": prompt_text, "reflections": reflections,
        "steps": [{"kind": s["kind"], "k": s["k"], "text": "\n".join(s["lines"]).strip()} for s in steps],
        "gold": gold,
    }


def _turns(parsed: dict[str, Any]) -> tuple[list[Turn], str | None]:
    """The turns of a block, and the verdict its ``Answer is ...`` line gave (removed from the turns)."""
    turns: list[Turn] = [Turn(turn=0, type="message", role="user", content=parsed["prompt"])]
    verdict: str | None = None
    pending_thought: str | None = None
    last_call: Turn | None = None
    for step in parsed["steps"]:
        kind, text = step["kind"], step["text"]
        if kind == "Thought":
            if pending_thought is not None:
                turns.append(Turn(turn=len(turns), type="message", role="assistant", content=pending_thought))
            pending_thought, last_call = text, None
        elif kind == "Action":
            m = _CALL.match(text)
            name, args = (m.group(1).strip(), m.group(2)) if m else (text.strip() or "unknown", None)
            last_call = Turn(turn=len(turns), type="function_call", role="assistant", name=name,
                             arguments=args, reasoning=pending_thought, extra={"step": step["k"]})
            turns.append(last_call)
            pending_thought = None
        else:  # Observation
            if _VERDICT_OBS.match(text):  # the scoring line: the outcome, never an observation
                verdict = _VERDICT_OBS.match(text).group(1)
                text = ""
            if last_call is not None and last_call.result is None:
                last_call.result = text
                last_call.is_error = errors.observation_is_error(text)
                if last_call.name.lower() == "finish" and last_call.arguments is not None:
                    turns.append(Turn(turn=len(turns), type="answer", role="assistant", content=last_call.arguments))
            else:
                turns.append(Turn(turn=len(turns), type="message", role="tool", content=text))
    if pending_thought is not None:
        turns.append(Turn(turn=len(turns), type="message", role="assistant", content=pending_thought))
    unanswered(turns)
    return turns, verdict


# Reflexion halts an agent that ran past its step budget or whose prompt grew too long.
HALTED = "harness: halted (step limit or prompt length reached before an answer)"


def _outcome(label: str | None, verdict: str | None, turns: list[Turn]) -> tuple[Outcome | None, str | None]:
    steps = count_steps(turns)
    if label == "CORRECT":
        return Outcome(success=True, steps=steps, ended_by="agent"), "agent"
    if label == "INCORRECT":
        return Outcome(success=False, steps=steps, ended_by="agent"), "agent"
    if label == "HALTED":
        return Outcome(success=False, steps=steps, ended_by=HALTED), HALTED
    if verdict is not None:
        return Outcome(success=verdict == "CORRECT", steps=steps, ended_by="agent"), "agent"
    return None, None


def read(path: Path) -> Iterator[Run | RunError]:
    try:
        text = read_text(path)
    except RunError as exc:
        yield exc
        return
    lines = text.split("\n")
    stem = path.name.split(".", 1)[0] or "react"
    first_label: dict[str, tuple[str | None, int, int | None]] = {}
    seen: dict[tuple[str, str | None], int] = {}
    questions: dict[str, int] = {}  # question -> its number, in order of first appearance
    used: dict[str, int] = {}
    found = False
    for start, trial, label, block in _split_blocks(lines):
        found = True
        where = f"{path}:{start}"
        try:
            parsed = parse_block(block, where)
        except RunError as exc:
            yield exc
            continue
        body = "\n".join(_trim(block))
        key = _sha(body, 16)
        if (key, label) in seen:
            yield DuplicateRun(f"{where}: same run as line {seen[(key, label)]}")
            continue
        seen[(key, label)] = start
        if key in first_label:
            old_label, old_line, old_trial = first_label[key]
            yield RunError(
                f"{where}: the same run is listed as {old_label or 'unlabelled'} at line {old_line} "
                f"(trial {old_trial}) and as {label or 'unlabelled'} here (trial {trial}); kept the first"
            )
            continue
        first_label[key] = (label, start, trial)
        turns, verdict = _turns(parsed)
        outcome, ended_by = _outcome(label, verdict, turns)
        harness.end_turn(turns, ended_by)
        if outcome is not None:
            outcome.steps = count_steps(turns)
        task_id = "q" + _sha(parsed["question"], 10)
        meta: dict[str, Any] = {}
        if parsed["gold"] is not None:
            meta["gold_answer"] = parsed["gold"]
        if parsed["reflections"]:
            meta["reflections"] = parsed["reflections"]
        task = Task(id=task_id, instruction=parsed["question"], task_type="hotpotqa" if "hotpot" in path.name.lower() else None,
                    metadata=meta)
        number = questions.setdefault(parsed["question"], len(questions) + 1)
        run_id = f"{stem}-q{number:03d}" + (f"-t{trial}" if trial is not None else "")
        used[run_id] = used.get(run_id, 0) + 1
        if used[run_id] > 1:
            run_id += f"-{used[run_id]}"
        run = Run(run_id=run_id, task=task, turns=turns, outcome=outcome)
        run.source = {
            "format": "react-text", "file": path.name, "line": start, "trial": trial, "label": label,
            "original": body + "\n", "original_format": "text",
        }
        if ended_by:
            run.source["ended_by"] = ended_by
        yield run
    if not found:
        yield RunError(f"{path}: no run found; each run must start with a 'Question:' line")
