"""The LLM compiler: one chat call per run, checked, repaired once, or replaced.

For each run it renders an outcome-specific system prompt and a user prompt
(task, numbered turn log, execution outcome) from ``corpus_templates/prompts``,
asks an OpenAI-compatible endpoint for the JSON of ``schema.json_schema``
(every request capped at ``max_tokens``), and checks the answer with
``answer_check.check_answer``: the schema, then grounding and content rules.

What can go wrong, and what happens:

- 429, 5xx, timeouts, dropped connections: retried with exponential backoff and
  jitter (``Retry-After`` honoured), up to ``max_attempts`` requests;
- 401/403/404, or no connection at all before the endpoint ever answered: the
  same fault would hit every run, so the build's first request goes alone and
  every run after it falls back without a call;
- the server refuses the structured-output mode: ``json_schema`` falls back to
  ``json_object`` (with the schema, as llama.cpp accepts it), then to plain text
  whose JSON is dug out of the reply. The mode that worked is kept for the rest
  of the build so no later call pays for the refused attempt again;
- JSON that does not parse or fit the schema, content the rules reject, or an
  answer past ``max_answer_bytes`` (read no further than that): exactly one
  repair call that quotes the problems back to the model;
- anything still wrong: the run is compiled offline instead, marked
  ``compiler: offline-fallback`` with a one-line ``fallback_reason``.

Only answers that passed the checks are cached (under the run's first request),
so a rebuild asks the model again for every run that fell back.

``compile`` never raises for a model or network fault. ``openai`` is imported
inside this module only, at the first request (a build answered from the cache
never imports it).
"""

from __future__ import annotations

import asyncio
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..llm_config import LLMConfig
from ..runs.model import Run
from ..templates import environment, render
from .answer_check import BadAnswer, check_answer, norm
from .answer_json import extract_json
from .base import CompileStats
from .cache import CachedAnswer, ResponseCache, cache_key
from .llm_transport import (
    FATAL_STATUS,
    FORMAT_COMPLAINT,
    RETRY_STATUS,
    AnswerTooLarge,
    Failure,
    FormatRejected,
    aiohttp_client,
    completion_json,
    completion_text,
    error_text,
    one_line,
    raw_response_class,
    read_capped,
    refused,
    retry_after,
)
from .offline import compile_offline
from .prompt_views import Prompt, build_prompt, clip, evidence_key
from .schema import MAX_INSIGHTS, Compilation, json_schema

__all__ = ["LLMCompiler", "RESPONSE_MODES", "PROMPT_TEMPLATES", "clip", "extract_json"]

RESPONSE_MODES = ("json_schema", "json_object", "text")  # most to least structured

PROMPT_TEMPLATES = (
    "prompts/compile_success.system.j2",
    "prompts/compile_failure.system.j2",
    "prompts/compile.user.j2",
    "prompts/repair.user.j2",
)


class _LazyMessages(dict):
    """A run's chat messages per response mode, rendered when first asked for."""

    def __init__(self, compiler: "LLMCompiler", prompt: Prompt):
        super().__init__()
        self.compiler, self.prompt = compiler, prompt

    def __missing__(self, mode: str) -> list[dict[str, str]]:
        self[mode] = messages = self.compiler.messages(self.prompt, mode)
        return messages


@dataclass
class _FirstAnswer:
    """A run's first answer and the request it answers (the cache key is that request's)."""

    text: str | None  # None: the answer passed the size cap and was not kept
    usage: dict[str, int]
    mode: str
    messages: list[dict[str, str]]
    key: str
    cached: bool
    too_large: AnswerTooLarge | None = None


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
    ``timeout``, ``max_tokens`` and ``max_answer_bytes`` default to the config's.
    ``read_cache=False`` (``--no-cache``) asks the model even when an answer is
    cached, and stores the new answer.
    """

    name = "llm"

    def __init__(
        self,
        config: LLMConfig,
        *,
        cache_dir: str | Path | None = None,
        use_cache: bool = True,
        read_cache: bool = True,
        templates: str | Path | None = None,
        concurrency: int = 8,
        timeout: float | None = None,
        max_attempts: int = 4,
        backoff: float = 1.0,
        max_backoff: float = 30.0,
        max_retry_after: float = 60.0,
        seed: int | None = None,
        response_mode: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        max_answer_bytes: int | None = None,
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
        self.timeout = config.timeout if timeout is None else timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.temperature = temperature
        self.max_tokens = config.max_tokens if max_tokens is None else max_tokens
        self.max_answer_bytes = config.max_answer_bytes if max_answer_bytes is None else max_answer_bytes
        self.clip_limit = clip_limit
        self.trajectory_budget = trajectory_budget
        self.solver_prompt_limit = solver_prompt_limit
        self.cache = ResponseCache(cache_dir) if use_cache else None
        self.read_cache = read_cache
        self._rng = random.Random(seed)
        self._stats = CompileStats()
        # Capability flag: the most structured response mode the server accepts.
        self.response_mode = response_mode or RESPONSE_MODES[0]
        self._mode_settled = response_mode is not None
        self._proven = False  # the endpoint has answered a request with 200
        self._fatal: str | None = None
        self._state: _LoopState | None = None
        self._stale_clients: list[Any] = []
        self._openai: Any = None  # the module, once the first request imports it
        self._instructions_memo: dict[tuple, str] = {}

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
        except Failure as exc:
            if exc.fatal:
                self._fatal = exc.reason
            return self._fallback(run, exc.reason)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug or an odd reply must not sink the build
            import jinja2

            if isinstance(exc, jinja2.TemplateError):
                raise
            return self._fallback(run, f"unexpected {type(exc).__name__}: {one_line(str(exc))}")

    async def aclose(self) -> None:
        """Close the HTTP client (optional; the build may call it at the end)."""
        state, self._state = self._state, None
        if state is not None and state.loop is asyncio.get_running_loop():
            await state.client.close()

    # --- prompts ----------------------------------------------------------------------

    def prompt(self, run: Run) -> Prompt:
        """Everything in the prompt that does not depend on the response mode."""
        return build_prompt(run, self.templates, clip_limit=self.clip_limit,
                            trajectory_budget=self.trajectory_budget, solver_prompt_limit=self.solver_prompt_limit)

    def render_messages(self, run: Run, mode: str | None = None) -> list[dict[str, str]]:
        """The chat messages this compiler would send for ``run`` (for dry runs and debugging)."""
        return self.messages(self.prompt(run), mode or self.response_mode)

    def messages(self, prompt: Prompt, mode: str) -> list[dict[str, str]]:
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        system = render(name, self.templates, mode=mode, **prompt.system_ctx)
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt.user}]

    # --- one run ----------------------------------------------------------------------

    async def _compile(self, run: Run) -> Compilation:
        outcome = run.outcome.label
        prompt = self.prompt(run)
        first = await self._complete(prompt, outcome)
        instructions = self._instructions(prompt, first.mode)
        text, usage = first.text, first.usage
        try:
            if first.too_large is not None:
                raise BadAnswer([str(first.too_large)], f"schema: {first.too_large}")
            comp = check_answer(text, run, instructions, final=first.cached)
            repaired = False
        except BadAnswer as bad:
            try:
                comp, text, usage = await self._repair(run, first, bad, instructions)
            except Failure:
                if first.cached and self.cache is not None:
                    self.cache.discard(first.key)  # never replay an answer that failed
                raise
            repaired = True
        if self.cache is not None and (repaired or not first.cached):
            # Stored under the run's first request, so a rebuild answers from here in one step.
            self.cache.put(first.key, CachedAnswer(text, usage), model=self.model, mode=first.mode,
                           messages=first.messages)
        comp.title = _titled(comp.title, outcome)
        comp.compiler = "llm"
        comp.model = self.model
        comp.usage = usage
        s = self._stats
        s.dropped_refs += comp.dropped_refs
        s.dropped_quotes += comp.dropped_quotes
        s.dropped_items += comp.dropped_items
        s.dropped_insights += comp.dropped_insights
        return comp

    async def _repair(self, run: Run, first: _FirstAnswer, bad: BadAnswer, instructions: str):
        """One more call that lists the problems; its answer is final."""
        self._stats.repairs += 1
        outcome = run.outcome.label
        repair = render("prompts/repair.user.j2", self.templates, problems=bad.problems,
                        evidence_key=evidence_key(outcome), max_insights=MAX_INSIGHTS)
        shown = (clip(first.text, 12_000) if first.text is not None
                 else f"[an answer of more than {self.max_answer_bytes} bytes, not repeated here]")
        messages = first.messages + [{"role": "assistant", "content": shown}, {"role": "user", "content": repair}]
        try:
            text, usage = await self._request(messages, outcome, first.mode)
        except FormatRejected as rej:
            raise Failure(rej.reason) from None
        except AnswerTooLarge as big:
            raise Failure(f"schema: {big}") from None
        try:
            comp = check_answer(text, run, instructions, final=True)
        except BadAnswer as bad2:
            raise Failure(bad2.reason) from None
        return comp, text, _add_usage(first.usage, usage)

    def _instructions(self, prompt: Prompt, mode: str) -> str:
        """The compiler's own instructions (without the agent's), to spot answers that echo them."""
        name = f"prompts/compile_{prompt.system_ctx['outcome']}.system.j2"
        ctx = dict(prompt.system_ctx, solver_prompt=None)
        memo_key = (name, mode, repr(sorted(ctx.items())))
        if memo_key not in self._instructions_memo:  # the same few variants recur on every run of a build
            self._instructions_memo[memo_key] = norm(render(name, self.templates, mode=mode, **ctx))
        return self._instructions_memo[memo_key]

    def _fallback(self, run: Run, reason: str) -> Compilation:
        self._stats.count_fallback(one_line(reason))
        comp = compile_offline(run)  # already grounded
        comp.compiler = "offline-fallback"
        comp.fallback_reason = one_line(reason)
        return comp

    async def _complete(self, prompt: Prompt, outcome: str) -> _FirstAnswer:
        """First answer for a run: from the cache, or the best mode the server takes."""
        start = RESPONSE_MODES.index(self.response_mode)
        modes = RESPONSE_MODES[start:]
        by_mode = _LazyMessages(self, prompt)
        if self.cache is not None and self.read_cache:
            for m in modes:
                if m != self.response_mode and not self.cache.holds_mode(m):
                    continue
                key = self._key(by_mode[m], m)
                hit = self.cache.get(key)
                if hit is not None:
                    self._stats.cache_hits += 1
                    return _FirstAnswer(hit.text, dict(hit.usage), m, by_mode[m], key, cached=True)
        state = self._loop_state()
        if self._mode_settled and self._proven:
            return await self._try_modes(by_mode, outcome)
        # Until the endpoint has answered once, requests go one at a time: the first
        # finds the response mode, and a fatal fault (bad key, wrong URL) costs one call.
        async with state.probe:
            if not (self._mode_settled and self._proven):
                try:
                    return await self._try_modes(by_mode, outcome)
                finally:
                    self._mode_settled = True
        # Settled while this one waited: go without the lock, or every run queued
        # behind the probe would be sent one at a time.
        return await self._try_modes(by_mode, outcome)

    async def _try_modes(self, by_mode: _LazyMessages, outcome: str) -> _FirstAnswer:
        last: FormatRejected | None = None
        start = RESPONSE_MODES.index(self.response_mode)
        for mode in RESPONSE_MODES[start:]:
            messages = by_mode[mode]
            too_large = None
            try:
                text, usage = await self._request(messages, outcome, mode)
            except FormatRejected as rej:
                last = rej
                if rej.explicit:
                    self._degrade_to(_next_mode(mode))
                continue
            except AnswerTooLarge as big:
                text, usage, too_large = None, {}, big
            self._degrade_to(mode)  # it worked here after a more structured mode did not
            return _FirstAnswer(text, usage, mode, messages, self._key(messages, mode), cached=False,
                                too_large=too_large)
        raise Failure(last.reason if last else "no response mode left")

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
                http_client=aiohttp_client(openai),
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
        """Send one chat request (retrying transient faults) and return its text.

        Raises ``AnswerTooLarge`` for a reply past the size cap, ``FormatRejected``
        when the server refuses the response mode, ``Failure`` otherwise.
        """
        state = self._loop_state()
        openai = self._openai
        kwargs = self.request_body(messages, outcome, mode)

        what = "no attempt"
        for attempt in range(1, self.max_attempts + 1):
            if self._fatal:  # another run met a fault that will hit this one too
                raise Failure(self._fatal, fatal=True)
            wait_hint: float | None = None
            self._stats.calls += 1
            try:
                raw_class = raw_response_class()
                async with state.slots:
                    # The client's generic post: the same request, retries off, but
                    # without re-validating our own params or building pydantic models
                    # of the reply, which cost more CPU than the rest of a run. Streamed,
                    # so the body is read only up to the size cap.
                    if raw_class is not None:
                        raw = await state.client.post("/chat/completions", body=kwargs, cast_to=raw_class, stream=True)
                        content = await read_capped(raw, self.max_answer_bytes)
                    else:  # a client whose HTTP layer we do not recognise: the typed way
                        response = (await state.client.chat.completions.create(**kwargs)).model_dump()
                # The slot is free: let the request waiting for it go out before this
                # reply is decoded and checked. Replies come back in waves; handling a
                # whole wave first held every next request back by the wave's CPU time.
                await asyncio.sleep(0)
                if raw_class is not None:
                    response = completion_json(content, raw)
                    del content
            except AnswerTooLarge:
                self._proven = True  # the endpoint answers; this answer is the model's fault
                raise
            except openai.APITimeoutError as exc:
                what = "connection error" if refused(exc) else "timeout"
            except openai.APIConnectionError:
                what = "connection error"
            except openai.APIStatusError as exc:
                status = exc.status_code
                detail = error_text(exc)
                if mode != "text" and (status in (400, 422) or (status >= 500 and FORMAT_COMPLAINT.search(detail))):
                    raise FormatRejected(f"HTTP {status}: {one_line(detail)[:160]}",
                                         explicit=bool(FORMAT_COMPLAINT.search(detail))) from None
                if status in RETRY_STATUS or status >= 500:
                    what = f"HTTP {status}"
                    wait_hint = retry_after(exc.response.headers)
                else:
                    hint = FATAL_STATUS.get(status)
                    reason = f"HTTP {status}: {one_line(detail)[:160]}" + (f" ({hint})" if hint else "")
                    if hint is not None:
                        self._fatal = reason
                    raise Failure(reason, fatal=hint is not None) from None
            except openai.APIError as exc:  # e.g. a body that is not a chat completion
                raise Failure(f"bad response: {one_line(str(exc))[:160]}") from None
            else:
                self._proven = True
                text, usage = completion_text(response)
                self._stats.prompt_tokens += usage.get("prompt_tokens", 0)
                self._stats.completion_tokens += usage.get("completion_tokens", 0)
                return text, usage
            if attempt < self.max_attempts:
                self._stats.retries += 1
                await asyncio.sleep(self._delay(attempt, wait_hint))
        attempts = f"{self.max_attempts} attempt{'s' if self.max_attempts != 1 else ''}"
        if what == "connection error" and not self._proven:
            # Nothing ever answered: every other run would wait out the same retries.
            reason = f"connection error after {attempts} (is the server at {self.config.endpoint} running?)"
            self._fatal = reason
            raise Failure(reason, fatal=True)
        raise Failure(f"{what} after {attempts}")

    def _delay(self, attempt: int, wait_hint: float | None) -> float:
        if wait_hint is not None:
            return max(0.0, min(wait_hint, self.max_retry_after))
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * (0.5 + 0.5 * self._rng.random())  # jitter in [base/2, base]


def _add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}


def _next_mode(mode: str) -> str:
    i = RESPONSE_MODES.index(mode)
    return RESPONSE_MODES[min(i + 1, len(RESPONSE_MODES) - 1)]


def _titled(title: str, outcome: str) -> str:
    bare = re.sub(r"^\s*\[(success|failure|succeeded|failed)\]\s*", "", title, flags=re.I)
    return f"[{outcome}] {bare}"
