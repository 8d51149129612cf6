"""OpenHands trajectories: the event lists OpenHands saves (V0 ``event_to_dict`` and V1 SDK events).

Read, as one of:

- a trajectory file: a JSON array of events (the UI's download, ``save_trajectory_path``);
- an evaluation output (``output.jsonl``, one instance per line): ``{"instance_id",
  "instruction", "history": [events], "test_result": {"git_patch"}, "error", "metrics"}``.

V0 events: actions ``{"id", "source": "user"|"agent"|"environment", "action", "args",
"tool_call_metadata": {"function_name", "tool_call_id"}}`` and observations ``{"id",
"cause": <action id>, "observation", "content", "extras": {"metadata": {"exit_code"}},
"success"}``. V1 SDK events carry ``kind``: ``SystemPromptEvent``, ``MessageEvent``
(``llm_message``), ``ActionEvent`` (``tool_name``, ``tool_call_id``, ``action``,
``thought``), ``ObservationEvent`` (``tool_call_id``, ``observation``), ``AgentErrorEvent``.

Turns: ``system`` and ``message`` actions are messages; every other action (``run``,
``read``, ``edit``, ``browse``, ``think``, …) is a ``function_call`` (``name`` the
tool the model called, ``arguments`` the action's args, ``reasoning`` its thought)
whose result is the observation caused by it (``cause``), or with its tool-call id;
``is_error`` from the exit code, ``success``, an ``error`` observation, else the text
rule. ``finish`` is the run's ``answer`` (its final thought). The framework's own
events are harness turns: agent state changes other than running, history
condensation, and error observations no action caused (a stuck-in-loop stop). An
``error`` agent state, or an ``error`` in the evaluation output, ends the run by the
harness.

Outcome: a SWE-bench report (``results.json`` or ``report.json`` with ``resolved_ids``
…) in the file's folder or up to two above, keyed by ``instance_id``, as for
SWE-agent; else ``report.resolved`` / ``test_result.report.resolved`` when the
evaluation output holds it; else ``--outcomes`` keyed by instance id (or the
trajectory file name without ``.json``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Iterator

from . import errors
from . import outcomes as _outcomes
from . import spans as sp
from ._common import Sniff, text_of
from .harness import end_turn
from .model import Outcome, Run, RunError, Task, Turn, count_steps
from .trace_files import documents
from .spans import Call, Msg, Step

# What each OpenHands tool does (runs/tool_kinds.py).
TOOL_KINDS = {"str_replace_editor": "editor", "file_editor": "editor", "edit_file": "edit", "edit": "edit",
              "write": "edit", "read": "view", "execute_bash": "shell", "run": "shell", "bash": "shell",
              "execute_ipython_cell": "shell"}
_V1_KINDS = {"SystemPromptEvent", "MessageEvent", "ActionEvent", "ObservationEvent", "AgentErrorEvent",
             "UserRejectObservation", "PauseEvent", "ConversationStateUpdateEvent", "Condensation",
             "CondensationRequest", "CondensationSummaryEvent"}
# Action args that describe how OpenHands ran the action, not what the agent asked for.
_RUN_ARGS = {"thought", "hidden", "blocking", "is_input", "confirmation_state", "security_risk", "is_confirmed",
             "impl_source", "image_urls", "wait_for_response", "reasoning_content"}
_RUNNING_STATES = {"running", "loading", "init", "awaiting_user_input", "awaiting_user_confirmation",
                   "user_confirmed", "finished"}


def _hashable(value: Any) -> Any:
    """An event id or cause usable as a key (ids are ints in V0, strings in V1)."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _v1_kind(ev: dict) -> bool:
    return isinstance(ev.get("kind"), str) and ev["kind"] in _V1_KINDS


def _is_event(obj: Any) -> bool:
    if not isinstance(obj, dict):
        return False
    if _v1_kind(obj):
        return True
    return "id" in obj and ("action" in obj or "observation" in obj) and "source" in obj


def _is_output(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("history"), list) and "instance_id" in obj


def looks_like(s: Sniff) -> bool:
    obj = s.whole if s.whole is not None else s.first
    if _is_output(obj) or _is_event(obj):
        return True
    if isinstance(obj, list) and obj and _is_event(obj[0]):
        return True
    head = s.head[:8192]
    return bool(re.match(r'\s*\[\s*\{', head) and re.search(r'"source"\s*:\s*"(?:user|agent|environment)"', head)
                and re.search(r'"(?:action|observation)"\s*:\s*"\w+"', head))


def read(path: Path) -> Iterator[Run | RunError]:
    for item in documents(path, split_arrays=False):
        if isinstance(item, RunError):
            yield item
            continue
        where, doc = item
        if _is_output(doc):
            record, events = doc, doc["history"]
            run_id = doc["instance_id"] if isinstance(doc["instance_id"], (str, int)) else None
            if isinstance(run_id, bool) or not str(run_id or "").strip():
                yield RunError(f"{where}: field 'instance_id' must be a non-empty string")
                continue
            run_id = str(run_id)
        elif isinstance(doc, list):
            record, events, run_id = None, doc, path.name[:-5] if path.name.endswith(".json") else path.stem
        elif _is_event(doc):
            yield RunError(f"{where}: a single OpenHands event, not a trajectory (expected a JSON array of events)")
            continue
        else:
            yield RunError(f"{where}: not an OpenHands trajectory (a JSON array of events, or a record with "
                           f"'instance_id' and 'history')")
            continue
        try:
            run = to_run(events, record, run_id, path, where)
        except RunError as exc:
            yield exc
            continue
        problem = _attach_outcome(run, path, record)
        if problem is not None:
            yield problem
        yield run


def _text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return text_of(value)
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _call_args(args: dict) -> dict:
    return {k: v for k, v in args.items() if k not in _RUN_ARGS}


class _Events:
    """Collects the normalised messages and harness steps of one trajectory, in order."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.call_of_action: dict[Any, str] = {}
        self.answer: str | None = None
        self.ended: str | None = None
        self.n = 0

    def msg(self, msg: Msg) -> None:
        self.n += 1
        self.steps.append(Step(at=float(self.n), kind="message", inputs=[msg]))

    def harness(self, kind: str, text: str) -> None:
        self.n += 1
        self.steps.append(Step(at=float(self.n), kind="harness", harness=kind, text=text))


def _v0(ev: dict, out: _Events) -> None:
    if "action" in ev:
        action = ev.get("action")
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        if action == "system":
            out.msg(Msg("system", _text(args.get("content")) or ""))
        elif action == "message":
            role = "user" if ev.get("source") == "user" else "assistant"
            out.msg(Msg(role, _text(args.get("content")) or _text(ev.get("message")) or ""))
        elif action == "finish":
            out.answer = _text(args.get("final_thought")) or _text(args.get("outputs")) or "finished"
            out.ended = "agent: finish"
        elif action == "change_agent_state":
            pass  # its agent_state_changed observation says the same
        elif action in ("condensation", "condensation_request"):
            out.harness("condensation", "the framework condensed the history")
        elif isinstance(action, str) and action:
            meta = ev.get("tool_call_metadata") if isinstance(ev.get("tool_call_metadata"), dict) else {}
            call_id = meta.get("tool_call_id") if isinstance(meta.get("tool_call_id"), str) else f"event-{ev.get('id')}"
            name = meta.get("function_name") if isinstance(meta.get("function_name"), str) else action
            out.call_of_action[_hashable(ev.get("id"))] = call_id
            call_args = _call_args(args)
            if action == "read" and "command" not in call_args:  # OpenHands logs an editor's ``view`` as a read action
                call_args["command"] = "view"
            out.msg(Msg("assistant", None, calls=[Call(call_id, name, call_args)],
                        reasoning=_text(args.get("thought")) or None))
        return
    obs = ev.get("observation")
    extras = ev.get("extras") if isinstance(ev.get("extras"), dict) else {}
    if obs == "agent_state_changed":
        state = str(extras.get("agent_state") or "")
        if state and state not in _RUNNING_STATES:
            reason = extras.get("reason")
            out.harness("agent state", f"agent state: {state}" + (f" ({reason})" if reason else ""))
            if state == "error":
                out.ended = f"harness: the agent stopped with an error ({reason or 'agent state error'})"
            elif state in ("stopped", "paused") and out.ended is None:
                out.ended = f"harness: the run was {state}"
        return
    if obs in ("null", "recall", "condense"):
        return
    call_id = out.call_of_action.get(_hashable(ev.get("cause"))) if _hashable(ev.get("cause")) is not None else None
    meta = ev.get("tool_call_metadata") if isinstance(ev.get("tool_call_metadata"), dict) else {}
    if call_id is None and isinstance(meta.get("tool_call_id"), str):
        call_id = meta["tool_call_id"]
    content = _text(ev.get("content")) or ""
    code = (extras.get("metadata") or {}).get("exit_code") if isinstance(extras.get("metadata"), dict) else None
    failed = errors.judge(True if obs in ("error", "user_rejected") else None,
                          errors.from_exit_status(code),
                          (not ev["success"]) if isinstance(ev.get("success"), bool) else None)
    if call_id is None:
        if obs == "error":
            out.harness("error", content or _text(ev.get("message")) or "error")
        else:
            out.msg(Msg("tool", content, failed=failed))
        return
    out.msg(Msg("tool", content, call_id=call_id, failed=failed))


def _v1(ev: dict, out: _Events) -> None:
    kind = ev.get("kind")
    if kind == "SystemPromptEvent":
        out.msg(Msg("system", _text((ev.get("system_prompt") or {}).get("text") if isinstance(ev.get("system_prompt"), dict)
                                    else ev.get("system_prompt")) or ""))
    elif kind == "MessageEvent":
        llm = ev.get("llm_message") if isinstance(ev.get("llm_message"), dict) else {}
        role = llm.get("role") if isinstance(llm.get("role"), str) else ("user" if ev.get("source") == "user" else "assistant")
        out.msg(Msg(role, _text(llm.get("content")) or ""))
    elif kind == "ActionEvent":
        action = ev.get("action") if isinstance(ev.get("action"), dict) else {}
        name = ev.get("tool_name") if isinstance(ev.get("tool_name"), str) else str(action.get("kind") or "action")
        if name == "finish" or action.get("kind") == "FinishAction":
            out.answer = _text(action.get("message")) or "finished"
            out.ended = "agent: finish"
            return
        call_id = ev.get("tool_call_id") if isinstance(ev.get("tool_call_id"), str) else f"event-{ev.get('id')}"
        out.call_of_action[_hashable(ev.get("id"))] = call_id
        thought = _text(ev.get("thought")) or _text(ev.get("reasoning_content"))
        out.msg(Msg("assistant", None, calls=[Call(call_id, name, _call_args({k: v for k, v in action.items() if k != "kind"}))],
                    reasoning=thought or None))
    elif kind in ("ObservationEvent", "AgentErrorEvent", "UserRejectObservation"):
        call_id = ev.get("tool_call_id") if isinstance(ev.get("tool_call_id"), str) else \
            out.call_of_action.get(_hashable(ev.get("action_id"))) if _hashable(ev.get("action_id")) is not None else None
        if kind == "ObservationEvent":
            o = ev.get("observation") if isinstance(ev.get("observation"), dict) else {}
            content = _text(o.get("content")) or _text(o.get("output")) or ""
            failed = errors.judge(errors.from_status(o.get("is_error")), errors.from_exit_status(o.get("exit_code")))
        else:
            content = _text(ev.get("error")) or _text(ev.get("rejection_reason")) or kind
            failed = True
        if call_id is None:
            out.harness("error", content) if kind == "AgentErrorEvent" else out.msg(Msg("tool", content, failed=failed))
        else:
            out.msg(Msg("tool", content, call_id=call_id, failed=failed))
    elif kind in ("Condensation", "CondensationSummaryEvent"):
        out.harness("condensation", "the framework condensed the history")
    elif kind == "PauseEvent":
        out.harness("pause", "the run was paused")


def to_run(events: Any, record: dict | None, run_id: str, path: Path, where: str) -> Run:
    if not isinstance(events, list) or not events:
        raise RunError(f"{where}: no events; nothing to import")
    out = _Events()
    for i, ev in enumerate(events):
        if not isinstance(ev, dict):
            raise RunError(f"{where}: event {i} is not a JSON object")
        (_v1 if _v1_kind(ev) else _v0)(ev, out)
    assembly = sp.assemble(out.steps)
    turns = assembly.turns
    instruction = record.get("instruction") if record and isinstance(record.get("instruction"), str) else None
    first_user = next((t.content for t in turns if t.type == "message" and t.role == "user" and (t.content or "").strip()), None)
    instruction = instruction or first_user
    if not instruction:
        raise RunError(f"{where}: no user message and no 'instruction'; nothing says what the task was")
    if out.answer:
        turns.append(Turn(turn=len(turns), type="answer", role="assistant", content=out.answer))
    patch = ((record or {}).get("test_result") or {}).get("git_patch") if isinstance((record or {}).get("test_result"), dict) else None
    if isinstance(patch, str) and patch.strip():
        turns.append(Turn(turn=len(turns), type="answer", role="assistant", content=patch, extra={"git_patch": True}))
    ended = out.ended
    if record and isinstance(record.get("error"), str) and record["error"].strip():
        ended = f"harness: the run stopped with an error ({record['error'].strip().splitlines()[0][:200]})"
    ended = ended or "agent"
    end_turn(turns, ended)
    meta: dict[str, Any] = {}
    if record:
        md = record.get("metadata") if isinstance(record.get("metadata"), dict) else {}
        for key in ("agent_class", "model_name", "max_iterations"):
            if md.get(key) is not None:
                meta[key] = md[key]
        llm = md.get("llm_config") if isinstance(md.get("llm_config"), dict) else {}
        if isinstance(llm.get("model"), str):
            meta["model"] = llm["model"]
    task = Task(id=run_id, instruction=instruction, task_type="swe-bench" if "__" in run_id else "openhands",
                initial_observation=first_user if first_user and first_user != instruction else None, metadata=meta)
    run = Run(run_id=run_id, task=task, turns=turns, outcome=None)
    run.source = {"format": "openhands", "file": path.name, "original": record if record is not None else events,
                  "original_format": "json", "outcome_keys": [run_id], "ended_by": ended, "pairing": assembly.pairing}
    return run


def _attach_outcome(run: Run, path: Path, record: dict | None) -> RunError | None:
    """The verdict: a nearby SWE-bench report, else the evaluation record's own ``resolved``."""
    table = None
    report_path = None
    try:
        for name in ("results.json", "report.json"):
            table, report_path = _outcomes.nearby_report(path, name=name)
            if table is not None:
                break
    except RunError as exc:
        return exc
    verdict = _outcomes.lookup(run, table) if table is not None else None
    if verdict is not None:
        run.outcome = Outcome(success=verdict.success, steps=count_steps(run.turns), score=verdict.score,
                              ended_by=run.source.get("ended_by"))
        run.source["outcome_from"] = verdict.where
        return None
    own = None
    for holder in ((record or {}).get("report"), ((record or {}).get("test_result") or {}).get("report")
                   if isinstance((record or {}).get("test_result"), dict) else None):
        if isinstance(holder, dict) and isinstance(holder.get("resolved"), bool):
            own = holder["resolved"]
            break
    if own is not None:
        run.outcome = Outcome(success=own, steps=count_steps(run.turns), ended_by=run.source.get("ended_by"))
        return None
    if table is not None:
        run.source["no_outcome_reason"] = (_outcomes.why_missing(run, table) or f"{report_path} does not list it") + \
            f"; key an --outcomes entry by {run.run_id}"
    else:
        run.source["no_outcome_reason"] = (f"no SWE-bench results.json or report.json beside it and no 'resolved' in "
                                           f"the record; key an --outcomes entry by {run.run_id}")
    return None
