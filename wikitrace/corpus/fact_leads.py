"""Leads for the checked facts whose advice names a thing of its own: the form every failed call
of a tool shared (quote marks around a name, several calls packed into one), an answer resting on
one of the two things asked about or on no value looked up, a look-up planned and never made, and
the run's own rule (a sentence of its system prompt) on a change that differed from the expected one.

The generic lead (checked_facts.py) counts a kind of fact over a lesson's failed runs. These facts
say more than their kind: a rule fact is counted only with the runs that quote the very same
words, so the quote the lead gives is each counted run's own; a tool's call form only with the
runs where the same tool failed so. Their lead opens with the instruction, then the count of runs
and of distinct tasks, then what those runs showed.
"""

from __future__ import annotations

from collections import Counter

from . import run_counts

_SEP = "\x1f"
# kinds counted apart for each value of some items of their about: the tool (a call's form), or
# the tool and the quote (a rule: the same words quoted for `nonfree_baggages` and for
# `total_baggages` are one rule)
_KEYED = {"quoted-name": (0,), "packed-calls": (0,), "planned-look-up": (0,), "described-search": (0,), "rule": (0, 2)}
TOOL_KINDS = frozenset(_KEYED)  # the kinds whose fact's first ``about`` item is a tool

# kind -> (what the counted runs showed, what to do), as checked_facts._SAID pairs them. {tool}: the tool
# the fact is about; {on}: what the rule is on; {quote}: the rule as the prompt words it; {how}: the
# counted runs' changes, counted
OWN = {
    "quoted-name": ("every {tool} error the run never got past came from text in quote marks, and an error "
                    "listed the quoted name without them",
                    "send {tool} a name as an error's list of names writes it, without quote marks"),
    "packed-calls": ("every {tool} error the run never got past came from an argument that packed several calls "
                     "into one",
                     "send one {tool} call per query, never several {tool}[...] calls written into one argument"),
    "described-search": ("every {tool} error the run never got past came from a phrase that mixed the task's words "
                         "with lower-case ones",
                         "send {tool} one name, taken from the question or from an error's list of names, not a phrase"),
    "one-sided": ("the answer's words all came from the look-ups of one of the two things the question names",
                  "for a question about two named things, look up each of them and answer from what both "
                  "look-ups returned"),
    "planned-look-up": ("the answer was a name the task or the agent had planned to look up with {tool}, and no "
                        "{tool} call sent it",
                        "make the look-up you planned for the answer before giving it"),
    "reflected-answer": ("the answer was one that a reflection the run was given already named as a name of its "
                         "own, and the question did not",
                         "before giving an answer that a reflection you were given already names, find a look-up "
                         "whose text shows it answers the question"),
    "opening-form": ("the answer added words to the expected one or dropped some, and a look-up before it opened "
                     "with the expected name",
                     "answer with the name as the opening of the page about the thing writes it, no words added "
                     "or dropped"),
    "named-comparison": ("the agent's comparison of two named things went the other way from the values the "
                         "look-ups returned",
                         "compare the values the look-ups returned for both sides before choosing between two "
                         "named things"),
    "unsupported-comparison": ("the agent compared two places when no look-up had returned coordinates for either",
                               "look up the coordinates of both places before saying which lies further in a "
                               "direction"),
    "rule": ("the {tool} change differed from the task's expected one where the system prompt's rule on {on} "
             "decides it ({how})",
             "before {tool}, check the system prompt's rule on {on} against the record it acts on: {quote}"),
}
# how a rule's change differed, by the kind of the fact the rule came with
_HOW = {"arguments": ("{n} sent other values", "it sent other values"),
        "unexpected-change": ("{n} made one the task did not expect", "it made one the task did not expect"),
        "missed-change": ("{n} never made it", "it was never made")}


def group(fact: dict) -> str:
    """The key a fact is counted under: its kind, with its tool (and its rule's words) where the
    lead names them."""
    kind = fact.get("kind", "")
    items = _KEYED.get(kind)
    about = fact.get("about") or []
    if items is None or len(about) <= max(items):
        return kind
    return _SEP.join([kind, *(about[i] for i in items)])


# a rule fact says more of the change fact it came with: where both may lead, the rule does
_NARROWS = {"rule": ("arguments", "unexpected-change", "missed-change")}


def narrowest(usable: list[tuple]) -> list[tuple]:
    """Of the (…, key) candidates for the lead, those no other candidate says more of: the
    rule its runs quote, not only that their change differed."""
    wider = {k for *_r, key in usable for k in _NARROWS.get(kind_of(key), ())}
    return [u for u in usable if u[-1] not in wider] or usable


def kind_of(key: str) -> str:
    return key.split(_SEP, 1)[0]


def lead(key: str, runs: list[dict], failed: list[dict]) -> tuple[str, str] | None:
    """(the lead sentence, what its runs showed) for a key of these kinds, ``runs`` the failed run
    entries it covers; None for another kind."""
    kind = kind_of(key)
    if kind not in OWN:
        return None
    parts = key.split(_SEP)[1:]
    fields = {"tool": parts[0] if parts else "the tool", "on": "", "quote": "", "how": ""}
    if kind == "rule":
        tool, quote = (parts + ["", ""])[:2]  # a rule fact always has them (checked_facts.run_facts)
        ons = {f["about"][1] for e in runs for f in e.get("facts") or [] if group(f) == key}
        on = ons.pop() if len(ons) == 1 else tool  # what the rule is on, when the counted runs agree
        fields.update(on=f"`{on}`" if on != tool else tool, quote=quote, how=_how(key, runs))
    shown, do = (x.format(**fields) for x in OWN[kind])
    return f"{do[0].upper()}{do[1:]}; in {run_counts.part_of(runs, failed)}, {shown}.", shown


def _how(key: str, runs: list[dict]) -> str:
    """How the counted runs' changes differed from the expected ones: "5 sent other values, 2
    never made it" (a run once per way)."""
    ways: Counter = Counter()
    for e in runs:
        ways.update({f["about"][3] for f in e.get("facts") or []
                     if group(f) == key and len(f.get("about") or []) > 3 and f["about"][3] in _HOW})
    said = [_HOW[w][len(runs) == 1].format(n=ways[w]) for w in _HOW if ways[w]]
    return ", ".join(said) if said else "it differed"


def unrepeated(guideline: str, lead_text: str) -> str:
    """The guideline without its opening "When …, <instruction>." when the lead just gave that same
    instruction: an error lesson's reaction ("When Search answers …, send one Search call per
    query …") says again what the lead now says first, as a rule."""
    do = lead_text.split("; in ", 1)[0]
    do = do[0].lower() + do[1:] if do else do
    end = guideline.find(f", {do}.")
    if not do or not guideline.startswith("When ") or end < 0:
        return guideline
    return guideline[end + len(do) + 3:].lstrip()
