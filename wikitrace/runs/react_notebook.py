"""The ReAct paper's notebook printouts: FEVER, HotpotQA, WebShop and ALFWorld episodes.

Each notebook prints its episodes one after another; each episode states its own
verdict. Three shapes (see docs/input-formats.md):

- FEVER / HotpotQA (``webthink``): ``<idx> Claim: ...`` or ``<idx> Question: ...``,
  then ``Thought k:`` / ``Action k:`` / ``Observation k:`` lines; the finishing
  observation ``Episode finished, reward = R`` and a closing info dict
  ``{'steps': .., 'answer': .., 'gt_answer': .., 'question_idx': .., 'reward': ..}``.
- WebShop: a dashed line, the episode index, then unnumbered ``Action:`` /
  ``Observation:`` pairs starting with ``Action: reset``; ``Your score (min 0.0,
  max 1.0): S`` after a purchase, and a running ``<n> <mean score> <success rate>
  <failure rate>`` line.
- ALFWorld: the game file, the task family, the initial observation, ``Act k:`` /
  ``Obs k:`` lines and ``<n> r <True|False> rs [..] cnts [..] ...``.

Scoring lines never reach a turn: the reward observation, the info dict (with the
gold answer) and the score lines become the outcome (``score``, ``success`` at
full marks) and ``task.metadata``. A FEVER episode's answer comes from the closed set of
labels the notebook's prompt lists (which the printout leaves out); the importer records
that set as ``task.metadata["answer_labels"]`` so a verdict is not read as a value some
look-up should have returned. Harness steps are not calls: WebShop's
``reset`` is the task message; an episode the loop stopped (out of steps, no
finishing action) ends with a harness ``episode_over`` turn. An action the
model wrote after blank lines (``Action 3:`` then ``Finish[..]`` two lines down) is read as
its call, and the text as sent is kept as ``extra["sent"]``: the harness refused it for
those blank lines, so the pages show it. ``think`` actions
(WebShop ``think[..]``, ALFWorld ``think: ..``) are the agent's reasoning, kept as
the next call's ``reasoning``. Run ids come from the log: ``<file stem>-<question
idx>`` (FEVER, HotpotQA) or ``<file stem>-<episode number>`` (WebShop, ALFWorld),
so an ``--outcomes`` file can be written by hand.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any, Iterator

from .. import lazy_re
from . import errors, harness
from ._common import Sniff, read_text, unanswered
from .model import Outcome, Run, RunError, Task, Turn, count_steps

_CALL = lazy_re.compile(r"^\s*([A-Za-z_][\w ]*?)\s*\[(.*)\]\s*$", re.S)

# FEVER / HotpotQA
FEVER_LABELS = ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO")  # the verdicts FEVER's claims are graded on
_WT_START = lazy_re.compile(r"^(\d+) (Claim|Question): ?(.*)$")
_WT_STEP = lazy_re.compile(r"^(Thought|Action|Observation) (\d+):[ \t]?(.*)$")
_WT_INFO = lazy_re.compile(r"^\{'steps': .*\}\s*$")
_WT_REWARD = lazy_re.compile(r"^Episode finished, reward = (-?[\d.]+|True|False)\s*$")
_WT_TALLY = lazy_re.compile(r"^\d+ \d+ [\d.]+(?:e-?\d+)? [\d.]+(?:e-?\d+)?\s*$")
# WebShop
_WS_STEP = lazy_re.compile(r"^(Action|Observation):[ \t]?(.*)$")
_WS_SCORE = lazy_re.compile(r"^Your score \(min 0\.0, max 1\.0\):\s*(-?[\d.]+)\s*$")
_WS_TALLY = lazy_re.compile(r"^(\d+) (-?\d*\.?\d+(?:e-?\d+)?) (-?\d*\.?\d+(?:e-?\d+)?) (-?\d*\.?\d+(?:e-?\d+)?)\s*$")
_DASHES = lazy_re.compile(r"^-{5,}\s*$")
# ALFWorld
_AW_STEP = lazy_re.compile(r"^(Act|Obs) (\d+):[ \t]?(.*)$")
_AW_VERDICT = lazy_re.compile(r"^(\d+) r (\S+) rs \[")


def looks_like(s: Sniff) -> bool:
    if s.first is not None or s.whole is not None:
        return False
    head = s.head
    if re.search(r"^\d+ (?:Claim|Question): ", head, re.M) and re.search(r"^(?:Thought|Action) 1: ", head, re.M):
        return True
    if re.search(r"^Action: reset\s*$", head, re.M) and re.search(r"^Observation:", head, re.M):
        return True
    return bool(re.search(r"^Act 1: ", head, re.M) and re.search(r"^Obs 1: ", head, re.M))


def shape(text: str) -> str | None:
    if re.search(r"^\d+ (?:Claim|Question): ", text, re.M):
        return "webthink"
    if re.search(r"^Action: reset\s*$", text, re.M):
        return "webshop"
    if re.search(r"^Act 1: ", text, re.M):
        return "alfworld"
    return None


def _call(text: str, k: int | None = None) -> Turn:
    m = _CALL.match(text)
    name, args = (m.group(1).strip(), m.group(2)) if m else ((text.split(None, 1) or ["unknown"])[0], text)
    return Turn(turn=0, type="function_call", role="assistant", name=name[:100], arguments=args,
                extra={"step": k} if k is not None else {})


def _number(text: Any) -> float | None:
    if isinstance(text, bool):
        return float(text)
    if isinstance(text, (int, float)):
        return float(text)
    if str(text).strip() in ("True", "False"):
        return 1.0 if str(text).strip() == "True" else 0.0
    try:
        return float(str(text))
    except ValueError:
        return None


def _renumber(turns: list[Turn]) -> list[Turn]:
    for i, t in enumerate(turns):
        t.turn = i
    return turns


# -- FEVER / HotpotQA ---------------------------------------------------------------------

def _webthink(lines: list[str], path: Path, stem: str) -> Iterator[Run | RunError]:
    episodes: list[tuple[int, list[str]]] = []
    for lineno, line in enumerate(lines, start=1):
        if _WT_START.match(line):
            episodes.append((lineno, [line]))
        elif episodes:
            episodes[-1][1].append(line)
    seen: dict[str, int] = {}
    for start, block in episodes:
        where = f"{path}:{start}"
        m = _WT_START.match(block[0])
        idx, kind, claim = m.group(1), m.group(2), m.group(3).strip()
        steps: list[dict] = []
        info: dict | None = None
        notes: list[str] = []
        for line in block[1:]:
            sm = _WT_STEP.match(line)
            if sm:
                steps.append({"kind": sm.group(1), "k": int(sm.group(2)), "lines": [sm.group(3)]})
            elif _WT_INFO.match(line.strip()):
                try:
                    value = ast.literal_eval(line.strip())
                    info = value if isinstance(value, dict) else None
                except (ValueError, SyntaxError, MemoryError, RecursionError):
                    notes.append(line)
                steps.append({"kind": "end", "k": 0, "lines": []})
            elif _WT_TALLY.match(line) or _DASHES.match(line):
                steps.append({"kind": "end", "k": 0, "lines": []})
            elif line.startswith("ohh..."):
                notes.append(line)  # the notebook's note that a model answer could not be split
                steps.append({"kind": "end", "k": 0, "lines": []})
            elif steps and steps[-1]["kind"] != "end":
                steps[-1]["lines"].append(line)
        task_type = "fever" if kind == "Claim" else "hotpotqa"
        turns = [Turn(turn=0, type="message", role="user", content=f"{kind}: {claim}")]
        pending: str | None = None
        last: Turn | None = None
        reward: float | None = None
        finished = False
        for st in steps:
            text = "\n".join(st["lines"]).strip()
            if st["kind"] == "Thought":
                if pending is not None:
                    turns.append(Turn(turn=0, type="message", role="assistant", content=pending))
                pending, last = text, None
            elif st["kind"] == "Action":
                last = _call(text, st["k"])
                sent = "\n".join(st["lines"]).rstrip()
                if sent != sent.lstrip():  # sent after blank lines: the harness reads no action name there
                    last.extra["sent"] = sent
                last.reasoning, pending = pending, None
                turns.append(last)
            elif st["kind"] == "Observation":
                rm = _WT_REWARD.match(text)
                if rm:  # the scoring line: the outcome, not something the agent saw
                    reward, finished = _number(rm.group(1)), True
                    text = ""
                if last is not None and last.result is None:
                    last.result = text
                    last.is_error = errors.observation_is_error(text)
                    if finished and last.name.lower() == "finish":
                        turns.append(Turn(turn=0, type="answer", role="assistant", content=last.arguments))
                elif text:
                    turns.append(Turn(turn=0, type="message", role="tool", content=text))
        if pending is not None:
            turns.append(Turn(turn=0, type="message", role="assistant", content=pending))
        unanswered(turns)
        info = info or {}
        if reward is None:
            reward = _number(info.get("reward"))
        if reward is None:
            yield RunError(f"{where}: episode {idx} has no reward (neither 'Episode finished, reward = R' nor an "
                           f"info dict with 'reward'); it may be cut off")
            continue
        calls = count_steps(turns)
        ended = "agent"
        if not finished:
            ended = (f"harness: step limit reached ({calls} actions without a finishing answer; "
                     f"the harness ended the episode)")
        _renumber(turns)
        harness.end_turn(turns, ended)
        meta: dict[str, Any] = {"question_idx": int(idx)}
        if kind == "Claim":
            meta["answer_labels"] = list(FEVER_LABELS)
        for key in ("gt_answer", "answer", "em", "f1"):
            if key in info:
                meta["gold_answer" if key == "gt_answer" else key] = info[key]
        if notes:
            meta["harness_notes"] = len(notes)
        run_id = f"{stem}-{idx}"
        seen[run_id] = seen.get(run_id, 0) + 1
        if seen[run_id] > 1:
            run_id += f"-{seen[run_id]}"
        task = Task(id=f"{task_type}-{idx}", instruction=claim, task_type=task_type, metadata=meta)
        run = Run(run_id=run_id, task=task, turns=turns,
                  outcome=Outcome(success=reward >= 1.0, steps=calls, score=reward, ended_by=ended))
        run.source = {"format": "react-notebook", "file": path.name, "line": start, "ended_by": ended,
                      "original": "\n".join(block).rstrip("\n") + "\n", "original_format": "text"}
        yield run


# -- WebShop ------------------------------------------------------------------------------

def _webshop(lines: list[str], path: Path, stem: str) -> Iterator[Run | RunError]:
    episodes: list[dict] = []
    cur: dict | None = None
    expect_index = False
    for lineno, line in enumerate(lines, start=1):
        if _DASHES.match(line):
            expect_index, cur = True, None
            continue
        if expect_index and line.strip().isdecimal():
            cur = {"index": int(line.strip()), "line": lineno, "lines": [], "tally": None}
            episodes.append(cur)
            expect_index = False
            continue
        expect_index = False
        tm = _WS_TALLY.match(line)
        if tm and cur is not None:
            cur["tally"] = tuple(float(x) for x in tm.groups())
            cur = None
            continue
        if cur is None and line.startswith("Action: reset"):
            cur = {"index": len(episodes), "line": lineno, "lines": [], "tally": None}
            episodes.append(cur)
        if cur is not None:
            cur["lines"].append(line)
    previous: tuple | None = None
    for ep in episodes:
        where = f"{path}:{ep['line']}"
        pairs: list[list] = []  # [action, observation lines]
        for line in ep["lines"]:
            m = _WS_STEP.match(line)
            if m and m.group(1) == "Action":
                pairs.append([m.group(2).strip(), None])
            elif m and pairs and pairs[-1][1] is None:
                pairs[-1][1] = [m.group(2)]
            elif pairs and pairs[-1][1] is not None:
                pairs[-1][1].append(line)
        if not pairs:
            yield RunError(f"{where}: WebShop episode {ep['index']} has no 'Action:' lines")
            continue
        turns: list[Turn] = []
        thoughts: list[str] = []
        score: float | None = None
        bought = False
        instruction = None
        for action, obs_lines in pairs:
            obs = "\n".join(obs_lines).strip() if obs_lines is not None else None
            if action == "reset":  # the harness resets the shop; its page states the task
                m = re.search(r"Instruction:\s*(.*?)\s*(?:\[Search\]|$)", obs or "", re.S)
                instruction = instruction or (m.group(1).strip() if m else None)
                turns.append(Turn(turn=0, type="message", role="user", content=obs or "",
                                  extra={"harness_action": "reset"}))
                continue
            if action.startswith("think["):  # the shop's own test; a thought cut at the token limit has no "]"
                thoughts.append(action[len("think["):].removesuffix("]").strip())
                continue
            call = _call(action)
            call.reasoning = "\n".join(thoughts) or None
            thoughts = []
            sm = _WS_SCORE.match(obs or "")
            if sm:  # the scoring page: the outcome, not an observation
                score, obs = _number(sm.group(1)), ""
            call.result = obs
            call.is_error = errors.observation_is_error(obs) if obs is not None else None
            if call.name == "click" and call.arguments.strip().lower() == "buy now":
                bought = True
            turns.append(call)
        if thoughts:
            turns.append(Turn(turn=0, type="message", role="assistant", content="\n".join(thoughts)))
        unanswered(turns)
        tally = ep["tally"]
        failed_env = False
        if score is None and tally is not None:
            n = tally[0]
            before = previous if previous is not None and previous[0] == n - 1 else (None if n > 1 else (0, 0, 0, 0))
            if before is not None:
                score = round(n * tally[1] - before[0] * before[1], 6)
                failed_env = round(n * tally[3] - before[0] * before[3]) >= 1
        previous = tally if tally is not None else previous
        if score is None:
            yield RunError(f"{where}: WebShop episode {ep['index']} has no score (no 'Your score' line and no "
                           f"running tally after it); it may be cut off")
            continue
        if failed_env:
            ended = "harness: the environment raised an error (the notebook counted the episode as failed)"
        elif bought:
            ended = "agent"
        else:
            ended = f"harness: step limit reached ({count_steps(turns)} actions without buying)"
        if not instruction:
            instruction = next((t.content for t in turns if t.role == "user" and t.content), "") or f"episode {ep['index']}"
        _renumber(turns)
        harness.end_turn(turns, ended)
        task = Task(id=f"webshop-{ep['index']}", instruction=instruction, task_type="webshop",
                    metadata={"episode": ep["index"]})
        run = Run(run_id=f"{stem}-{ep['index']}", task=task, turns=turns,
                  outcome=Outcome(success=score >= 1.0, steps=count_steps(turns), score=score, ended_by=ended))
        run.source = {"format": "react-notebook", "file": path.name, "line": ep["line"], "ended_by": ended,
                      "original": "\n".join(ep["lines"]).rstrip("\n") + "\n", "original_format": "text"}
        yield run


# -- ALFWorld -----------------------------------------------------------------------------

def _alfworld(lines: list[str], path: Path, stem: str) -> Iterator[Run | RunError]:
    episodes: list[dict] = []
    cur = {"line": 1, "lines": []}
    for lineno, line in enumerate(lines, start=1):
        if _DASHES.match(line):
            if cur["lines"] and any(l.strip() for l in cur["lines"]):
                episodes.append(cur)
            cur = {"line": lineno + 1, "lines": []}
        else:
            cur["lines"].append(line)
    if any(l.strip() for l in cur["lines"]):
        episodes.append(cur)
    for ep in episodes:
        block = ep["lines"]
        while block and not block[0].strip():
            block.pop(0)
            ep["line"] += 1
        where = f"{path}:{ep['line']}"
        first_act = next((i for i, l in enumerate(block) if _AW_STEP.match(l)), None)
        verdict = next((m for m in (_AW_VERDICT.match(l) for l in block) if m), None)
        if first_act is None or verdict is None:
            yield RunError(f"{where}: an ALFWorld episode needs 'Act 1:' lines and a '<n> r <True|False> rs [...]' "
                           f"verdict line; not found (the log may be cut off)")
            continue
        header = [l for l in block[:first_act] if l.strip()]
        game = header[0].strip() if header else f"episode-{verdict.group(1)}"
        family = header[1].split()[0] if len(header) > 1 and header[1].split() else None
        observation = "\n".join(header[2:]).strip()
        m = re.search(r"Your task is to:\s*(.+)", observation)
        instruction = m.group(1).strip() if m else (observation or game)
        turns: list[Turn] = [Turn(turn=0, type="message", role="user", content=observation or instruction)]
        thoughts: list[str] = []
        last: Turn | None = None
        for line in block[first_act:]:
            sm = _AW_STEP.match(line)
            if _AW_VERDICT.match(line):
                break
            if not sm:
                if last is not None and last.result is not None and line.strip():
                    last.result += "\n" + line
                continue
            kind, k, text = sm.group(1), int(sm.group(2)), sm.group(3).strip()
            if kind == "Act":
                if text.startswith("think:"):
                    thoughts.append(text[len("think:"):].strip())
                    last = None
                    continue
                name, _, rest = text.partition(" ")
                last = Turn(turn=0, type="function_call", role="assistant", name=name or "unknown",
                            arguments=text, reasoning="\n".join(thoughts) or None, extra={"step": k})
                thoughts = []
                turns.append(last)
            elif last is not None and last.result is None:
                last.result = text
        for t in turns:
            if t.type == "function_call" and t.result is not None:
                t.is_error = errors.observation_is_error(t.result)
        if thoughts:
            turns.append(Turn(turn=0, type="message", role="assistant", content="\n".join(thoughts)))
        unanswered(turns)
        won = verdict.group(2).strip().lower() in ("true", "1", "1.0")
        ended = "agent" if won else f"harness: step limit reached ({count_steps(turns)} actions without completing the task)"
        _renumber(turns)
        harness.end_turn(turns, ended)
        n = verdict.group(1)
        meta: dict[str, Any] = {"episode": int(n), "game": game}
        if family:
            meta["task_family"] = family
        task = Task(id=game, instruction=instruction, task_type="alfworld", metadata=meta)
        run = Run(run_id=f"{stem}-{n}", task=task, turns=turns,
                  outcome=Outcome(success=won, steps=count_steps(turns), score=1.0 if won else 0.0, ended_by=ended))
        run.source = {"format": "react-notebook", "file": path.name, "line": ep["line"], "ended_by": ended,
                      "original": "\n".join(block).rstrip("\n") + "\n", "original_format": "text"}
        yield run


def read(path: Path) -> Iterator[Run | RunError]:
    try:
        text = read_text(path)
    except RunError as exc:
        yield exc
        return
    lines = text.replace("\r\n", "\n").split("\n")
    stem = path.name.split(".", 1)[0] or "react"
    kind = shape(text)
    reader = {"webthink": _webthink, "webshop": _webshop, "alfworld": _alfworld}.get(kind)
    if reader is None:
        yield RunError(f"{path}: no ReAct notebook episode found (expected '<idx> Claim:'/'<idx> Question:', "
                       f"'Action: reset' or 'Act 1:' lines)")
        return
    found = False
    for item in reader(lines, path, stem):
        found = True
        yield item
    if not found:
        yield RunError(f"{path}: no complete episode found")
