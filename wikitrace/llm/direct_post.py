"""The compile path's chat request, sent through the openai client's own HTTP client.

``AsyncOpenAI.post`` rebuilds everything about a request every time: it copies the
options twice, merges headers and query, parses the URL, serialises the body with its
own encoder and wraps the send in its auth hooks. For the same endpoint, key and
headers that is about two thirds of a request's CPU in the build's main process
(measured: docs/performance.md). ``DirectPost`` asks the client once for what it
would send (its base URL, default headers, the key's ``Authorization``) and then
sends each body with the HTTP client the transport gave it, as bytes encoded once.

The errors come out as the client's own: a timeout as ``APITimeoutError``, a failed
connection as ``APIConnectionError``, a 4xx/5xx as the ``APIStatusError`` subclass the
client makes from that response, so the retry rules, the breaker and every recorded
reason stay those of ``transport.ChatTransport``. Whenever the client is set up in a
way this cannot copy exactly (no API key: another auth scheme; an HTTP client or an
SDK whose pieces are not found), ``make`` returns None and the client's ``post`` is used.
"""

from __future__ import annotations

import ssl
from typing import Any

from . import message_json


class DirectPost:
    def __init__(self, openai: Any, http: Any, module: Any, url: str, headers: dict[str, str], timeout: Any,
                 make_error: Any, timeouts: tuple, failures: tuple) -> None:
        self.openai, self.http, self.module = openai, http, module
        self.url, self.headers, self.timeout = url, headers, timeout
        self.make_error, self.timeouts, self.failures = make_error, timeouts, failures
        # The headers every request of ours sends but its length, in their order (see ``_request``);
        # None when a request made that way would not be the one the HTTP client makes
        self.sent_headers = None
        try:
            fixed = module.Request("POST", url, headers=headers, content=b"{}").headers
            fixed.pop("Content-Length")
            self.sent_headers = fixed
            sample = b'{"model":"m"}'
            if _seen(self._request(sample, cookies=False)) != _seen(self._slow_request(sample, cookies=False)):
                self.sent_headers = None
        except Exception:  # an HTTP client laid out otherwise: its own request building
            self.sent_headers = None

    @classmethod
    def make(cls, openai: Any, client: Any, http: Any, timeout: float) -> "DirectPost | None":
        """For ``client`` (an ``AsyncOpenAI``) over ``http`` (the HTTP client it was given), or None."""
        try:
            import openai._base_client as base

            module = next((m for m in (getattr(base, "httpx2", None), getattr(base, "httpx", None))
                           if m is not None and isinstance(http, m.AsyncClient)), None)
            make_error = getattr(client, "_make_status_error_from_response", None)
            if module is None or make_error is None or any(
                    getattr(client, name, None) is not None
                    for name in ("workload_identity", "_provider_runtime", "_api_key_provider", "custom_auth")):
                return None  # credentials worked out or signed per request: the client's own path
            auth = dict(client.auth_headers)
            omit = tuple(t for t in (getattr(openai, "Omit", None), getattr(base, "Omit", None)) if isinstance(t, type))
            headers = {k: v for k, v in {**client.default_headers, **auth}.items() if not (omit and isinstance(v, omit))}
            if not str(auth.get("Authorization", "")).startswith("Bearer ") or \
                    not all(isinstance(v, str) for v in headers.values()):
                return None  # another auth scheme, or a header value it would work out per request
            if getattr(client, "default_query", None) or getattr(http, "params", None) or \
                    str(getattr(http, "base_url", "")) or not hasattr(module, "Request"):
                return None  # a query or base URL of the HTTP client's own: its build_request merges them
            url = str(client.base_url).rstrip("/") + "/chat/completions"
            timeouts = tuple(getattr(base, "timeout_exceptions", lambda: (module.TimeoutException,))())
            failures = tuple(getattr(base, "request_exceptions", lambda: (module.RequestError, ssl.SSLError))())
            # parsed once here: handed to each request as a string and a dict, the URL was parsed and
            # the headers normalised again for every request (about 35 us a request, measured under load)
            # The HTTP client's own headers under ours, merged once as its build_request merges them
            # for every request (with the timeout, about a sixth of a request's CPU here, measured)
            merged = module.Headers(http.headers)
            merged.update(module.Headers(headers))
            return cls(openai, http, module, module.URL(url), merged, {"timeout": module.Timeout(timeout).as_dict()},
                       make_error, timeouts, failures)
        except Exception:  # an SDK laid out otherwise: the client's own post still works
            return None

    async def post(self, body: dict[str, Any]) -> Any:
        """Send ``body``; the streamed response of a 2xx (the caller reads and closes it)."""
        # Encoded as the client encodes a body (compact, UTF-8), so a server sees the same bytes.
        content = message_json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        request = self._request(content)
        try:
            response = await self.http.send(request, stream=True)
        except self.timeouts as err:
            raise self.openai.APITimeoutError(request=request) from err
        except self.failures as err:
            raise self.openai.APIConnectionError(request=request) from err
        if response.status_code >= 400:
            try:
                await response.aread()  # the error's body: its message is the reason recorded
            except self.timeouts as err:
                raise self.openai.APITimeoutError(request=request) from err
            except self.failures as err:
                raise self.openai.APIConnectionError(request=request) from err
            finally:
                await response.aclose()
            raise self.make_error(response) from None
        return response

    def _slow_request(self, content: bytes, cookies: bool = True) -> Any:
        """What the HTTP client's build_request makes of this body, less the merging done once in
        ``make`` (the cookie jar is its live one: cookies an endpoint set go back as they would there)."""
        return self.module.Request("POST", self.url, headers=self.headers, cookies=self.http.cookies if cookies else None,
                                   content=content, extensions=dict(self.timeout))

    def _request(self, content: bytes, cookies: bool = True) -> Any:
        """The same request as ``_slow_request``, made from the headers worked out once: handed the
        body as bytes, the request worked out its length and host headers and copied every header
        twice more on each call (about a fifth of a request's CPU here, measured). Made the slow way
        while the client holds cookies, which go into a header of their own."""
        if self.sent_headers is None or (cookies and self.http.cookies):
            return self._slow_request(content, cookies)
        headers = self.module.Headers(self.sent_headers)
        headers["Content-Length"] = str(len(content))
        request = self.module.Request("POST", self.url, headers=headers, stream=self.module.ByteStream(content),
                                      extensions=dict(self.timeout))
        request.read()  # the body as ``content``, as a request given bytes holds it
        return request


def _seen(request: Any) -> tuple:
    """What a server (and the transport) is given of a request."""
    return request.method, str(request.url), request.headers.raw, request.content, request.extensions
