"""The system prompt's rule sentence on an argument of a change the run made: what a lesson whose
advice is to check that argument may quote, so the reader learns the rule that decides its value.

A lesson saying "check `nonfree_baggages` before update_reservation_baggages" leaves the agent to
find which rule sets it. The prompt usually holds it in words. A sentence is a candidate for a
tool's argument when it states a rule (not a confirmation rule: that one is on the call, not on
the argument) and its own words name the argument's thing (its name's last word, a shorter word
standing for a longer one: "bags" for ``baggages``). Where the prompt has a section whose heading
names the tool's action ("Book flight" for ``book_reservation``), only its sentences are candidates.
Candidates rank by whether their block's label names the thing ("Change cabin:"), then by how many words of the argument's name and of what
the tool acts on they, their label and their heading hold (the action's verb is left out: "updated"
in a sentence says nothing of ``update_reservation_flights``). Among the best, those naming more values
of the run's own records as terms of their own ("silver", "basic economy") win: the clause of a
silver member's run, not of a gold one. At most two sentences are kept; more alike means the
prompt does not single one out, and nothing is kept. An id argument picks a record: it gets a rule
only from a block labelled with that kind of record ("Payment:" for ``payment_id``), never when
the record is the one the tool acts on (``reservation_id`` of ``update_reservation_flights``). Kept in the run's corpus entry beside value_rules as [tool, field, "",
sentence]; the insight layer quotes it only when every run of the lesson kept the same.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from .expected_calls import differences
from .insight_words import is_hand_off
from .reading import Reading, runs_a_command
from .rule_blocks import _blocks, _loosely_names
from .rule_facts import _on_its_own
from .rule_reasons import _head
from .rules import _CONFIRM_WORDS, _words, action_verb

KEPT = 2  # sentences quoted at most for one argument
_PARTS = re.compile(r"[\W_]+|(?<=[a-z])(?=[A-Z])")


def field_rules(r: Reading, values: Iterable[str]) -> list[list[str]]:
    """[tool, field, "", sentence] for each top-level argument of each change the run sent
    (gone through or refused) that the prompt has a rule sentence on. ``values``: the plain values
    of the records the run looked up, which pick a clause among parallel ones."""
    prompt = (r.system.content or "") if r.system is not None else ""
    if not prompt:
        return []
    pairs = sorted({(c.name, k) for c in r.calls if c.writes and c.name and not is_hand_off(c)
                    and not runs_a_command(c.turn) and isinstance(c.turn.arguments, dict)
                    for k in c.turn.arguments if isinstance(k, str)})
    held = sorted({" ".join(v.lower().replace("_", " ").split()) for v in values})
    held = [v for v in held if any(len(w) >= 4 for w in v.split())]
    out = []
    for tool, name in pairs:
        best = _best(prompt, tool, name)
        missed = _differing_parts(r, tool, name)
        if missed:  # only the rules on what was sent wrong: "payment methods must be in the profile" says nothing of an amount
            best = tuple(b for b in best if any(_names(_labelled(prompt, b[0]), {w}) for part in missed for w in part))
        if len(best) > KEPT:  # parallel clauses: the run's own values pick among them
            named = [sum(v in low and _on_its_own(low, v) for v in held) for _text, low in best]
            top = max(named)
            best = tuple(b for b, n in zip(best, named) if n == top) if top else best
        if len(best) <= KEPT:
            out += [[tool, name, "", text] for text, _low in best]
    return out


def _labelled(prompt: str, sentence: str) -> frozenset[str]:
    """A rule sentence's words with its block's label ("Payment:" before "at most two cards")."""
    for b in _blocks(prompt):
        for x in b.sentences:
            if x.text == sentence:
                return x.words | b.label_words
    return _words(sentence)


def _differing_parts(r: Reading, tool: str, name: str) -> list[frozenset[str]]:
    """What a list or object argument of the run's changes with ``tool`` held that the log's expected
    call did not, by the thing each differing part names (``amount`` of ``payment_methods[1].amount``);
    empty when the log has no expected call to compare with, or the argument itself is what differs."""
    parts: list[frozenset[str]] = []
    for c in r.calls:
        if c.name != tool or not c.writes or c.error:
            continue
        for path, _want, _got in differences(r, c) or ():
            if path == name:
                return []  # the whole value differs: every rule on it bears on it
            if path.startswith((f"{name}.", f"{name}[")):
                key = re.split(r"[.\[]", path)[-1].rstrip("]")
                named = frozenset(w for w in _words(" ".join(_PARTS.split(key))) if len(w) >= 3 and w != "ids")
                if not named:
                    return []  # a list item differs whole: every rule on the list bears on it
                parts.append(named)  # every word of its name: "flight_number" is the flight's own
    return parts


@lru_cache(maxsize=1024)  # once per distinct prompt, tool and argument, not per call
def _best(prompt: str, tool: str, name: str) -> tuple[tuple[str, str], ...]:
    """The best-ranked rule sentences on ``name`` of ``tool``, in prompt order, as (text, lower case)."""
    parts = [w for w in _PARTS.split(name) if w]
    thing, verb = _head(name), action_verb(tool)
    named = _words(" ".join(_PARTS.split(tool))) - verb  # what the tool acts on ("reservation", "flight")
    if not parts or not thing:
        return ()
    blocks = _blocks(prompt)
    if parts[-1].lower() in ("id", "ids") and (thing & named or not any(_names(b.label_words, thing)
                                                                           for b in blocks)):
        return ()  # an id picks a record: only a block on that kind of record ("Payment:") rules on which
    asked = named | _words(" ".join(parts))
    ranked: list[tuple[tuple[bool, int], str]] = []
    # where the prompt has a section on the tool's action ("Book flight" for book_reservation), its rules only
    own = [b for b in blocks if verb & b.heading] or blocks
    for b in own:
        for s in b.sentences:
            if not s.rule or _CONFIRM_WORDS.search(s.text) or not _names(s.words, thing):
                continue
            around = s.words | b.label_words | b.heading
            ranked.append(((_names(b.label_words, thing), sum(_names(around, {w}) for w in asked)),
                           s.text))
    if not ranked:
        return ()
    top = max(score for score, _t in ranked)
    return tuple(dict.fromkeys((t, t.lower()) for score, t in ranked if score == top))


def _names(words: frozenset[str], thing: frozenset[str]) -> bool:
    """Whether ``words`` name the thing, a plural or a shorter word standing for it ("bags" and "bag"
    for ``baggages``). Only the sentence's words lose a plural "s": the thing is stemmed already,
    and stripped again "class" (stemmed "clas") became "cla", which starts "claim"."""
    return _loosely_names(frozenset(w[:-1] if w.endswith("s") and not w.endswith("ss") else w for w in words),
                          thing)
