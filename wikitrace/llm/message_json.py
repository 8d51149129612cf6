"""Chat messages whose JSON text is made once and spliced into each document that holds them.

A run's messages are serialised twice for every request: sorted, for the response
cache's key, and in the order sent, for the request body. Their text is nearly all
of both documents (the agent's instructions, the whole turn log), and the system
message is the same for most runs of a build. ``with_json`` attaches each message's
JSON string, encoded once by the encoder ``json.dumps`` itself uses (its C string
encoder), and ``dumps`` writes a document holding such messages as ``json.dumps``
would, byte for byte, encoding only the small rest. Messages of any other shape are
serialised as before.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

_MARK = "\x00wikitrace: the messages go here\x00"
_MARK_JSON = encode_basestring(_MARK)


class EncodedMessages(list):
    """Chat messages (``{"role": ..., "content": ...}`` dicts) with their JSON text in key
    order (``sorted_json``) and in the order written (``sent_json``)."""

    sorted_json: str
    sent_json: str


def with_json(messages: list[dict[str, str]], contents_json: list[str | None] | None = None) -> list:
    """``messages`` carrying their JSON text, or ``messages`` unchanged when one is not a
    role/content pair of strings. ``contents_json[i]``, when given, is message i's content
    already encoded (``encode_basestring``)."""
    sorted_parts, sent_parts = [], []
    for i, message in enumerate(messages):
        if type(message) is not dict or list(message) != ["role", "content"] or \
                type(message["role"]) is not str or type(message["content"]) is not str:
            return messages
        made = contents_json[i] if contents_json is not None and i < len(contents_json) else None
        content = made if made is not None else encode_basestring(message["content"])
        role = encode_basestring(message["role"])
        sorted_parts.append('{"content":' + content + ',"role":' + role + "}")
        sent_parts.append('{"role":' + role + ',"content":' + content + "}")
    encoded = EncodedMessages(messages)
    encoded.sorted_json = "[" + ",".join(sorted_parts) + "]"
    encoded.sent_json = "[" + ",".join(sent_parts) + "]"
    return encoded


class SharedParts:
    """What many request bodies send alike besides their messages (the model, the response
    format with its schema, the limits), with its JSON text made once per set of options.
    Written again for every request, that was about 0.09 ms of the build's main process a
    request (measured under load), for the same text each time. The parts are this object's;
    a body made by ``body`` holds them as they are and must not change them."""

    def __init__(self, parts: dict[str, Any]):
        # "messages" keeps its place among the keys (the order the body is written in)
        self.parts = {k: (_MARK if k == "messages" else v) for k, v in parts.items()}
        self._skeletons: dict[tuple, str | None] = {}

    def body(self, messages: list) -> dict[str, Any]:
        made = _Body(self.parts)
        made["messages"] = messages
        made.shared = self
        return made

    def skeleton(self, document: "_Body", sort_keys: bool, options: dict[str, Any]) -> str | None:
        """The document's JSON with the mark for its messages, or None when the document no longer
        holds exactly these parts."""
        parts = self.parts
        if len(document) != len(parts) or any(document.get(k) is not v for k, v in parts.items() if k != "messages"):
            return None
        key = (sort_keys, *sorted(options.items()))
        if key not in self._skeletons:
            made = json.dumps(parts, sort_keys=sort_keys, **options)
            self._skeletons[key] = made if made.count(_MARK_JSON) == 1 else None
        return self._skeletons[key]


class _Body(dict):
    shared: SharedParts | None = None


def dumps(document: dict[str, Any], *, sort_keys: bool = False, **options: Any) -> str:
    """``json.dumps(document, sort_keys=sort_keys, **options)`` for a document whose
    ``"messages"`` may carry their JSON text (compact separators, ``ensure_ascii=False``)."""
    messages = document.get("messages")
    compact = options.get("separators") == (",", ":") and options.get("ensure_ascii") is False \
        and set(options) <= {"separators", "ensure_ascii", "allow_nan"}
    if isinstance(messages, EncodedMessages) and compact:
        shared = getattr(document, "shared", None)
        skeleton = shared.skeleton(document, sort_keys, options) if shared is not None else None
        if skeleton is None:
            skeleton = json.dumps({**document, "messages": _MARK}, sort_keys=sort_keys, **options)
        if skeleton.count(_MARK_JSON) == 1:  # nothing else in the document spells the mark
            return skeleton.replace(_MARK_JSON, messages.sorted_json if sort_keys else messages.sent_json)
    return json.dumps(document, sort_keys=sort_keys, **options)
