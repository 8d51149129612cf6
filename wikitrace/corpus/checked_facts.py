"""A lesson's first advice from the facts the compiler checked in its failed runs.

Each failed run's page opens with facts the compiler established from the log itself
(compilers/in_short.py): a comparison in the agent's own words that arithmetic proves wrong, a
time-window claim its record's date disproves, a change whose arguments differ from the task's
expected call, an answer a look-up had already returned... A run's corpus.json entry keeps the
kind of each such fact (``facts``). Here they are counted over the lesson's failed runs, one run
once per kind; when one kind covers more than half of them, the lesson leads with it, counted,
and names the runs. When none does, the commonest fact about the lesson's own tool (two tasks or
more) still leads, said as the part of the runs it is and as no proven cause. For expected-call differences it also says which arguments differed, most
often first. Nothing is said from the lesson's own wording: only from the checked facts.
"""

from __future__ import annotations

import json
from collections import Counter

from ..compilers.missed_insight import UNTOLD
from ..compilers.rule_lessons import rule_opening
from ..compilers.run_insights import GENERIC_CHECK
from . import fact_leads, passed_errors, run_counts
from .fisher import verdict
from .fact_weights import (FAILED_ONLY, NAMES_ITEMS, aside_note, item_words, leans_to_failure, on_same_tools,
                           shared_item, top_item, weak_note, with_item)
from .success_ways import SuccessWays

NAMED = 3  # arguments or tools named in the lead, most often first (all are counted)
UNLEARNED = "unlearned-case"  # the kind of fact of a change sent without learning which case of its rule applied
# kinds said only on a lesson about the kind of call they name: an edit of lines never shown bears
# on a lesson about editing, not on the shell-quoting lesson the same run taught
OWN_TOOL_ONLY = frozenset({"unread-edit"})

# kind -> (what the runs showed, what to do), in the order a kind is preferred when several cover
# most failed runs: a claim in the agent's own words first, then the answer's or the change's
# words, then the broad ones. {t}: the lesson's tool; {items}: the arguments or tools, counted
_SAID = {
    "comparison": ("the agent's comparison of two numbers, or the side it concluded from one, went the wrong way{eg}",
                   "check which way each comparison goes, number against number, and which side the question's word "
                   "picks (first, earlier or older: the earlier date; later or younger: the later one) before {t}"),
    "time": ("the agent claimed a time window that the record's own date and the log's current time contradict",
             "work out the time from the record's own date and the current time the prompt gives before {t}"),
    "limit": ("the run's sum went above a money limit the user had given",
              "add up the total against the user's limit before {t}"),
    "count": ("the user gave a count that a record already shown contradicts",
              "check a count the user gives against the record before {t}"),
    # these lead with their instruction and the tool or rule quote their runs share (fact_leads.py)
    **{k: fact_leads.OWN[k] for k in ("named-comparison", "unsupported-comparison", "quoted-name", "packed-calls",
                                      "described-search", "one-sided", "planned-look-up", "reflected-answer",
                                      "opening-form")},
    # word for word, as the page's facts check it: an answer differing also in a mark ("singer, songwriter"
    # for "singer-songwriter") is not counted here, though the answer cases count it by its words
    "answer-extra": ("the answer held the expected words, written exactly so, and added others",
                     "give only the thing asked for when {t}"),
    "answer-partial": ("the answer held only part of the expected words, written exactly so",
                       "give the thing asked for whole when {t}"),
    "rule": fact_leads.OWN["rule"],
    "arguments": ("a change the run sent differed from the task's expected call in its arguments ({items})",
                  "check each argument of a change against what the user asked for before making it"),
    "unexpected-change": ("a state-changing call the task did not expect went through ({items})",
                          "make only the changes the request asks for"),
    "missed-change": ("the task expected a change the run never made",
                      "make every change the request asks for before ending"),
    "unread-edit": ("an edit replaced lines that no call before it had shown",
                    "view the lines an edit replaces before writing it"),
    "answer-seen": ("the expected answer appears in what a look-up before the answer returned",
                    "reread what the look-ups returned for the thing asked before {t}"),
}
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
        if getattr(f, "rule", None) and not f.rule[2]:  # a rule with a case per kind of record, the case
            # never learned before the change: [tool, what it is on, the cases' words]
            out.append({"kind": UNLEARNED, "about": [*f.rule[:2], *f.rule[3:]]})
        elif getattr(f, "rule", None):  # the rule it turns on: [tool, what it is on, quote, this fact's kind,
            # the record values its sentence was chosen for]
            out.append({"kind": "rule", "about": [*f.rule[:3], kind, *f.rule[3:]]})
        if kind in ("answer-extra", "answer-partial") and "seen" in f.about:
            out.append({"kind": "answer-seen"})
    return out


def _key_tool(key: str) -> str:
    """The tool a lesson's key names (its second field, for the keys whose second field is one), or ""."""
    parts = key.split("|")
    return parts[1].split(":")[0] if parts[0] in _TOOL_KEYS and len(parts) > 1 else ""


def _tool(key: str) -> str:
    parts = key.split("|")
    if parts[0] in _TOOL_KEYS and len(parts) > 1 and parts[1]:
        return f"calling {parts[1].split(':')[0]}"
    return "acting"


# where a sent value came from (compilers/value_sources.py's places), as the lead says it
_CAME = {"own": "the agent's own pick, before any user message or answer gave it", "user": "what the user said",
         "answer": "a tool's earlier answer", "call": "an earlier call of the agent's"}


def _came(by_kind: Counter | None, runs: int) -> str:
    """", in N of them the values sent came from …" when one kind of place covers most of the runs."""
    if not by_kind:
        return ""
    kind, n = min(by_kind.items(), key=lambda kv: (-kv[1], kv[0]))
    return f", {n} of them with the values sent taken from {_CAME[kind]}" if 2 * n > runs else ""


def rules_on(runs: list[dict], kind_of) -> dict[str, dict[str, list[tuple[str, str, tuple[str, ...]]]]]:
    """task type -> the thing an argument names (its name's last word: ``baggages`` of
    ``nonfree_baggages`` and of ``total_baggages``) -> (a rule fact's quote on it, that run's step,
    the record values its sentence was chosen for), each quote once, in step order: the rules a
    lead on such an argument may name, whichever change they were quoted for."""
    out: dict[str, dict[str, list[tuple[str, str, tuple[str, ...]]]]] = {}
    seen: set[tuple[str, str, str]] = set()
    for r in runs:
        for f in r.get("facts") or ():
            about = f.get("about") or []
            if f.get("kind") == "rule" and len(about) > 2 and about[1] != about[0]:
                kind, thing = kind_of(r), _thing(about[1])
                if (kind, thing, about[2]) not in seen:
                    seen.add((kind, thing, about[2]))
                    out.setdefault(kind, {}).setdefault(thing, []).append((about[2], r["step"], tuple(about[4:])))
    return out


def _thing(name: str) -> str:
    """What an argument's name names: its last word."""
    parts = [w for w in name.lower().replace("-", "_").split("_") if w]
    return parts[-1] if parts else name


def _record_values(run: dict) -> dict[str, set[str]]:
    """field -> the values the records a run looked up or acted on hold for it
    (compilers/record_facts.py's ``rec|`` patterns)."""
    out: dict[str, set[str]] = {}
    for p in run.get("patterns") or ():
        if p.startswith("rec|"):
            for name, value in json.loads(p.split("|", 2)[2]):
                if isinstance(value, str):
                    out.setdefault(name, set()).add(value)
    return out


def fitting(candidates: list[tuple[str, str, tuple[str, ...]]], runs: list[dict]) -> tuple[str, str] | None:
    """(quote, step) of the first rule whose record values every one of ``runs`` holds too: the
    clause for a gold member is not the rule of a silver member's run. A rule quoted for no value
    fits every run; a run whose records lack the field does not fit a clause keyed on it."""
    values = [_record_values(r) for r in runs]
    for quote, step, keyed in candidates:
        pairs = [k.partition("=") for k in keyed]
        if all(all(v in held.get(f, ()) for f, _eq, v in pairs) for held in values):
            return quote, step
    return None


def by_kind(runs: list[dict]) -> dict[str, list[dict]]:
    """The runs holding each checked fact's kind, a run once per kind: what a lesson's failed runs'
    facts are weighed against (made once per task type and pattern, not per insight)."""
    out: dict[str, list[dict]] = {}
    for r in runs:
        for kind in dict.fromkeys(fact_leads.group(f) for f in r.get("facts") or []):
            if fact_leads.kind_of(kind) in _SAID:
                out.setdefault(kind, []).append(r)
    return out


def lead(entry: dict, members: list[tuple[dict, dict]],
         successes: tuple[dict[str, list[dict]], list[dict], str] = ({}, [], ""),
         ways: SuccessWays | None = None, rules: dict[str, list[tuple[str, str, tuple[str, ...]]]] | None = None) -> None:
    """Prepends the checked fact that separates the lesson's failed runs from the successful ones
    to the guideline, and records its runs (``checked``) for the page's links.

    A kind may lead when it covers more than half of the failed runs, or of their distinct tasks,
    and the one-sided Fisher test finds it more often in them than in ``successes`` (kind counts,
    runs, and who they are: the successful runs of the task type that met the lesson's pattern,
    else all of the type's). Among those, the one covering most distinct tasks leads (six trials of
    one question are one mistake), then one naming the lesson's own tool among its calls or arguments
    before one naming only other tools, then the first in ``_SAID``'s order. When no kind separates,
    the most specific one the failed runs share still leads, said as such: with the successful
    runs' count of the same thing and the test's p for "more often in failed runs", so the reader
    weighs it. With no successful run to weigh against, the test cannot be made and the commonest
    kind leads as before. ``ways``: the successful runs of the task type, for how they made a
    change the failed runs never made; ``rules``: the thing an argument names -> the rules of the
    system prompt on it, from any run of the task type (rules_on)."""
    if entry["key"] == UNTOLD:  # the value never said is the page's own fact; a change never made has its page
        return
    failed, seen = [], set()
    for e, _l in members:
        if e["outcome"] == "failure" and e["step"] not in seen:
            seen.add(e["step"])
            failed.append(e)
    if not failed:
        return
    won, won_runs, among = successes  # by_kind of the successful runs, those runs, who they are
    runs_of: dict[str, list[dict]] = {}
    items: dict[str, Counter] = {k: Counter() for k in NAMES_ITEMS}
    examples: dict[str, str] = {}
    sources: dict[str, Counter] = {}  # tool.argument -> kind of place its sent values came from -> runs
    own_tool = _key_tool(entry["key"])
    # a rule lesson is led by no other rule of the prompt: a rule fact must quote its own
    opening = rule_opening(entry["title"]) if entry["key"].startswith("rule|") else ""
    for e in failed:
        facts = [f for f in e.get("facts") or [] if f.get("kind") in _SAID
                 and (f["kind"] not in OWN_TOOL_ONLY or (f.get("about") or [""])[0] == own_tool)
                 and not (opening and f["kind"] == "rule" and not any(opening in a for a in f.get("about") or ()))]
        for kind in dict.fromkeys(fact_leads.group(f) for f in facts):
            runs_of.setdefault(kind, []).append(e)
            about = [a for f in facts if fact_leads.group(f) == kind for a in f.get("about") or []]
            if kind in items:
                names = {a.split("@")[0] for a in about}
                items[kind].update(names)  # a run once per argument or tool
                for name in names:  # where the run's differing values came from, when one kind of place
                    came = {a.partition("@")[2] for a in about if a.split("@")[0] == name}
                    if len(came) == 1 and "" not in came:
                        sources.setdefault(name, Counter())[came.pop()] += 1
            elif about and kind not in examples:
                examples[kind] = about[0]
    missed = top_item(items["missed-change"])
    if missed and ways is not None and ways.made_without(with_item(runs_of["missed-change"], "missed-change", missed),
                                                         missed):
        del runs_of["missed-change"]  # a successful trial of their task did without that change: no lead to make it
    all_tasks = run_counts.tasks(failed)
    usable, aside = [], []
    preference = list(_SAID)
    for kind in sorted(runs_of, key=lambda k: (preference.index(fact_leads.kind_of(k)), k)):
        order, hit = preference.index(fact_leads.kind_of(kind)), runs_of[kind]
        if own_tool and kind in items and not any(a.split(".")[0] == own_tool for a in items[kind]):
            order += len(preference)  # a fact only on other tools than the lesson's says less of it: after the rest
        tasks = run_counts.tasks(hit)
        if not (2 * len(hit) > len(failed) or 2 * tasks > all_tasks):
            continue
        side, p = verdict(len(hit), len(on_same_tools(hit, won.get(kind, []), kind)), len(failed), len(won_runs))
        if side == "no-success" or (side == "failure" and len(hit) > 1):  # one run is no count
            usable.append((-tasks, order, kind))
        else:
            aside.append((-tasks, order, kind))
    said = {}
    tool = _tool(entry["key"]).removeprefix("calling ")
    # a lesson on a change that went through (or settled the run): every run here made one such change
    made_it = entry["key"].split("|", 1)[0] in ("went-through", "procedure")
    weak = minority = None
    if usable:
        kind = min(fact_leads.narrowest(usable))[2]
    elif leaning := [a for a in sorted(aside) if leans_to_failure(runs_of[a[2]], won.get(a[2], []), failed,
                                                                       won_runs, shared_item(items.get(a[2]), runs_of[a[2]]), a[2])
                                    and (a[2] not in items or shared_item(items.get(a[2]), runs_of[a[2]]))]:
        kind = weak = leaning[0][2]  # none separates: the most specific fact still leads, said as unproven
    elif not aside:  # no fact covers most of them: the commonest one leads, counted as the part it is
        kind = weak = minority = _commonest(runs_of, won, failed, won_runs, preference, _key_tool(entry["key"]))
    else:
        kind = None
    for *_r, k in usable + aside + ([(minority,)] if minority else []):
        own = fact_leads.lead(k, runs_of[k], failed)
        if own is not None:
            said[k] = own[1]
            continue
        shown = _SAID[k][0]
        named = items.get(k, Counter())
        top = sorted(named, key=lambda a: (-named[a], a))[:NAMED]
        again = k == "missed-change" and made_it  # each of these runs made one change of the lesson's tool
        listed = "; ".join(f"{'another ' if again and a == tool else ''}{item_words(a)} in {named[a]}"
                           f"{_came(sources.get(a), named[a])}" for a in top) + (
            "; others less often" if len(named) > len(top) else "")
        said[k] = shown.format(eg=f" (in the first of them {examples[k]}, which its words had the other way round)"
                               if k in examples else "", items=listed)
        if k == "missed-change" and listed:
            said[k] = f"a change the task expected never went through ({listed})"
    notes = _aside_notes([k for *_r, k in sorted(aside) if k != weak], runs_of, failed, said, won, won_runs, among)
    if notes:
        entry["set_aside"] = entry.get("set_aside", []) + notes
    if kind is None:
        return
    own = fact_leads.lead(kind, runs_of[kind], failed)
    named = items.get(kind, Counter())
    top = top_item(named)
    if kind != "missed-change" and top and 2 * named[top] <= len(runs_of[kind]):
        top = ""  # an argument most of the counted runs do not share is not the one to check
    again = kind == "missed-change" and made_it and top == tool
    do = "" if own else _SAID[kind][1].format(t=_tool(entry["key"]))
    if kind == "missed-change" and top and ways is not None:
        do = (f"before ending, make the {top} change the request calls for" if len(named) == 1 else
              f"before ending, make every change the request calls for, {top} "
              + ("among the most often missed here" if sum(n == named[top] for n in named.values()) > 1
                 else "most often missed here")) + f": {ways.how_made(top, again)}"
    elif kind == "unexpected-change" and top:
        do = f"check that the request calls for a change with {top} and the rules allow it as sent"
    elif kind == "arguments" and top and "." in top:
        change, _, arg = top.partition(".")
        rule = fitting((rules or {}).get(_thing(arg), []), with_item(runs_of[kind], kind, top))
        on_rule = f" against the system prompt's rule on it ({rule[1]}'s prompt: {rule[0]})" if rule else ""
        do = f"before {change}, check `{arg}` against what the user asked for" + (f" and{on_rule}" if rule else "")
    text = own[0] if own else f"In {run_counts.part_of(runs_of[kind], failed)} {said[kind]}: {do}."
    if kind == "arguments" and top:  # the named argument says what the generic last step said
        entry["guideline"] = " ".join(entry["guideline"].replace(GENERIC_CHECK, "").split())
    proven = weak is None
    if weak is not None:
        note, proven = weak_note(runs_of[kind], failed, won.get(kind, []), won_runs, among, top, kind,
                                  minority is not None, (entry.get("contrast") or {}).get("failed_met") or 0)
        text += " " + note
        if not proven and kind == "arguments" and top and "." in top:
            # the argument most failed runs got wrong does not set them apart: what to do leads, the
            # counts follow as what they are
            counts = note.split(": ", 1)[1]  # the successful runs' count of the same, without the hedge said here
            these = "this failed run" if len(failed) == 1 else "these failed runs"
            tied = sum(n == named[top] for n in named.values()) > 1
            commonest = "one of the commonest differences" if tied else "the commonest difference"
            text = (f"Before {change}, check each argument against what the user asked for and the records looked "
                    f"up{f', and `{arg}`{on_rule}' if rule else ''}; {commonest}, `{arg}`, is not "
                    f"shown to set {these} apart from the successful ones. In {run_counts.part_of(runs_of[kind], failed)} {said[kind]}. "
                    f"{counts[0].upper()}{counts[1:]}")
    rest = fact_leads.unrepeated(entry["guideline"], text) if own else entry["guideline"]
    off_tool = kind in items and own_tool and not any(a.split(".")[0] == own_tool for a in items[kind])
    # the error did not stop them: the fact leads, but an argument not shown to separate them is another
    # matter than the error (the payment sent, not the seats refused), and so is a fact only on other
    # tools (a baggage change never made, beside a payment error): they stay findings, as below
    if minority is None and (proven or kind != "arguments") and not off_tool and passed_errors.got_past(entry, members):
        entry["guideline"] = passed_errors.guideline(
            entry, own[0].split("; in ", 1)[0] if own else do, run_counts.part_of(runs_of[kind], failed), said[kind],
            note if weak is not None else "", rest, len(failed))
    elif entry["key"].startswith("rule|") or entry["key"].startswith("error|") and (
            not proven or off_tool and passed_errors.got_past(entry, members)):
        # an error's or a rule's own advice is what its runs met (or broke) for sure: a fact not shown
        # to separate follows it. A finding only: arguments that differed from the expected call (the
        # payment sent, not the seats an error refused), a fact only on other tools than the error's,
        # and on a rule's page any fact but that rule's (raters read them as another lesson tacked on)
        # A change the task expected that none of them made, though, follows the error's own advice in What
        # to do: getting past the error was not the end, the unmade change is what the task judged
        if kind == "arguments" or off_tool and entry["key"].startswith("error|") and kind != "missed-change" or \
                entry["key"].startswith("rule|") and fact_leads.kind_of(kind) != "rule":
            entry["set_aside"] = entry.get("set_aside", []) + [text]
            return
        entry["guideline"] = f"{rest} {text}"
    else:
        entry["guideline"] = f"{text} {rest}"
    entry["checked"] = {"kind": fact_leads.kind_of(kind), "steps": [e["step"] for e in runs_of[kind]], "said": said[kind],
                        "tasks": run_counts.tasks(runs_of[kind])}


def _commonest(runs_of: dict[str, list[dict]], won: dict[str, list[dict]], failed: list[dict],
               won_runs: list[dict], preference: list[str], tool: str) -> str | None:
    """The checked fact a lesson leads with when none covers most of its failed runs: among the
    facts about the lesson's own tool (an answer's fact for a lesson on the answer, a query's for
    one on the look-up's errors), the one covering most distinct tasks (then most runs, then the
    first in ``_SAID``'s order), when it covers two tasks or more (one question tried again is one
    mistake) and the successful runs, where they are checked for it at all, showed it in a
    smaller share."""
    if not tool:
        return None
    about_tool = [k for k in runs_of if all(any(fact_leads.group(f) == k and (f.get("about") or [""])[0] == tool
                                                for f in e.get("facts") or ()) for e in runs_of[k])]
    ranked = sorted(about_tool, key=lambda k: (-run_counts.tasks(runs_of[k]), -len(runs_of[k]),
                                               preference.index(fact_leads.kind_of(k)), k))
    for k in ranked:
        if run_counts.tasks(runs_of[k]) < 2:
            return None
        if fact_leads.kind_of(k) in FAILED_ONLY or len(runs_of[k]) * len(won_runs) > len(won.get(k, ())) * len(failed):
            return k
    return None


def _aside_notes(kinds: list[str], runs_of: dict, failed: list[dict], said: dict, won: dict, won_runs: list[dict],
                 among: str) -> list[str]:
    """One note per set of runs: facts of several kinds held by the same failed runs and the same
    successful ones are one finding said once ("X, and Y"), not two paragraphs of the same counts."""
    grouped: dict[tuple, list[str]] = {}
    for k in kinds:
        theirs = on_same_tools(runs_of[k], won.get(k, []), k)
        grouped.setdefault((tuple(r["step"] for r in runs_of[k]), tuple(r["step"] for r in theirs)), []).append(k)
    return [aside_note(ks[0], runs_of[ks[0]], failed, ", and ".join(said[k] for k in ks), won.get(ks[0], []),
                       won_runs, among, tuple(ks[1:])) for ks in grouped.values()]


def links(entry: dict, link, md) -> tuple[str, str]:
    """(the line naming the runs the lead's count covers, each linked to its page; the pointers to
    the pages that say more of the lesson's one run). The first says what its runs share itself, as
    a model's merged guideline (LLM path) may word the lead anew."""
    from . import layout
    from .one_run import apart_line

    one = entry.get("one_run")
    see = (f"The lesson of this task type's runs on {one['tool']}, counted over {one['runs']}: "
           f"[{md(one['title'])}]({link.rel(layout.insight_doc(one['see']))}).") if one else ""
    if entry.get("one_run_apart"):  # what the one run did that its task's failed trials did not, first
        see = apart_line(entry["one_run_apart"], link, md) + (f"\n\n{see}" if see else "")
    c = entry.get("checked")
    if not c or (entry.get("mistake_runs") or {}).get("steps") == c["steps"]:
        return "", see  # none, or the same runs the mistake's line names already
    steps = c["steps"]
    whose = "The failed run" if len(steps) == 1 else f"The {run_counts.count(len(steps), c.get('tasks', len(steps)), 'failed runs', paren=True)}"
    return (f"{whose} where {md(c['said'])}, each page's \"In short\" giving the fact and its turn: "
            + ", ".join(f"[{s}]({link.rel(layout.compilation_doc(s))})" for s in steps) + "."), see
