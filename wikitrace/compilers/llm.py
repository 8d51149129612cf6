"""The LLM compiler: one chat call per run, checked, repaired once, or replaced.

For each run it renders an outcome-specific system prompt and a user prompt
(task, numbered turn log, execution outcome) from ``corpus_templates/prompts``,
asks an OpenAI-compatible endpoint for the JSON of ``schema.json_schema``, and
validates the answer with ``schema.compilation_from_json``.

What can go wrong, and what happens:

- 429, 5xx, timeouts, dropped connections: retried with exponential backoff and
  jitter (``Retry-After`` honoured), up to ``max_attempts`` requests;
- the server refuses the structured-output mode: ``json_schema`` falls back to
  ``json_object`` (with the schema, as llama.cpp accepts it), then to plain text
  whose JSON is dug out of the reply. The mode that worked is kept for the rest
  of the build so no later call pays for the refused attempt again;
- JSON that does not parse or does not fit the schema: exactly one repair call
  that quotes the problems back to the model;
- anything still wrong: the run is compiled offline instead, marked
  ``compiler: offline-fallback`` with a one-line ``fallback_reason``.

``compile`` never raises for a model or network fault. Every result goes through
``grounding.ground`` so turn refs and quotes are held to the run.

``openai`` is imported inside this module only, at the first request (a build
answered from the cache never imports it).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import random
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..llm_config import LLMConfig
from ..runs.model import Run, Turn
from ..templates import environment, render
from .base import CompileStats
from ..redact import default_redactor
from .cache import CachedAnswer, ResponseCache, cache_key
from .grounding import ground
from .offline import compile_offline
from .schema import MAX_INSIGHTS, Compilation, SchemaError, compilation_from_json, json_schema

RESPONSE_MODES = ("json_schema", "json_object", "text")  # most to least structured

PROMPT_TEMPLATES = (
    "prompts/compile_success.system.j2",
    "prompts/compile_failure.system.j2",
    "prompts/compile.user.j2",
    "prompts/repair.user.j2",
)

# Words in an error body that say the server disliked the response_format we sent.
_FORMAT_COMPLAINT = re.compile(r"response_format|json_schema|json_object|structured output|grammar", re.I)
_RETRY_STATUS = {408, 409, 429}
_FATAL_STATUS = {401: "check OPENAI_API_KEY", 403: "check OPENAI_API_KEY and its permissions",
                 404: "check --base-url / OPENAI_BASE_URL and the model name"}


# --- errors carried inside the compiler (never out of compile()) -----------------------


class _Failure(Exception):
    """A call that could not produce an answer; ``reason`` is the fallback reason."""

    def __init__(self, reason: str, *, fatal: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.fatal = fatal  # the same error will hit every run (bad key, wrong URL)


class _FormatRejected(Exception):
    def __init__(self, reason: str, explicit: bool):
        super().__init__(reason)
        self.reason = reason
        self.explicit = explicit  # the error text names response_format / json_schema


# --- JSON out of free text ------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript)?[ \t]*\r?\n?(.*?)```", re.S)


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` outside strings."""
    out: list[str] = []
    in_str = escaped = False
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if in_str:
            out.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
            out.append(ch)
        elif ch == ",":
            j = i + 1
            while j < n and text[j] in " \t\r\n":
                j += 1
            if j < n and text[j] in "}]":
                i += 1
                continue
            out.append(ch)
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _loads(text: str) -> Any:
    # strict=False lets raw control characters (newlines, tabs) sit inside strings,
    # which small local models often emit.
    decoder = json.JSONDecoder(strict=False)
    try:
        return decoder.decode(text)
    except json.JSONDecodeError:
        return decoder.decode(_drop_trailing_commas(text))


def extract_json(text: str) -> Any:
    """The JSON value in a model's reply: the whole text, a fenced block, or the
    outermost ``{...}``. Raises ``ValueError`` naming why nothing parsed."""
    stripped = (text or "").strip().lstrip("\ufeff")
    if not stripped:
        raise ValueError("the answer is empty")
    candidates = [stripped]
    candidates += [m.group(1).strip() for m in reversed(list(_FENCE.finditer(stripped)))]
    start, end = stripped.find("{"), stripped.rfind("}")
    if start != -1 and end > start:
        candidates.append(stripped[start:end + 1])
    err: json.JSONDecodeError | None = None
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return _loads(candidate)
        except json.JSONDecodeError as exc:
            err = exc  # the last candidate (the outermost braces) says the most
    # A last try: the first object that decodes cleanly from some "{", ignoring what follows.
    decoder = json.JSONDecoder(strict=False)
    for match in re.finditer(r"\{", stripped):
        try:
            value, _ = decoder.raw_decode(stripped, match.start())
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict) and value:
            return value
    if start == -1:
        raise ValueError("the answer contains no JSON object")
    raise ValueError(f"the answer is not valid JSON ({err.msg} at line {err.lineno} column {err.colno})"
                     if err else "the answer is not valid JSON")


# --- prompt material ------------------------------------------------------------------


def clip(text: str, limit: int) -> str:
    """Shorten ``text`` in the middle, deterministically, marking the cut."""
    if limit <= 0 or len(text) <= limit:
        return text
    head = (limit * 2) // 3
    tail = limit - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters clipped ...]\n{text[-tail:]}"


def _args_text(arguments: Any) -> str:
    if arguments is None:
        return ""
    if isinstance(arguments, str):
        return arguments
    return json.dumps(arguments, ensure_ascii=False, sort_keys=True)


def _ended_by(run: Run) -> str:
    ended = run.outcome.ended_by
    if not ended:
        for t in reversed(run.turns):
            if t.type == "episode_over" and t.extra.get("ended_by"):
                ended = str(t.extra["ended_by"])
                break
    if not ended:
        return "not recorded"
    if ended.startswith("harness"):
        return f"{ended} (the harness stopped the episode; this was not the agent's decision)"
    return ended


def _task_kind(run: Run) -> str:
    if run.task.task_type:
        return run.task.task_type.replace("_", " ")
    if run.task.apps:
        return "multi-app (" + ", ".join(run.task.apps) + ")"
    return "tool-using agent"


@dataclass
class _Prompt:
    system_ctx: dict[str, Any]
    user: str


class _LazyMessages(dict):
    """A run's chat messages per response mode, rendered when first asked for."""

    def __init__(self, compiler: "LLMCompiler", prompt: _Prompt):
        super().__init__()
        self.compiler, self.prompt = compiler, prompt

    def __missing__(self, mode: str) -> list[dict[str, str]]:
        self[mode] = messages = self.compiler.messages(self.prompt, mode)
        return messages


# --- the compiler ---------------------------------------------------------------------


class _LoopState:
    """What must belong to one event loop: the HTTP client and the locks."""

    def __init__(self, client: Any, concurrency: int):
        self.loop = asyncio.get_running_loop()
        self.client = client
        self.slots = asyncio.Semaphore(concurrency)
        self.probe = asyncio.Lock()


class LLMCompiler:
    """``Compiler`` backed by an OpenAI-compatible chat completions endpoint.

    One instance serves a whole build; ``compile`` may run concurrently for many
    runs (one shared client, at most ``concurrency`` requests in flight).
    """

    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        templates: str | Path | None = None,
        concurrency: int = 8,
        timeout: float = 120.0,
        max_attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_retry_after: float = 60.0,
        seed: int | None = None,
        response_mode: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        clip_limit: int = 2000,
        trajectory_budget: int = 60_000,
        solver_prompt_limit: int = 8_000,
    ) -> None:
        if response_mode is not None and response_mode not in RESPONSE_MODES:
            raise ValueError(f"response_mode must be one of {', '.join(RESPONSE_MODES)}, got {response_mode!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.config = config
        self.model = config.model
        self.templates = str(templates) if templates else None
        self.concurrency = max(1, int(concurrency))
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.clip_limit = clip_limit
        self.trajectory_budget = trajectory_budget
        self.solver_prompt_limit = solver_prompt_limit
        self.cache = ResponseCache(cache_dir) if use_cache else None
        # Answers are redacted before they are checked, cached or written: a model may
        # write a key back. The build sets its own (user patterns), or None with --no-redact.
        self.redactor = default_redactor()
        self._rng = random.Random(seed)
        self._stats = CompileStats()
        # Capability flag: the most structured response mode the server accepts.
        self.response_mode = response_mode or RESPONSE_MODES[0]
        self._mode_settled = response_mode is not None
        self._fatal: str | None = None
        self._state: _LoopState | None = None
        self._stale_clients: list[Any] = []
        self._openai: Any = None  # the module, once the first request imports it

        # Fail now, not once per run, if a user template is missing or broken.
        env = environment(self.templates)
        for name in PROMPT_TEMPLATES:
            env.get_template(name)

    # --- protocol ---------------------------------------------------------------------

    def stats(self) -> CompileStats:
        return self._stats

    async def compile(self, run: Run) -> Compilation:
        self._stats.runs += 1
        if self._fatal:
            return self._fallback(run, self._fatal)
        try:
            return await self._compile(run)
        except _Failure as exc:
            if exc.fatal:
                self._fatal = exc.reason
            return self._fallback(run, exc.reason)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug or an odd reply must not sink the build
            import jinja2

            if isinstance(exc, jinja2.TemplateError):
                raise
            return self._fallback(run, f"unexpected {type(exc).__name__}: {_one_line(str(exc))}")

    async def aclose(self) -> None:
        """Close the HTTP client (optional; the build may call it at the end)."""
        state, self._state = self._state, None
        if state is not None and state.loop is asyncio.get_running_loop():
            await state.client.close()

    # --- prompts ----------------------------------------------------------------------

    def prompt(self, run: Run) -> _Prompt:
        """Everything in the prompt that does not depend on the response mode."""
        turns = [t for t in run.turns]
        solver_prompt = None
        first = turns[0] if turns else None
        if first is not None and first.type == "message" and first.role in ("system", "developer") and first.content:
            solver_prompt = clip(first.content.strip(), self.solver_prompt_limit)

        limit = self.clip_limit
        rendered = self._turn_views(turns, limit, solver_prompt is not None)
        while limit > 200 and _size(rendered) > self.trajectory_budget:
            limit //= 2
            rendered = self._turn_views(turns, limit, solver_prompt is not None)
        clipped = any(v.get("clipped") for v in rendered)

        task = run.task
        task_view = {
            "instruction": clip(task.instruction.strip(), 4000),
            "task_type": task.task_type,
            "apps": task.apps,
            "initial_observation": clip(task.initial_observation.strip(), limit * 2)
            if task.initial_observation else None,
        }
        user = render("prompts/compile.user.j2", self.templates, task=task_view, turns=rendered,
                      clip_limit=limit if clipped else None, outcome=run.outcome, ended_by=_ended_by(run))
        system_ctx = {
            "task_kind": _task_kind(run),
            "solver_prompt": solver_prompt,
            "max_insights": MAX_INSIGHTS,
            "outcome": run.outcome.label,
            "evidence_key": _evidence_key(run.outcome.label),
        }
        return _Prompt(system_ctx=system_ctx, user=user)

    def render_messages(self, run: Run, mode: str | None = None) -> list[dict[str, str]]:
        """The chat messages this compiler would send for ``run`` (for dry runs and debugging)."""
        return self.messages(self.prompt(run), mode or self.response_mode)

    def messages(self, prompt: _Prompt, mode: str) -> list[dict[str, str]]:
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        system = render(name, self.templates, mode=mode, **prompt.system_ctx)
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt.user}]

    @staticmethod
    def _turn_views(turns: list[Turn], limit: int, has_solver_prompt: bool) -> list[dict[str, Any]]:
        views = []
        for i, t in enumerate(turns):
            flags = []

            def c(text: str | None) -> str:
                text = (text or "").strip()
                out = clip(text, limit)
                if out is not text:
                    flags.append(True)
                return out

            view: dict[str, Any] = {"number": t.turn, "role": t.role or "message"}
            if i == 0 and has_solver_prompt:
                view["kind"] = "solver_prompt"
            elif t.type == "function_call":
                view.update(kind="action", name=t.name or "unknown", arguments=c(_args_text(t.arguments)),
                            reasoning=c(t.reasoning), observation=c(t.result), is_error=bool(t.is_error))
            elif t.type == "episode_over":
                view.update(kind="episode_over", ended_by=t.extra.get("ended_by"), text=c(t.content))
            elif t.type == "answer":
                view.update(kind="answer", text=c(t.content or t.result))
            else:
                role = t.role or "message"
                view.update(kind="message", role="tool result" if role == "tool" else role, text=c(t.content))
            view["clipped"] = bool(flags)
            views.append(view)
        return views

    # --- one run ----------------------------------------------------------------------

    async def _compile(self, run: Run) -> Compilation:
        outcome = run.outcome.label
        prompt = self.prompt(run)
        text, usage, mode, messages = await self._complete(prompt, outcome)
        instructions = self._instructions(prompt, mode)
        try:
            comp = _parse(text, outcome, instructions)
        except _BadAnswer as bad:
            self._stats.repairs += 1
            repair = render("prompts/repair.user.j2", self.templates, problems=bad.problems,
                            evidence_key=_evidence_key(outcome), max_insights=MAX_INSIGHTS)
            repair_messages = messages + [
                {"role": "assistant", "content": clip(text, 12_000)},
                {"role": "user", "content": repair},
            ]
            try:
                text2, usage2 = await self._request(repair_messages, outcome, mode)
            except _FormatRejected as rej:
                raise _Failure(rej.reason) from None
            usage = _add_usage(usage, usage2)
            try:
                comp = _parse(text2, outcome, instructions)
            except _BadAnswer as bad2:
                raise _Failure(bad2.reason) from None
        comp.title = _titled(comp.title, outcome)
        comp.compiler = "llm"
        comp.model = self.model
        comp.usage = usage
        return ground(comp, run)

    def _instructions(self, prompt: _Prompt, mode: str) -> str:
        """The compiler's own instructions (without the agent's), to spot answers that echo them."""
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        ctx = dict(prompt.system_ctx, solver_prompt=None)
        memo_key = (name, mode, repr(sorted(ctx.items())))
        memo = self.__dict__.setdefault("_instructions_memo", {})
        if memo_key not in memo:  # the same few variants recur on every run of a build
            memo[memo_key] = _norm(render(name, self.templates, mode=mode, **ctx))
        return memo[memo_key]

    def _fallback(self, run: Run, reason: str) -> Compilation:
        self._stats.fallbacks += 1
        comp = compile_offline(run)  # already grounded
        comp.compiler = "offline-fallback"
        comp.fallback_reason = _one_line(reason)
        return comp

    async def _complete(self, prompt: _Prompt, outcome: str):
        """First answer for a run: from the cache, or the best mode the server takes.

        Returns ``(text, usage, mode, messages)``.
        """
        start = RESPONSE_MODES.index(self.response_mode)
        modes = RESPONSE_MODES[start:]
        by_mode = _LazyMessages(self, prompt)
        if self.cache is not None:
            for m in modes:
                if m != self.response_mode and not self.cache.holds_mode(m):
                    continue
                hit = self.cache.get(self._key(by_mode[m], m))
                if hit is not None:
                    self._stats.cache_hits += 1
                    return self.redacted(hit.text), dict(hit.usage), m, by_mode[m]
        state = self._loop_state()
        if self._mode_settled:
            return await self._try_modes(by_mode, outcome)
        async with state.probe:  # the first request finds the mode; the rest wait for it
            if not self._mode_settled:
                try:
                    return await self._try_modes(by_mode, outcome)
                finally:
                    self._mode_settled = True
        # Settled while this one waited: go without the lock, or every run queued
        # behind the probe would be sent one at a time.
        return await self._try_modes(by_mode, outcome)

    async def _try_modes(self, by_mode: _LazyMessages, outcome: str):
        last: _FormatRejected | None = None
        start = RESPONSE_MODES.index(self.response_mode)
        for mode in RESPONSE_MODES[start:]:
            messages = by_mode[mode]
            try:
                text, usage = await self._request(messages, outcome, mode)
            except _FormatRejected as rej:
                last = rej
                if rej.explicit:
                    self._degrade_to(_next_mode(mode))
                continue
            self._degrade_to(mode)  # it worked here after a more structured mode did not
            return text, usage, mode, messages
        raise _Failure(last.reason if last else "no response mode left")

    def _degrade_to(self, mode: str) -> None:
        if RESPONSE_MODES.index(mode) > RESPONSE_MODES.index(self.response_mode):
            self.response_mode = mode

    def _key(self, messages: list[dict[str, str]], mode: str) -> str:
        return cache_key(self.model, messages, mode,
                         {"temperature": self.temperature, "max_tokens": self.max_tokens})

    # --- one HTTP request, with retries -------------------------------------------------

    def _loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            if self._state is not None:
                # A client tied to a finished loop cannot be closed from this one, and
                # letting it be collected would try exactly that; keep it until exit.
                self._stale_clients.append(self._state.client)
            import openai  # on the first request, not before: a build answered from the cache never pays for it

            self._openai = openai
            client = openai.AsyncOpenAI(
                api_key=self.config.api_key,
                base_url=self.config.base_url,
                timeout=self.timeout,
                max_retries=0,  # our own loop below decides what to retry
                http_client=_aiohttp_client(openai),
            )
            self._state = _LoopState(client, self.concurrency)
        return self._state

    def request_body(self, messages: list[dict[str, str]], outcome: str, mode: str) -> dict[str, Any]:
        """The chat request for these messages; the Batch API path sends the same body."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if mode == "json_schema":
            body["response_format"] = {"type": "json_schema", "json_schema": {
                "name": f"trajectory_compilation_{outcome}", "schema": json_schema(outcome), "strict": False}}
        elif mode == "json_object":
            body["response_format"] = {"type": "json_object", "schema": json_schema(outcome)}
        if self.temperature is not None:
            body["temperature"] = self.temperature
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def cache_key_for(self, messages: list[dict[str, str]], mode: str) -> str:
        return self._key(messages, mode)

    async def _request(self, messages: list[dict[str, str]], outcome: str, mode: str) -> tuple[str, dict[str, int]]:
        """Send one chat request (retrying transient faults); cache and return its text."""
        key = self._key(messages, mode)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self._stats.cache_hits += 1
                return self.redacted(hit.text), dict(hit.usage)
        state = self._loop_state()
        openai = self._openai
        kwargs = self.request_body(messages, outcome, mode)

        what = "no attempt"
        for attempt in range(1, self.max_attempts + 1):
            retry_after: float | None = None
            self._stats.calls += 1
            try:
                raw_class = _raw_response_class()
                async with state.slots:
                    # The client's generic post: the same request, retries off, but
                    # without re-validating our own params or building pydantic models
                    # of the reply, which cost more CPU than the rest of a run.
                    if raw_class is not None:
                        raw = await state.client.post("/chat/completions", body=kwargs, cast_to=raw_class)
                    else:  # a client whose HTTP layer we do not recognise: the typed way
                        response = (await state.client.chat.completions.create(**kwargs)).model_dump()
                # The slot is free: let the request waiting for it go out before this
                # reply is decoded and checked. Replies come back in waves; handling a
                # whole wave first held every next request back by the wave's CPU time.
                await asyncio.sleep(0)
                if raw_class is not None:
                    response = _json_or_error(raw)
            except openai.APITimeoutError as exc:
                what = "connection error" if _refused(exc) else "timeout"
            except openai.APIConnectionError:
                what = "connection error"
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = _error_text(exc)
                if mode != "text" and (status in (400, 422) or (status >= 500 and _FORMAT_COMPLAINT.search(detail))):
                    raise _FormatRejected(f"HTTP {status}: {_one_line(detail)[:160]}",
                                          explicit=bool(_FORMAT_COMPLAINT.search(detail))) from None
                if status in _RETRY_STATUS or status >= 500:
                    what = f"HTTP {status}"
                    retry_after = _retry_after(exc.response.headers)
                else:
                    hint = _FATAL_STATUS.get(status)
                    reason = f"HTTP {status}: {_one_line(detail)[:160]}" + (f" ({hint})" if hint else "")
                    raise _Failure(reason, fatal=hint is not None) from None
            except openai.APIError as exc:  # e.g. a body that is not a chat completion
                raise _Failure(f"bad response: {_one_line(str(exc))[:160]}") from None
            else:
                text, usage = _answer(response)
                text = self.redacted(text)
                self._stats.prompt_tokens += usage.get("prompt_tokens", 0)
                self._stats.completion_tokens += usage.get("completion_tokens", 0)
                if self.cache is not None:
                    self.cache.put(key, CachedAnswer(text, usage), model=self.model, mode=mode, messages=messages)
                return text, usage
            if attempt < self.max_attempts:
                self._stats.retries += 1
                await asyncio.sleep(self._delay(attempt, retry_after))
        attempts = f"{self.max_attempts} attempt{'s' if self.max_attempts != 1 else ''}"
        raise _Failure(f"{what} after {attempts}")

    def redacted(self, text: str) -> str:
        return self.redactor.text(text) if self.redactor is not None else text

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * (0.5 + 0.5 * self._rng.random())  # jitter in [base/2, base]


# --- helpers --------------------------------------------------------------------------


class _BadAnswer(Exception):
    def __init__(self, problems: list[str], reason: str):
        super().__init__(reason)
        self.problems = problems
        self.reason = reason


def _parse(text: str, outcome: str, instructions: str = "") -> Compilation:
    try:
        data = extract_json(text)
    except ValueError as exc:
        raise _BadAnswer([str(exc)], f"invalid JSON: {exc}") from None
    try:
        comp = compilation_from_json(data, outcome)
        problems = _content_problems(comp, instructions)
        if problems:
            raise SchemaError(problems)
        return comp
    except SchemaError as exc:
        first = exc.problems[0] if exc.problems else "does not match the schema"
        more = len(exc.problems) - 1
        reason = f"schema: {first}" + (f" (and {more} more problem{'s' if more != 1 else ''})" if more > 0 else "")
        raise _BadAnswer(list(exc.problems), reason) from None


_ECHO_MIN = 16  # shorter texts may match the instructions by chance


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split()).strip(" .,:;")


def _content_problems(comp: Compilation, instructions: str) -> list[str]:
    """What the schema cannot see: fields with no words, and fields that copy the
    example text of the answer format instead of describing this run."""
    key = _evidence_key(comp.outcome)
    fields = [("$.title", comp.title), ("$.description", comp.description)]
    for i, item in enumerate(comp.evidence):
        fields += [(f"$.{key}[{i}].decision", item.decision), (f"$.{key}[{i}].support", item.support)]
    for i, ins in enumerate(comp.insights):
        fields += [(f"$.candidate_insights[{i}].{name}", getattr(ins, name))
                   for name in ("title", "guideline", "applicability")]
    problems = []
    for where, text in fields:
        if not re.search(r"[^\W\d_]", text):
            problems.append(f"{where} has no words in it ({text!r})")
        elif instructions and len(_norm(text)) >= _ECHO_MIN and _norm(text) in instructions:
            problems.append(f"{where} copies the example text {text!r} from the answer format; "
                            f"write what this run shows instead")
    return problems


def _aiohttp_client(openai: Any) -> Any:
    """The openai client's own aiohttp transport (the ``openai[aiohttp]`` extra), or
    None for its default httpx one. Same requests and error types; measured at about
    half the CPU per request, which is most of the pipeline's own cost at high
    concurrency (benchmarks/scale.py)."""
    make = getattr(openai, "DefaultAioHttpClient", None)
    if make is None:
        return None
    try:
        return make()  # its defaults keep up to 100 connections alive: enough for any --concurrency
    except (RuntimeError, ImportError, TypeError):  # aiohttp not installed, or an older client
        return None


def _refused(exc: BaseException) -> bool:
    """A 'timeout' whose cause is a refused or reset connection (the aiohttp
    transport reports a failed connect as a connect timeout)."""
    seen = 0
    cause = exc.__cause__ or exc.__context__
    while cause is not None and seen < 10:
        if isinstance(cause, ConnectionError):
            return True
        cause, seen = cause.__cause__ or cause.__context__, seen + 1
    return False


def _raw_response_class() -> Any:
    """The HTTP response class the openai client returns as-is for ``cast_to``
    (``httpx.Response``, or ``httpx2.Response`` in newer releases), if known."""
    import openai._base_client as base

    for name in ("httpx2", "httpx"):
        module = getattr(base, name, None)
        if module is not None and hasattr(module, "Response"):
            return module.Response
    return None


def _json_or_error(raw: Any) -> dict[str, Any]:
    """A chat completion body as a dict; a body that is not one is a bad response."""
    import openai

    try:
        data = json.loads(raw.content)
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise openai.APIResponseValidationError(response=raw, body=raw.text[:200],
                                                message="the reply is not a JSON chat completion")
    return data


def _answer(response: dict[str, Any]) -> tuple[str, dict[str, int]]:
    choices = response.get("choices") or []
    text = ""
    if choices and isinstance(choices[0], dict):
        message = choices[0].get("message") or {}
        text = (message.get("content") if isinstance(message, dict) else None) or ""
        if not isinstance(text, str):
            text = ""
    usage: dict[str, int] = {}
    raw_usage = response.get("usage") if isinstance(response.get("usage"), dict) else {}
    for field_name in ("prompt_tokens", "completion_tokens"):
        value = raw_usage.get(field_name)
        if isinstance(value, int) and not isinstance(value, bool):
            usage[field_name] = value
    return text, usage


def _add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}


def _error_text(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            msg = inner.get("message") or inner.get("msg") or json.dumps(inner)
        else:
            msg = str(inner)
    elif body is not None:
        msg = str(body)
    else:
        msg = getattr(exc, "message", "") or str(exc)
    return str(msg)


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return float(raw_ms) / 1000.0
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return float(raw)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - time.time())


def _next_mode(mode: str) -> str:
    i = RESPONSE_MODES.index(mode)
    return RESPONSE_MODES[min(i + 1, len(RESPONSE_MODES) - 1)]


def _evidence_key(outcome: str) -> str:
    return "key_decisions" if outcome == "success" else "failure_causes"


def _titled(title: str, outcome: str) -> str:
    bare = re.sub(r"^\s*\[(success|failure|succeeded|failed)\]\s*", "", title, flags=re.I)
    return f"[{outcome}] {bare}"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _size(views: list[dict[str, Any]]) -> int:
    return sum(len(str(v.get(k) or "")) for v in views
               for k in ("text", "arguments", "reasoning", "observation"))
