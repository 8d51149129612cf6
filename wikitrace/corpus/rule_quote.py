"""The system prompt's own rule on the argument a lesson's advice tells the agent to check, quoted
in What to do.

Advice like "check `cabin` before update_reservation_flights" says where to look, not what decides
the value; the rule that does is usually a sentence of the runs' system prompt
(compilers/field_rules.py keeps it per run and argument). It is quoted when the argument the advice says to
check (else the first one it names in a code span) is one of a tool the advice names too, and every source run of the lesson kept the
same sentence (or two) for that pair, which What to do does not quote yet: a rule that differs between the runs, or that some run's
prompt lacks, is not the lesson's rule. Logs without a system prompt keep none, so nothing is
added to their lessons.
"""

from __future__ import annotations

import json
import re

_SPAN = re.compile(r"`([^`\s]+)`")
_CHECK = re.compile(r"\bcheck (?:the )?`([^`\s]+)`")  # this package's own "check the `cabin` you send"
LEAD = "The system prompt says: "
_OPENING = 6  # words of a rule that, quoted, show the page already quotes it (perhaps cut short)


def rules_of(run: dict) -> dict[tuple[str, str], tuple[str, ...]]:
    """(tool, argument) -> the prompt's rule sentences on it that the run kept, in their order."""
    out: dict[tuple[str, str], tuple[str, ...]] = {}
    for tool, name, value, sentence in run.get("value_rules") or ():
        if value == "":
            out[(tool, name)] = out.get((tool, name), ()) + (sentence,)
    return out


def quote_rule(entry: dict, members: list[tuple[dict, dict]], of_run: dict[str, dict],
               known: dict[str, set[str]] | None = None) -> None:
    """Adds the shared rule sentence on the argument the advice names to ``entry["advice"]``.
    ``of_run``: run step -> rules_of(run), made once per run for the whole gather; ``known``: the
    values the task type's records hold by field (``held`` of its runs), made once per type."""
    known = known or {}
    advice = entry.get("advice") or ""
    found = _CHECK.search(advice) or _SPAN.search(advice)
    if not found:
        return
    name = found.group(1)  # the argument the advice is about: the one it says to check, else the first it names
    runs = [of_run.get(r["step"], {}) for r, _l in members]
    for tool in sorted({t for t, f in runs[0] if f == name}):
        if not re.search(rf"\b{re.escape(tool)}\b", advice):
            continue
        said = {rules.get((tool, name)) for rules in runs}
        if len(said) != 1 or None in said:
            return
        mine = held([r for r, _l in members])
        quotes = [s for s in said.pop() if not _quoted(s, advice) and not _other_case(s, mine, known)]
        quotes += [s for s in _same_case(quotes, tool, runs, known) if not _quoted(s, advice)]
        if quotes:
            entry["advice"] = f"{advice} {LEAD}" + " ".join(f'"{q}"' for q in quotes)
        return


def _same_case(quotes: list[str], tool: str, runs: list[dict], known: dict[str, set[str]]) -> list[str]:
    """The other rules on ``tool`` every run kept that name a case the quotes name ("basic economy"):
    "Basic economy flights cannot be modified" read without "all reservations, including basic
    economy, can change cabin" tells an agent to refuse what the prompt allows."""
    named = {p for values in known.values() for v in values if len(p := _phrase(v)) >= 4
             and any(f" {p} " in f" {_phrase(q)} " for q in quotes)}
    if not named:
        return []
    shared = None
    for rules in runs:
        mine = {q for (t, _a), sentences in rules.items() if t == tool for q in sentences}
        shared = mine if shared is None else shared & mine
    return [q for q in sorted(shared or ()) if q not in quotes and any(f" {p} " in f" {_phrase(q)} " for p in named)]


def _quoted(sentence: str, text: str) -> bool:
    """Whether ``text`` already quotes the sentence, whole or cut short after its opening words."""
    opening = " ".join(sentence.split()[:_OPENING])
    return f'"{opening}' in text or sentence in text


def held(runs: list[dict]) -> dict[str, set[str]]:
    """field -> the values the records the runs looked up hold for it (their ``rec|`` patterns)."""
    out: dict[str, set[str]] = {}
    for r in runs:
        hold(r, out)
    return out


def hold(run: dict, out: dict[str, set[str]]) -> None:
    """``held`` one run at a time, into ``out`` (a task type's is kept with its pattern counts:
    corpus/pattern_tally.py)."""
    for p in run.get("patterns") or ():
        if p.startswith("rec|"):
            try:
                pairs = json.loads(p.split("|", 2)[2])
            except ValueError:
                continue
            for field, value in pairs:
                out.setdefault(field, set()).add(str(value))


def _phrase(value: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", value.lower()))


def _other_case(sentence: str, mine: dict[str, set[str]], known: dict[str, set[str]]) -> bool:
    """Whether the sentence is the rule of a case none of the lesson's runs is in: it names, as a term
    of its own, a value the task type's records hold for a field ("Basic economy flights cannot be
    modified" names `cabin` "basic_economy"), and the lesson's runs' records hold that field with
    other values only ("economy", "business"). A rule on another cabin is no rule on their change."""
    low = " " + _phrase(sentence) + " "
    for field, values in known.items():
        phrases = {v: _phrase(v) for v in values if len(_phrase(v)) >= 4}
        named = {v for v, p in phrases.items() if f" {p} " in low}
        # a value named only inside a longer one named too ("economy" in "basic economy") is not named
        named = {v for v in named if not any(w != v and f" {phrases[v]} " in f" {phrases[w]} " for w in named)}
        if named and mine.get(field) and not named & mine[field]:
            return True
    return False
