"""Messages encoded once and spliced in give the bytes json.dumps gives: the request a
server sees and the response cache's key (a changed key would miss every cached answer)."""

import json

import pytest

from wikitrace.llm import message_json
from wikitrace.llm.cache import cache_key

AWKWARD = ["", "plain", "quote \" backslash \\ slash /", "line\nbreak\ttab\r\x00\x07\x1f\x7f",
           "é ü 中文 😀 \u2028 \u2029 \ufeff", "\ud800 lone surrogate", "x" * 20_000,
           message_json._MARK]  # even the mark itself, as content


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


@pytest.mark.parametrize("system", AWKWARD)
@pytest.mark.parametrize("user", AWKWARD[:4] + AWKWARD[-3:])
def test_request_body_and_key_material_are_json_dumps(system, user):
    plain = _messages(system, user)
    encoded = message_json.with_json(_messages(system, user))
    assert isinstance(encoded, message_json.EncodedMessages) and encoded == plain
    body = {"model": "m/ü", "messages": encoded, "response_format": {"type": "json_schema", "schema": {"a": [1, 2.5]}},
            "max_tokens": 100}
    sent = dict(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert message_json.dumps(body, **sent) == json.dumps(dict(body, messages=plain), **sent)
    keyed = dict(ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    material = {"model": "m", "messages": encoded, "mode": "json_schema", "options": {"max_tokens": 9}}
    assert message_json.dumps(material, **keyed) == json.dumps(dict(material, messages=plain), **keyed)
    assert _key_or_error(encoded) == _key_or_error(plain)


def _key_or_error(messages) -> str:
    try:
        return cache_key("m", messages, "text", {"temperature": 0.5})
    except UnicodeEncodeError as exc:  # a lone surrogate: refused the same way either way
        return f"error: {exc.reason}"


def test_contents_encoded_elsewhere_are_used_as_given():
    messages = _messages("sys", "user text")
    encoded = message_json.with_json(messages, [None, json.dumps("user text", ensure_ascii=False)])
    assert json.loads(encoded.sent_json) == messages and json.loads(encoded.sorted_json) == messages


@pytest.mark.parametrize("messages", [
    [{"content": "key order reversed", "role": "user"}],
    [{"role": "user", "content": "x", "name": "extra field"}],
    [{"role": "user", "content": ["a list of parts"]}],
    [{"role": "user", "content": None}],
])
def test_other_shapes_are_left_to_json_dumps(messages):
    assert not isinstance(message_json.with_json(messages), message_json.EncodedMessages)
    body = {"model": "m", "messages": message_json.with_json(messages)}
    assert message_json.dumps(body, ensure_ascii=False, separators=(",", ":")) == \
        json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def test_a_document_that_spells_the_mark_elsewhere_is_dumped_whole():
    encoded = message_json.with_json(_messages("s", "u"))
    body = {"model": message_json._MARK, "messages": encoded}
    assert message_json.dumps(body, ensure_ascii=False, separators=(",", ":")) == \
        json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def test_other_json_options_are_left_to_json_dumps():
    encoded = message_json.with_json(_messages("é", "u"))
    body = {"model": "m", "messages": encoded}
    assert message_json.dumps(body, indent=2) == json.dumps(body, indent=2)
    assert message_json.dumps(body) == json.dumps(body)  # ensure_ascii: escapes the é


def test_a_body_whose_shared_parts_are_written_once_is_still_json_dumps():
    """The parts many requests send alike (model, response format, limits) are written as JSON
    once; each body still dumps to what json.dumps gives, in the compiler's key order, and a body
    whose parts were replaced after it was made is written as it now is."""
    from wikitrace.compilers.llm_request import RequestBodies

    bodies = RequestBodies()
    sent = dict(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for outcome in ("success", "failure"):
        for mode in ("json_schema", "json_object", "text"):
            for user in AWKWARD[:3] + AWKWARD[-1:]:
                plain = _messages("sys ü", user)
                body = bodies.body(message_json.with_json(_messages("sys ü", user)), outcome, mode,
                                   model="m", temperature=0.2, max_tokens=700)
                assert list(body)[:2] == ["model", "messages"]
                assert message_json.dumps(body, **sent) == json.dumps(dict(body, messages=plain), **sent)
    changed = bodies.body(message_json.with_json(_messages("s", "u")), "success", "text", model="m",
                          temperature=None, max_tokens=700)
    changed["max_tokens"] = 5
    changed["seed"] = 1
    assert json.loads(message_json.dumps(changed, **sent))["max_tokens"] == 5
    assert message_json.dumps(changed, **sent) == json.dumps(dict(changed, messages=_messages("s", "u")), **sent)
