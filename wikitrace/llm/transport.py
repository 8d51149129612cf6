"""The gateway's asynchronous side, for the compile path (and the descent judge and the
insight merge, through the compiler): the HTTP client made ahead of the first request, the
requests in flight, retries with backoff and the circuit breaker. What a reply or a fault
means is ``replies.py``; ``client.py`` is the synchronous side.

``openai`` is never imported at module level here either.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from .replies import (FATAL_STATUS, FORMAT_COMPLAINT, RETRY_STATUS, AnswerTooLarge, Failure,  # noqa: F401
                      FormatRejected, aiohttp_client, completion_json, completion_text, error_text, one_line,
                      raw_response_class, read_capped, refused, retry_after, waited_out)


class _LoopState:
    """What must belong to one event loop: the HTTP client and the locks."""

    def __init__(self, client: Any, concurrency: int, direct: Any = None):
        self.loop = asyncio.get_running_loop()
        self.client = client
        self.direct = direct  # a DirectPost (llm/direct_post.py), or None: the client's own post
        self.slots = asyncio.Semaphore(concurrency)
        self.probe = asyncio.Lock()


class ChatTransport:
    """Chat requests to one endpoint: retries with backoff, replies read up to a
    size cap, and one rule for the whole build: a fault every run would meet (a
    bad key, a wrong URL, nothing listening before anything ever answered) is
    kept in ``fatal`` and no request is sent after it.

    ``proven`` turns true at the first 200; until then the compiler sends one
    request at a time (``loop_state().probe``), so such a fault costs one call.

    The same rule judges an endpoint dead (a circuit breaker, open for the rest of
    the build): a first request that times out (nothing has ever answered, and a
    hang is not worth retrying), or a request that used all its attempts on
    timeouts, refused connections or 5xx while no other request was answered.
    A hanging endpoint then costs one timeout per build, not four per run.
    """

    def __init__(self, config: Any, stats: Any, *, concurrency: int, timeout: float, max_attempts: int,
                 backoff: float, max_backoff: float, max_retry_after: float, seed: int | None,
                 max_answer_bytes: int) -> None:
        self.config = config
        self.stats = stats
        self.concurrency = max(1, int(concurrency))
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_after = max_retry_after
        self.max_answer_bytes = max_answer_bytes
        self.proven = False
        self.fatal: str | None = None
        self.answered = 0  # requests answered so far (the breaker's evidence of life)
        self._rng = random.Random(seed)
        self._state: _LoopState | None = None
        self._stale_clients: list[Any] = []
        self._openai: Any = None  # the module, once the first request imports it
        self._maker: Any = None  # the thread making the client ahead of the first request (prepare)
        self._ready: list | None = None  # what it made
        self._light: Any = None  # a LightPost while the command's requests go without the client (go_light)

    def prepare(self) -> None:
        """Start making the HTTP client on a thread: importing ``openai``, its TLS context and
        the platform headers it sends take a second or more of start-up, which then overlaps
        the reading of the first runs. The first event loop that asks takes it."""
        if self._ready is None and self._state is None:
            import threading

            self._ready = []
            # not a daemon: a command that ends meanwhile waits for the import rather than cut it short
            self._maker = threading.Thread(target=self._make_ahead, name="wikitrace-openai-client")
            self._maker.start()

    def _make_ahead(self) -> None:
        try:
            self._ready.append(self._client_parts())
        except Exception:  # made again at the first request, where what fails is reported as usual
            pass

    def _client_parts(self) -> tuple:
        """(openai, client, direct): an ``AsyncOpenAI`` for this endpoint and its direct post.
        Nothing here is tied to an event loop (the HTTP session is opened at the first request)."""
        import openai  # on the first request, not before: a build answered from the cache never pays for it

        from .direct_post import DirectPost

        http = aiohttp_client(openai)
        client = openai.AsyncOpenAI(
            api_key=self.config.api_key,
            base_url=self.config.base_url,
            timeout=self.timeout,
            max_retries=0,  # our own loop below decides what to retry
            http_client=http,
        )
        direct = DirectPost.make(openai, client, http, self.timeout) if http is not None else None
        return openai, client, direct

    def go_light(self) -> bool:
        """Send this command's requests without the client while they are answered plainly
        (llm/light_post.py), so ``openai`` is imported only if one is not. For a command of a
        few requests (``add``); False where the client alone knows what to send."""
        if self._state is None and self._maker is None:
            from .light_post import LightPost

            self._light = LightPost.make(self.config, self.timeout, self.max_answer_bytes)
        return self._light is not None

    def loop_state(self) -> _LoopState:
        loop = asyncio.get_running_loop()
        if self._state is None or self._state.loop is not loop:
            if self._state is not None and self._state.client is not None:
                # A client tied to a finished loop cannot be closed from this one, and
                # letting it be collected would try exactly that; keep it until exit.
                self._stale_clients.append(self._state.client)
            self._state = _LoopState(None, self.concurrency)
            if self._light is None:
                self._make_client(self._state)
        return self._state

    def _make_client(self, state: _LoopState) -> None:
        parts = None
        if self._maker is not None:  # made ahead on a thread (it failed if it left nothing)
            self._maker.join()
            parts, self._maker = (self._ready or [None])[0], None
        self._openai, state.client, state.direct = parts or self._client_parts()

    async def aclose(self) -> None:
        state, self._state = self._state, None
        if state is not None and state.client is not None and state.loop is asyncio.get_running_loop():
            await state.client.close()

    async def send(self, body: dict[str, Any], mode: str) -> tuple[str, dict[str, int]]:
        """Send one chat request (retrying transient faults) and return its text and usage.

        Raises ``AnswerTooLarge`` for a reply past the size cap, ``FormatRejected``
        when the server refuses the response mode, ``Failure`` otherwise.
        """
        state = self.loop_state()
        # One slot for the request, its retries and the waits between them: a run backing off
        # keeps its place, so an endpoint that stops answering meets no more requests than
        # ``concurrency``, however many runs have theirs ready (compile_loop prepares twice that).
        async with state.slots:
            answer = await self._light_attempt(body) if self._light is not None else None
            if answer is None:
                if state.client is None:
                    self._make_client(state)
                answer = await self._attempts(state, body, mode)
        # The slot is free: the requests waiting for one go out before this reply is checked.
        # Replies come back in waves, and a wave's replies and the requests they wake all run
        # in the loop's next pass; yielding twice puts this reply's checks after every one of
        # those requests (checking a whole wave first held the next wave back by its CPU time).
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        return answer

    async def _light_attempt(self, body: dict[str, Any]) -> tuple[str, dict[str, int]] | None:
        """The request sent without the client (``go_light``): its answer, or None when the
        client is to send it (and every later one) and judge what comes back."""
        from .light_post import WAITED

        if self.fatal:  # another request met a fault that will hit this one too
            raise Failure(self.fatal, fatal=True)
        self.stats.calls += 1
        try:
            response = await self._light.post(body)
        except AnswerTooLarge:
            self.proven = True  # the endpoint answers; the size is the model's doing
            self.answered += 1
            raise
        if response == WAITED and not self.proven:
            self.fatal = self._first_timeout()
            raise Failure(self.fatal, fatal=True)
        if not isinstance(response, dict):
            self._light = None
            return None
        return self._answered(response)

    def _answered(self, response: dict[str, Any]) -> tuple[str, dict[str, int]]:
        self.proven = True
        self.answered += 1
        text, usage = completion_text(response)
        self.stats.prompt_tokens += usage.get("prompt_tokens", 0)
        self.stats.completion_tokens += usage.get("completion_tokens", 0)
        return text, usage

    def _first_timeout(self) -> str:
        return (f"timeout after {self.timeout:g} s on the first request (nothing at "
                f"{self.config.endpoint} has answered; the endpoint is judged dead for this build)")

    async def _attempts(self, state: _LoopState, body: dict[str, Any], mode: str) -> tuple[str, dict[str, int]]:
        openai = self._openai
        stats = self.stats
        what = "no attempt"
        answered_before = self.answered
        for attempt in range(1, self.max_attempts + 1):
            if self.fatal:  # another run met a fault that will hit this one too
                raise Failure(self.fatal, fatal=True)
            wait_hint: float | None = None
            stats.calls += 1
            try:
                content = None
                # Streamed, so the body is read only up to the size cap. Through the
                # client's HTTP client with what the client would send (DirectPost),
                # else through its generic post: retries off, and without validating
                # our own params or building pydantic models of the reply, which cost
                # more CPU than the rest of a run.
                if state.direct is not None:
                    raw = await state.direct.post(body)
                    content = await read_capped(raw, self.max_answer_bytes)
                elif (raw_class := raw_response_class()) is not None:
                    raw = await state.client.post("/chat/completions", body=body, cast_to=raw_class, stream=True)
                    content = await read_capped(raw, self.max_answer_bytes)
                else:  # a client whose HTTP layer we do not recognise: the typed way
                    response = (await state.client.chat.completions.create(**body)).model_dump()
                if content is not None:
                    response = completion_json(content, raw)
                    del content
            except AnswerTooLarge:
                self.proven = True  # the endpoint answers; the size is the model's doing
                self.answered += 1
                raise
            except openai.APITimeoutError as exc:
                what = "connection error" if refused(exc) else "timeout"
                if what == "timeout" and not self.proven and waited_out(exc):
                    self.fatal = self._first_timeout()
                    raise Failure(self.fatal, fatal=True) from None
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
                        self.fatal = reason
                    raise Failure(reason, fatal=hint is not None) from None
            except openai.APIError as exc:  # e.g. a body that is not a chat completion
                raise Failure(f"bad response: {one_line(str(exc))[:160]}") from None
            else:
                return self._answered(response)
            if attempt < self.max_attempts:
                stats.retries += 1
                await asyncio.sleep(self.delay(attempt, wait_hint))
        attempts = f"{self.max_attempts} attempt{'s' if self.max_attempts != 1 else ''}"
        if what == "connection error" and not self.proven:
            # Nothing ever answered: every other run would wait out the same retries.
            self.fatal = f"connection error after {attempts} (is the server at {self.config.endpoint} running?)"
            raise Failure(self.fatal, fatal=True)
        if self.answered == answered_before and not what.startswith("HTTP 4"):
            # Nothing answered anyone while this request tried: every other run would wait the same.
            self.fatal = (f"{what} after {attempts}, and no other request was answered meanwhile (the endpoint "
                          f"{self.config.endpoint} is judged dead for this build)")
            raise Failure(f"{what} after {attempts}", fatal=True)
        raise Failure(f"{what} after {attempts}")

    def delay(self, attempt: int, wait_hint: float | None) -> float:
        if wait_hint is not None:
            return max(0.0, min(wait_hint, self.max_retry_after))
        base = min(self.max_backoff, self.backoff * (2 ** (attempt - 1)))
        return base * (0.5 + 0.5 * self._rng.random())  # jitter in [base/2, base]
