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

Answers are redacted string by string once parsed (a model may write a key
back), and only answers that passed the checks are cached, as that redacted
JSON (under the run's first request),
so a rebuild asks the model again for every run that fell back.

``compile`` never raises for a model or network fault. Requests, retries, the
breaker and the response cache are the model gateway's (``wikitrace.llm``), which
imports ``openai`` at the first request (a build answered from the cache never does).
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from ..runs.model import content_hash
from ..llm.config import LLMConfig
from ..redact import default_redactor
from ..runs.model import Run
from ..templates import environment, render
from .answer_check import BadAnswer, check_answer
from .answer_json import extract_json
from .base import CompileStats
from ..llm.cache import CachedAnswer, ResponseCache, cache_key
from ..llm.message_json import with_json
from ..llm.transport import AnswerTooLarge, ChatTransport, Failure, FormatRejected, one_line
from .llm_offline import PROMPT_LIMITS, offline_decisive, offline_facts, prompt_for
from .llm_system import SystemMessages
from .prompt_views import Prompt, clip, evidence_key
from .llm_request import RESPONSE_MODES, FirstAnswer, LazyMessages, RequestBodies, next_mode
from .schema import MAX_INSIGHTS, Compilation

__all__ = ["LLMCompiler", "RESPONSE_MODES", "PROMPT_TEMPLATES", "clip", "extract_json"]

PROMPT_TEMPLATES = (
    "prompts/compile_success.system.j2",
    "prompts/compile_failure.system.j2",
    "prompts/compile.user.j2",
    "prompts/repair.user.j2",
)


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
        clip_limit: int = PROMPT_LIMITS["clip_limit"],
        trajectory_budget: int = PROMPT_LIMITS["trajectory_budget"],
        solver_prompt_limit: int = PROMPT_LIMITS["solver_prompt_limit"],
    ) -> None:
        if response_mode is not None and response_mode not in RESPONSE_MODES:
            raise ValueError(f"response_mode must be one of {', '.join(RESPONSE_MODES)}, got {response_mode!r}")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.config = config
        self.model = config.model
        self.templates = str(templates) if templates else None
        self.temperature = temperature
        self.max_tokens = config.max_tokens if max_tokens is None else max_tokens
        self.clip_limit = clip_limit
        self.trajectory_budget = trajectory_budget
        self.solver_prompt_limit = solver_prompt_limit
        self.cache = ResponseCache(cache_dir) if use_cache else None
        self.read_cache = read_cache
        # Answers are redacted before they are checked, cached or written: a model may
        # write a key back. The build sets its own (user patterns), or None with --no-redact.
        self.redactor = default_redactor()
        self._stats = CompileStats()
        self.transport = ChatTransport(
            config, self._stats, concurrency=concurrency, timeout=config.timeout if timeout is None else timeout,
            max_attempts=max_attempts, backoff=backoff, max_backoff=max_backoff, max_retry_after=max_retry_after,
            seed=seed, max_answer_bytes=config.max_answer_bytes if max_answer_bytes is None else max_answer_bytes)
        # Capability flag: the most structured response mode the server accepts.
        self.response_mode = response_mode or RESPONSE_MODES[0]
        self._mode_settled = response_mode is not None
        self.systems = SystemMessages(self.templates)
        self.bodies = RequestBodies()

        # Fail now, not once per run, if a user template is missing or broken.
        env = environment(self.templates)
        for name in PROMPT_TEMPLATES:
            env.get_template(name)

    # --- protocol ---------------------------------------------------------------------

    def stats(self) -> CompileStats:
        return self._stats

    async def compile(self, run: Run) -> Compilation:
        self._stats.runs += 1
        if self.transport.fatal:
            return self._fallback(run, self.transport.fatal)
        try:
            return await self._compile(run)
        except Failure as exc:
            return self._fallback(run, exc.reason)
        except (asyncio.CancelledError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a bug or an odd reply must not sink the build
            import jinja2

            if isinstance(exc, jinja2.TemplateError):
                raise
            return self._fallback(run, f"unexpected {type(exc).__name__}: {one_line(str(exc))}")

    def asks_at_once(self) -> bool:
        """True when the first run's answer cannot come from the cache (none, not read, or
        holding no answer in this mode): the build may import the client ahead of it."""
        return self.cache is None or not self.read_cache or not self.cache.holds_mode(self.response_mode)

    async def aclose(self) -> None:
        """Close the HTTP client and wait for the answers still being cached (optional; the
        build calls it at the end). The cache writes any later answer at once."""
        await self.transport.aclose()
        if self.cache is not None:
            self.cache.close()

    @property
    def max_answer_bytes(self) -> int:
        return self.transport.max_answer_bytes

    # --- prompts ----------------------------------------------------------------------

    def prompt(self, run: Run) -> Prompt:
        """Everything in the prompt that does not depend on the response mode."""
        return prompt_for(run, self.templates, clip_limit=self.clip_limit,
                          trajectory_budget=self.trajectory_budget, solver_prompt_limit=self.solver_prompt_limit)

    def render_messages(self, run: Run, mode: str | None = None) -> list[dict[str, str]]:
        """The chat messages this compiler would send for ``run`` (for dry runs and debugging)."""
        return self.messages(self.prompt(run), mode or self.response_mode)

    def messages(self, prompt: Prompt, mode: str) -> list[dict[str, str]]:
        system, system_json = self.systems.system_and_json(prompt, mode)
        return with_json([{"role": "system", "content": system}, {"role": "user", "content": prompt.user}],
                         [system_json, prompt.user_json])

    # --- one run ----------------------------------------------------------------------

    async def _compile(self, run: Run) -> Compilation:
        outcome = run.outcome.label
        prompt = self.prompt(run)
        first = await self._complete(prompt, outcome)
        instructions = self.systems.instructions(prompt, first.mode)
        text, usage = first.text, first.usage
        try:
            if first.too_large is not None:
                raise BadAnswer([str(first.too_large)], f"schema: {first.too_large}")
            comp, text = check_answer(text, run, instructions, final=first.cached, clean=self._clean)
            repaired = False
        except BadAnswer as bad:
            try:
                comp, text, usage = await self._repair(run, first, bad, instructions)
            except Failure:
                if first.cached and self.cache is not None:
                    self.cache.discard(first.key)  # never replay an answer that failed
                raise
            repaired = True
        tag = content_hash(run)  # `wikitrace forget` finds the run's answers by it
        if self.cache is not None and (repaired or not first.cached or tag not in first.runs):
            # Stored under the run's first request, so a rebuild answers from here in one step.
            self.cache.put(first.key, CachedAnswer(text, usage, runs=[*first.runs, tag]), model=self.model,
                           mode=first.mode, messages=first.messages)
        comp.title = _titled(comp.title, outcome)
        comp.compiler = "llm"
        comp.model = self.model
        comp.usage = usage
        comp.in_short = offline_facts(run)  # the log's checked facts, never the model's words
        comp.decisive = offline_decisive(run)
        s = self._stats
        s.dropped_refs += comp.dropped_refs
        s.dropped_quotes += comp.dropped_quotes
        s.dropped_items += comp.dropped_items
        s.dropped_insights += comp.dropped_insights
        return comp

    async def _repair(self, run: Run, first: FirstAnswer, bad: BadAnswer, instructions: str):
        """One more call that lists the problems; its answer is final."""
        self._stats.repairs += 1
        outcome = run.outcome.label
        repair = render("prompts/repair.user.j2", self.templates, problems=bad.problems,
                        evidence_key=evidence_key(outcome), max_insights=MAX_INSIGHTS)
        shown = (clip(self.redacted(first.text), 12_000) if first.text is not None
                 else f"[an answer of more than {self.max_answer_bytes} bytes, not repeated here]")
        messages = first.messages + [{"role": "assistant", "content": shown}, {"role": "user", "content": repair}]
        try:
            text, usage = await self._request(messages, outcome, first.mode)
        except FormatRejected as rej:
            raise Failure(rej.reason) from None
        except AnswerTooLarge as big:
            raise Failure(f"schema: {big}") from None
        try:
            comp, text = check_answer(text, run, instructions, final=True, clean=self._clean)
        except BadAnswer as bad2:
            raise Failure(bad2.reason) from None
        return comp, text, _add_usage(first.usage, usage)

    def _fallback(self, run: Run, reason: str) -> Compilation:
        self._stats.count_fallback(one_line(reason))
        from .offline import compile_offline  # imported at the first fallback: most builds have none

        comp = compile_offline(run)  # already grounded; made only now: most runs never need it
        comp.compiler = "offline-fallback"
        comp.fallback_reason = one_line(reason)
        return comp

    async def _complete(self, prompt: Prompt, outcome: str) -> FirstAnswer:
        """First answer for a run: from the cache, or the best mode the server takes."""
        return await self.first_answer(LazyMessages(self, prompt), outcome)

    async def first_answer(self, by_mode: dict[str, list[dict[str, str]]], outcome: str) -> FirstAnswer:
        """The answer to the messages of the most structured mode the server takes
        (``by_mode``: mode -> messages), from the cache when ``read_cache``."""
        start = RESPONSE_MODES.index(self.response_mode)
        modes = RESPONSE_MODES[start:]
        if self.cache is not None and self.read_cache:
            for m in modes:
                if m != self.response_mode and not self.cache.holds_mode(m):
                    continue
                key = by_mode.key(m) if isinstance(by_mode, LazyMessages) else self._key(by_mode[m], m)
                hit = self.cache.get(key)
                if hit is not None:
                    self._stats.cache_hits += 1
                    return FirstAnswer(hit.text, dict(hit.usage), m, by_mode[m], key, cached=True, runs=hit.runs)
        transport = self.transport
        state = transport.loop_state()
        if self._mode_settled and transport.proven:
            return await self._try_modes(by_mode, outcome)
        # Until the endpoint has answered once, requests go one at a time: the first
        # finds the response mode, and a fatal fault (bad key, wrong URL) costs one call.
        async with state.probe:
            if not (self._mode_settled and transport.proven):
                try:
                    return await self._try_modes(by_mode, outcome)
                finally:
                    self._mode_settled = True
        # Settled while this one waited: go without the lock, or every run queued
        # behind the probe would be sent one at a time.
        return await self._try_modes(by_mode, outcome)

    async def _try_modes(self, by_mode: LazyMessages, outcome: str) -> FirstAnswer:
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
                    self._degrade_to(next_mode(mode))
                continue
            except AnswerTooLarge as big:
                text, usage, too_large = None, {}, big
            self._degrade_to(mode)  # it worked here after a more structured mode did not
            key = by_mode.key(mode) if isinstance(by_mode, LazyMessages) else self._key(messages, mode)
            return FirstAnswer(text, usage, mode, messages, key, cached=False,
                                too_large=too_large)
        raise Failure(last.reason if last else "no response mode left")

    def _degrade_to(self, mode: str) -> None:
        if RESPONSE_MODES.index(mode) > RESPONSE_MODES.index(self.response_mode):
            self.response_mode = mode

    def _key(self, messages: list[dict[str, str]], mode: str) -> str:
        return cache_key(self.model, messages, mode,
                         {"temperature": self.temperature, "max_tokens": self.max_tokens})

    # --- one HTTP request, with retries -------------------------------------------------

    def request_body(self, messages: list[dict[str, str]], outcome: str, mode: str) -> dict[str, Any]:
        """The chat request for these messages; the Batch API path sends the same body."""
        return self.bodies.body(messages, outcome, mode, model=self.model, temperature=self.temperature,
                                max_tokens=self.max_tokens)

    def cache_key_for(self, messages: list[dict[str, str]], mode: str) -> str:
        return self._key(messages, mode)

    async def _request(self, messages: list[dict[str, str]], outcome: str, mode: str) -> tuple[str, dict[str, int]]:
        return await self.transport.send(self.request_body(messages, outcome, mode), mode)

    def redacted(self, text: str) -> str:
        return self.redactor.text(text) if self.redactor is not None else text

    @property
    def _clean(self):
        """Redaction for each string of a parsed answer (None with --no-redact): the
        answer is checked, cached and written only after it."""
        return self.redactor.text if self.redactor is not None else None


def _add_usage(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in sorted(set(a) | set(b))}


def _titled(title: str, outcome: str) -> str:
    bare = re.sub(r"^\s*\[(success|failure|succeeded|failed)\]\s*", "", title, flags=re.I)
    return f"[{outcome}] {bare}"
