"""The offline compiler: a deterministic reading of the turn log, no model involved.

It cannot know *why* a run went the way it did, so it says only what the log
shows and labels itself ``compiler: offline``:

- success: the first look-up, every state-changing call that went through, and
  every call that worked after the same tool had failed (a recovery);
- failure: every call the environment answered with an error (with the turn
  before it), repeated identical calls, and the last state-changing calls made
  after the last error, as suspects; an ending by the harness is reported as
  such, not as the agent's choice.

Insights name tools and kinds of things, never ids or values from the run.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from ..runs.model import Run, Turn
from .base import CompileStats
from .grounding import ground
from .schema import MAX_INSIGHTS, MAX_ITEMS, CandidateInsight, Compilation, Evidence

# Tool names that read state rather than change it.
_READ_PREFIXES = (
    "get", "search", "list", "find", "read", "look", "view", "show", "fetch", "query",
    "check", "lookup", "calculate", "compute", "think", "inventory", "examine", "ls", "cat",
    "grep", "open_file", "describe", "count", "retrieve", "browse", "info",
)
_AFFIRM = re.compile(r"\b(yes|yeah|yep|confirm|confirmed|correct|go ahead|proceed|sure|please do)\b", re.I)
_VALUE = re.compile(r"\b(?=[A-Za-z_]*\d)[A-Za-z0-9_\-]{3,}\b|\b\d+(?:\.\d+)?\b")


def is_read_only(name: str) -> bool:
    """Judged from the tool's name: ``get_user``, ``searchFlights``, ``ls`` read; others change state."""
    low = name.lower()
    head = re.split(r"[^a-z]", low)[0]
    return head in _READ_PREFIXES or low.startswith(("get", "search", "list", "find"))


def _clip(text: str | None, limit: int = 160) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _quote(text: str | None, limit: int = 120) -> str | None:
    """An exact, whitespace-folded prefix of an observation, short enough to read."""
    flat = " ".join((text or "").split())
    if not flat:
        return None
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def _generic(text: str) -> str:
    """Strip values that hold only in one episode (ids, numbers) from a lesson."""
    return " ".join(_VALUE.sub("<value>", text).split())


def _call(turn: Turn) -> str:
    args = turn.arguments
    if isinstance(args, dict):
        shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    elif args is None:
        shown = ""
    else:
        shown = str(args)
    return f"{turn.name}({_clip(shown, 100)})"


def _signature(turn: Turn) -> str:
    return f"{turn.name}({json.dumps(turn.arguments, sort_keys=True, default=str)})"


def _short_task(instruction: str, limit: int = 90) -> str:
    flat = " ".join(instruction.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    return (cut[: cut.rfind(" ")] if " " in cut else cut).rstrip(",;:") + "…"


def _previous_action(actions: list[Turn], turn: Turn) -> Turn | None:
    before = [a for a in actions if a.turn < turn.turn]
    return before[-1] if before else None


def _confirmed_before(run: Run, call: Turn) -> bool:
    """Did a user message agreeing to something come just before this call?"""
    for t in reversed([t for t in run.turns if t.turn < call.turn]):
        if t.type == "function_call":
            return False
        if t.type == "message" and t.role == "user":
            return bool(_AFFIRM.search(t.content or ""))
    return False


class OfflineCompiler:
    name = "offline"
    model = None

    def __init__(self) -> None:
        self._stats = CompileStats()

    def stats(self) -> CompileStats:
        return self._stats

    async def compile(self, run: Run) -> Compilation:
        self._stats.runs += 1
        return compile_offline(run)


def compile_offline(run: Run) -> Compilation:
    actions = run.actions
    kind = run.task.task_type or (", ".join(run.task.apps) if run.task.apps else "similar")
    if run.outcome.success:
        evidence, insights = _success(run, actions, kind)
    else:
        evidence, insights = _failure(run, actions, kind)
    errors = sum(1 for a in actions if a.is_error)
    tools = list(dict.fromkeys(a.name for a in actions if a.name))
    verb = "succeeded" if run.outcome.success else "failed"
    description = (
        f"The agent {verb} after {len(actions)} tool call{'s' if len(actions) != 1 else ''}"
        f" ({errors} returned an error)"
        + (f", using {', '.join(tools[:6])}{' and more' if len(tools) > 6 else ''}." if tools else ", without calling a tool.")
    )
    comp = Compilation(
        title=f"[{run.outcome.label}] {_short_task(run.task.instruction)}",
        description=description,
        outcome=run.outcome.label,
        evidence=evidence[:MAX_ITEMS],
        insights=insights[:MAX_INSIGHTS],
        compiler="offline",
    )
    return ground(comp, run)


def _success(run: Run, actions: list[Turn], kind: str):
    evidence: list[Evidence] = []
    insights: list[CandidateInsight] = []
    if not actions:
        last = next((t for t in reversed(run.turns) if t.type == "message" and t.role == "assistant"), None)
        evidence.append(Evidence(
            decision="Answered without calling any tool.",
            support="The run was judged a success with no environment call.",
            turns=[last.turn] if last else [],
            quote=_quote(last.content) if last else None,
        ))
        insights.append(CandidateInsight(
            title=f"Answer {kind} tasks directly when no lookup is needed",
            guideline="When the request can be settled from what is already known, answer it without extra tool calls.",
            applicability="Applies when the task needs no state from the environment; not when facts must be checked first.",
        ))
        return evidence, insights

    first = actions[0]
    evidence.append(Evidence(
        decision=f"Started by calling {_call(first)} at turn {first.turn}.",
        support=f"It returned: {_clip(first.result)}" if first.result else "It returned nothing.",
        turns=[first.turn], quote=_quote(first.result),
    ))
    failed_tools: set[str] = set()
    recoveries: list[tuple[Turn, Turn]] = []
    writes: list[Turn] = []
    for a in actions:
        if a.is_error:
            failed_tools.add(a.name or "")
            continue
        if a.name in failed_tools:
            prev_err = next(p for p in reversed(actions) if p.turn < a.turn and p.is_error and p.name == a.name)
            recoveries.append((prev_err, a))
            failed_tools.discard(a.name or "")
        if a is not first and not is_read_only(a.name or ""):
            writes.append(a)
    for err, fix in recoveries:
        evidence.append(Evidence(
            decision=f"After {err.name} failed at turn {err.turn}, called it again differently at turn {fix.turn}: {_call(fix)}.",
            support=f"The first call returned an error ({_clip(err.result, 100)}); the second returned: {_clip(fix.result, 100)}",
            turns=[err.turn, fix.turn], quote=_quote(err.result),
        ))
    fixed = {fix.turn for _, fix in recoveries}
    for w in writes:
        if w.turn in fixed:  # already told as a recovery
            continue
        evidence.append(Evidence(
            decision=f"Called {_call(w)} at turn {w.turn}" + (", after the user agreed." if _confirmed_before(run, w) else "."),
            support=f"The environment accepted it: {_clip(w.result)}" if w.result else "The environment accepted it.",
            turns=[w.turn], quote=_quote(w.result),
        ))

    lookups = list(dict.fromkeys(a.name for a in actions if is_read_only(a.name or "") and not a.is_error))
    write_names = list(dict.fromkeys(w.name for w in writes))
    if write_names:
        before = ", ".join(lookups[:4]) or "the relevant look-ups"
        insights.append(CandidateInsight(
            title=f"Look up before {write_names[0]}",
            guideline=f"Gather the facts with {before} before calling {', '.join(write_names[:3])}, and build its arguments from what those calls returned.",
            applicability=f"Applies to {kind} tasks that end in {write_names[0]}; not when the request only asks for information.",
        ))
    elif lookups:
        insights.append(CandidateInsight(
            title=f"Answer from {lookups[0]} results",
            guideline=f"Use {', '.join(lookups[:4])} to find what the request needs and answer from what they return, without changing any state.",
            applicability=f"Applies to {kind} requests that only ask for information; not when the user asks for a change.",
        ))
    for err, fix in recoveries[:1]:
        insights.append(CandidateInsight(
            title=f"Recover when {err.name} fails",
            guideline=_generic(f"If {err.name} returns an error like \"{_clip(err.result, 80)}\", read the message and correct the arguments instead of repeating the same call."),
            applicability=f"Applies whenever {err.name} reports an error; not when the error says the action is not allowed at all.",
        ))
    confirmed = [w for w in writes if _confirmed_before(run, w)]
    if confirmed:
        insights.append(CandidateInsight(
            title=f"Get explicit agreement before {confirmed[0].name}",
            guideline=f"State the details of the change and wait for the user's yes before calling {confirmed[0].name}.",
            applicability="Applies to actions that change the user's records; not to look-ups.",
        ))
    if not insights:
        insights.append(CandidateInsight(
            title=f"Working order for {kind} tasks",
            guideline=f"A successful run called {' then '.join(list(dict.fromkeys(a.name for a in actions))[:5])}; use that order as a starting point.",
            applicability="Applies to tasks like this one; check each step's result against the current task.",
        ))
    return evidence, insights


def _failure(run: Run, actions: list[Turn], kind: str):
    evidence: list[Evidence] = []
    insights: list[CandidateInsight] = []
    errors = [a for a in actions if a.is_error]
    told: set[str] = set()
    for err in errors:
        key = _signature(err)
        if key in told:  # the same failing call again: the repeat item below covers it
            continue
        told.add(key)
        prev = _previous_action(actions, err)
        evidence.append(Evidence(
            decision=f"Called {_call(err)} at turn {err.turn}"
            + (f", right after {prev.name} at turn {prev.turn}." if prev else "."),
            support=f"The environment answered with an error: {_clip(err.result)}",
            turns=([prev.turn] if prev else []) + [err.turn],
            quote=_quote(err.result),
        ))
    repeats = Counter(_signature(a) for a in actions)
    looped = [(key, n) for key, n in repeats.items() if n >= 3]
    for key, n in looped[:2]:
        same = [a for a in actions if _signature(a) == key]
        name = same[0].name
        evidence.append(Evidence(
            decision=f"Repeated the same call {name} {n} times (turns {', '.join(str(a.turn) for a in same[:6])}).",
            support=f"Each time the observation was: {_clip(same[-1].result, 100)}",
            turns=[a.turn for a in same[:6]], quote=_quote(same[-1].result),
        ))
    writes = [a for a in actions if not a.is_error and not is_read_only(a.name or "")]
    last_error = errors[-1].turn if errors else -1
    suspects = [w for w in writes if w.turn > last_error]
    if suspects:
        for w in suspects[-2:]:
            evidence.append(Evidence(
                decision=f"Committed to {_call(w)} at turn {w.turn}.",
                support="The call went through, yet the run was judged a failure, so the change it made may not be what the task asked for. This is a suspect, not a proven cause.",
                turns=[w.turn], quote=_quote(w.result),
            ))
    ended_by = run.outcome.ended_by or ""
    last = run.turns[-1] if run.turns else None
    if not evidence:
        evidence.append(Evidence(
            decision="Ended the run without a state-changing call." if actions else "Ended the run without calling any tool.",
            support=f"The run made {len(actions)} look-up call(s) and was judged a failure"
            + (f"; it was ended by the {ended_by}." if ended_by else "."),
            turns=[last.turn] if last else [],
        ))
    if ended_by.startswith("harness"):
        evidence.append(Evidence(
            decision="(Not an agent decision) The harness ended the episode.",
            support=f"Ending: {ended_by}. The step budget ran out before the task was done; the agent's earlier choices used it up.",
            turns=[last.turn] if last else [],
        ))

    seen_tools: set[str] = set()
    for err in errors:
        if err.name in seen_tools:
            continue
        seen_tools.add(err.name or "")
        insights.append(CandidateInsight(
            title=f"Check inputs before {err.name}",
            guideline=_generic(f"{err.name} can fail with \"{_clip(err.result, 80)}\"; confirm its arguments against what earlier look-ups returned, and on an error change the arguments rather than repeat the call."),
            applicability=f"Applies whenever {err.name} is about to be called ({kind} tasks); the exact error may differ.",
        ))
    for key, n in looped[:1]:
        name = key.split("(", 1)[0]
        insights.append(CandidateInsight(
            title=f"Do not repeat {name} unchanged",
            guideline=f"If {name} gives the same observation twice, change the approach instead of calling it again with the same arguments.",
            applicability="Applies to any tool whose answer will not change on its own; not to polling a state that is expected to change.",
        ))
    if suspects and len(insights) < MAX_INSIGHTS:
        w = suspects[-1]
        insights.append(CandidateInsight(
            title=f"Verify the request before {w.name}",
            guideline=f"Before calling {w.name}, compare every argument with the user's stated request and the policy; a run that called it without that check failed.",
            applicability=f"Applies to {kind} tasks that change records with {w.name}; this lesson comes from a failed run, so treat it as a caution, not a recipe.",
        ))
    if not errors and not writes:
        insights.append(CandidateInsight(
            title=f"Carry {kind} tasks through to the action",
            guideline="Gathering information was not enough here: once the facts are known, take the action the task asks for, or say clearly why it cannot be done.",
            applicability=f"Applies to {kind} tasks that ask for a change; not to questions that only need an answer.",
        ))
    return evidence, insights
