"""A number a call sent that no turn showed as written, but that the system prompt's own rule
computes from a record looked up before it: "the amount being $50 times the number of
passengers" and a reservation listing 4 passengers give 200. The page then says how the number
was made instead of calling it unseen. Only this plain form is read ("N times the number of
<noun>"), and the count is the length of a list the record holds under that noun.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .arguments import _parsed as parsed_answer  # one cached parse per answer text, shared
from .reading import Call, Reading
from .stems import stem as _stem

_TIMES = re.compile(r"\$?(\d+(?:\.\d+)?)\s+times\s+the\s+number\s+of\s+([A-Za-z]+)", re.I)


@lru_cache(maxsize=64)
def _rates(system: str) -> tuple[tuple[float, str, str], ...]:
    """(rate, stemmed noun, the words as written) for each "N times the number of <noun>"."""
    return tuple((float(m.group(1)), _stem(m.group(2)), m.group(0)) for m in _TIMES.finditer(system))


@lru_cache(maxsize=512)
def _lists(text: str) -> tuple[tuple[str, str, int], ...]:
    """(field, its stem, its length) for each top-level list field of a JSON object answer."""
    data = parsed_answer(text)
    if not isinstance(data, dict):
        return ()
    return tuple((str(k), _stem(str(k)), len(v)) for k, v in data.items() if isinstance(v, list) and v)


def product_note(r: Reading, c: Call, path: str, value) -> str | None:
    """How the system prompt's rule makes ``value`` from a record looked up before ``c``, or None."""
    if r.system is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    rates = _rates(r.system.content or "")
    if not rates:
        return None
    ways: list[str] = []
    for x in r.calls:
        if x.n >= c.n or x.writes or x.error or not (x.turn.result or "").lstrip().startswith("{"):
            continue
        for key, stem, count in _lists(x.turn.result):
            for rate, noun, written in rates:
                way = (f"{rate:g} times the {count} `{key}` of what {x.name} returned at turn {x.n} "
                       f"(the system prompt's \"{written}\")")
                if noun == stem and rate * count == value and way not in ways:
                    ways.append(way)
    if not ways:
        return None
    return (f"`{path}` is {value:g}: no earlier turn holds this number as written; it is "
            + " or ".join(ways[:2]) + (f" (and {len(ways) - 2} more ways)" if len(ways) > 2 else "") + ".")
