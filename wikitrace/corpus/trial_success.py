"""A success's line against the failed trials of its task: what to do, from the difference
that parts the successful trials from most of the failed ones (corpus/trial_contrast.py puts
the lines of a task together, and writes the failures' own)."""

from __future__ import annotations

import json

from collections import defaultdict

from ..compilers.trial_record import answer_norm, looked_up
from .answered_refusals import shared_cites
from .trial_compare import _RANK, Diff, compare, decides
from .trial_edits import changed_files as _changed_files, edits_apart, same_calls as _same_calls
from .trial_wording import (SHOWN, _answer_found, _call, _call_keys, _Line, _made, _other_side, _shown, _sources, _t, stopped,
                            others_phrase)


def _instruction(entry: dict, ref: Diff, k: int, asked: list, alike: bool,
                 tail: str = "") -> tuple[str, list[int], str] | None:
    """What this success did at the aspect it is set against its failed trials by, said as what
    to do, the turns of this run that show it and the step's shape (``APART``, with the tool or
    argument it names after "|"); None when the log shows no step to copy."""
    kind = ref.aspect[0]
    if kind == "answer":
        text, found = ref.ref["text"], ref.ref.get("found") or {}
        turns = [ref.ref["turn"]] + ([found["turn"]] if found else [])
        if not found.get("query") or answer_norm(found["query"]) == answer_norm(text):
            # no look-up led to it (a search of the answer itself leads nowhere): no step to copy, but an
            # answer each failed trial gave with words beside it ("no, yes" for "no") says what to leave out
            ours = set(answer_norm(text).split())
            theirs = [set(answer_norm(d.other["text"]).split()) for _s, d in asked if d.other]
            if ours and len(theirs) == len(asked) and all(ours < o for o in theirs):
                return f"Give only the answer asked for (\"{_t(text)}\"), nothing beside it, as this run did", \
                    [ref.ref["turn"]], "only"
            return None
        q = _t(found["tool"] + "[" + found["query"] + "]")
        listed = found.get("listed_by")
        how = ""  # how it came to that look-up, in terms any task has: the name an error listed
        if listed:
            how = f" (the name its {listed['tool']} error at turn {listed['turn']} listed)"
            turns.append(listed["turn"])
        theirs = {answer_norm(d.other["text"]) for _s, d in asked if d.other}
        ours = set(answer_norm(text).split())
        # failed trials that made this very look-up and answered from it: what parted them is how much they gave
        same = [set(answer_norm(d.other["text"]).split()) for _s, d in asked
                if d.other and (d.other.get("found") or {}).get("query") == found["query"]]
        if len(theirs) == 1 and len(asked) == k:
            same = [set(next(iter(theirs)).split())]
        if same and all(o < ours for o in same):
            return f"Give the answer in full, as {q}{how} returned it (\"{_t(text)}\"), as this run did", turns, "full"
        if same and all(ours < o for o in same):
            return f"Give the answer alone, as {q}{how} returned it (\"{_t(text)}\"), as this run did", turns, "alone"
        if alike:  # they read the same answer and gave another
            return f"Answer from what {q}{how} returned (\"{_t(text)}\"), as this run did", turns, "read"
        bare = " without quote marks" if "inside quote marks" in tail else ""
        # a retry whose reflections had named the answer (compilers/trial_record.py): the look-up did not find it
        named = f" (a reflection it was given had named the answer before {q} returned it)" if ref.ref.get("given") else ""
        shape = "bare" if bare else "listed" if listed else "followed" if found.get("named_by") else "look-up"
        return f"Look up {q}{how}{bare} and answer from what it returns (\"{_t(text)}\"), as this run did{named}", \
            turns, shape
    if kind == "args":
        key = ref.aspect[2]
        return (f"Send `{key}` {_t(_shown(ref.ref['values'], key))} in {ref.aspect[1]}{_sources(ref.ref, [key], True, False)}, "
                f"as this run did"), [ref.ref["turn"]], f"args|{ref.aspect[1]}|{key}"
    if kind == "missing":
        return (f"{_t(_made(ref.ref, order=True))}"
                f"{_sources(ref.ref, _call_keys(ref.ref), True)}, as this run did at turn {ref.ref['turn']}"
                + (" (the change the task expected)" if ref.ref.get("expected") else "")), [ref.ref["turn"]], \
        f"make|{ref.aspect[1]}"
    # the run may have made the call and met an error: what it shows is that none went through
    return f"Make no {ref.aspect[1]} change, as this run had none go through", [], f"none|{ref.aspect[1]}"


def _fact(ref: Diff) -> tuple[str, list[int]]:
    """What this success did at the aspect, said as a fact (the difference did not decide the run alone)."""
    kind = ref.aspect[0]
    if kind == "answer":
        return f"this run answered \"{_t(ref.ref['text'])}\"{_answer_found(ref.ref) or _unfound(ref.ref)}", [ref.ref["turn"]]
    if kind == "args":
        return f"this run sent {_t(_shown(ref.ref['values'], ref.aspect[2]))}", [ref.ref["turn"]]
    if kind == "missing":
        return f"this run's {_t(_call(ref.ref))} went through", [ref.ref["turn"]]
    return "this run had none go through", []


def _unfound(answer: dict) -> str:
    """Of a success's answer no look-up returned (its record has no ``found``; a verdict or a yes is
    chosen, not returned): where the log shows it came from, so the trial line does not pass a name
    from a reflection or from what the agent knew off as something its look-ups found."""
    if answer.get("chosen") or not answer_norm(answer.get("text") or ""):
        return ""
    if answer.get("given"):
        return ", which no look-up of this run returned but a reflection it was given had named"
    return ", which no look-up of this run returned"


def success_line(entry: dict, failed: list[dict], won: list[dict] = (), compare=compare,
                 shapes: dict[str, str] | None = None) -> tuple[str, list[int], bool]:
    """The line of a success whose task has failed trials: what to do, from the difference that
    parts the successful trials (``won``, this one among them) from most of the failed ones.
    ``shapes``, when given, gets the shape of that step (``_instruction``) by the run's step."""
    line = _Line(entry["step"])
    diffs = {f["step"]: compare(entry, f) for f in failed}
    by_aspect: dict[tuple, list[Diff]] = defaultdict(list)
    for step, ds in diffs.items():
        for d in ds:
            by_aspect[d.aspect].append((step, d))
    same = [s for s, ds in diffs.items() if not ds]
    n = len(failed)
    trials = f"failed trial{'s' if n != 1 else ''} of this task"
    if not by_aspect:
        apart, turns = _told_apart(entry, failed, "none of them" if n > 1 else "it never")
        looked = _looked_apart(entry, failed, "none of them did" if n > 1 else "it never did")
        apart = "; ".join(x for x in (apart, looked) if x)
        wrote = edits_apart(entry, failed[0], on_success=True) if n == 1 else None
        if wrote is not None:  # the same file changed: what the edits wrote tells them apart, first
            also = f"; besides, {apart}" if apart else ""
            return f"The {trials}, {line.runs(same)}, {wrote[0]}{also}.", sorted({*wrote[1], *turns}), bool(apart)
        return (f"The {n} {trials} ({line.runs(same)}) {_same_calls(entry, apart)}." if n > 1 else
                f"The {trials}, {line.runs(same)}, {_same_calls(entry, apart)}."), turns, bool(apart)
    peers = [w for w in won if w["step"] != entry["step"]]
    firm = {a: all(decides(d, peers) for _s, d in hits) for a, hits in by_aspect.items()}
    aspect = min(by_aspect, key=lambda a: (not firm[a], -len(by_aspect[a]), _RANK[a[0]],
                                           min(d.turn for _s, d in by_aspect[a]), a))
    hits = by_aspect[aspect]
    ref = hits[0][1]
    grouped: dict[str, list[str]] = defaultdict(list)
    for step, d in hits:
        grouped[_other_side(d, stopped(_entry(failed, step)))].append(step)
    if aspect[0] == "extra" and len(grouped) > 1:  # made with other values each: the tool is what they share
        grouped = {f"made a {aspect[1]} call that went through": [s for s, _d in hits]}
    k = len(hits)
    who = (f"the {trials}" if n == 1 else f"both {trials}" if k == n == 2 else f"all {n} {trials}" if k == n
           else f"{k} of the {n} {trials}")
    where = f" in {aspect[1]}" if aspect[0] == "args" else ""
    if len(grouped) == 1:
        (said, steps), = grouped.items()
        theirs = f"{who} {said}{where} ({line.runs(steps)})"
    else:  # the values they chose instead, each with its trials
        theirs = others_phrase(who, aspect[0] if aspect[0] == "answer" else (aspect[0], aspect[-1]), where,
                               grouped, line)
    tail = ""
    if aspect[0] == "answer":
        found = ref.ref.get("found") or {}
        query = looked_up(found["tool"], found["query"]) if found.get("query") else ""
        asked = [(_entry(failed, s).get("decisive") or {}).get("lookups") for s, _d in hits]
        if query and all(a is not None for a in asked):  # every trial's look-ups known
            missed = [a for a in asked if query not in a]
            quoted = [query in ((_entry(failed, s).get("decisive") or {}).get("quoted") or []) for s, _d in hits]
            tail = (", and that look-up never went through there: it sent that name inside quote marks" if k == 1 and
                    missed and all(quoted) else
                    ", a look-up that went through in none of them, each sending that name inside quote marks"
                    if len(missed) == k and all(quoted) else
                    ", and that look-up never went through there" if k == 1 and missed else
                    ", a look-up that went through in none of them" if len(missed) == k else
                    f"; that look-up went through in {k - len(missed)} of them "
                    f"({line.runs([s for (s, _d), a in zip(hits, asked) if query in a])})" if missed else
                    ", after the same look-up" if k == 1 else ", all after the same look-up")
            listed = [s for s, _d in hits if any(looked_up(t, nm) == query for t, nm, _n in
                                                  (_entry(failed, s).get("decisive") or {}).get("offered") or ())]
            if listed:  # the name stood in their own error's list, never sent: the way out their logs show
                tail += (", though its own error had listed that name" if k == 1 else
                         ", though an error had listed that name in both" if len(listed) == k == 2 else
                         ", though an error had listed that name in each of them" if len(listed) == k else
                         f", though an error had listed that name in {line.runs(listed)}")
    if aspect[0] == "missing":  # what a trial that never made the change told the user instead (a refusal, often)
        tail = _told_user(entry, failed, [s for s, _d in hits], line, aspect[1], ref.ref["turn"])
    if aspect[0] != "answer":  # why their change was wrong, where its rule read on their record says so
        tail += _ruled(failed, [s for s, _d in hits], aspect[1], k)
    # a change the harness left the trials no turn for is no choice they made: no instruction from it
    cut_short = aspect[0] == "missing" and all(stopped(_entry(failed, s)) for s, _d in hits)
    told = _instruction(entry, ref, k, hits, bool(tail) and "same look-up" in tail, tail) \
        if firm[aspect] and not cut_short else None
    if told is not None:
        mine, turns, shape = told
        if shapes is not None:
            shapes[entry["step"]] = shape
        text = f"{mine}: {theirs}{tail}."
    elif firm[aspect]:
        mine, turns = _fact(ref)
        mine += _as_fact(tail)
        text = f"{theirs}; {mine}." if len(grouped) == 1 else f"{theirs}. {mine[0].upper()}{mine[1:]}."
    else:
        mine, turns = _fact(ref)
        mine += _as_fact(tail)
        text = f"{theirs[0].upper()}{theirs[1:]}; {mine}" if len(grouped) == 1 else \
            f"{theirs[0].upper()}{theirs[1:]}. {mine[0].upper()}{mine[1:]}"
        unlike = [w["step"] for w in peers if not all(decides(d, [w]) for _s, d in hits)]
        text += (f"; the successful trial{'s' if len(unlike) != 1 else ''} {line.runs(unlike)} did as "
                 f"{'they' if k > 1 else 'it'} did here, so this alone did not decide the run." if unlike else ".")
    text = text[0].upper() + text[1:]
    wrote = edits_apart(entry, _entry(failed, same[0]), on_success=True) if len(same) == 1 else None
    if wrote is not None:  # the one other failed trial changed the same file: what its edit wrote differs
        text += f" The other failed trial, {line.runs(same)}, {wrote[0]}."
        turns = turns + [t for t in wrote[1] if t not in turns]
    elif same:
        files = _changed_files(entry)  # an edit's text is not compared: "the same calls" would say more
        text += (f" {len(same)} other failed trial{'s' if len(same) != 1 else ''} ({line.runs(same)}) "
                 + (f"changed the same file{'s' if len(files) > 1 else ''} as this run ({', '.join(files[:3])})"
                    if files else "had the same calls go through as this run"))
        apart, more = _told_apart(entry, [_entry(failed, s) for s in same], "")
        text += f"; unlike {'them' if len(same) > 1 else 'it'}, {apart[0].lower()}{apart[1:]}." if apart else "."
        turns = turns + more
    return text, turns, True


def _ruled(failed: list[dict], steps: list[str], tool: str, k: int) -> str:
    """"; on the record they acted on, the system prompt's rule on cancel_reservation, read on its
    fields, left only "if the airline cancelled the flight" open": what each failed trial's own page
    found its ``tool`` change's rule left open (compilers/change_facts.py RULED), said when every one
    of ``steps`` found the same; "" otherwise."""
    left, records = set(), set()
    for step in steps:
        found = [c for c in (_entry(failed, step).get("decisive") or {}).get("changes") or ()
                 if c["tool"] == tool and c.get("ruled")]
        if not found:
            return ""
        left.update(c["ruled"] for c in found)
        records.update(json.dumps(c.get("values"), sort_keys=True) for c in found)
    if len(left) != 1:
        return ""
    (what,) = left
    where = ("the record it acted on" if k == 1 else "the record they acted on" if len(records) == 1
             else "the records they acted on")
    said = "left no case open" if what == "closed" else f"left only {what} open"
    return (f"; on {where}, the system prompt's rule on {tool}, read on the record's fields, {said} "
            f"({'its page gives' if k == 1 else 'their pages give'} the fields)")


def _as_fact(tail: str) -> str:
    """A look-up tail of an instruction, said after "this run answered X, which S had returned"."""
    return (tail.replace(", and that look-up never", ", a look-up that never")
            .replace(", all after the same look-up", ", a look-up all of them made too")
            .replace(", after the same look-up", ", a look-up it made too"))


def _told_apart(entry: dict, others: list[dict], them: str) -> tuple[str, list[int]]:
    """("this run wrote X (turn N), which …; <them> did", its turns) for the values the task
    expected the agent to tell the user that ``entry`` wrote and none of ``others`` did ("" when
    there are none, or a trial's record does not say what it wrote); no "; <them> …" when ``them``
    is empty."""
    mine = (entry.get("decisive") or {}).get("told")
    theirs = [(o.get("decisive") or {}).get("told") for o in others]
    if not mine or not others or any(t is None for t in theirs):
        return "", []
    apart = [(v, n) for v, n in mine if n is not None and all(n2 is None for t in theirs for v2, n2 in t if v2 == v)]
    if not apart:
        return "", []
    values = " and ".join(f"{v} (turn {n})" for v, n in apart[:SHOWN])
    one = len(apart) == 1
    text = f"this run wrote {values}, {'which' if one else 'values'} the task expected the agent to tell the user"
    tail = "" if not them else f"; {them} wrote {'it' if one else 'them'}" if them.endswith("never") else f"; {them} did"
    return text + tail, [n for _v, n in apart[:SHOWN]]


def _told_user(entry: dict, failed: list[dict], steps: list[str], line, tool: str, made_at: int) -> str:
    """"; step-0093 told the user instead (its turn 5): "…"": the refusal of ``tool`` of the first of
    ``steps`` whose refusal named a value of a record this success looked up too (with that value,
    which did not stop the change here), else the last words to the user of the first whose record
    keeps them (compilers/trial_record.py: a failed run that left an expected change unmade); ""
    when none does."""
    for step in steps:
        why = (_entry(failed, step).get("decisive") or {}).get("refused")
        cited = shared_cites(why, entry, tool, made_at)
        if cited:
            return (f"; {line.runs([step])} told the user it could not (its turn {why['turn']}): \"{_t(why['text'])}\", "
                    f"naming {cited}; this run looked up the same record and the change went through, so that value "
                    "did not stop it")
    for step in steps:
        record = _entry(failed, step).get("decisive") or {}
        said = record.get("said_last")
        if said and not any(c.get("tool") == tool for c in record.get("changes") or ()):
            # a trial that made another change of this tool reported that one: its last words are no "instead"
            return f"; {line.runs([step])} told the user instead (its turn {said[0]}): \"{_t(said[1])}\""
    return ""


def _looked_apart(entry: dict, others: list[dict], them: str) -> str:
    """"this run called get_user_details, which none of them did": the tools ``entry`` looked something
    up with that no trial of ``others`` did ("" when a record does not keep its look-ups)."""
    mine = (entry.get("decisive") or {}).get("reads")
    theirs = [(o.get("decisive") or {}).get("reads") for o in others]
    if not mine or not others or any(t is None for t in theirs):
        return ""
    apart = [tool for tool in mine if not any(tool in t for t in theirs)]
    if not apart:
        return ""
    return f"this run called {' and '.join(_t(x) for x in apart[:SHOWN])}, which {them}"


def _entry(entries: list[dict], step: str) -> dict:
    return next(e for e in entries if e["step"] == step)
