"""A pattern compiled on first use behaves as the compiled pattern, and is compiled only then."""

import re

from wikitrace import lazy_re


def test_a_lazy_pattern_is_compiled_on_first_use_and_answers_as_re_does():
    lazy = lazy_re.compile(r"(?P<word>b\w+)", re.I)
    assert lazy.pattern == r"(?P<word>b\w+)" and "compiled" not in vars(lazy)  # readable before use
    real = re.compile(r"(?P<word>b\w+)", re.I)
    text = "a Bb bc xbd BE"
    assert lazy.search(text).span() == real.search(text).span()
    assert "compiled" in vars(lazy) and lazy.compiled == real
    assert [m.span() for m in lazy.finditer(text)] == [m.span() for m in real.finditer(text)]
    assert lazy.findall(text) == real.findall(text) and lazy.sub("-", text) == real.sub("-", text)
    assert lazy.split(text) == real.split(text) and lazy.fullmatch("bx") and not lazy.match(" b")
    assert (lazy.flags, lazy.groups, lazy.groupindex) == (real.flags, real.groups, real.groupindex)


def test_a_lazy_pattern_names_no_attribute_a_pattern_lacks():
    lazy = lazy_re.compile("x")
    try:
        lazy.no_such_thing
    except AttributeError:
        pass
    else:
        raise AssertionError("an unknown attribute must raise AttributeError")
    assert "compiled" not in vars(lazy)  # asking for it did not compile the pattern
