"""Frontmatter must round-trip through a real YAML parser, whatever the text."""

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import examples
from wikitrace.fsio import dump_frontmatter

scalars = st.one_of(st.text(max_size=80), st.integers(), st.booleans(),
                    st.floats(allow_nan=False, allow_infinity=False))


# Keys are field names chosen by code, never YAML words like "no" or "on".
KEYS = st.from_regex(r"[a-z_]{1,12}", fullmatch=True).filter(lambda k: k not in {"y", "n", "yes", "no", "on", "off", "true", "false", "null"})


@settings(max_examples=examples(1500, everyday=200), deadline=None)
@given(st.dictionaries(KEYS,
                       st.one_of(scalars, st.lists(st.text(max_size=30), max_size=4)), max_size=8))
def test_frontmatter_round_trips(fields):
    assert yaml.safe_load(dump_frontmatter(fields)) == (fields or None)


def test_keys_keep_their_order_and_none_is_left_out():
    text = dump_frontmatter({"type": "insight", "id": "insight-0001", "model": None, "title": "yes"})
    assert text.splitlines() == ["type: insight", "id: insight-0001", 'title: "yes"']


def test_floats_are_spelled_as_pyyaml_spells_them_every_time():
    """Float spellings are remembered per value: 0.0 then -0.0, or a value asked twice, must
    still read back as the very float, spelled as PyYAML spells it."""
    values = [0.0, -0.0, 0.0, 1.0, 0.5, 1e-7, 1e21, 0.1 + 0.2, float("inf"), -float("inf"), 1e-7]
    text = dump_frontmatter({"scores": values})
    assert text == "scores:\n" + "".join(f"- {yaml.safe_dump(v).splitlines()[0]}\n" for v in values)
    back = yaml.safe_load(text)["scores"]
    assert back == values and [str(v) for v in back] == [str(v) for v in values]  # -0.0 stays -0.0
    assert dump_frontmatter({"score": float("nan")}) == "score: .nan\n"


@settings(max_examples=examples(1500, everyday=200), deadline=None)
@given(st.floats())
def test_any_float_is_spelled_as_pyyaml_spells_it(value):
    """A plain decimal is written without asking PyYAML (``fsio._float_scalar``): the same spelling."""
    assert dump_frontmatter({"score": value}) == f"score: {yaml.safe_dump(value).splitlines()[0]}\n"


@settings(max_examples=examples(1500, everyday=200), deadline=None)
@given(st.text(max_size=40))
def test_quoted_text_escapes_what_yaml_does_not_allow_raw(text):
    """A quoted value that is all ASCII skips the pattern of characters YAML does not allow raw."""
    import json
    import re

    disallowed = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
    line = dump_frontmatter({"title": text})
    if line != f"title: {text}\n":  # quoted: JSON with every disallowed character escaped
        quoted = disallowed.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))
        assert line == f"title: {quoted}\n"
