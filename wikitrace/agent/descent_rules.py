"""What the descent judge reads, and the offline labeller that needs no model.

A *burst* is a descent that opened a compilation or a raw run (paper §5.2 / Appendix E.1);
it starts at the first call that opens one and ends at the next environment action. Each
burst gets three labels:

- trigger: setback | insight doubt | failed precedent | open question | routine check
- target:  workaround | failure cause | specific fact | procedure
- effect:  revise insight | refine insight | new fact | confirm plan | none

The offline labeller (``judge: offline``) decides from the transcript's structure, not
from word lists, in the precedence order the paper's judge uses:

trigger
  setback          the last environment action before the burst failed (``is_error``), or
                   the last two returned the same observation (the agent is stuck);
  insight doubt    the agent's messages before the burst name an insight whose source run
                   the burst opens, and that source failed or the agent names two or more
                   insights there;
  failed precedent every opened run whose outcome is known failed;
  open question    the agent's own words just before the burst ask a question ("?");
  routine check    otherwise.
target
  workaround       after a setback, the burst searched a layer (grep/ls) for a way through;
  failure cause    every opened run with a known outcome failed and its compilation was read;
  specific fact    the burst read single turns, or the agent asked a question before it;
  procedure        otherwise (an action listing, a whole compilation).
effect (from the environment actions after the burst, up to the next burst)
  refine insight   an action uses a value (an argument, a tool name) that appears in what
  / new fact       the burst's calls returned but nowhere before the burst; "refine" when
                   that action's tool is named in the insights the agent saw, else "new fact";
  confirm plan     no such value, but the agent's words after the burst name an opened run;
  none             otherwise.
  The offline labeller never says "revise insight": telling a correction to an insight from
  an ordinary use needs reading for meaning, which is the model judge's job.

Outcomes and insight sources are read from the transcript itself: the memory block
(``<insight id=...>`` with its ``Source: step-NNNN (outcome)``), the similar-runs list
(``### step-NNNN (outcome)``) and any ``outcome:`` line a memory call returned.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..runs.model import Turn
from .descents import Descent, _Classifier

AXES: dict[str, tuple[str, ...]] = {
    "trigger": ("setback", "insight doubt", "failed precedent", "open question", "routine check"),
    "target": ("workaround", "failure cause", "specific fact", "procedure"),
    "effect": ("revise insight", "refine insight", "new fact", "confirm plan", "none"),
}
OBSERVATION_CLIP = 2000      # characters of one call's result shown to the judge
SHORT_CLIP = 300             # outside the bursts, when the transcript is long
TRANSCRIPT_BUDGET = 120_000  # characters; beyond it the short clip applies
_INSIGHT_BLOCK = re.compile(r'<insight id="(insight-\d+)">(.*?)</insight>', re.S)
_SOURCE = re.compile(r"(step-\d+)\s*\((success|failure)\)")
_SIMILAR = re.compile(r"^#+\s*(step-\d+)\s*\((success|failure)\)", re.M)
_OUTCOME_LINE = re.compile(r"^\s*(?:outcome|success)\s*:\s*(\w+)", re.M | re.I)
_MEMORY = re.compile(r"<memory_documents>.*?</memory_documents>", re.S)
_STEP = re.compile(r"step-\d+")
_INSIGHT_ID = re.compile(r"insight-\d+")


@dataclass
class Label:
    code: str | None
    quote: str = ""
    msg: int | None = None
    note: str = ""
    judge: str = "offline"            # "llm" | "offline"
    reason: str | None = None         # why offline when a model was asked
    votes: list[str] | None = None    # effect: each judge's code

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None or k == "code"}


@dataclass
class Burst:
    """One descent that opened a run, with the context the labellers read."""
    number: int                       # 1-based, in transcript order
    descent: Descent
    start_turn: int                   # the first call that opened a compilation or raw run
    opened: list[str]                 # step ids, compilations and raw runs together
    outcomes: dict[str, str]          # step -> success/failure, where known
    sourced_insights: list[str]       # insights drawn from the opened runs
    labels: dict[str, Label] = field(default_factory=dict)


@dataclass
class Transcript:
    turns: list[Turn]
    insights_block: str               # what the agent saw, or "" when not found
    insight_sources: dict[str, tuple[str, str]]   # insight -> (step, outcome)
    outcomes: dict[str, str]
    clf: _Classifier


def _agent_words(t: Turn) -> str:
    return "\n".join(x for x in (t.reasoning, t.content if t.role != "tool" else None) if x)


def _args_text(t: Turn) -> str:
    a = t.arguments
    return a if isinstance(a, str) else json.dumps(a, ensure_ascii=False) if a is not None else ""


def read_transcript(turns: list[Turn], clf: _Classifier) -> Transcript:
    first_user = next((t.content for t in turns if t.role == "user" and t.content), "") or ""
    # the task message holds the memory block; some harnesses put it in the system prompt
    m = _MEMORY.search(first_user) or next(
        (hit for t in turns if t.role == "system" and t.content for hit in [_MEMORY.search(t.content)] if hit), None)
    block = m.group(0) if m else ""
    sources = {}
    for iid, body in _INSIGHT_BLOCK.findall(block):
        s = _SOURCE.search(body)
        if s:
            sources[iid] = (s.group(1), s.group(2))
    outcomes = {step: out for step, out in _SIMILAR.findall(first_user)}
    outcomes.update({step: out for step, out in sources.values()})
    return Transcript(turns, block, sources, outcomes, clf)


def bursts_of(tr: Transcript, descents: list[Descent]) -> list[Burst]:
    out = []
    for d in descents:
        if not d.opened:
            continue
        start = d.first_turn
        for t in tr.turns:
            if d.first_turn <= t.turn <= d.last_turn and t.is_action:
                info = tr.clf.classify(t)
                if info.compilations or info.raw:
                    start = t.turn
                    break
        opened = list(dict.fromkeys(d.opened_compilations + d.opened_raw))
        outcomes = dict(tr.outcomes)
        for t in tr.turns:  # an outcome line a memory call returned (metadata.md, a compilation)
            if d.first_turn <= t.turn <= d.last_turn and t.result:
                steps = _STEP.findall(_args_text(t))
                m = _OUTCOME_LINE.search(t.result)
                if m and len(set(steps)) == 1:
                    word = m.group(1).lower()
                    outcomes.setdefault(steps[0], "success" if word in ("success", "true") else "failure")
        sourced = [i for i, (step, _) in tr.insight_sources.items() if step in opened]
        out.append(Burst(len(out) + 1, d, start, opened, {s: outcomes[s] for s in opened if s in outcomes}, sourced))
    return out


# --- the transcript the model judge reads -------------------------------------------------

def render_transcript(tr: Transcript, bursts: list[Burst], budget: int = TRANSCRIPT_BUDGET) -> str:
    """The marked transcript; over ``budget`` characters, results outside the bursts are cut
    to a few hundred characters (the agent's own words and the bursts' results never are)."""
    text = _render(tr, bursts, OBSERVATION_CLIP, OBSERVATION_CLIP)
    return text if len(text) <= budget else _render(tr, bursts, OBSERVATION_CLIP, SHORT_CLIP)


def _render(tr: Transcript, bursts: list[Burst], inside: int, outside: int) -> str:
    spans = [(b.descent.first_turn, b.descent.last_turn) for b in bursts]
    starts = {b.start_turn: b for b in bursts}
    ends = {b.descent.last_turn: b for b in bursts}
    lines: list[str] = []
    for t in tr.turns:
        b = starts.get(t.turn)
        if b is not None:
            runs = ", ".join(f"{s} ({b.outcomes.get(s, 'outcome unknown')})" for s in b.opened)
            lines += [f">>>>> BURST {b.number} START",
                      f"[opens {runs}; insights drawn from them: {', '.join(b.sourced_insights) or 'none'}]"]
        lines.append(f"--- message {t.turn} ({t.role or t.type}) ---")
        content = t.content
        if content and tr.insights_block and tr.insights_block in content:
            content = content.replace(tr.insights_block, "[the insights: see item 1]")
        if t.reasoning:
            lines.append("thinking| " + t.reasoning)
        if content:
            lines.append(("text| " if t.role == "assistant" else "") + content)
        if t.is_action:
            lines.append(f"call| {t.name or '?'}({_args_text(t)})")
            result = t.result or ""
            limit = inside if any(a <= t.turn <= z for a, z in spans) else outside
            if len(result) > limit:
                result = result[:limit] + f" [... {len(result) - limit} characters clipped]"
            lines.append(("result (error)| " if t.is_error else "result| ") + result)
        if t.type == "episode_over":
            lines.append(f"[episode over: {t.extra.get('ended_by', '')}]".rstrip())
        b = ends.get(t.turn)
        if b is not None:
            lines.append(f"<<<<< BURST {b.number} END")
    return "\n".join(lines) + "\n"


def agent_text_of(tr: Transcript, msg: int) -> str:
    """Everything the agent itself wrote in message ``msg``: where a quote must be found."""
    for t in tr.turns:
        if t.turn == msg:
            parts = [_agent_words(t)] if t.role != "user" else []
            if t.is_action:
                parts.append(f"{t.name or ''}({_args_text(t)})")
                parts.append(_args_text(t))
            if t.role in ("user", "tool"):
                parts.append(t.content or "")
            return "\n".join(parts)
    return ""


# --- the offline labeller -------------------------------------------------------------------

def _before(tr: Transcript, b: Burst) -> tuple[list[Turn], list[Turn]]:
    """(environment actions before the burst, the agent's turns since the last of them up to
    the burst's first opening call)."""
    env, since = [], []
    for t in tr.turns:
        if t.turn > b.start_turn:
            break
        if t.is_action and not tr.clf.classify(t).memory:
            env.append(t)
            since = []
        elif t.role == "assistant" or t.is_action:
            since.append(t)
    return env, since


def _quote(turns: list[Turn]) -> tuple[str, int | None]:
    for t in reversed(turns):
        words = _agent_words(t).strip()
        if len(words) >= 12:
            line = max(words.splitlines(), key=len).strip()
            return line[:200], t.turn
    return "", None


def offline_labels(tr: Transcript, b: Burst, next_start: int | None) -> dict[str, Label]:
    env, since = _before(tr, b)
    quote, msg = _quote(since)
    said = " ".join(_agent_words(t) for t in tr.turns if t.turn <= b.start_turn and t.role == "assistant")
    named = list(dict.fromkeys(_INSIGHT_ID.findall(said)))
    known = [b.outcomes[s] for s in b.opened if s in b.outcomes]
    all_failed = bool(known) and all(o == "failure" for o in known)
    last = env[-1] if env else None
    stuck = len(env) >= 2 and env[-1].result and env[-1].result == env[-2].result
    asked = any("?" in _agent_words(t) for t in since)
    doubted = [i for i in named if tr.insight_sources.get(i, ("", ""))[0] in b.opened]

    if last is not None and (last.is_error or stuck):
        trig = Label("setback", *(_quote([last]) if not quote else (quote, msg)),
                     note=f"the environment action at message {last.turn} " + ("failed" if last.is_error else "repeated the previous observation"))
    elif doubted and (len(named) >= 2 or any(tr.insight_sources[i][1] == "failure" for i in doubted)):
        trig = Label("insight doubt", quote, msg, note=f"names {', '.join(doubted)} and opens its source run")
    elif all_failed:
        trig = Label("failed precedent", quote, msg, note="every opened run with a known outcome failed")
    elif asked:
        trig = Label("open question", quote, msg, note="the agent asks a question just before opening the run")
    else:
        trig = Label("routine check", quote, msg, note="no failure, doubt or question before the burst")

    calls = [t for t in tr.turns if b.descent.first_turn <= t.turn <= b.descent.last_turn and t.is_action]
    read_turns = any(re.search(re.escape(tr.clf.tools) + r"/turn\b", _args_text(t)) for t in calls)
    if trig.code == "setback" and b.descent.searched:
        targ = Label("workaround", quote, msg, note=f"after a setback the burst searched {', '.join(b.descent.searched)}")
    elif all_failed and b.descent.opened_compilations:
        targ = Label("failure cause", quote, msg, note="read the compilation of a failed run")
    elif read_turns or asked:
        targ = Label("specific fact", quote, msg, note="read single turns" if read_turns else "a question before the burst")
    else:
        targ = Label("procedure", quote, msg, note="read a run's listing or compilation as a whole")

    return {"trigger": trig, "target": targ, "effect": _offline_effect(tr, b, calls, next_start)}


def _values(t: Turn) -> list[str]:
    vals = [t.name or ""]
    a = t.arguments
    stack = [a]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, (list, tuple)):
            stack.extend(v)
        elif v is not None and not isinstance(v, bool):
            vals.append(str(v))
    return [v for v in vals if len(v.strip()) >= 3]


def _offline_effect(tr: Transcript, b: Burst, calls: list[Turn], next_start: int | None) -> Label:
    evidence = "\n".join(t.result or "" for t in calls)
    end = b.descent.last_turn
    baseline = [tr.insights_block] + [
        "\n".join(filter(None, (t.content, t.reasoning, _args_text(t), t.result))) for t in tr.turns if t.turn < b.descent.first_turn]
    after = [t for t in tr.turns if t.turn > end and (next_start is None or t.turn < next_start)]
    seen_after: list[str] = []
    for t in after:
        if t.is_action and not tr.clf.classify(t).memory:
            base = "\n".join(baseline + seen_after)
            fresh = [v for v in _values(t) if v in evidence and v not in base]
            if fresh:
                code = "refine insight" if (t.name and t.name in tr.insights_block) else "new fact"
                return Label(code, f"{t.name}({_args_text(t)})"[:200], t.turn,
                             note=f"uses {fresh[0]!r}, which the opened runs returned and nothing before the burst held")
        seen_after.append("\n".join(filter(None, (t.content, t.reasoning, t.result))))
    for t in after:
        if t.role == "assistant" and any(s in _agent_words(t) for s in b.opened):
            q, m = _quote([t])
            return Label("confirm plan", q, m, note="names an opened run afterwards without taking anything new from it")
    nxt = next((t for t in after if t.is_action), None)
    return Label("none", f"{nxt.name}({_args_text(nxt)})"[:200] if nxt else "", nxt.turn if nxt else None,
                 note="no later action uses what the opened runs returned")
