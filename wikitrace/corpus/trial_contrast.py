"""Other trials of the same task on a compilation page: what a success did that its task's
failed trials did not, and where a failure parted from a successful trial of its task.

Benchmarks run a task several times (tau-bench's trials, Reflexion's retries of a question);
when the outcomes are mixed, the decisive call that differs between them is the strongest
evidence a page can give. Each run's entry keeps its decisive calls (compilers/trial_record.py),
so a page's line is a function of the entries of its task alone, made once every run is
compiled; corpus/trial_pages.py puts each line on its page.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from ..compilers.trial_record import answer_norm, looked_up, norm
from ..controls import visible
from ..templates import md_text
from . import layout

SHOWN = 3  # trials linked, and distinct values named, per line


def task_of(entry: dict) -> tuple | None:
    if entry.get("task_id") is None:
        return None
    from .insights import kind_of

    return kind_of(entry), str(entry["task_id"])


@dataclass
class Diff:
    """One way two trials' decisive calls differ; ``ref`` is the successful side."""

    aspect: tuple  # ("answer",) | ("missing", tool) | ("args", tool, key) | ("extra", tool) | ("count", tool)
    turn: float  # the successful side's turn it is about (its order)
    ref: dict  # what the successful side did (call, value...)
    other: dict  # what the other side did


_RANK = {"answer": 0, "missing": 1, "args": 2, "extra": 3, "count": 4}


def _top(path: str) -> str:
    return re.split(r"[.\[#]", path, maxsplit=1)[0]


def _by_key(values: dict) -> dict[str, dict]:
    out: dict[str, dict] = defaultdict(dict)
    for path, v in values.items():
        out[_top(path)][path] = v
    return out


def _same(a: dict, b: dict) -> bool:
    """Two value sets of one argument mean the same: every path both hold has one value (a
    path only one side sets is a difference of shape, not of choice)."""
    return all(norm(a[p]) == norm(b[p]) for p in set(a) & set(b))


def _score(a: dict, b: dict) -> int:
    return sum(1 for p in set(a["values"]) & set(b["values"]) if norm(a["values"][p]) == norm(b["values"][p]))


def _pairs(mine: list[dict], theirs: list[dict]) -> tuple[list[tuple[dict, dict]], list[dict], list[dict]]:
    """Calls of one tool paired, each of ``mine`` with the unpaired call of ``theirs`` sharing
    most values (the earliest on a tie); then the calls left on each side."""
    left = list(theirs)
    pairs = []
    for a in mine:
        if not left:
            break
        b = max(left, key=lambda x: (_score(a, x), -x["turn"]))
        left.remove(b)
        pairs.append((a, b))
    paired = {id(a) for a, _ in pairs}
    return pairs, [a for a in mine if id(a) not in paired], left


def compare(ref: dict, other: dict) -> list[Diff]:
    """Where ``other``'s decisive calls differ from ``ref``'s (both run entries), in ``ref``'s order."""
    a, b = ref.get("decisive") or {}, other.get("decisive") or {}
    out: list[Diff] = []
    ra, oa = a.get("answer"), b.get("answer")
    if ra and (not oa or answer_norm(ra["text"]) != answer_norm(oa["text"])):
        out.append(Diff(("answer",), ra["turn"], ra, oa or {}))
    tools: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for side, rec in ((0, a), (1, b)):
        for c in rec.get("changes") or []:
            tools[c["tool"]][side].append(c)
    for tool, (mine, theirs) in tools.items():
        if not theirs:
            out.append(Diff(("missing", tool), mine[0]["turn"], mine[0], {}))
            continue
        if not mine:
            out.append(Diff(("extra", tool), float("inf"), {}, theirs[0]))
            continue
        pairs, extra_mine, extra_theirs = _pairs(mine, theirs)
        for x, y in pairs:
            mx, my = _by_key(x["values"]), _by_key(y["values"])
            for key in mx:
                if key in my and not _same(mx[key], my[key]):
                    out.append(Diff(("args", tool, key), x["turn"], {**x, "key": key}, {**y, "key": key}))
        if extra_mine or extra_theirs:
            out.append(Diff(("count", tool), (extra_mine or mine)[0]["turn"], {"n": len(mine)}, {"n": len(theirs)}))
    seen: dict[tuple, Diff] = {}
    for d in out:  # one difference per aspect: the first call it shows in
        if d.aspect not in seen or d.turn < seen[d.aspect].turn:
            seen[d.aspect] = d
    return sorted(seen.values(), key=lambda d: (d.turn, _RANK[d.aspect[0]]))  # stable: the call's own order


# --- how a line says it --------------------------------------------------------------------


def _shown(values: dict, key: str) -> str:
    """An argument's values, plainly: each item's scalars side by side, items joined by " + "."""
    items: dict[str, list[str]] = defaultdict(list)
    for path, v in values.items():
        if _top(path) != key or path.endswith("#"):
            continue
        m = re.match(re.escape(key) + r"\[(\d+)\]", path)
        items[m.group(1) if m else ""].append(str(v))
    text = " + ".join(" ".join(vs) for _i, vs in sorted(items.items(), key=lambda kv: int(kv[0] or -1)))
    if not text:
        n = values.get(f"{key}#")
        text = f"{n} item{'s' if n != 1 else ''}" if n is not None else "none"
    return _clip(text, 70)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _call(c: dict) -> str:
    keys = [k for k in _by_key(c["values"]) if not (k == "argument" and str(c["values"][k]) == c["tool"])]
    args = ", ".join(_shown(c["values"], k) if k == "argument" else f"{k} {_shown(c['values'], k)}" for k in keys[:2])
    return f"{c['tool']}({_clip(args, 90)})" if args else c["tool"]


def _t(text: str) -> str:
    return visible(md_text(text))


class _Line:
    """A line's words, its links to other trials' pages and this run's turns."""

    def __init__(self, here: str):
        self.link = layout.Linker(layout.compilation_doc(here), "/")
        self.parts: list[str] = []
        self.turns: list[int] = []

    def runs(self, steps: list[str]) -> str:
        shown = [f"[{s}]({self.link.rel(layout.compilation_doc(s))})" for s in steps[:SHOWN]]
        return ", ".join(shown) + (f" and {len(steps) - SHOWN} more" if len(steps) > SHOWN else "")


def _answer_found(ref: dict) -> str:
    found = ref.get("found")
    return f", which {_t(found['tool'] + '[' + found['query'] + ']')} had returned" if found and found.get("query") else ""


def _value_of(said: str) -> str:
    """The value alone of an ``_other_side`` phrase (the words before it dropped)."""
    if said == "gave no answer":
        return "no answer"
    for head in ("answered ", "sent "):
        if said.startswith(head):
            rest = said[len(head):]
            return rest.split(" ", 1)[1] if head == "sent " else rest
    return said


def _other_side(d: Diff) -> str:
    """What a trial did at this aspect, as a value a line can group trials by."""
    kind = d.aspect[0]
    if kind == "answer":
        return f"answered \"{_t(d.other['text'])}\"" if d.other else "gave no answer"
    if kind == "args":
        return f"sent `{d.aspect[2]}` {_t(_shown(d.other['values'], d.aspect[2]))}"
    if kind == "count":
        return f"made {d.other['n']} {d.aspect[1]} call{'s' if d.other['n'] != 1 else ''} that went through"
    if kind == "missing":
        return f"made no {d.aspect[1]} call that went through"
    return f"made the change {_t(_call(d.other))}"


def success_line(entry: dict, failed: list[dict]) -> tuple[str, list[int], bool]:
    """The line of a success whose task has failed trials: the difference most of them share."""
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
        return (f"The {n} {trials} ({line.runs(same)}) {_same_calls(entry)}." if n > 1 else
                f"The {trials}, {line.runs(same)}, {_same_calls(entry)}."), [], False
    aspect = min(by_aspect, key=lambda a: (-len(by_aspect[a]), _RANK[a[0]], min(d.turn for _s, d in by_aspect[a]), a))
    hits = by_aspect[aspect]
    ref = hits[0][1]
    grouped: dict[str, list[str]] = defaultdict(list)
    for step, d in hits:
        grouped[_other_side(d)].append(step)
    if aspect[0] == "extra" and len(grouped) > 1:  # made with other values each: the tool is what they share
        grouped = {f"made a {aspect[1]} call that went through": [s for s, _d in hits]}
    k = len(hits)
    who = (f"The {trials}" if n == 1 else f"Both {trials}" if k == n == 2 else f"All {n} {trials}" if k == n
           else f"{k} of the {n} {trials}")
    where = f" in {aspect[1]}" if aspect[0] == "args" else ""
    if len(grouped) == 1:
        (said, steps), = grouped.items()
        theirs = f"{who} {said}{where} ({line.runs(steps)})"
    else:  # the values they chose instead, each with its trials
        head = {"answer": "answered otherwise", "args": f"sent other `{aspect[-1]}`"}.get(aspect[0], "did otherwise")
        shown = [f"{_value_of(said)} ({line.runs(steps)})" for said, steps in list(grouped.items())[:SHOWN]]
        theirs = f"{who} {head}{where}: " + ", ".join(shown) + (", and others" if len(grouped) > SHOWN else "")
    kind = aspect[0]
    turns: list[int] = []
    if kind == "answer":
        mine = f"this run answered \"{_t(ref.ref['text'])}\"{_answer_found(ref.ref)}"
        turns = [ref.ref["turn"]] + ([ref.ref["found"]["turn"]] if ref.ref.get("found") else [])
        found = ref.ref.get("found") or {}
        query = looked_up(found["tool"], found["query"]) if found.get("query") else ""
        asked = [(_entry(failed, s).get("decisive") or {}).get("lookups") for s, _d in hits]
        if query and all(a is not None for a in asked):  # every trial's look-ups known
            missed = [a for a in asked if query not in a]
            if missed:
                mine += (", a look-up that never went through there" if k == 1 and missed else
                         ", a look-up that went through in none of them" if len(missed) == k else
                         f", a look-up that went through in {k - len(missed)} of them")
            else:
                mine += ", a look-up it made too" if k == 1 else ", a look-up all of them made too"
    elif kind == "args":
        came = (ref.ref.get("from") or {}).get(aspect[2])
        mine = f"this run sent {_t(_shown(ref.ref['values'], aspect[2]))}" + (f", from {_t(came)}" if came else "")
        turns = [ref.ref["turn"]]
    elif kind == "missing":
        mine = f"this run's {_t(_call(ref.ref))} went through"
        turns = [ref.ref["turn"]]
    elif kind == "extra":
        mine = "this run made none"
    else:
        mine = f"this run made {ref.ref['n']}"
    text = f"{theirs}; {mine}." if len(grouped) == 1 else f"{theirs}. {mine[0].upper()}{mine[1:]}."
    if same:
        text += f" {len(same)} other failed trial{'s' if len(same) != 1 else ''} ({line.runs(same)}) made the same calls as this run."
    return text, turns, True


def _same_calls(entry: dict) -> str:
    """What trials with no difference from ``entry`` did alike, as a phrase after their subject."""
    record = entry.get("decisive") or {}
    if not record.get("changes") and not record.get("answer"):
        return "made no state-changing call either: what separated them from this run is not in such calls"
    what = "state-changing calls and answer" if record.get("answer") else "state-changing calls"
    return f"made the same {what} as this run: what separated them is not in those calls"


def _entry(entries: list[dict], step: str) -> dict:
    return next(e for e in entries if e["step"] == step)


def failure_line(entry: dict, won: list[dict], total: int) -> tuple[str, list[int], bool]:
    """The line of a failure whose task has a successful trial: where it first parted from the
    successful trial closest to it (fewest differences; the earliest on a tie)."""
    line = _Line(entry["step"])
    ranked = sorted(won, key=lambda w: (len(compare(w, entry)), layout.id_number(w["step"])))
    best = ranked[0]
    diffs = compare(best, entry)
    who = (f"The successful trial {line.runs([best['step']])} of this task"
           + (f" ({len(won)} of its {total} trials succeeded)" if len(won) > 1 else ""))
    if not diffs:
        return f"{who} {_same_calls(entry)}.", [], False
    d = diffs[0]
    kind = d.aspect[0]
    at = f" at its turn {d.ref['turn']}" if isinstance(d.ref.get("turn"), int) else ""
    turns = [d.other["turn"]] if isinstance(d.other.get("turn"), int) else []
    if kind == "answer":
        theirs = f"answered \"{_t(d.ref['text'])}\"{at}{_answer_found(d.ref)}"
        mine = f"this run answered \"{_t(d.other['text'])}\"" if d.other else "this run gave no answer"
        found = d.ref.get("found") or {}
        query = looked_up(found["tool"], found["query"]) if found.get("query") else ""
        if query and query not in (entry.get("decisive") or {}).get("lookups", [query]):
            mine += ", and no such look-up of this run went through"
    elif kind == "args":
        key = d.aspect[2]
        theirs = f"sent `{key}` {_t(_shown(d.ref['values'], key))} in {d.aspect[1]}{at}"
        mine = f"this run sent {_t(_shown(d.other['values'], key))}"
    elif kind == "missing":
        theirs = f"made the change {_t(_call(d.ref))}{at}"
        mine = f"this run made no {d.aspect[1]} call that went through"
    elif kind == "extra":
        theirs = f"made no {d.aspect[1]} call that went through"
        mine = f"this run's {_t(_call(d.other))} went through"
    else:
        theirs = f"made {d.ref['n']} {d.aspect[1]} call{'s' if d.ref['n'] != 1 else ''} that went through"
        mine = f"this run made {d.other['n']}"
        turns = []
    return f"{who} {theirs}; {mine}.", turns, False


def lines(entries: list[dict]) -> dict[str, tuple[str, list[int], bool]]:
    """step -> (line, this run's turns it cites, whether it takes the place of restating facts),
    for every run with a trial of the other outcome among ``entries`` (the runs of one task)."""
    wins = [e for e in entries if e["outcome"] == "success"]
    fails = [e for e in entries if e["outcome"] == "failure"]
    out = {}
    if not wins or not fails:
        return out
    for e in wins:
        out[e["step"]] = success_line(e, fails)
    for e in fails:
        out[e["step"]] = failure_line(e, wins, len(entries))
    return out


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
