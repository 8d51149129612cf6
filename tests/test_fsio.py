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
