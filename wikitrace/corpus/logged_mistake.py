"""The mistake a lesson's failed runs show in their logs, and what the successful trials did instead,
each said in one sentence for What to do.

A rule ("check each argument against the request") is something an agent already believes it
follows; the mistake as the logs show it (this argument of this change differed from the call
the task expected, this change went through unasked, this change was never made) is what it can
look for in its own next call. Both sentences are read from what the gather already holds: the
checked facts its lead counted (``entry["checked"]``, the failed runs' ``facts``) and the
comparison with the successful trials of the same tasks (``entry["same_task"]``). A lesson
without such facts gets neither sentence.
"""

from __future__ import annotations

import re
from collections import Counter

from . import fact_leads, run_counts
from .checked_facts import UNLEARNED
from .trials import instruction, one_task_count

# where a differing value came from (compilers/value_sources.py's places), as the sentence says it
NAMED = 3  # changes named when several were missed
_CAME = {"own": "the agent's own pick", "user": "what the user said", "answer": "a tool's earlier answer",
         "call": "an earlier call of the agent's"}


def _named(runs: list[dict], kind: str) -> tuple[Counter, dict[str, set[str]]]:
    """How many of ``runs`` name each argument or tool in their facts of ``kind`` (a run once per
    name), and the places each name's values came from."""
    named: Counter = Counter()
    came: dict[str, set[str]] = {}
    for r in runs:
        names: dict[str, set[str]] = {}
        for f in r.get("facts") or ():
            if fact_leads.group(f) != kind:
                continue
            for a in f.get("about") or ():
                name, _, place = a.partition("@")
                names.setdefault(name, set()).add(place)
        named.update(names.keys())
        for name, places in names.items():
            came.setdefault(name, set()).update(places)
    return named, came


def mistake(entry: dict, by_step: dict[str, dict], ways=None) -> tuple[str, dict]:
    """What to do against the mistake the logs show, with its count, for a lesson led by a change's facts (its arguments, a change
    made unasked, a change never made) naming one argument or tool in most of the runs they cover,
    with one count, and {"steps": the runs that count is of, "said": what they did} for the page's
    list under Evidence (worded on its own: a model's merged guideline may not repeat the count);
    ("", {}) otherwise."""
    checked = entry.get("checked") or {}
    kind = checked.get("kind")
    if kind not in ("arguments", "unexpected-change", "missed-change"):
        return "", {}
    hit = [by_step[s] for s in checked.get("steps") or () if s in by_step]
    failed = list({e["step"]: e for e in (by_step.get(s["step"]) for s in entry["sources"]
                                         if s["outcome"] == "failure") if e}.values())
    named, came = _named(hit, kind)
    if not named or not failed:
        return "", {}
    if kind == "missed-change" and entry["key"].startswith("hand-off|"):
        tool = entry["key"].split("|")[1]
        ranked = sorted(named, key=lambda a: (-named[a], a))
        listed = ", ".join(ranked[:NAMED]) + (" or another" if len(ranked) > NAMED else "")
        return (f"Before handing off with {tool}, check whether a tool you have can make the change asked for: "
                f"in {run_counts.part_of(hit, failed)} the run handed off while a change the task expected never "
                f"went through ({listed})."), {"steps": [e["step"] for e in hit], "said": (
            f"the run handed off with {tool} while a change the task expected never went through")}
    top = min(named, key=lambda a: (-named[a], a))
    if 2 * named[top] <= len(hit) or sum(n == named[top] for n in named.values()) > 1:
        return "", {}  # no one argument or tool most of them share
    with_top = [r for r in hit if top in _named([r], kind)[0]]
    if kind == "missed-change" and ways is not None and ways.made_without(with_top, top):
        return "", {}  # a successful trial of their task never made it either: leaving it unmade did not decide
    share, steps = run_counts.part_of(with_top, failed), [e["step"] for e in with_top]
    if kind == "arguments":
        change, _, arg = top.partition(".")
        if not arg:
            return "", {}
        places = came.get(top, set())  # "": a run whose value's source is not known, which no source is said of
        source = f", with the value taken from {_CAME[next(iter(places))]}" if len(places) == 1 and \
            next(iter(places)) in _CAME else ""
        nxt = [a.partition(".")[2] for a in sorted(named, key=lambda a: (-named[a], a))
               if a != top and a.startswith(change + ".") and named[a] >= 2][:2]
        also = f", and `{'` and `'.join(nxt)}` next most often" if nxt else ""
        return (f"Before {change}, check the `{arg}` you send against the request and the records looked up: "
                f"it differed from the task's expected call{source}{',' if source else ''} in {share}{also}"
                f"{_unlearned(with_top, change, arg)}."), {
            "steps": steps, "said": f"the `{arg}` sent to {change} differed from the task's expected call",
            "argument": [change, arg]}
    if kind == "unexpected-change":
        return (f"Check that the request calls for a change with {top} and the rules allow it as sent: a call of "
                f"{top} that the task did not expect went through in {share}{_expected_instead(with_top)}."), {
            "steps": steps, "said": f"a call of {top} the task did not expect went through"}
    return (f"Before ending, make every {top} call the request calls for: an expected {top} call never went "
            f"through in {share}."), {"steps": steps, "said": f"an expected {top} call never went through"}


def _expected_instead(runs: list[dict]) -> str:
    """", where the task expected update_reservation_flights instead, which never went through" when
    every one of ``runs`` left a change its task expected unmade: the unasked change most likely
    stood in for it (a new booking made where the trip was to be changed)."""
    missed = [{a for f in r.get("facts") or () if f.get("kind") == "missed-change" for a in f.get("about") or ()}
              for r in runs]
    if not runs or not all(missed):
        return ""
    named = Counter(a for tools in missed for a in tools)
    listed = [f"{a} in {n}" if len(runs) > 1 else a for a, n in sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))]
    return (f", where the task expected {' and '.join(listed) if len(listed) <= 2 else ', '.join(listed[:NAMED])}"
            f"{' or another' if len(listed) > NAMED else ''} instead, which never went through")


def argument_title(entry: dict, by_step: dict[str, dict], ways=None) -> None:
    """A change's lesson whose failed runs mostly sent one argument unlike the task's expected call
    is titled by that argument, the thing to check, not by "the request and the rules on it"; else
    by the first sentence of its advice, when that is one short instruction before the change."""
    tool = entry["key"].split("|")[1] if entry["key"].startswith("went-through|") else ""
    if not tool or entry["title"] not in (f"Before {tool}, check the request",
                                          f"Before {tool}, check the request and the rules on it"):
        return  # a lesson titled by its own check already (a record's field, a look-up first) keeps it
    _said, runs = mistake(entry, by_step, ways)
    change, arg = runs.get("argument") or ("", "")
    if change and tool == change:
        entry["title"] = f"Before {change}, check the `{arg}` you send against the request and the records looked up"
        return
    # else the check the page's advice leads with (a count's instruction, its count left out), when it
    # is one short instruction on this change
    from .advice_cut import action, sentences

    said = sentences(entry["guideline"])
    first = (action(said[0]) or said[0] if said else "").rstrip(".")
    head, _, why = first.partition(": ")
    if why and not why.startswith(('"', "`")) and head.count('"') % 2 == 0 and head.count("`") % 2 == 0:
        first = head  # an instruction and, after its colon, why (not what it names): the instruction titles it
    if first.startswith(f"Before {tool}, ") and len(first) <= _TITLE_WIDTH and not re.search(r"\d|:|;", first):
        entry["title"] = first


_TITLE_WIDTH = 110  # characters of an advice sentence that can title its page


def _unlearned(runs: list[dict], change: str, arg: str) -> str:
    """"; in 2 of the 4 runs (…) no answer … named which case … applied (…), so find that out first" when
    some of ``runs`` sent ``arg`` without learning which case of the prompt's rule on it applied: a
    rule with a count per membership tier cannot be followed by a run that never learnt the tier."""
    cases: list[str] = []
    steps = []
    for r in runs:
        found = [f["about"][2:] for f in r.get("facts") or () if f.get("kind") == UNLEARNED
                 and (f.get("about") or [])[:2] == [change, arg]]
        if found:
            steps.append(r["step"])
            cases += [w for w in found[0] if w not in cases]
    if not steps:
        return ""
    quoted = [f'"{w}"' for w in cases]
    named = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    whom = "" if len(runs) == 1 else f"in {len(steps)} of the {len(runs)} runs ({', '.join(steps)}) "
    return (f"; {whom}no answer or user message before the call named which case of the system prompt's rule on "
            f"`{arg}` applied ({named}), so find that out first")


def verdict_misused(entry: dict, runs: list[dict]) -> tuple[str, dict]:
    """For the page on settling a task with a verdict (a yes or no): the failed runs of its task type
    that gave one to a question asking for a thing, with the rule they broke, and {"steps", "said"}
    for the page's list; ("", {}) on any other page or when none did. The successful runs' way is
    right only where the question asks whether something holds."""
    key = entry.get("key") or ""
    if not (key.startswith("procedure|") and key.endswith(":label")):
        return "", {}
    tool = key.split("|", 1)[1].rsplit(":", 1)[0]
    hit = [r for r in runs if r["outcome"] == "failure" and any(
        f.get("kind") == "wrong-kind" and (f.get("about") or [""])[0] == tool for f in r.get("facts") or ())]
    if not hit:
        return "", {}
    said = "the answer was a yes or no to a question that asks for a thing"
    # a finding under Evidence, not advice: What to do keeps the successes' way, the slip has its own page
    return (f"{run_counts.count(len(hit), run_counts.tasks(hit), 'failed runs', paren=True)} of this task type gave "
            f"{tool} a yes or no where the question asked what, which or who: the way these runs settled fits only "
            f"a question asking whether something holds."), {"steps": [r["step"] for r in hit], "said": said}


_TAIL = re.compile(r", (?:which|where) .*$")


def instead(entry: dict) -> str:
    """What to do from the runs' own task trials: the commonest difference between this page's runs
    and the other trials of their tasks, said as an instruction with what those trials did ("In a run
    like these, make sure ...: the successful trials of the same tasks had no X call go through; step-…
    told the user ..."), when it holds for two runs or more and most of those compared (of successful
    runs, a difference only some of them show is said as that, with no instruction); "" otherwise.
    Its counts and links stand once, under Evidence, in the list of trial differences."""
    st = entry.get("same_task") or {}
    if not st.get("differences"):
        return ""
    tool = (entry.get("key") or "").split("|")[1:2]
    own = f"call {tool[0].split(':')[0]} and get its answer" if tool else None
    # calling the page's own tool is no advice on a page about it: the next difference is the one to say
    top = next((d for d in st["differences"] if instruction(d["text"]) != own), None)
    if top is None or top["runs"] < 2 or one_task_count(top) or not (do := instruction(top["text"])):
        return ""  # one run is no pattern
    did = _TAIL.sub("", top["text"])
    most = 2 * top["runs"] > st["compared"]
    if st.get("side") == "success":  # what the successful runs here did that their tasks' failed trials did not
        if not most:  # a fact of some of them, not an instruction
            return f"Unlike the failed trials of their tasks, some successful runs here {did}."
        who = "" if top["runs"] == st["compared"] else "most "
        runs = "successful runs here" + ("" if st["compared"] == st.get("members") else
                                         " that have a failed trial of their task")
        return f"In a run like these, {do}: unlike the failed trials of their tasks, {who}{runs} {did}."
    if not most:
        return ""
    whose = ("the successful trials of the same tasks" if top["runs"] == st["compared"] else
             "for most of the failed runs here that have a successful trial of their task, those trials")
    said = f"In a run like these, {do}: {whose} {did}"
    if st.get("instead"):
        said += f"; {st['instead'][0]}"
    return said + "."
