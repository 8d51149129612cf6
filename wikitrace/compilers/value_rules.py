"""The system prompt's sentences naming a value of a record the run looked up, for each change it
made: what an insight may quote when that value decides whether the change is made.

corpus/conditions.py finds the record value that sets apart the records successful runs made a
change on from those they looked up and left alone (`membership` "regular"). Counts alone leave
the reader to guess why; the prompt usually says it in words ("Do not compensate if the user is
regular member ..."). A sentence is kept when it states a rule, names the value as a term of its
own ("basic economy" is not "economy": rule_facts._on_its_own), and stands in the section of
the prompt (the blocks under one heading) that speaks most of the thing the change acts on
(``certificate`` of ``send_certificate``): the share of its blocks naming it, highest first. One
sentence per change and value, kept in the run's corpus entry as [tool, field, value, sentence].
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Iterable

from .field_rules import field_rules
from .insight_words import is_hand_off
from .reading import Reading, runs_a_command
from .rule_blocks import _blocks
from .rule_facts import _on_its_own
from .rule_reasons import _head


def value_rules(r: Reading, patterns: Iterable[str]) -> list[list[str]]:
    """[tool, field, value, sentence] for each change the run made and each plain value of the
    records it looked up or acted on (``rec|`` patterns, compilers/record_facts.py) that a rule
    sentence of the prompt's section on the change's thing names."""
    prompt = (r.system.content or "") if r.system is not None else ""
    if not prompt:
        return []
    tools = sorted({c.name for c in r.calls if c.writes and not c.error and c.name
                    and not is_hand_off(c) and not runs_a_command(c.turn)})
    values: dict[tuple[str, str], None] = {}
    for p in patterns:
        if p.startswith("rec|"):
            for name, value in _fields(p.split("|", 2)[2]):
                if isinstance(value, str):
                    values.setdefault((name, value))
    out = []
    for tool in tools:
        head = _head(tool)
        for name, value in sorted(values):
            said = _sentence(prompt, head, value)
            if said:
                out.append([tool, name, value, said])
    return out + field_rules(r, [v for _n, v in values])


@lru_cache(maxsize=1024)  # trials of a task look up the same records
def _fields(text: str) -> list:
    try:
        return json.loads(text)
    except ValueError:
        return []


@lru_cache(maxsize=4096)  # once per distinct prompt, thing and value
def _sentence(prompt: str, head: frozenset[str], value: str) -> str:
    phrase = " ".join(value.lower().replace("_", " ").split())
    if phrase in ("yes", "no", "true", "false", "none") or not any(len(w) >= 4 for w in phrase.split()):
        return ""
    blocks = _blocks(prompt)
    share: dict[frozenset[str], list[int]] = {}
    for b in blocks:
        seen = share.setdefault(b.heading, [0, 0])
        seen[0] += bool(head & b.words)
        seen[1] += 1
    # the sections that name the thing at all, the one speaking most of it first (prompt order on a tie)
    order = sorted((h for h, (n, _all) in share.items() if n), key=lambda h: -share[h][0] / share[h][1])
    for heading in order:
        for b in blocks:
            if b.heading != heading:
                continue
            for s in b.sentences:
                low = s.text.lower()
                if s.rule and phrase in low and _on_its_own(low, phrase):
                    return s.text
    return ""
