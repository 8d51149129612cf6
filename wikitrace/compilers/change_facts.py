"""What a failed tool-calling run's changes did against the calls its log records as expected:
each change that differs, item by item (with a value nothing had shown, or the look-ups that could
have shown the expected one), each change not expected at all (with an empty search and the other
one its values came from), and the expected changes never made, with why where the log shows it
(records never looked up: lookup_coverage.py; an offer let drop: offers.py) and the run's own rule
on them (rule_reasons.py). The In short (in_short.py) puts these among its facts.
"""

from __future__ import annotations

from dataclasses import replace

from .cannot_said import said_before_looking
from .value_sources import credited_kinds
from .expected_calls import (call_text, closest_expected, differences, expected_changes, missed_changes, no_such_call,
                             missed_lookups, only_arithmetic, shown_value)
from .insight_words import is_hand_off, join
from .lookup_coverage import unlooked
from .listed_apart import listed_apart_note
from .offers import agreed_unmade, raised_first, unmade_offer
from .reading import Call, Reading, leaves, t_is_user
from . import rule_reasons, rule_refusals
from .schema import KeyFact
from .text import stands_alone
from .shown_conflicts import past_note, shown_conflicts
from .unshown_values import empty_lookup_note, expected_note, out_of_reach_note, unsearched_note

RULED = "change_facts.ruled"  # Reading.memo: change turn -> what its rule left open on its record ("closed": nothing)
LEADS = "in_short.leads"  # Reading.memo: texts of facts that say why a failed run failed (they come first)


def expected_facts(r: Reading) -> list[KeyFact]:
    """Changes that differ from the expected call of their tool, item by item; changes the
    task did not expect at all; expected changes never made."""
    expected = expected_changes(r)
    if expected is None:
        return []
    out = []
    said: set[str] = set()  # the rules quoted so far (rule_reasons.py): each once per page
    handed_off_first = None
    for c in (c for c in r.calls if c.writes and not c.error):
        diffs = differences(r, c)
        if diffs is None:
            note, shown = empty_lookup_note(r, c)  # a search that found nothing, and another that the values came from
            handed_off_first = is_hand_off(c) if handed_off_first is None else handed_off_first
            reason = _kept(r, c, rule_reasons.for_call(r, c, said))
            fact = _why(KeyFact(f"{c.name} at turn {c.n} went through, but the task expected "
                                + ("no change at all." if not expected else f"{no_such_call(r, c)}.") + note,
                                [c.n] + shown, "unexpected-change", [c.name]), reason)
            past, on = past_note(r, c)  # a rule's case that allows the change is not the whole rule
            if past and not any(f.kind == "shown-past" and c.n in f.turns for f in shown_conflicts(r)):
                fact = replace(fact, text=f"{fact.text} {past}", turns=fact.turns + on)
            raised, at = raised_first(r, c.name, c.n)  # a change nobody wanted: who brought it up
            if raised:
                fact = replace(fact, text=f"{fact.text} {raised}", turns=fact.turns + at)
            out.append(fact)
        elif diffs:
            handed_off_first = False if handed_off_first is None else handed_off_first
            parts = [f"`{k}` {shown_value(got)} where the task expected {shown_value(want)}" for k, want, got in diffs[:2]]
            more = len(diffs) - 2
            note, shown = expected_note(r, c, diffs)  # a value nothing had shown, where the expected one was
            if not note:  # or an expected value no answer held, the look-ups having sent other values
                note, shown = unsearched_note(r, c, closest_expected(r, c), diffs)
            if not note:  # or one nothing the agent could read held at all: no check would have found it
                note = out_of_reach_note(r, diffs[:2])
            if not note:  # or both listed by one answer: the figures that told them apart there
                note, shown = listed_apart_note(r, c, diffs[:2])
            out.append(_why(KeyFact(f"{c.name} at turn {c.n} sent " + "; ".join(parts)
                                    + (f" (and {more} more difference{'s' if more > 1 else ''})." if more > 0 else ".")
                                    + note, [c.n] + shown, "arguments", _differing_args(r, c, diffs)),
                            _kept(r, c, rule_reasons.for_arguments(r, c, [k for k, _, _ in diffs[:2]], said))))
    missed = missed_changes(r)
    if missed:
        last = max((t.turn for t in r.run.turns if t.turn not in {h.turn for h in r.harness}
                    and (t.type == "function_call" or t.role == "assistant")), default=None)
        cover = unlooked(r, missed)  # why first: the records those changes act on were never looked up
        if cover is not None and len(cover.explains) == len(missed):
            by_items: dict[tuple[str, ...], list[str]] = {}  # tools that were to act on the same items, told once
            for name, on in _on_items(cover).items():
                by_items.setdefault(tuple(on), []).append(name)
            text = cover.text(join([f"{join(names, 4)} on {join(list(on), 6)}" for on, names in by_items.items()], 3),
                              last)
            why_turns = [cover.turn]
        else:
            offer = unmade_offer(r, missed[0]) if len(missed) == 1 else None  # why first: an offer let drop
            promise = agreed_unmade(r, missed[0]) if len(missed) == 1 and offer is None else None
            text = (offer.text(missed[0]["name"]) + " " if offer else promise.text() + " " if promise else "") + (
                    f"The task expected {join([call_text(e) for e in missed], 3)}, and the run never made "
                    + ("that change" if len(missed) == 1 else "those changes")
                    + (f" (the agent's last turn was {last})." if last is not None else "."))
            why_turns = ([x for x in (offer.first_at, offer.at, offer.reply_at) if x is not None] if offer else
                         [promise.at, promise.reply_at] if promise else [])
        cannot = said_before_looking(r)  # what the run said instead of trying a tool
        if cannot is not None:
            text = (f"At turn {cannot[0]}, with no tool called ({cannot[2]}), the agent told the user it could not: "
                    f"\"{cannot[1]}\" {text}")
            why_turns = [cannot[0]] + why_turns
        reason = (rule_refusals.for_missed(r, missed[0], said) if len(missed) == 1
                  else rule_refusals.refused_one(r, missed))
        out.append(_why(KeyFact(text, why_turns + ([last] if last is not None else []),
                                "missed-change", list(dict.fromkeys(e["name"] for e in missed))), reason))
        if why_turns or (reason is not None and reason.leads):  # it says why the run failed: it leads the page
            r.memo.setdefault(LEADS, []).append(out[-1].text)
        # second, after the first change that went wrong; first when that change was a hand-off,
        # which changes no record: the changes left unmade are what the run failed by
        out.insert(0 if handed_off_first else 1, out.pop())
    return out


def _kept(r: Reading, c: Call, reason: rule_reasons.Reason | None) -> rule_reasons.Reason | None:
    """The reason, with what the rule left open on the record ``c`` acted on kept by turn (RULED):
    the run's record carries it (trial_record.py), so a successful trial's page can say why this
    change was wrong, not only that it differed."""
    left = rule_refusals.left_open(reason)
    if left:
        r.memo.setdefault(RULED, {})[c.n] = left
    return reason


def _on_items(cover) -> dict[str, list[str]]:
    """Each tool of the changes a look-up list explains, with the listed items it was to act on."""
    out: dict[str, list[str]] = {}
    for e in cover.explains:
        on = [v for _p, v in leaves(e["arguments"]) if v in cover.missed_on]
        out.setdefault(e["name"], []).extend(x for x in on if x not in out.get(e["name"], []))
    return out


def _why(fact: KeyFact, reason: rule_reasons.Reason | None) -> KeyFact:
    """A fact with the run's own rule on it and the facts that rule names, when one clearly governs."""
    return fact if reason is None else replace(fact, text=f"{fact.text} {reason.text}", turns=fact.turns + reason.turns,
                                               rule=list(reason.about))


def _differing_args(r: Reading, c: Call, diffs) -> list[str]:
    """``tool.argument`` for each top-level argument that differs from the expected call, with
    ``@source`` where every differing value of it was credited to one kind of place."""
    kinds: dict[str, list[set[str]]] = {}  # top-level argument -> per differing value, its places' kinds
    for path, _want, _got in diffs:
        key = path.split("[")[0].split(".")[0]
        kinds.setdefault(key, []).append(set().union(*credited_kinds(r, c, {path}).values()))
    out = []
    for key, per_value in kinds.items():
        one = set().union(*per_value)
        whole = all(per_value) and len(one) == 1  # every differing value credited, all to one kind of place
        out.append(f"{c.name}.{key}" + (f"@{one.pop()}" if whole else ""))
    return out


def unread_facts(r: Reading) -> list[KeyFact]:
    """The look-ups the task expected and the run never made: a record it acted or answered without."""
    unread = [e for e in missed_lookups(r) if not only_arithmetic(e["arguments"])]
    if not unread:
        return []
    # what those look-ups take that the user had written: the run had it, and asked on or went without
    given: dict[str, int] = {}
    for e in unread[:2]:
        for _p, v in leaves(e["arguments"]):
            if isinstance(v, str) and len(v) >= 3 and v not in given:
                said = next((u.turn for u in r.run.turns if t_is_user(u) and stands_alone(v.lower(), (u.content or "").lower())),
                            None)
                if said is not None:
                    given[v] = said
    told = join([f"\"{v}\" at turn {n}" for v, n in given.items()], 3)
    return [KeyFact(f"The task expected the look-up{'s' if len(unread) > 1 else ''} "
                    f"{join([call_text(e) for e in unread], 2)}, and the run never made "
                    + ("it" if len(unread) == 1 else "them") + (f"; the user had given {told}" if given else "") + ".",
                    sorted(set(given.values())))]
