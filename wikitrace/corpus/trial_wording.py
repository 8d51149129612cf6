"""How a line against the other trials of a task says what a trial did: values plainly, calls
with their arguments, runs linked, and the trials that did otherwise grouped by what they did,
each group counted by what its trials actually did (an answer given, or none)."""

from __future__ import annotations

import re
from collections import defaultdict

from ..controls import visible
from ..templates import md_text
from . import layout
from .trial_compare import Diff, _by_key, _top

SHOWN = 3  # trials linked, and distinct values named, per line



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
    if c.get("file") and not args:  # an edit whose text is wording: the file says which act it was
        return f"{c['tool']} of {c['file'].rstrip('/').rsplit('/', 1)[-1]}"
    return f"{c['tool']}({_clip(args, 90)})" if args else c["tool"]


def _made(c: dict, order: bool = False, instead: bool = False) -> str:
    """Making the call ``c``, as a line says it: "edited stats.py", "made the submit call", "made the
    change cancel_reservation(reservation_id H8Q05L)"; ``order``: as an instruction ("Edit stats.py");
    ``instead``: set against another call, which has named it a change already ("made cancel_reservation(…)")."""
    shown = _call(c)
    if c.get("file") and c["tool"] == "edit" and shown.startswith("edit of "):
        return f"{'Edit' if order else 'edited'} {shown[len('edit of '):]}"
    if order:
        return f"Make the {shown} call" if shown == c["tool"] else f"Make {shown}"
    return f"made the {shown} call" if shown == c["tool"] else f"made {shown}" if instead else f"made the change {shown}"


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
    if not found or not found.get("query"):
        return ""
    call = _t(found['tool'] + '[' + found['query'] + ']')
    # a search for the answer itself returns its page: the run had chosen the answer before it
    return f", a name it had searched itself ({call})" if found.get("echo") else f", which {call} had returned"


def _value_of(said: str) -> str:
    """The value alone of an ``_other_side`` phrase (the words before it dropped)."""
    if said == "gave no answer":
        return "no answer"
    for head in ("answered ", "sent "):
        if said.startswith(head):
            rest = said[len(head):]
            return rest.split(" ", 1)[1] if head == "sent " else rest
    return said


def stopped(entry: dict) -> bool:
    """Whether the harness ended the failed run (a limit, a crash): a change it never made is then
    one it had no turn left for, not one it chose to leave out."""
    return bool((entry.get("decisive") or {}).get("stopped"))


def _other_side(d: Diff, cut_short: bool = False) -> str:
    """What a trial did at this aspect, as a value a line can group trials by (``cut_short``: the
    harness ended that trial)."""
    kind = d.aspect[0]
    if kind == "answer":
        return f"answered \"{_t(d.other['text'])}\"" if d.other else "gave no answer"
    if kind == "args":
        return f"sent `{d.aspect[2]}` {_t(_shown(d.other['values'], d.aspect[2]))}"
    if kind == "missing":
        return (f"{_t(_made(d.other, instead=True))} instead" if d.other else
                f"was ended by the harness before any {_t(d.aspect[1])} call" if cut_short else "never made it")
    return _t(_made(d.other))


def _sources(call: dict, keys: list[str], own: bool, named: bool = True) -> str:
    """Where the successful trial took the values of ``keys`` from, as its record says it (each
    key named unless the line has just named it)."""
    came = call.get("from") or {}
    said = [("`" + k + "` " if named else "") + f"from {_t(came[k] if own else came[k].replace('(turn ', '(its turn '))}"
            for k in keys if k in came]
    return (", " + " and ".join(said[:2])) if said else ""


def _call_keys(c: dict) -> list[str]:
    return list(_by_key(c.get("values") or {}))[:2]


def others_phrase(who: str, kind: str, where: str, grouped: dict[str, list[str]], line: _Line) -> str:
    """``who`` (the failed trials a line speaks of) and what each group of them did instead, for
    trials that did not all do one thing. Every trial is linked under what it did: a trial that
    gave no answer is never counted among those that "answered otherwise", and groups past the
    first few are linked too, never left as "others"."""
    if kind == "answer":
        gave = [(said, steps) for said, steps in grouped.items() if said != "gave no answer"]
        none = grouped.get("gave no answer", [])
        values = _values(gave, line)
        if not none:
            return f"{who} answered otherwise: {values}"
        if not gave:
            return f"{who} gave no answer ({line.runs(none)})"
        n = sum(len(steps) for _said, steps in gave)
        return (f"{who} went another way: {n} answered otherwise, {values}; {len(none)} gave no answer "
                f"({line.runs(none)})")
    head = f"sent other `{kind[1]}`" if kind[0] == "args" else "did otherwise"
    return f"{who} {head}{where}: {_values(list(grouped.items()), line)}"


def _values(groups: list[tuple[str, list[str]]], line: _Line) -> str:
    """Each group's value with its trials; past SHOWN values, the rest's trials linked together."""
    shown = [f"{_value_of(said)} ({line.runs(steps)})" for said, steps in groups[:SHOWN]]
    rest = [s for _said, steps in groups[SHOWN:] for s in steps]
    if rest:
        links = ", ".join(f"[{s}]({line.link.rel(layout.compilation_doc(s))})" for s in rest)
        shown.append(f"{len(rest)} more with other values ({links})")
    return shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " and " + shown[-1]
