"""Generated and mutated inputs: an importer yields runs or RunError values, nothing else escapes.

Each importer gets a few thousand inputs: documents built from its own field names
(so the deep code paths run) with random values, random JSON, and byte-level
mutations of the fixtures (truncation, stray bytes, NUL, invalid UTF-8, cut lines).
The example counts are set per test so the whole file stays well under a minute.
"""

from __future__ import annotations

import json
import math
import random
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wikitrace.redact import Redactor
from wikitrace.runs import (agents_sdk, atif, claude_code, codex_cli, inspect_ai, langfuse, load, mini_swe_agent,
                            native, openai_chat, openhands, otlp, react_notebook, react_text, swe_agent)
from wikitrace.runs.model import Outcome, Run, RunError
from wikitrace.runs.turnlog import check_numbering, parse_turns

FIX = Path(__file__).parent / "fixtures" / "importers"
# Per importer: STRUCTURED examples from shrinkable hypothesis strategies, SEEDS x DOCS_PER_SEED
# documents from a seeded template fuzzer (cheap to generate), MUTATIONS damaged fixtures.
# About 3,000 inputs per importer in total (2,000 + 800 + 80), a few seconds each.
STRUCTURED = 80
SEEDS, DOCS_PER_SEED = 80, 25
MUTATIONS = 800
_REDACTOR = Redactor()
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                      HealthCheck.function_scoped_fixture])

VOCAB = [
    # shared
    "role", "content", "text", "type", "id", "name", "arguments", "message", "messages", "extra", "info",
    "user", "assistant", "system", "tool", "agent", "exit", "function", "tool_calls", "tool_call_id",
    # SWE-agent / mini-swe-agent
    "trajectory", "history", "action", "observation", "thought", "response", "replay_config",
    "problem_statement", "exit_status", "submission", "is_demo", "actions", "command", "returncode",
    "trajectory_format", "instance_id", "submitted", "Submitted", "mini-swe-agent-1.1",
    # Claude Code
    "sessionId", "uuid", "parentUuid", "isSidechain", "isMeta", "thinking", "tool_use", "tool_result",
    "tool_use_id", "input", "is_error", "summary", "model",
    # ATIF
    "schema_version", "ATIF-v1.4", "session_id", "steps", "step_id", "source", "reasoning_content",
    "function_name", "results", "source_call_id", "subagent_trajectory_ref",
    # OpenAI chat / native
    "traj", "reward", "success", "task_id", "trial", "task", "instruction", "run_id", "turns", "turn",
    "outcome", "steps", "function_call", "episode_over", "answer",
    # OTLP, Langfuse, Agents SDK, Inspect AI, OpenHands
    "resourceSpans", "scopeSpans", "spans", "traceId", "spanId", "attributes", "events", "status", "stringValue",
    "gen_ai.operation.name", "execute_tool", "chat", "gen_ai.tool.call.id", "openinference.span.kind", "LLM", "TOOL",
    "observations", "scores", "GENERATION", "trace.span", "span_data", "generation", "handoff", "samples", "eval",
    "epoch", "tool_call_metadata", "cause", "history", "kind", "ActionEvent", "ObservationEvent",
]

_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=20) | st.sampled_from(VOCAB) | st.sampled_from(
    ["", "\x00", "\u2028", "<returncode>1</returncode>", "```bash\nls\n```", "sk-" + "a" * 24, "ISSUE:\nx\nINSTRUCTIONS:"])
_leaf = (st.none() | st.booleans() | st.integers(min_value=-10, max_value=2**70)
         | st.floats(allow_nan=True, allow_infinity=True) | _text)
JSON = st.recursive(
    _leaf,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.sampled_from(VOCAB) | _text, children, max_size=5),
    max_leaves=25,
)


def _obj(**fields):
    """A dict that always has ``fields`` (values drawn from their strategies) plus random keys."""
    return st.builds(lambda fixed, more: {**more, **fixed},
                     st.fixed_dictionaries(fields), st.dictionaries(st.sampled_from(VOCAB), JSON, max_size=3))


def _maybe(strategy):
    return strategy | JSON


_msg = _obj(role=_maybe(st.sampled_from(["system", "user", "assistant", "tool", "exit", "developer"])),
            content=_maybe(_text | st.lists(_obj(type=st.sampled_from(["text", "image", "tool_result"]), text=_text), max_size=2)),
            tool_calls=_maybe(st.lists(_obj(id=_text, function=_obj(name=_text, arguments=_text | JSON)), max_size=2)),
            tool_call_id=_maybe(_text),
            extra=_maybe(_obj(actions=_maybe(st.lists(_obj(command=_text), max_size=2)), returncode=_maybe(st.integers(-1, 3)))))

DOCS = {
    "swe-agent": _obj(
        trajectory=_maybe(st.lists(_obj(action=_maybe(_text), observation=_maybe(_text), thought=_maybe(_text)), max_size=4)),
        history=_maybe(st.lists(_msg, max_size=3)),
        info=_maybe(_obj(exit_status=_maybe(_text), submission=_maybe(_text))),
        replay_config=_maybe(st.builds(json.dumps, _obj(problem_statement=_obj(text=_text, id=_text))))),
    "mini-swe-agent": _obj(messages=_maybe(st.lists(_msg, max_size=6)),
                           info=_maybe(_obj(exit_status=_maybe(_text), submission=_maybe(_text))),
                           instance_id=_maybe(_text)),
    "atif": _obj(schema_version=st.just("ATIF-v1.4"), session_id=_maybe(_text),
                 steps=_maybe(st.lists(_obj(
                     step_id=_maybe(st.integers(0, 5)),
                     source=_maybe(st.sampled_from(["system", "user", "agent"])), message=_maybe(_text),
                     reasoning_content=_maybe(_text),
                     tool_calls=_maybe(st.lists(_obj(tool_call_id=_maybe(_text), function_name=_maybe(_text),
                                                     arguments=JSON), max_size=2)),
                     observation=_maybe(_obj(results=_maybe(st.lists(_obj(source_call_id=_maybe(_text), content=_maybe(_text),
                                                                          is_error=_maybe(st.booleans())), max_size=2))))),
                     max_size=4))),
    "openai-chat": _obj(task_id=_maybe(st.integers(0, 3)), reward=_maybe(st.floats(allow_nan=True)),
                        traj=_maybe(st.lists(_msg, max_size=5)), info=_maybe(_obj(task=_obj(instruction=_maybe(_text))))),
    "native": _obj(run_id=_maybe(_text), task=_maybe(_obj(id=_maybe(_text), instruction=_maybe(_text))),
                   outcome=_maybe(_obj(success=_maybe(st.booleans()), steps=_maybe(st.integers(-1, 3)))),
                   turns=_maybe(st.lists(_obj(turn=_maybe(st.integers(-1, 5)),
                                              type=_maybe(st.sampled_from(["message", "function_call", "answer"]))), max_size=3))),
}
_kv = _obj(key=st.sampled_from(["gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.input.messages",
                                  "gen_ai.output.messages", "openinference.span.kind", "llm.input_messages.0.message.role",
                                  "llm.output_messages.0.message.tool_calls.0.tool_call.id", "input.value", "output.value",
                                  "tool.name", "session.id", "http.request.header.authorization"]),
           value=_maybe(_obj(stringValue=_maybe(_text)) | _obj(intValue=_text) | _obj(arrayValue=_obj(values=st.lists(_obj(stringValue=_text), max_size=2)))))
_otel_span = _obj(traceId=_maybe(st.sampled_from(["t1", "t2"])), spanId=_maybe(_text), parentSpanId=_maybe(_text), name=_maybe(_text),
                  startTimeUnixNano=_maybe(st.sampled_from(["1767261600000000000", "1", ""])), attributes=_maybe(st.lists(_kv, max_size=3)),
                  events=_maybe(st.lists(_obj(name=_maybe(st.sampled_from(["exception", "gen_ai.choice", "gen_ai.user.message",
                                                                             "gen_ai.evaluation.result"])),
                                              attributes=_maybe(st.lists(_kv, max_size=2))), max_size=2)),
                  status=_maybe(_obj(code=_maybe(st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR"])), message=_maybe(_text))))
DOCS["otlp"] = _obj(resourceSpans=_maybe(st.lists(_obj(resource=_maybe(_obj(attributes=_maybe(st.lists(_kv, max_size=1)))),
                                                       scopeSpans=_maybe(st.lists(_obj(spans=_maybe(st.lists(_otel_span, max_size=3))), max_size=1))),
                                                  max_size=1)))
DOCS["langfuse"] = st.lists(_obj(id=_maybe(st.sampled_from(["a", "b"])), sessionId=_maybe(st.sampled_from(["s", None])), timestamp=_maybe(_text),
                                 input=JSON, observations=_maybe(st.lists(_obj(
                                     type=_maybe(st.sampled_from(["GENERATION", "TOOL", "SPAN", "GUARDRAIL"])), name=_maybe(_text),
                                     input=_maybe(st.lists(_msg, max_size=3)), output=_maybe(_msg), level=_maybe(st.sampled_from(["ERROR", "DEFAULT"])),
                                     metadata=_maybe(_obj(tool_call_id=_maybe(st.sampled_from(["c1", "c2"]))))), max_size=4)),
                                 scores=_maybe(st.lists(_obj(name=_text, value=JSON, dataType=_maybe(st.sampled_from(["BOOLEAN", "NUMERIC", "CATEGORICAL"]))), max_size=2))),
                            max_size=3)
DOCS["agents-sdk"] = _obj(data=_maybe(st.lists(_obj(object=_maybe(st.sampled_from(["trace", "trace.span"])), id=_maybe(_text),
                                                    trace_id=_maybe(st.sampled_from(["t1", "t2"])), group_id=_maybe(_text), started_at=_maybe(_text),
                                                    span_data=_maybe(_obj(type=_maybe(st.sampled_from(["generation", "function", "handoff", "guardrail", "agent"])),
                                                                          input=_maybe(st.lists(_msg, max_size=3) | _text), output=_maybe(st.lists(_msg, max_size=2) | _text),
                                                                          name=_maybe(_text), to_agent=_maybe(_text), triggered=_maybe(st.booleans()))),
                                                    error=_maybe(_obj(message=_text))), max_size=6)))
DOCS["inspect-ai"] = _obj(eval=_maybe(_obj(task=_maybe(_text), eval_id=_maybe(_text))),
                          samples=_maybe(st.lists(_obj(id=_maybe(_text | st.integers(0, 3)), epoch=_maybe(st.integers(0, 2)), input=_maybe(_text | st.lists(_msg, max_size=2)),
                                                       messages=_maybe(st.lists(_msg, max_size=5)), attachments=JSON,
                                                       scores=_maybe(st.dictionaries(_text, _obj(value=JSON), max_size=2)),
                                                       limit=_maybe(_obj(type=_text, limit=JSON)), error_retries=JSON), max_size=3)))
_oh_event = _obj(id=_maybe(st.integers(0, 5)), source=_maybe(st.sampled_from(["user", "agent", "environment"])),
                 action=_maybe(st.sampled_from(["message", "run", "finish", "system", "condensation", "edit"])), args=_maybe(_obj(content=_text, command=_text, thought=_text)),
                 observation=_maybe(st.sampled_from(["run", "error", "agent_state_changed"])), cause=_maybe(st.integers(0, 5)), content=_maybe(_text),
                 extras=_maybe(_obj(metadata=_maybe(_obj(exit_code=_maybe(st.integers(-1, 2)))), agent_state=_maybe(_text))),
                 tool_call_metadata=_maybe(_obj(function_name=_text, tool_call_id=_text)), kind=_maybe(st.sampled_from(["ActionEvent", "ObservationEvent", "MessageEvent"])))
DOCS["openhands"] = st.lists(_obj(instance_id=_maybe(_text), instruction=_maybe(_text), history=_maybe(st.lists(_oh_event, max_size=6)),
                                  error=_maybe(_text), test_result=_maybe(_obj(git_patch=_text))), max_size=2)

_cc_line = _obj(type=_maybe(st.sampled_from(["user", "assistant", "summary", "system"])), sessionId=_maybe(_text),
                uuid=_text, isSidechain=_maybe(st.booleans()), isMeta=_maybe(st.booleans()),
                message=_maybe(_obj(role=_text, content=_maybe(_text | st.lists(_obj(
                    type=_maybe(st.sampled_from(["text", "thinking", "tool_use", "tool_result"])), text=_maybe(_text),
                    thinking=_maybe(_text), id=_maybe(st.sampled_from(["t1", "t2"])), name=_maybe(_text), input=JSON,
                    tool_use_id=_maybe(st.sampled_from(["t1", "t2"])), content=_maybe(_text), is_error=JSON), max_size=3)))))

_codex_item = _obj(type=_maybe(st.sampled_from(["message", "reasoning", "function_call", "function_call_output",
                                                "custom_tool_call", "custom_tool_call_output", "local_shell_call"])),
                  role=_maybe(st.sampled_from(["user", "assistant", "developer"])),
                  content=_maybe(st.lists(_obj(type=st.sampled_from(["input_text", "output_text"]), text=_text),
                                          max_size=2)),
                  summary=_maybe(st.lists(_obj(type=st.just("summary_text"), text=_text), max_size=2)),
                  name=_maybe(_text), arguments=_maybe(_text | st.builds(json.dumps, JSON)),
                  call_id=_maybe(st.sampled_from(["c1", "c2"])), output=_maybe(_text | st.builds(json.dumps, JSON)))
_codex_line = _obj(timestamp=_text, type=_maybe(st.sampled_from(["session_meta", "response_item", "event_msg",
                                                                 "turn_context", "compacted"])),
                   payload=_maybe(_codex_item | _obj(id=_maybe(_text), cwd=_maybe(_text), model=_maybe(_text))))

_react_line = st.one_of(
    st.builds(lambda k, t: f"{k}: {t}", st.sampled_from(
        ["Question", "Thought 1", "Action 1", "Observation 1", "Thought 2", "Action 2", "Observation 2",
         "Correct answer", "Reflections", "Thought x"]), _text),
    st.sampled_from(["BEGIN TRIAL 1", "BEGIN TRIAL 2", "------------- BEGIN CORRECT AGENTS -------------",
                     "------------- BEGIN INCORRECT AGENTS -----------", "------------- BEGIN HALTED AGENTS --------------",
                     "#######", "Trial summary: Correct: 1", "", "- a reflection", "Action 1: Finish[x]",
                     "Action 2: Search[", "Observation 1: Answer is CORRECT",
                     "Question: q? You have attempted to answer it"]),
    _text,
)

_NOTEBOOK_LINES = [  # the three printout shapes, mixed: FEVER/HotpotQA, WebShop, ALFWorld
    "{n} Claim: {t}", "{n} Question: {t}", "Thought {i}: {t}", "Action {i}: Search[{t}]", "Action {i}: Finish[{t}]",
    "Action {i}: ", "Observation {i}: {t}", "Observation {i}: Episode finished, reward = {n}",
    "Observation {i}: Episode finished, reward = True", "{{'steps': {i}, 'answer': '{t}', 'reward': {n}}}",
    "{{'steps': 2, 'answer': 'x', 'gt_answer': 'y', 'reward': 0}}", "{{'steps': [", "1 1 1.0 2.0", "-----------",
    "-----------------", "{n}", "Action: reset", "Action: search[{t}]", "Action: click[Buy Now]", "Action: think[{t}]",
    "Observation: {t}", "Observation: Your score (min 0.0, max 1.0): {n}", "{n} 0.5 0.5 0.0", "Instruction: {t}",
    "pick_and_place_simple-{t}", "pick_and_place put", "Your task is to: {t}", "Act {i}: {t}", "Act {i}: think: {t}",
    "Obs {i}: {t}", "Obs {i}: Nothing happens.", "{n} r True rs [1] cnts [1]", "{n} r False rs [0]", "ohh... {t}", "{t}", "",
]
_notebook_line = st.builds(lambda tpl, i, n, t: tpl.format(i=i, n=n, t=t), st.sampled_from(_NOTEBOOK_LINES),
                           st.integers(0, 4), st.integers(0, 3), _text)

_FILES = {  # format -> (module, file name, fixture to mutate)
    "swe-agent": (swe_agent, "run/x__y-1.traj", FIX / "swe_agent" / "astropy__astropy-12907.traj"),
    "mini-swe-agent": (mini_swe_agent, "run/x__y-1.traj.json",
                       FIX / "mini_swe_agent" / "sympy__sympy-20590" / "sympy__sympy-20590.traj.json"),
    "claude-code": (claude_code, "s.jsonl", FIX / "claude_code" / "0b7c4f2e-5d1a-4c8e-9f3b-2a6d8e1c7f90.jsonl"),
    "codex-cli": (codex_cli, "rollout-x.jsonl",
                  next((FIX.parent / "capture").glob("rollout-*.jsonl"))),
    "atif": (atif, "t__1/agent/trajectory.json", FIX / "atif" / "hello-world__Xk2p9" / "agent" / "trajectory.json"),
    "react-text": (react_text, "log.txt", FIX / "react" / "hotpotqa_small.txt"),
    "react-notebook": (react_notebook, "printout.txt", FIX / "react_notebook" / "webshop_printout.txt"),
    "openai-chat": (openai_chat, "chat.json", None),
    "native": (load.FORMATS["native"], "runs.jsonl", None),
    "otlp": (otlp, "traces.jsonl", FIX / "otlp" / "collector-export.jsonl"),
    "langfuse": (langfuse, "traces.json", FIX / "langfuse" / "langfuse-traces.json"),
    "agents-sdk": (agents_sdk, "export.json", FIX / "agents_sdk" / "agents-trace-export.json"),
    "inspect-ai": (inspect_ai, "log.json", FIX / "inspect_ai" / "gsm_tools.json"),
    "openhands": (openhands, "output.jsonl", FIX / "openhands" / "swe_run" / "output.jsonl"),
}


def _encode(fmt: str, doc) -> bytes:
    if fmt in ("react-text", "react-notebook"):
        text = "\n".join(doc) if isinstance(doc, list) else str(doc)
    elif fmt in ("claude-code", "codex-cli", "openai-chat", "native", "openhands") and isinstance(doc, list):
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in doc)
    else:
        text = json.dumps(doc, ensure_ascii=False)
    return text.encode("utf-8", "surrogatepass")


def _doc_strategy(fmt: str):
    if fmt == "claude-code":
        return st.lists(_cc_line | JSON, max_size=6)
    if fmt == "codex-cli":
        return st.lists(_codex_line | JSON, max_size=6)
    if fmt == "react-text":
        return st.lists(_react_line, max_size=25)
    if fmt == "react-notebook":
        return st.lists(_notebook_line, max_size=30)
    if fmt in ("openai-chat", "native", "openhands"):
        return st.lists(DOCS[fmt] | JSON, max_size=3) if fmt != "openhands" else DOCS[fmt]
    return DOCS[fmt] | JSON


@st.composite
def _mutated(draw, data: bytes):
    """Byte-level damage to a valid file."""
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "insert", "delete", "flip", "dup"]))
        if not data:
            break
        i = draw(st.integers(0, len(data) - 1))
        if op == "truncate":
            data = data[:i]
        elif op == "insert":
            data = data[:i] + draw(st.sampled_from([b"\x00", b"\xff", b"\xc3", b"\n", b'"', b"{", b"]", b"\r\n", b"\xe2\x80\xa8"])) + data[i:]
        elif op == "delete":
            data = data[:i] + data[i + draw(st.integers(1, 200)):]
        elif op == "flip":
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1:]
        else:
            j = draw(st.integers(i, min(len(data), i + 300)))
            data = data[:j] + data[i:j] + data[j:]
    return data


# -- a seeded template fuzzer: plausible documents with random damage, fast to make ---------

class _C:  # one of the given literals
    def __init__(self, *options):
        self.options = options


class _E:  # one of the given templates
    def __init__(self, *options):
        self.options = options


class _Json:  # the template, instantiated and then serialised to a JSON string
    def __init__(self, template):
        self.template = template


_SPECIAL = ["", " ", "\x00", "\u2028", "\ud800", "<returncode>0</returncode>\n<output>\nok\n</output>",
            "<returncode>2</returncode>", "```bash\nls -la\n```", "THOUGHT: x\n\n```bash\ncat a\n```\n```bash\nb\n```",
            "ISSUE:\nbug\nINSTRUCTIONS:\nfix", "<pr_description>\nfix it\n</pr_description>", "x" * 3000,
            "Answer is CORRECT", "Search[x]", "sk-" + "b" * 30, "Authorization: Bearer abcdefgh123"]


def _rand_text(rng) -> str:
    r = rng.random()
    if r < 0.4:
        return rng.choice(VOCAB)
    if r < 0.7:
        return rng.choice(_SPECIAL)
    return "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0, 0x2FFF), rng.randint(0, 0x10FFFF)]))
                   for _ in range(rng.randint(0, 12)))


def _rand_json(rng, depth: int = 0):
    r = rng.random()
    if depth > 3 or r < 0.55:
        return rng.choice([None, True, False, rng.randint(-5, 5), 2 ** 80, 1.5, math.nan, math.inf,
                           _rand_text(rng), _rand_text(rng)])
    if r < 0.75:
        return [_rand_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {(rng.choice(VOCAB) if rng.random() < 0.7 else _rand_text(rng)): _rand_json(rng, depth + 1)
            for _ in range(rng.randint(0, 4))}


def _make(template, rng, depth: int = 0):
    if depth > 1 and rng.random() < 0.06:
        return _rand_json(rng, depth)  # damage: the wrong kind of value
    if isinstance(template, str):
        return {"T": lambda: _rand_text(rng), "I": lambda: rng.randint(-2, 5), "B": lambda: rng.random() < 0.5,
                "F": lambda: rng.choice([0.0, 0.5, 1.0, 1, math.nan]), "J": lambda: _rand_json(rng, depth)}[template]()
    if isinstance(template, _C):
        return rng.choice(template.options)
    if isinstance(template, _E):
        return _make(rng.choice(template.options), rng, depth)
    if isinstance(template, _Json):
        return json.dumps(_make(template.template, rng, depth + 1), ensure_ascii=False)
    if isinstance(template, list):
        return [_make(template[0], rng, depth + 1) for _ in range(rng.choice([0, 1, 1, 2, 3, 5]))]
    out = {k: _make(v, rng, depth + 1) for k, v in template.items() if rng.random() < 0.85}
    if rng.random() < 0.1:
        out[rng.choice(VOCAB)] = _rand_json(rng, depth + 1)
    return out


_MSG = {"role": _C("system", "user", "assistant", "tool", "exit", "developer", None),
        "content": _E("T", [{"type": _C("text", "image", "tool_result"), "text": "T"}]),
        "tool_calls": [{"id": _C("c1", "c2"), "function": {"name": "T", "arguments": _E("T", _Json({"a": "T"}), "J")}}],
        "tool_call_id": _C("c1", "c2", None),
        "extra": {"actions": [{"command": "T"}], "returncode": "I", "exit_status": "T"}}
_PART = {"type": _C("text", "thinking", "tool_use", "tool_result", "image", "redacted_thinking"), "text": "T",
         "thinking": "T", "id": _C("t1", "t2"), "name": "T", "input": "J", "tool_use_id": _C("t1", "t2", "t3"),
         "content": _E("T", [{"type": _C("text"), "text": "T"}]), "is_error": _E("B", "J")}
TEMPLATES = {
    "swe-agent": {"trajectory": [{"action": "T", "observation": "T", "thought": "T", "response": "T",
                                  "execution_time": "F"}],
                  "history": [dict(_MSG, is_demo="B")],
                  "info": {"exit_status": _C("submitted", "exit_cost", "Submitted", ""), "submission": "T"},
                  "replay_config": _Json({"problem_statement": {"text": "T", "id": "T"}})},
    "mini-swe-agent": {"instance_id": "T", "messages": [_MSG], "trajectory_format": _C("mini-swe-agent-1"),
                       "info": {"exit_status": _C("Submitted", "LimitsExceeded"), "submission": "T"}},
    "claude-code": [{"type": _C("user", "assistant", "summary", "system"), "sessionId": _C("s1", "s2"),
                     "uuid": "T", "isSidechain": "B", "isMeta": "B",
                     "message": {"role": "T", "model": "T", "content": _E("T", [_PART])}}],
    "codex-cli": [{"timestamp": "T", "type": _C("session_meta", "response_item", "event_msg", "turn_context"),
                   "payload": {"id": "T", "type": _C("message", "reasoning", "function_call", "function_call_output",
                                                     "custom_tool_call", "custom_tool_call_output"),
                               "role": _C("user", "assistant", "developer"),
                               "content": [{"type": _C("input_text", "output_text"), "text": "T"}],
                               "summary": [{"type": _C("summary_text"), "text": "T"}], "name": "T",
                               "arguments": _E(_Json({"command": ["T"]}), "T"), "call_id": _C("c1", "c2"),
                               "output": _E("T", _Json({"output": "T", "metadata": {"exit_code": "I"}})),
                               "model": "T"}}],
    "atif": {"schema_version": _C("ATIF-v1.4"), "session_id": "T", "agent": {"name": "T", "version": "T"},
             "steps": [{"step_id": "I", "source": _C("system", "user", "agent", "tool"), "message": "T",
                        "reasoning_content": "T",
                        "tool_calls": [{"tool_call_id": _C("c1", "c2"), "function_name": "T", "arguments": "J"}],
                        "observation": {"results": [{"source_call_id": _C("c1", "c2", None), "content": "T",
                                                     "is_error": "B", "subagent_trajectory_ref": [{"session_id": "T"}]}]}}]},
    "openai-chat": [{"task_id": "I", "trial": "I", "reward": "F", "success": "B",
                     "info": {"task": {"instruction": "T"}}, "traj": [_MSG]}],
    "native": [{"run_id": "T", "task": {"id": "T", "instruction": "T", "apps": ["T"], "metadata": "J"},
                "outcome": {"success": "B", "steps": "I", "score": "F"},
                "turns": [{"turn": "I", "type": _C("message", "function_call", "episode_over", "answer"),
                           "content": "T", "result": "T", "is_error": "J"}]}],
}
_ATTR = {"key": _C("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.input.messages",
                   "gen_ai.output.messages", "openinference.span.kind", "llm.input_messages.0.message.content",
                   "llm.output_messages.0.message.tool_calls.0.tool_call.id", "input.value", "output.value", "session.id",
                   "gen_ai.conversation.id", "x-api-key"),
         "value": _E({"stringValue": _E("T", _C("chat", "execute_tool", "LLM", "TOOL", "c1"), _Json([_MSG]))},
                     {"intValue": "T"}, {"arrayValue": {"values": [{"stringValue": "T"}]}}, {"kvlistValue": {"values": [{"key": "T", "value": {"boolValue": "B"}}]}})}
TEMPLATES["otlp"] = {"resourceSpans": [{"resource": {"attributes": [_ATTR]}, "scopeSpans": [{"scope": {"name": "T"}, "spans": [{
    "traceId": _C("t1", "t2"), "spanId": "T", "parentSpanId": _C("", "p"), "name": _C("chat x", "execute_tool y", "handoff z", "T"),
    "startTimeUnixNano": _C("1767261600000000000", "7", "T"), "attributes": [_ATTR],
    "events": [{"name": _C("exception", "gen_ai.choice", "gen_ai.tool.message", "gen_ai.evaluation.result"), "attributes": [_ATTR]}],
    "status": {"code": _C(0, 1, 2, "STATUS_CODE_ERROR"), "message": "T"}}]}]}]}
_OBS = {"id": "T", "type": _C("GENERATION", "TOOL", "SPAN", "GUARDRAIL", "EVENT"), "name": _C("handoff x", "tool", "T"),
        "startTime": _C("2026-01-01T00:00:00Z", "T"), "input": _E([_MSG], "T", "J"), "output": _E(_MSG, "T", "J"),
        "level": _C("ERROR", "DEFAULT"), "statusMessage": "T", "metadata": {"tool_call_id": _C("c1", "c2")}, "parentObservationId": _C(None, "p")}
TEMPLATES["langfuse"] = [{"id": _C("a", "b"), "timestamp": "T", "sessionId": _C(None, "s1"), "input": "J", "observations": [_OBS],
                          "scores": [{"name": "T", "value": "J", "stringValue": "T", "dataType": _C("BOOLEAN", "NUMERIC", "CATEGORICAL"),
                                      "observationId": _C(None, "o")}]}]
TEMPLATES["agents-sdk"] = {"data": [{"object": _C("trace", "trace.span"), "id": _C("t1", "t2", "s"), "trace_id": _C("t1", "t2"),
                                     "group_id": _C(None, "g"), "workflow_name": "T", "started_at": "T",
                                     "span_data": {"type": _C("generation", "function", "handoff", "guardrail", "agent", "custom"),
                                                   "input": _E([_MSG], "T"), "output": _E([_MSG], "T"), "name": "T", "to_agent": "T",
                                                   "triggered": "B"}, "error": {"message": "T", "data": "J"}}]}
TEMPLATES["inspect-ai"] = {"version": _C(2), "eval": {"task": "T", "eval_id": "T"},
                           "samples": [{"id": _E("T", "I"), "epoch": "I", "input": _E("T", [_MSG]), "messages": [dict(_MSG, error={"type": "T", "message": "T"})],
                                        "scores": {"T": {"value": _E("T", "F", "B", "J", _C("C", "I", "P", "N"))}},
                                        "attachments": {"T": "T"}, "limit": {"type": "T", "limit": "I"}, "error": {"message": "T"},
                                        "error_retries": [{"message": "T"}]}]}
_OH = {"id": "I", "source": _C("user", "agent", "environment"), "action": _C("message", "run", "finish", "system", "edit", "condensation"),
       "args": {"content": "T", "command": "T", "thought": "T", "final_thought": "T"}, "observation": _C("run", "error", "agent_state_changed", "edit"),
       "cause": "I", "content": "T", "extras": {"metadata": {"exit_code": "I"}, "agent_state": _C("error", "running", "stopped")},
       "success": "B", "tool_call_metadata": {"function_name": "T", "tool_call_id": _C("c1", "c2")},
       "kind": _C("ActionEvent", "ObservationEvent", "MessageEvent", "AgentErrorEvent"), "tool_call_id": _C("c1", "c2"),
       "tool_name": "T", "observation_v1": "J"}
TEMPLATES["openhands"] = [{"instance_id": "T", "instruction": "T", "history": [_OH], "error": "T", "test_result": {"git_patch": "T"},
                           "report": {"resolved": "B"}}]

_REACT_LINES = ["BEGIN TRIAL {i}", "------------- BEGIN CORRECT AGENTS -------------",
                "------------- BEGIN INCORRECT AGENTS -----------", "------------- BEGIN HALTED AGENTS --------------",
                "#######", "Trial summary: Correct: 1", "", "Question: {t}", "Question: {t} You have attempted to answer",
                "Reflections:", "- {t}", "Thought {i}: {t}", "Action {i}: Search[{t}]", "Action {i}: Finish[{t}]",
                "Action {i}: {t}", "Observation {i}: {t}", "Observation {i}: Answer is CORRECT", "Correct answer: {t}",
                "{t}"]


def _random_doc(fmt: str, rng):
    if fmt == "react-notebook":
        return [rng.choice(_NOTEBOOK_LINES).format(i=rng.randint(0, 4), n=rng.randint(0, 3), t=_rand_text(rng))
                for _ in range(rng.randint(0, 40))]
    if fmt == "react-text":
        return [rng.choice(_REACT_LINES).format(i=rng.randint(0, 3), t=_rand_text(rng))
                for _ in range(rng.randint(0, 30))]
    if rng.random() < 0.05:
        return _rand_json(rng)
    return _make(TEMPLATES[fmt], rng)


def _check(items: list, path: Path) -> None:
    for item in items:
        assert isinstance(item, (Run, RunError)), item
        if isinstance(item, RunError):
            assert str(item)
            continue
        assert isinstance(item.run_id, str) and item.run_id
        assert item.outcome is None or isinstance(item.outcome, Outcome)
        assert isinstance(item.task.instruction, str)
        check_numbering(item.turns, str(path))
        for t in item.turns:
            json.dumps(t.to_record(), ensure_ascii=False, default=str)  # the writer must be able to serialise it
        _REDACTOR.run(item)


def _write(root: Path, name: str, data: bytes) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # a fresh file: rewriting one in place is slow on some filesystems
    path.write_bytes(data)
    return path


def _exercise(fmt: str, root: Path, data: bytes) -> None:
    module, name, _ = _FILES[fmt]
    path = _write(root, name, data)
    _check(list(module.read(path)), path)
    if zlib.crc32(data) % 4:
        return  # detection and the whole loader on one input in four: they re-read the file
    try:
        load.detect(path)
    except RunError:
        pass
    report = load.LoadReport()
    for run in load.iter_runs([path], fmt, report, outcomes={}):
        assert run.outcome is not None
    assert all("\n" not in e for e in report.errors)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("prop")


@pytest.mark.parametrize("fmt", list(_FILES))
def test_generated_documents(fmt, scratch):
    """Shrinkable hypothesis strategies built from the format's field names."""
    @settings(max_examples=STRUCTURED, **SETTINGS)
    @given(doc=_doc_strategy(fmt))
    def run(doc):
        _exercise(fmt, scratch / fmt, _encode(fmt, doc))

    run()


@pytest.mark.parametrize("fmt", list(_FILES))
def test_fuzzed_documents(fmt, scratch):
    """Many plausible-but-damaged documents per hypothesis-chosen seed."""
    @settings(max_examples=SEEDS, **SETTINGS)
    @given(seed=st.integers(0, 2**32 - 1))
    def run(seed):
        rng = random.Random(seed)  # st.randoms() would record every call as a draw: far too slow here
        for _ in range(DOCS_PER_SEED):
            _exercise(fmt, scratch / ("f-" + fmt), _encode(fmt, _random_doc(fmt, rng)))

    run()


@pytest.mark.parametrize("fmt", [f for f, (_, _, fixture) in _FILES.items() if fixture is not None])
def test_mutated_fixtures(fmt, scratch):
    """Byte-level damage to a valid file: truncation, stray and invalid bytes, cut or doubled spans."""
    original = _FILES[fmt][2].read_bytes()

    @settings(max_examples=MUTATIONS, **SETTINGS)
    @given(data=_mutated(original))
    def run(data):
        _exercise(fmt, scratch / ("m-" + fmt), data)

    run()


@settings(max_examples=150, **SETTINGS)
@given(lines=st.lists((
    _obj(turn=_maybe(st.integers(-1, 6)), type=_maybe(st.sampled_from(["message", "function_call", "episode_over", "answer"])),
         content=_maybe(_text), result=_maybe(_text), is_error=JSON) | JSON), max_size=6),
       junk=st.lists(st.sampled_from(["", "{", "not json", "[]", "\u2028", '{"turn": 0}', "\x00"]), max_size=2))
def test_parse_turns_only_raises_run_error(lines, junk):
    text = "\n".join([json.dumps(x, ensure_ascii=False) for x in lines] + junk)
    try:
        turns = parse_turns(text, "solver.full.jsonl")
    except RunError as exc:
        assert str(exc).startswith("solver.full.jsonl")
        return
    check_numbering(turns, "x")


@settings(max_examples=100, **SETTINGS)
@given(seed=st.integers(0, 2**32 - 1))
def test_parse_turns_fuzzed(seed):
    rng = random.Random(seed)
    template = TEMPLATES["native"][0]["turns"][0]
    for _ in range(20):
        lines = [json.dumps(_make(template, rng, 1), ensure_ascii=False) for _ in range(rng.randint(0, 6))]
        if rng.random() < 0.3:
            lines.insert(rng.randint(0, len(lines)), rng.choice(["{", "not json", "[]", "\u2028", '{"turn": 0}', "\x00"]))
        try:
            check_numbering(parse_turns("\n".join(lines), "log"), "log")
        except RunError:
            pass


@pytest.mark.parametrize("line", ['{"turn": 1' + "1" * 5000 + "}", "[" * 100_000])
def test_parse_turns_known_gaps(line):
    with pytest.raises(RunError):
        parse_turns(line, "x")


def test_native_read_jsonl_handles_json_edge_cases(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text('{"run_id": "r", "turns": 1' + "1" * 5000 + "}\n" + "[" * 100_000 + "\n")
    items = list(native.read_jsonl(path))
    assert len(items) == 2 and all(isinstance(i, RunError) for i in items)


def test_no_nan_scores_from_openai_chat(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(json.dumps({"task_id": 1, "reward": math.nan, "traj": [{"role": "user", "content": "x"}]}) + "\n")
    (item,) = list(openai_chat.read(path))
    assert isinstance(item, RunError)
