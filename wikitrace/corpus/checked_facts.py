"""A lesson's first advice from the facts the compiler checked in its failed runs.

Each failed run's page opens with facts the compiler established from the log itself
(compilers/in_short.py): a comparison in the agent's own words that arithmetic proves wrong, a
time-window claim its record's date disproves, a change whose arguments differ from the task's
expected call, an answer a look-up had already returned... A run's corpus.json entry keeps the
kind of each such fact (``facts``). Here they are counted over the lesson's failed runs, one run
once per kind; when one kind covers more than half of them, the lesson leads with it, counted,
and names the runs. For expected-call differences it also says which arguments differed, most
often first. Nothing is said from the lesson's own wording: only from the checked facts.
"""

from __future__ import annotations

from collections import Counter

from . import run_counts
from .fisher import verdict

NAMED = 3  # arguments or tools named in the lead, most often first (all are counted)

# kind -> (what the runs showed, what to do), in the order a kind is preferred when several cover
# most failed runs: a claim in the agent's own words first, then the answer's or the change's
# words, then the broad ones. {t}: the lesson's tool; {items}: the arguments or tools, counted
_SAID = {
    "comparison": ("the agent wrote a comparison of two numbers that does not hold{eg}",
                   "check which way each comparison goes, number against number, before {t}"),
    "time": ("the agent claimed a time window that the record's own date and the log's current time contradict",
             "work out the time from the record's own date and the current time the prompt gives before {t}"),
    "limit": ("the run's sum went above a money limit the user had given",
              "add up the total against the user's limit before {t}"),
    "count": ("the user gave a count that a record already shown contradicts",
              "check a count the user gives against the record before {t}"),
    "answer-extra": ("the answer held the expected words and added others",
                     "give only the thing asked for when {t}"),
    "answer-partial": ("the answer held only part of the expected words",
                       "give the thing asked for whole when {t}"),
    "arguments": ("a change the run sent differed from the task's expected call in its arguments ({items})",
                  "check each argument of a change against what the user asked for before making it"),
    "unexpected-change": ("a state-changing call the task did not expect went through ({items})",
                          "make only the changes the request asks for"),
    "missed-change": ("the task expected a change the run never made",
                      "make every change the request asks for before ending"),
    "answer-seen": ("a look-up before the answer had already returned the expected answer",
                    "reread what the look-ups returned for the thing asked before {t}"),
}
_NAMES_ITEMS = ("arguments", "unexpected-change")
_TOOL_KEYS = ("answer", "error", "went-through", "procedure", "hand-off")  # keys whose second field is a tool


def run_facts(comp) -> list[dict]:
    """What a run's entry keeps of its checked facts: their kind and what they are about. An
    answer a look-up had returned counts as such whatever else its fact says of it."""
    out = []
    for f in getattr(comp, "in_short", ()):
        kind = getattr(f, "kind", "")
        if not kind:
            continue
        about = [a for a in f.about if a != "seen"] if kind.startswith("answer-") else list(f.about)
        out.append({"kind": kind, **({"about": about} if about else {})})
        if kind in ("answer-extra", "answer-partial") and "seen" in f.about:
            out.append({"kind": "answer-seen"})
    return out


def _tool(key: str) -> str:
    parts = key.split("|")
    if parts[0] in _TOOL_KEYS and len(parts) > 1 and parts[1]:
        return f"calling {parts[1].split(':')[0]}"
    return "acting"


def _item(about: str) -> str:
    tool, _, arg = about.partition(".")
    return f"{arg} of {tool}" if arg else tool


# where a sent value came from (compilers/value_sources.py's places), as the lead says it
_CAME = {"own": "the agent's own pick, before any user message or answer gave it", "user": "what the user said",
         "answer": "a tool's earlier answer", "call": "an earlier call of the agent's"}


def _came(by_kind: Counter | None, runs: int) -> str:
    """", in N of them the values sent came from …" when one kind of place covers most of the runs."""
    if not by_kind:
        return ""
    kind, n = min(by_kind.items(), key=lambda kv: (-kv[1], kv[0]))
    return f", {n} of them with the values sent taken from {_CAME[kind]}" if 2 * n > runs else ""


def by_kind(runs: list[dict]) -> dict[str, list[dict]]:
    """The runs holding each checked fact's kind, a run once per kind: what a lesson's failed runs'
    facts are weighed against (made once per task type and pattern, not per insight)."""
    out: dict[str, list[dict]] = {}
    for r in runs:
        for kind in dict.fromkeys(f.get("kind") for f in r.get("facts") or []):
            if kind in _SAID:
                out.setdefault(kind, []).append(r)
    return out


def lead(entry: dict, members: list[tuple[dict, dict]],
         successes: tuple[dict[str, list[dict]], list[dict], str] = ({}, [], "")) -> None:
    """Prepends the checked fact that separates the lesson's failed runs from the successful ones
    to the guideline, and records its runs (``checked``) for the page's links.

    A kind may lead when it covers more than half of the failed runs, or of their distinct tasks,
    and the one-sided Fisher test finds it more often in them than in ``successes`` (kind counts,
    runs, and who they are: the successful runs of the task type that met the lesson's pattern,
    else all of the type's). Among those, the one covering most distinct tasks leads (six trials of
    one question are one mistake), then the first in ``_SAID``'s order. A kind the successful
    runs met as often is said under Evidence with both counts (``set_aside``), not led with. With no
    successful run to weigh against, the test cannot be made and the commonest kind leads as before."""
    failed, seen = [], set()
    for e, _l in members:
        if e["outcome"] == "failure" and e["step"] not in seen:
            seen.add(e["step"])
            failed.append(e)
    if not failed:
        return
    won, won_runs, among = successes  # by_kind of the successful runs, those runs, who they are
    runs_of: dict[str, list[dict]] = {}
    items: dict[str, Counter] = {k: Counter() for k in _NAMES_ITEMS}
    examples: dict[str, str] = {}
    sources: dict[str, Counter] = {}  # tool.argument -> kind of place its sent values came from -> runs
    for e in failed:
        facts = [f for f in e.get("facts") or [] if f.get("kind") in _SAID]
        for kind in dict.fromkeys(f["kind"] for f in facts):
            runs_of.setdefault(kind, []).append(e)
            about = [a for f in facts if f["kind"] == kind for a in f.get("about") or []]
            if kind in items:
                names = {a.split("@")[0] for a in about}
                items[kind].update(names)  # a run once per argument or tool
                for name in names:  # where the run's differing values came from, when one kind of place
                    came = {a.partition("@")[2] for a in about if a.split("@")[0] == name}
                    if len(came) == 1 and "" not in came:
                        sources.setdefault(name, Counter())[came.pop()] += 1
            elif about and kind not in examples:
                examples[kind] = about[0]
    all_tasks = run_counts.tasks(failed)
    usable, aside = [], []
    for order, kind in enumerate(_SAID):
        hit = runs_of.get(kind, [])
        tasks = run_counts.tasks(hit)
        if not (2 * len(hit) > len(failed) or 2 * tasks > all_tasks):
            continue
        side, p = verdict(len(hit), len(won.get(kind, ())), len(failed), len(won_runs))
        if side in ("failure", "no-success"):
            usable.append((-tasks, order, kind))
        else:
            aside.append((kind, p))
    said = {}
    for kind in [k for *_r, k in usable] + [k for k, _p in aside]:
        shown = _SAID[kind][0]
        named = items.get(kind, Counter())
        top = sorted(named, key=lambda a: (-named[a], a))[:NAMED]
        listed = "; ".join(f"{_item(a)} in {named[a]}{_came(sources.get(a), named[a])}" for a in top) + (
            "; others less often" if len(named) > len(top) else "")
        said[kind] = shown.format(eg=f" (in the first of them {examples[kind]}, which its words had the other way round)"
                                  if kind in examples else "", items=listed)
    notes = [f"In {run_counts.part_of(runs_of[kind], failed)} {said[kind]}, and so it was in "
             f"{run_counts.part_of(won.get(kind, []), won_runs, 'successful ' + among, '')}: the runs so far do not "
             f"show it separating failed from successful runs (one-sided Fisher p = {p:g}), so it does not lead the "
             "advice." for kind, p in aside]
    if notes:
        entry["set_aside"] = entry.get("set_aside", []) + notes
    if not usable:
        return
    kind = min(usable)[2]
    text = f"In {run_counts.part_of(runs_of[kind], failed)} {said[kind]}: {_SAID[kind][1].format(t=_tool(entry['key']))}."
    entry["guideline"] = f"{text} {entry['guideline']}"
    entry["checked"] = {"kind": kind, "steps": [e["step"] for e in runs_of[kind]], "said": said[kind],
                        "tasks": run_counts.tasks(runs_of[kind])}


def links(entry: dict, link, md) -> str:
    """The line under the advice naming the runs its count covers, each linked to its page; it
    says what they share itself, as a model's merged guideline (LLM path) may word the lead anew."""
    from . import layout

    one = entry.get("one_run")
    see = (f"The lesson of this task type's runs on {one['tool']}, counted over {one['runs']}: "
           f"[{md(one['title'])}]({link.rel(layout.insight_doc(one['see']))}).") if one else ""
    c = entry.get("checked")
    if not c:
        return see
    steps = c["steps"]
    whose = "The failed run" if len(steps) == 1 else f"The {run_counts.count(len(steps), c.get('tasks', len(steps)), 'failed runs', paren=True)}"
    return (f"{whose} where {md(c['said'])}, each page's \"In short\" giving the fact and its turn: "
            + ", ".join(f"[{s}]({link.rel(layout.compilation_doc(s))})" for s in steps) + "." + (f"\n\n{see}" if see else ""))
