"""The rewrites of an insight's title and guideline that follow from counts, never from
words: the check before a change that went through in failed runs (a look-up successful runs
made first, the rules when their trials made no such change, asking which value when most
sources took one unasked), and when ending after look-ups is right.
"""

from __future__ import annotations

import re
from collections import Counter

from ..compilers.option_choices import OFF_TASK, OVER_LIMIT, UNCHOSEN


def _first_detail(run: dict | None, kind: str) -> str:
    """The detail of the lesson a run teaches first, when it is of ``kind``; else ""."""
    lessons = (run or {}).get("lessons") or []
    return (lessons[0].get("detail") or "") if lessons and lessons[0]["key"].split("|")[0] == kind else ""


def told_instead(members: list[tuple[dict, dict]], trials, tool: str, shown: int = 2) -> list[str]:
    """What the successful trials of the failed members' tasks that made no ``tool`` change did
    instead, read from the lesson each teaches first: what it told the user when it changed
    nothing (the answer-from detail quotes it), the hand-off or the other change it ended with;
    at most ``shown``, in the members' order."""
    out: list[str] = []
    for e, _l in members:
        if e["outcome"] != "failure":
            continue
        task = trials.group(e)
        for w in (trials.by_task.get(task, {}).get("success", []) if task is not None else []):
            if f"went-through|{tool}" in (w.get("patterns") or []):
                continue
            for lesson in (w.get("lessons") or [])[:1]:  # the lesson a success teaches first: how it ended
                detail, kind, other = lesson.get("detail") or "", *(lesson["key"].split("|") + [""])[:2]
                turn = re.match(r"turn (\d+):", detail)
                if kind == "answer-from" and "; it told the user (turn " in detail:
                    said = f"{w['step']} told the user {detail.split('; it told the user (turn ', 1)[1].split('): ', 1)[1]}"
                elif kind in ("hand-off", "procedure") and turn and other.split(" ")[0] != tool:
                    said = f"{w['step']} {'handed off with' if kind == 'hand-off' else 'ended with'} {other} (turn {turn[1]})"
                else:
                    continue
                if said not in out:
                    out.append(said)
            if len(out) >= shown:
                return out
    return out


def retitle(entry: dict, members: list[tuple[dict, dict]] = (), trials=None) -> None:
    """A change that went through in a failed run says what to do first when successful runs
    made a look-up before that change more often than failed ones."""
    fields = entry["key"].split("|")
    if fields[0] != "went-through":
        return
    tool = fields[1].split(" ")[0]
    first = [c["pattern"].split("|", 2)[2] for c in entry.get("separating") or []
             if c["pattern"].startswith(f"before|{tool}|") and c["side"] == "success"]
    st = entry.get("same_task") or {}
    top = (st.get("differences") or [None])[0]
    if (st.get("side") == "failure" and top and top["text"].startswith(f"had no {tool} call go through")
            and top["runs"] >= 2 and 2 * top["runs"] > st["compared"]):
        entry["title"] = f"Check that the rules allow {tool} at all before making it"
        st["advised"] = True  # said here: the page does not repeat it as advice
        entry["guideline"] = (f"For most failed runs here whose task also has a successful trial ({top['runs']} of "
                              f"{st['compared']}), the successful trials made no {tool} change at all: before "
                              f"{tool}, check the system prompt's conditions for it, and when they are not met, "
                              "say so instead of making the change. " + entry["guideline"])
        said = told_instead(members, trials, tool) if trials is not None else []
        if said:
            entry["guideline"] += " What those successful trials did instead: " + "; ".join(said) + "."
        return
    if first:
        from ..compilers.insight_words import join

        entry["title"] = f"Call {join(first, 3)} before {tool}"
        entry["guideline"] = (f"Before {tool}, call {join(first, 3)} and take the call's arguments from their "
                              f"answers: among runs whose {tool} call went through, successful runs had made "
                              f"{'that look-up' if len(first) == 1 else 'those look-ups'} first more often. "
                              + entry["guideline"])


def ask_first(entry: dict, members: list[tuple[dict, dict]], kind_met: dict | None = None) -> None:
    """A change that went through in failed runs: when most of its sources (two at least) took
    the same argument's value unasked among several an answer listed, the page says to ask which
    one first and counts them. A fact of the page's own sources, not a contrast: it names no cause,
    so it is not advised where successful runs of the task type (``kind_met``: pattern -> outcome
    counts) took such a value unasked too (take_from says that it did not decide)."""
    fields = entry["key"].split("|")
    if fields[0] != "went-through":
        return
    tool = fields[1].split(" ")[0]
    prefix = f"picked|{tool}|"  # each run's distinct patterns of it (most runs have none)
    took = Counter(p.split("|", 2)[2] for e, _l in members
                   for p in {p for p in e.get("patterns") or () if p.startswith(prefix)})
    runs = len(members)
    contrasted = {c["pattern"] for c in entry.get("separating") or [] if c["side"] == "failure"}  # take_from says it
    common = sorted((k for k, n in took.items() if n >= 2 and 2 * n > runs and f"from|{tool}|{k}:picked" not in contrasted
                     and not (kind_met or {}).get(f"picked|{tool}|{k}", {}).get("success")),
                    key=lambda k: (-took[k], k))
    if not common:
        return
    from ..compilers.insight_words import join

    counted = "; ".join(f"{k}: {took[k]} of {runs}" for k in common[:3])
    entry["guideline"] += (f" When an answer lists several values for {join(common, 3)} and the user has named none, "
                           f"ask which one before {tool}: most runs here took such a value unasked ({counted}).")


def temper(entry: dict, by_step: dict[str, dict] | None = None) -> None:
    """A failed run's "do not end with look-ups only" is wrong advice where successful runs of
    the task type ended that way more often (a question answered, a change the rules rule out):
    the page then says when ending so is right instead."""
    c = entry.get("contrast") or {}
    if entry["key"] == "idle|lookups" and c.get("verdict") == "success":
        entry["title"] = "End after look-ups only when the request needs no change or allows none"
        entry["guideline"] = ("When the request asks for a change the rules allow, make it before ending; end after "
                              "look-ups with no change only once they show the request needs none (a question) or "
                              "allows none (a rule rules it out), and say which. Successful runs of this task type "
                              "ended after look-ups more often than failed ones: ending so is no mistake in itself, "
                              "ending so while a change is due is.")
        told = [f"{x['step']} told the user {d.split('; it told the user (turn ', 1)[1].split('): ', 1)[1]}"
                for x in c.get("instead") or [] for d in [_first_detail((by_step or {}).get(x["step"]), "answer-from")]
                if "; it told the user (turn " in d][:2]
        if told:
            entry["guideline"] += " Successful runs that ended so: " + "; ".join(told) + "."


def take_from(entry: dict, members: list[tuple[dict, dict]] = (), kind_met: dict | None = None) -> None:
    """A change's page leads with where its arguments' values should come from, when the counts
    of the task type show it (a ``from|<tool>|<argument>:<place>`` choice the Fisher test names):
    successful runs took the value from the user's reply, the task or an answer more often, or
    failed runs took it unasked from a listing or from no earlier turn more often."""
    from .trials import FROM_WORDS

    fields = entry["key"].split("|")
    if fields[0] not in ("went-through", "procedure") or len(fields) < 2:
        return
    tool = fields[1].split(" ")[0].split(":")[0]
    said = []
    for c in entry.get("separating") or []:  # the counts stand under Evidence: this text moves only with the verdict
        kind, about, what = c["pattern"].split("|", 2)
        if kind != "from" or about != tool:
            continue
        arg, _, where = what.rpartition(":")
        if c["side"] == "success" and where in ("reply", "task", "shown"):
            ask = " (ask for it when the user has not said it)" if where == "reply" else ""
            said.append(f"Take `{arg}` of {tool} {FROM_WORDS[where]}{ask}: among runs whose {tool} call went "
                        "through, successful ones did so more often (counts under Evidence).")
        elif c["side"] == "failure" and where in ("picked", "none"):
            said.append(f"Do not set `{arg}` of {tool} {FROM_WORDS[where]}; ask or look it up first: among runs "
                        f"whose {tool} call went through, failed ones did so more often (counts under Evidence).")
    if said:
        entry["guideline"] = said[0] + " " + entry["guideline"]
    elif fields[0] == "went-through" and kind_met is not None:
        # no contrast: when most of the page's own runs (two at least) took an argument unasked or from
        # nowhere, say whether successful runs of the same change did so too (a fact that flips rarely)
        prefix = f"from|{tool}|"
        took = Counter(p.split("|", 2)[2] for e, _l in members
                       for p in {p for p in e.get("patterns") or () if p.startswith(prefix)}
                       if p.endswith((":picked", ":none")))
        runs = len(members)
        for what in sorted((k for k, n in took.items() if n >= 2 and 2 * n > runs), key=lambda k: (-took[k], k))[:2]:
            arg, _, where = what.rpartition(":")
            if kind_met.get(f"from|{tool}|{what}", Counter())["success"]:
                entry["guideline"] += (f" `{arg}` came {FROM_WORDS[where]} in {took[what]} of {runs} runs here, and so "
                                       f"it did in successful runs of {tool}: that alone did not decide the outcome.")


_ADVICE = {  # (choice kind, where/how, side that did it more often) -> what to do, for the tool
    ("query", "own", "failure"): "Build each {t} query from names the task or an earlier answer gives, not from words "
                                 "of your own",
    ("query", "task", "success"): "Send {t} queries in the task's own words (the names it gives)",
    ("query", "shown", "success"): "Send {t} next for a name an earlier answer showed",
    ("said", "own", "failure"): "Give the {t} answer in words the task or a look-up gave, not words of your own",
    ("said", "shown", "success"): "Give the {t} answer in the words a look-up returned",
    ("retry", "listed", "success"): "After an error of {t}, call it again with a value the error's text names",
    ("retry", "same", "failure"): "After an error of {t}, do not send the same call again",
    ("edited", "task", "success"): "Change the files the task text names",
    ("edited", "shown", "success"): "Change the file an earlier search or trace named, not one found by guessing",
    ("edited", "new", "failure"): "Find the file to change in the task text or an earlier answer before changing it",
}


def advise_choices(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """A page whose separating choices include how a free-text query or answer was worded, or how
    a call after an error differed, says that as an instruction after its own lesson (the best p
    only: the same contrast stands on several pages of a task type, and each page's own lesson
    must stay the larger part of it). Not where most of the page's failed runs (two at least)
    already did what it would advise: that did not save them, so it is no advice for runs like them."""
    from .trials import EDITED, RETRIED as _RETRIED, WORDS_FROM as _WHERE

    failed = None  # the failed sources' pattern sets, made for the first choice with advice
    said = []
    for c in entry.get("separating") or []:
        kind, tool, how = c["pattern"].split("|", 2)
        advice = _ADVICE.get((kind, how, c["side"]))
        if advice is None:
            continue
        if failed is None:
            failed = [set(e.get("patterns") or []) for e, _l in members if e["outcome"] == "failure"]
        # the advice is to do it (success side) or not to (failure side): who here already did as told
        followed = sum((c["pattern"] in ps) == (c["side"] == "success") for ps in failed)
        if len(failed) >= 2 and 2 * followed > len(failed):
            continue
        did = (f"sent a {tool} query {_WHERE[how]}" if kind == "query" else f"gave a {tool} answer {_WHERE[how]}"
               if kind == "said" else f"{EDITED[how]} with {tool}" if kind == "edited" else f"retried {tool} {_RETRIED[how]}")
        side = "successful" if c["side"] == "success" else "failed"  # counts under Evidence: moves with the verdict
        said.append(f"{advice.format(t=tool)}: {side} runs of this task type {did} more often (counts under Evidence).")
    if said:
        entry["guideline"] = entry["guideline"] + " " + said[0]


def _place_words(place: str) -> str:
    """``took|`` place -> how a sentence says it (run_patterns: reply, task, none, answer:<tool>, call:<tool>)."""
    kind, _, tool = place.partition(":")
    if kind == "answer":
        return f"from what {tool} returned"
    if kind == "call":
        return f"as the earlier {tool} call sent it"
    return {"reply": "from what the user said in reply", "task": "from the task statement",
            "none": "worked out by the agent (no earlier turn held it)"}[kind]


def success_index(kind_met: dict) -> dict[str, list[tuple[str, int]]]:
    """The ``took|`` and coding ``procedure|`` patterns successful runs of a task type met, by
    ``took|<tool>`` / ``procedure|<tool>``: read once per task type, not once per page."""
    out: dict[str, list[tuple[str, int]]] = {}
    for pattern, seen in kind_met.items():
        if seen["success"] and (pattern.startswith("took|") or pattern.startswith("procedure|") and ":file-" in pattern):
            head = "|".join(pattern.split("|", 2)[:2]).split(":", 1)[0]
            out.setdefault(head, []).append((pattern, seen["success"]))
    return out


def checklist(entry: dict, members: list[tuple[dict, dict]] = (), kind_met: dict | None = None,
              index: dict[str, list[tuple[str, int]]] | None = None) -> None:
    """A change that went through in failed runs, whose page would only say "check each argument":
    where the successful runs of the same change took each argument, when most of them (two at
    least) took it from one place (``took|<tool>|<argument>|<place>`` patterns), and how many of
    the page's own runs took it from elsewhere: only where at least half of them did, as otherwise
    the place is no mistake the page's runs made. No task-wide count is written (a page changes only
    with its own sources); the majority flips rarely."""
    from ..compilers.run_insights import CHECK_EACH

    fields = entry["key"].split("|")
    if fields[0] != "went-through" or not kind_met:
        return
    tool = fields[1]
    wins = kind_met.get(f"went-through|{tool}", Counter())["success"]
    if wins < 2:
        return
    index = success_index(kind_met) if index is None else index
    if CHECK_EACH not in entry["guideline"]:
        _edit_checklist(entry, members, index.get(f"procedure|{tool}", []), tool, wins)
        return
    places: dict[str, Counter] = {}
    for pattern, n in index.get(f"took|{tool}", []):
        _k, _t, arg, place = pattern.split("|", 3)
        places.setdefault(arg, Counter())[place] = n
    said = []
    took = None  # per source: the arguments of the tool it took from somewhere, and its patterns (read once)
    for arg in sorted(places):
        place, n = min(places[arg].items(), key=lambda kv: (-kv[1], kv[0]))
        if 2 * n <= wins or place in ("mixed", "unknown") or f"`{arg}`" in entry["guideline"]:  # no single place, or said already
            continue
        if took is None:
            prefix = f"took|{tool}|"
            took = [({p[len(prefix):].split("|", 1)[0] for p in pats if p.startswith(prefix) and "|" in p[len(prefix):]},
                     pats) for pats in ((e.get("patterns") or []) for e, _l in members)]
        setting = [pats for args, pats in took if arg in args]  # the sources that set it (an argument holds no "|")
        other = sum(f"took|{tool}|{arg}|{place}" not in pats for pats in setting)
        if 2 * other < len(setting):
            continue  # most of the page's own runs took it where the successful ones did: no mistake of theirs
        said.append(f"`{arg}` {_place_words(place)}"  # failed: a settled way may join the page (settled.py)
                    + (f" ({other} of the {len(setting)} failed runs here that set it did not)" if other else ""))
    if said:
        entry["guideline"] = entry["guideline"].replace(
            CHECK_EACH, f"take each argument where most successful runs of {tool} took it: " + "; ".join(said))


def _edit_checklist(entry: dict, members, ended: list[tuple[str, int]], tool: str, wins: int) -> None:
    """A call with no arguments that settles a coding run (SWE-agent's ``submit``): where most
    successful runs that ended with it found the file they changed (their procedure key,
    ``procedure|<tool>:file-<place>``), and how many of the page's own runs changed no such file."""
    from .trials import EDITED

    places = Counter()
    for pattern, n in ended:  # procedure|<tool>:file-<place>[+tested], successful runs only
        if pattern.startswith(f"procedure|{tool}:file-"):
            places[pattern.split(":file-", 1)[1].split("+")[0]] += n
    if not places:
        return
    place, n = min(places.items(), key=lambda kv: (-kv[1], kv[0]))
    if 2 * n <= wins or place == "new":
        return
    other = sum(not any(p.startswith("edited|") and p.endswith(f"|{place}") for p in e.get("patterns") or [])
                for e, _l in members)
    entry["guideline"] += (f" Most successful runs that ended with {tool} {EDITED[place]} before it"
                           + (f"; {other} of the {len(members)} runs here did not." if other else
                              "; so did the runs here: where they changed the code is not what set them apart."))


def habits(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """A way to settle the task that successful runs took: how most of them (two at least) worded
    their free-text queries with a tool most of them queried, and retried after an error, from the ``query|`` and ``retry|`` patterns
    of the page's own runs, as what to do with the count behind it."""
    if not entry["key"].startswith("procedure|") or entry["counts"]["failure"] or len(members) < 2:
        return
    seen = [(e["step"], set(e.get("patterns") or [])) for e, _l in members]
    said, named = [], []
    for tool in sorted({p.split("|")[1] for _st, ps in seen for p in ps if p.startswith("query|")}):
        asked = [(st, ps) for st, ps in seen if any(p.startswith(f"query|{tool}|") for p in ps)]
        own = [st for st, ps in asked if f"query|{tool}|own" in ps]
        if 2 * len(asked) > len(seen) and 2 * (len(asked) - len(own)) > len(asked):  # a tool most runs here queried
            said.append(f"build every {tool} query from words the task or an earlier answer gives ({len(asked) - len(own)} "
                        f"of the {len(asked)} runs here that sent one did)")
            named.append(_split(f"sent a {tool} query", "built it from the task's or an earlier answer's words",
                                asked, set(own), "used other words"))
        retried = [(st, ps) for st, ps in seen if any(p.startswith(f"retry|{tool}|") for p in ps)]  # the error's own choice
        listed = [st for st, ps in retried if f"retry|{tool}|listed" in ps]
        if len(retried) >= 2 and 2 * len(listed) > len(retried):
            said.append(f"retry a {tool} error with a name it lists ({len(listed)} of the {len(retried)} runs here that "
                        "retried did)")
            named.append(_split(f"called {tool} again after it answered with an error", "sent a name the error listed",
                                retried, {st for st, _ps in retried} - set(listed), "sent none of them"))
    if said:
        entry["guideline"] += " " + "; ".join(said)[0].upper() + "; ".join(said)[1:] + "."
        entry["habit_runs"] = named  # which runs those counts are, for the page's Evidence


def _split(did: str, kept: str, runs: list[tuple[str, set]], others: set[str], other_words: str) -> dict:
    """The runs here a habit's count is over, split into those that kept it and the others, by step."""
    return {"did": did, "kept": kept, "kept_steps": [st for st, _ps in runs if st not in others],
            "other": other_words, "other_steps": [st for st, _ps in runs if st in others]}


_VERDICT = re.compile(r"^turn \d+: answered \S+?\[(.+)\], expected \"(.+)\"")  # _answer_insight's detail


def verdict_mix(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """A wrong-verdict lesson says which verdict its runs gave in place of which, counted: the
    direction an agent of the task type errs in is what it checks first."""
    if not entry["key"].startswith("answer|") or not entry["key"].endswith("|verdict"):
        return
    mix = Counter(m.groups() for _e, l in members if (m := _VERDICT.match(l.get("detail") or "")))
    if not mix:
        return
    said = "; ".join(f"{given} where {wanted} was expected ({n})"
                     for (given, wanted), n in sorted(mix.items(), key=lambda kv: (-kv[1], kv[0])))
    entry["guideline"] += f" The runs here gave {said}."


_SCORE = re.compile(r"; score (-?[\d.]+(?:e-?\d+)?)$")  # _answer_insight's detail, when the log scored the run
# what a partly scored purchase left out, by the kind its case records (compilers/option_choices.partial_reasons)
_LEFT_OUT = ((UNCHOSEN, "never chose an option of a group the task names one of"),
             (OFF_TASK, "chose an option the task does not name where it names another"),
             (OVER_LIMIT, "opened an item listed above the task's price limit"))


def partial_scores(entry: dict, members: list[tuple[dict, dict]] = ()) -> None:
    """A wrong-ending lesson whose failed runs the log scored: how many ended above the lowest
    score (part of what the task scores was met), so a reader checks the remaining parts instead
    of starting over."""
    if not entry["key"].startswith("answer|"):
        return
    scores = [float(m.group(1)) for e, l in members if e["outcome"] == "failure"
              and (m := _SCORE.search(l.get("detail") or ""))]
    if len(scores) < 2:
        return
    low = min(0.0, min(scores))
    above = sum(x > low for x in scores)
    if above:
        entry["guideline"] += (f" {above} of the {len(scores)} scored runs here ended with a score above {low:g}: what "
                               "they chose met part of what the task scores, so check the parts it did not.")
        left = [(l.get("case") or {}).get("left_out") or () for e, l in members if e["outcome"] == "failure"]
        said = [f"{n} {said}" for kind, said in _LEFT_OUT if (n := sum(kind in kinds for kinds in left))]
        if said:  # what the runs' own pages show their score lacked
            from ..compilers.insight_words import join

            entry["guideline"] += f" Of the failed runs here, {join(said)}: check those parts first."
