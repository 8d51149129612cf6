"""A small command's chat requests without the openai client.

``wikitrace add`` usually sends one request (the new run's), and importing ``openai`` to send
it costs about half a CPU-second, more than compiling the run and often a quarter of the
whole add. ``LightPost`` sends the same body (encoded as ``DirectPost`` encodes it: compact,
UTF-8) with the standard library's ``http.client`` on a worker thread, and hands back the
reply only when it is plain: a 2xx whose body is a JSON object within the size cap (past the
cap: ``AnswerTooLarge``, as ``read_capped``). Anything else (an error status, a dropped
connection, a body that is not a completion) comes back as None and the transport sends the
request again through the client, whose judgement of it (retries, the breaker, the reasons
recorded) is the only one. A reply that never came on a first request is ``WAITED``: the
transport judges the endpoint dead as the client's timeout would, rather than wait a second
timeout.

Used only where the client would send nothing more than a bearer key: no ``OPENAI_*`` setting
in the environment but the key and base URL (organisation, project, providers and other
credentials are the client's to apply) and no proxy variable (the client honours them).
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any
from urllib.parse import urlsplit

from . import message_json
from .replies import AnswerTooLarge

WAITED = "waited"  # the request went out and no reply came within the timeout
DEFAULT_BASE_URL = "https://api.openai.com/v1"  # the client's, when no base URL is set
_CLIENT_OWN = ("OPENAI_API_KEY", "OPENAI_BASE_URL")


class LightPost:
    def __init__(self, url: str, headers: dict[str, str], timeout: float, cap: int) -> None:
        parts = urlsplit(url)
        self.https = parts.scheme == "https"
        self.host, self.port = parts.hostname or "", parts.port
        self.path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.headers, self.timeout, self.cap = headers, timeout, cap

    @classmethod
    def make(cls, config: Any, timeout: float, cap: int) -> "LightPost | None":
        """For ``config`` (llm/config.py LLMConfig), or None where only the client knows what it would send."""
        env = os.environ
        if any(name.startswith("OPENAI_") and name not in _CLIENT_OWN for name in env) or \
                any(env.get(p) or env.get(p.upper()) for p in ("http_proxy", "https_proxy", "all_proxy")):
            return None
        base = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        if urlsplit(base).scheme not in ("http", "https") or not config.api_key:
            return None
        from .. import __version__

        headers = {"Accept": "application/json", "Content-Type": "application/json",
                   "User-Agent": f"wikitrace/{__version__}", "Authorization": f"Bearer {config.api_key}"}
        return cls(base + "/chat/completions", headers, timeout, cap)

    async def post(self, body: dict[str, Any]) -> dict | str | None:
        """The reply's completion (a dict), ``WAITED``, or None: send it through the client."""
        content = message_json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        loop = asyncio.get_running_loop()
        done = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if not done.done():
                done.set_exception(error) if error is not None else done.set_result(result)

        def work() -> None:
            try:
                result, error = self._post(content), None
            except BaseException as exc:  # AnswerTooLarge, or a fault of ours: raised in the caller
                result, error = None, exc
            loop.call_soon_threadsafe(settle, result, error)

        # a daemon, not an executor's worker: an idle worker left alive keeps the command from
        # ending without the interpreter's teardown (errors.skip_teardown)
        threading.Thread(target=work, name="wikitrace-light-post", daemon=True).start()
        return await done

    def _post(self, content: bytes) -> dict | str | None:
        import http.client

        if self.https:
            import ssl

            conn: http.client.HTTPConnection = http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        sent = False
        try:
            conn.request("POST", self.path, body=content, headers=self.headers)
            sent = True
            reply = conn.getresponse()
            if not 200 <= reply.status < 300:
                return None
            declared = int(reply.getheader("content-length") or -1)
            if declared > self.cap:
                raise AnswerTooLarge(declared, self.cap)
            data = reply.read(self.cap + 1)
            if len(data) > self.cap:
                raise AnswerTooLarge(len(data), self.cap)
        except TimeoutError:
            return WAITED if sent else None
        except (OSError, http.client.HTTPException, ValueError):
            return None
        finally:
            conn.close()
        try:
            answer = json.loads(data)
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None
