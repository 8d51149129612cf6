"""Other trials of the same task on a compilation page: what a success did that its task's
failed trials did not, and where a failure parted from a successful trial of its task.

Benchmarks run a task several times (tau-bench's trials, Reflexion's retries of a question);
when the outcomes are mixed, the decisive call that differs between them is the strongest
evidence a page can give. Each run's entry keeps its decisive calls (compilers/trial_record.py),
so a page's line is a function of the entries of its task alone, made once every run is
compiled; corpus/trial_pages.py puts each line on its page. A success's own line is made in
corpus/trial_success.py; a failure's here.
"""

from __future__ import annotations

import re

from ..compilers.model_cost import dearer_each
from ..compilers.trial_record import looked_up
from . import layout
from .answered_refusals import shared_cites
from .trial_compare import compare, decides
from .trial_edits import code_instead, edits_apart, other_way, same_calls as _same_calls
from .trial_leads import LEAD_ENDS, missed_lead
from .trial_recur import ANSWER_DO, made_by, recurring
from .trial_success import _told_apart, success_line
from .trial_wording import _answer_found, _call, _call_keys, _Line, _made, _shown, _sources, _t, stopped


def _costs(entry: dict, best: dict) -> str:
    """"; the log records this run's model cost as 3 over 7 calls, and the successful trial's as
    0.61 over 8: no more calls than it, each dearer" where both logs record it: a run stopped for cost is
    not shown to have wasted calls when the trial that succeeded made as many."""
    mine, theirs = ((e.get("decisive") or {}).get("cost") for e in (entry, best))
    if not mine or not theirs:
        return ""
    (c1, n1), (c2, n2) = mine, theirs
    said = (f"; the log records this run's model cost as {c1:g}{f' over {n1} calls' if n1 else ''}, and the "
            f"successful trial's as {c2:g}{f' over {n2}' if n2 else ''}")
    if dearer_each(mine, theirs):
        said += ": no more calls than it, each dearer"
    return said


def _unread(entry: dict, call: dict, keys: list[str]) -> str:
    """", a look-up this run never made" when the successful trial took a value from a tool's
    answer and this run (whose look-ups are recorded) never called that tool; else, when the
    successful trial fetched the record its change acts on and this run never fetched it, that."""
    record = entry.get("decisive") or {}
    after, asked = call.get("after") or {}, record.get("lookups")
    fetched = (f", after {_t(after['tool'] + '(' + after['query'] + ')')} at its turn {after['turn']}, a look-up this "
               "run never made") if after.get("query") and asked is not None \
        and looked_up(after["tool"], after["query"]) not in asked else ""
    reads = record.get("reads")
    if reads is None:
        return fetched
    for k in keys:  # the user named the value from a listing this run never read: that listing first
        seen = (call.get("listed") or {}).get(k)
        if seen and seen["tool"] not in reads:
            return (f", a value {_t(seen['tool'])}'s answer had listed before that (its turn {seen['turn']}), a "
                    "look-up this run never made")
    for k in keys:
        m = re.match(r"(\S+)'s answer \(", (call.get("from") or {}).get(k, ""))
        if m and m.group(1) not in reads:
            return ", a look-up this run never made"
    return fetched


def failure_line(entry: dict, won: list[dict], total: int, compare=compare) -> tuple[str, list[int], bool]:
    """The line of a failure whose task has a successful trial: where it parted from the
    successful trial closest to it (fewest differences; the earliest on a tie), a difference
    every successful trial shares first. ``compare``: trial_compare.compare, or one that
    remembers its answers (``lines``)."""
    line = _Line(entry["step"])
    ranked = sorted(won, key=lambda w: (len(compare(w, entry)), layout.id_number(w["step"])))
    best = ranked[0]
    diffs = compare(best, entry)
    who = (f"The successful trial {line.runs([best['step']])} of this task"
           + (f" ({len(won)} of its {total} trials succeeded)" if len(won) > 1 else ""))
    if not diffs:
        apart, _turns = _told_apart(best, [entry], "this run never")
        apart = apart.replace("this run wrote", "it wrote", 1).replace("(turn", "(its turn")
        wrote = edits_apart(best, entry) if not apart else None  # the same files: what the edits wrote
        if wrote is not None:
            return f"{who} {wrote[0]}.", wrote[1], True
        return f"{who} {_same_calls(entry, apart)}.", [], False
    d = next((x for x in diffs if decides(x, won)), diffs[0])
    kind = d.aspect[0]
    at = f" at its turn {d.ref['turn']}" if isinstance(d.ref.get("turn"), int) else ""
    turns = [d.other["turn"]] if isinstance(d.other.get("turn"), int) else []
    if kind == "answer":
        theirs = f"answered \"{_t(d.ref['text'])}\"{at}{_answer_found(d.ref)}"
        mine = f"this run answered \"{_t(d.other['text'])}\"" if d.other else "this run gave no answer"
        found = d.ref.get("found") or {}
        if not found.get("query") and (d.ref.get("read") or {}).get("query"):  # a verdict: the look-up it rested on
            found = d.ref["read"]
            theirs += f" after {_t(found['tool'] + '[' + found['query'] + ']')} went through at its turn {found['turn']}"
        query = looked_up(found["tool"], found["query"]) if found.get("query") else ""
        if query and query not in (entry.get("decisive") or {}).get("lookups", [query]):
            mine += ", and no such look-up of this run went through"
            lead = missed_lead(entry, found)
            if lead is not None:
                mine += lead[0]
                turns += [t for t in lead[1] if t not in turns]
    elif kind == "args":
        key = d.aspect[2]
        theirs = (f"sent `{key}` {_t(_shown(d.ref['values'], key))} in {d.aspect[1]}{at}"
                  f"{_sources(d.ref, [key], False, False)}{_unread(entry, d.ref, [key])}")
        mine = f"this run sent {_t(_shown(d.other['values'], key))}"
    elif kind == "missing":
        keys = _call_keys(d.ref)
        theirs = f"{_t(_made(d.ref))}{at}{_sources(d.ref, keys, False)}{_unread(entry, d.ref, keys)}"
        mine = (f"this run {_t(_made(d.other, instead=True))} instead" if d.other else
                "this run made no calls at all" if (entry.get("decisive") or {}).get("no_calls") else
                "the harness ended this run before it made it" + _costs(entry, best) if stopped(entry)
                else "this run never made it")
        why = (entry.get("decisive") or {}).get("refused")
        cited = shared_cites(why, best, d.aspect[1], d.ref["turn"])
        if cited and not d.other:  # the reason this run gave for not making it, answered by the success
            mine += (f", telling the user it could not (its turn {why['turn']}) and naming {cited.split(', which ')[0]}"
                     f" of the same record, which the successful trial had looked up too")
            turns.append(why["turn"])
    else:
        theirs = f"made no {d.aspect[1]} call that went through"
        mine = f"this run's {_t(_call(d.other))} went through"
    # a file the successful trial changed and this run did not: the run's decisive difference, which leads
    return f"{who} {theirs}; {mine}.", turns, bool(d.ref.get("file"))


def _remembered():
    """``compare``, made once per pair of entries: a task's lines compare the same pairs up to
    three times. Only for one ``lines`` call (the entries do not change during it); the lists
    it hands out are shared, and no caller changes them."""
    made: dict[tuple[int, int], list] = {}

    def remembered(ref: dict, other: dict) -> list:
        key = (id(ref), id(other))
        diffs = made.get(key)
        if diffs is None:
            diffs = made[key] = compare(ref, other)
        return diffs

    return remembered


def lines(entries: list[dict], shapes: dict[str, str] | None = None) -> dict[str, tuple[str, list[int], bool]]:
    """step -> (line, this run's turns it cites, whether it takes the place of restating facts),
    for every run with a trial of the other outcome among ``entries`` (the runs of one task),
    and every failure whose mistake another failed trial made too (corpus/trial_recur.py).
    ``shapes`` gets each success's step shape (corpus/trial_success.success_line)."""
    wins = [e for e in entries if e["outcome"] == "success"]
    fails = [e for e in entries if e["outcome"] == "failure"]
    out = {}
    compare = _remembered()  # each (success, failure) pair is compared by both lines, and to rank
    if not fails:
        for e in wins:  # no failure to set them against: where two successes wrote one place otherwise, say so
            other = _other_success(e, wins)
            if other is not None:
                out[e["step"]] = other
        return out
    for e in wins:
        out[e["step"]] = success_line(e, fails, wins, compare, shapes)
        said_no = declined_line(e, fails)
        if said_no is not None:
            text, turns, restates = out[e["step"]]
            out[e["step"]] = (f"{text} {said_no[0]}", turns + said_no[1], restates)
    mistakes = made_by(entries) if len(fails) > 1 else {}
    for e in fails:  # a failure's mistake other trials made too, after where it parted from a success
        again = recurring(e, entries, mistakes) if len(fails) > 1 else None
        made = failure_line(e, wins, len(entries), compare) if wins else None
        if made is not None and again is not None:
            said = again[0]
            if made[0].endswith(LEAD_ENDS) and said.endswith(f": {ANSWER_DO}."):
                said = said[:-len(f": {ANSWER_DO}.")] + "."  # the lead to the look-up is the advice already
            made = (f"{made[0]} {said}", made[1] + again[1], made[2])
        elif again is not None:
            made = (again[0], again[1], False)
        if made is not None and wins and (e.get("decisive") or {}).get("tests_only"):
            closest = sorted(wins, key=lambda w: (len(compare(w, e)), layout.id_number(w["step"])))
            made = (made[0] + code_instead(e, closest, lambda s: _Line(e["step"]).runs([s]), made[0]), made[1], made[2])
        if made is not None:
            out[e["step"]] = made
    return out


def declined_line(entry: dict, fails: list[dict]) -> tuple[str, list[int]] | None:
    """For a success that told the user it could not make a change (its record's ``declined``), with
    the record it had last looked up, when failed trials of its task made that change on that very
    record: the refusal is the step they missed, said in the success's words."""
    line = _Line(entry["step"])
    for d in (entry.get("decisive") or {}).get("declined") or ():
        on = {(k, v) for k, v in d["on"]}
        made = [f["step"] for f in fails if any(  # a change the task expected is no step the refusal saves
            c.get("tool") == d["tool"] and not c.get("expected")
            and on & {(k, v) for k, v in (c.get("values") or {}).items() if isinstance(v, str)}
            for c in (f.get("decisive") or {}).get("changes") or ())]
        if not made:
            continue
        value = next(v for k, v in d["on"] if any(
            (k, v) in {(a, b) for a, b in (c.get("values") or {}).items()}
            for f in fails if f["step"] in made for c in (f.get("decisive") or {}).get("changes") or ()))
        n, k = len(fails), len(made)
        who = ("the failed trial" if n == 1 else "both failed trials" if k == n == 2 else f"all {n} failed trials"
               if k == n else f"{k} of the {n} failed trials")
        a = "an" if d["tool"][:1].lower() in "aeiou" else "a"
        return (f"At turn {d['turn']} this run told the user it could not make {a} {_t(d['tool'])} change, after looking "
                f"up {_t(value)}: \"{_t(d['text'])}\"; {who} of this task made that change on {_t(value)} "
                f"({line.runs(made)})."), [d["turn"]]
    return None


def _other_success(entry: dict, wins: list[dict]) -> tuple[str, list[int], bool] | None:
    """The line of a success whose task's other successful trial changed the same file and wrote
    another thing at the same place: both passed, so neither edit is the only way (a reader must
    not copy one as the fix)."""
    for w in sorted(wins, key=lambda w: layout.id_number(w["step"])):
        if w["step"] == entry["step"]:
            continue
        apart = other_way(entry, w)
        if apart is not None:
            link = _Line(entry["step"]).runs([w["step"]])
            return (f"The other successful trial {link} of this task {apart[0]}: both succeeded, so the task's check "
                    "did not tell the two lines apart, and neither run's success shows its line is the right one.",
                    apart[1], False)
    return None


def entry_field(comp) -> dict:
    """The ``decisive`` field of a run's corpus.json entry, its restating facts placed as the
    page shows them (a model's page leaves out some of the offline facts)."""
    record = dict(getattr(comp, "decisive", None) or {})
    if not record:
        return {}
    if record.get("restates"):
        said = {text for _i, text, _n in record["restates"]}
        record["restates"] = [[i, f.text, list(f.turns)] for i, f in enumerate(comp.in_short) if f.text in said]
        if not record["restates"]:
            del record["restates"]
    return {"decisive": record}
