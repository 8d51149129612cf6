"""The model gateway: the one place wikitrace talks to a model.

- ``config``: which model, endpoint and key (chat and embeddings), with one fix-it error;
- ``transport``: the compile path's asynchronous chat requests (limits, retries, the
  circuit breaker for a dead endpoint);
- ``replies``: what a reply or an HTTP fault means (read up to a size cap, retried or fatal),
  for both sides;
- ``client``: the synchronous ``Client`` (``execute`` for a chat answer, ``embed`` for
  vectors, capability flags for the response formats and embeddings), every answer
  redacted on arrival and every fallback counted by reason; the Batch API's SDK client;
- ``cache``: the on-disk response cache, tagged with the runs each answer came from.

Nothing outside this package imports ``openai``, and nothing here imports it before the
first request, so ``wikitrace --help``, ``wikitrace prompt`` and the tools start without it.
Importing this package imports none of its modules.
"""
