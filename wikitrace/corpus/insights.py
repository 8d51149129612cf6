"""The insight layer: one page per distinct lesson of a task type, gathered across runs.

Each compiled run records in its corpus.json entry the lessons it teaches (at most
three, each under a structural key: compilers/run_insights.py) and every pattern it met.
After all runs are compiled, ``gather`` groups the lessons by insight id (one id per
task type and key, handed out by the IdAllocator in input order) and writes, per
insight: the lesson's text, every run that taught it (outcome, what it showed, a
link), counts equal to those sources, and the contrast with the other runs of the
task type. Nothing is read but the run entries, so ``add`` and ``forget`` recompute
the pages without the other runs' inputs.

The contrast rule. A lesson's pattern (the error it is about, the call it repeats,
the procedure it follows...) is met in ``a`` of the ``F`` failed runs and ``b`` of
the ``S`` successful runs of the task type. It is called a cause of failure only
when a one-sided Fisher exact test on that 2x2 table gives p < 0.05 for "met more
often in failed runs" (and "met more often by successful runs" for the other tail). Fisher's test is
exact at any sample size, so three runs never make a cause; no threshold is fitted
to any data set. Otherwise the page says the pattern was also met in b of S
successful runs and that the runs so far do not show it separating the outcomes, and links the successful runs that
met it with the lessons they teach (what they did instead). Lessons drawn from how
a failed run ended (a wrong final answer) have no pattern to contrast and say so.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Iterable

from . import conditions, failed_only_facts, layout, passed_errors, run_counts, settled, untold_counts
from .advice_fit import weigh as weigh_advice
from .quoted_tally import quoted_plainly
from .advice_cut import action, cut as cut_advice
from .answer_cases import annotate as annotate_answers
from .fact_cases import annotate as annotate_facts, lesson_fact
from .cannot_claims import claims
from . import looked_up_instead
from .rule_quote import quote_rule, rules_of
from .stop_counts import stopped_at
from .checked_facts import _key_tool, by_kind, lead as lead_with_facts, rules_on, run_facts
from .fact_weights import TYPE_WIDE
from .applies import Openings, applies_when, kind_of, successful_cue, task_of, trial_task
from .choices import relevant, separating
from .one_run import mark as mark_one_run
from .pattern_tally import PatternTally
from .answered_refusals import say_allowed, say_answered
from .fisher import fisher_tails, verdict as _verdict
from .peers import check_first, failed_peers
from .hand_offs import say_unasked
from .missing_programs import name_missing
from .rewrites import (advise_choices, ask_first, checklist, habits, partial_scores, retitle,
                       success_index, take_from, temper, told_instead, verdict_mix)
from .retry_advice import untested_fix
from ..compilers import error_titles
from .edit_lessons import check_without, rerun_lead, right_file
from .listed_leads import mark as mark_listed_leads
from .logged_mistake import argument_title, instead as instead_sentence, mistake, verdict_misused
from .recipe_sources import restate as restate_sources
from .success_ways import SuccessWays, differences_lead, no_call_lead, success_differences
from .trials import Trials, advice as same_task_advice
from .contrast_words import MET, TROUBLE, contrast_sentence, index_note, met_words

INSTEAD_SHOWN = 10  # successful runs named per lesson they teach (all are counted)


def group_key(entry: dict, lesson_key: str) -> str:
    return f"{kind_of(entry)}\0{settled.shared_key(lesson_key)}"


def contrast_pattern(key: str) -> str | None:
    """The run pattern a lesson is contrasted on: mostly its own key."""
    kind = key.split("|", 1)[0]
    if kind == "answer":
        # defined by a wrong final answer: only failed runs can meet it, but for a name a reflection
        # held, which a retry may give rightly too (compilers/run_patterns.reflected_pattern)
        fields = key.split("|")
        return f"reflected|{fields[1]}" if len(fields) == 3 and fields[2] == "reflected" else None
    # a success that changed nothing is counted among the runs that changed nothing, as it was chosen
    if kind == "answer-from":
        return "unchanged|lookups"
    if kind == "direct":
        return "unchanged|none"
    return key


def run_entry_fields(comp) -> dict:
    """What a run's corpus.json entry keeps for the insight layer: its lessons (key and text)
    and the patterns it met."""
    return {
        "lessons": [{"key": i.key, "title": i.title, "guideline": i.guideline, "applicability": i.applicability,
                     "detail": i.detail, "worked": i.worked, **({"case": i.case} if i.case else {}),
                     **lesson_fact(comp, i)}
                    for i in comp.insights],
        "patterns": list(comp.patterns),
        **({"facts": facts} if (facts := run_facts(comp)) else {}),
        **({"value_rules": comp.value_rules} if getattr(comp, "value_rules", None) else {}),
    }


def pick_text(members: list[tuple[dict, dict]]) -> dict:
    """The lesson text the page shows: the commonest among the sources that got past it or
    succeeded with it (else among all), the earliest run on a tie."""
    members = [m for m in members if not settled.settles(m[1])] or members  # a change's check leads its page
    worked = [(e, l) for e, l in members if l.get("worked")] or members
    counts = Counter((l["title"], l["guideline"], l["applicability"]) for _e, l in worked)
    first = {}
    for e, l in worked:
        first.setdefault((l["title"], l["guideline"], l["applicability"]), layout.id_number(e["step"]))
    best = min(counts, key=lambda t: (-counts[t], first[t]))
    return {"title": best[0], "guideline": best[1], "applicability": best[2]}


def members_text(entries: list[dict], runs: list[dict]) -> dict[str, dict]:
    """Insight id -> the lesson as the group's own source runs taught it (``insights.pick_text``
    of their lessons: title, guideline, applicability), before any line the rest of the task
    type adds. Read from the run entries in one pass; an insight whose lessons are not all
    found there keeps its own wording."""
    wanted = {e["id"]: e for e in entries}
    sources = {iid: {s["step"] for s in e["sources"]} for iid, e in wanted.items()}
    members: dict[str, list[tuple[dict, dict]]] = {iid: [] for iid in wanted}
    for run in sorted(runs, key=lambda r: layout.id_number(r["step"])):
        for iid, lesson in zip(run.get("insights") or (), run.get("lessons") or ()):
            if iid in wanted and run["step"] in sources[iid]:
                members[iid].append((run, lesson))
    own = ("title", "guideline", "applicability")
    return {iid: pick_text(m) if len(m) == len(sources[iid]) and m else {k: wanted[iid][k] for k in own}
            for iid, m in members.items()}


def gather(runs: Iterable[dict], previous: dict | None = None, memo=None, tally: PatternTally | None = None) -> list[dict]:
    """Every insight's corpus.json entry, from the run entries alone, ordered by id.

    Run entries name their insight ids (parallel to ``lessons``); entries without ids (a
    benchmark's) get ids in order of first appearance. ``previous``: unused keys kept for
    the callers that pass the old entries. ``memo``: a same_task_memo.SameTaskMemo, whose
    trial comparisons from an earlier gather are reused where they read the same runs. ``tally``:
    a pattern_tally.PatternTally, whose kept counts are reused where they count the same runs
    (it holds this gather's counts afterwards, for the next command)."""
    runs = sorted(runs, key=lambda r: layout.id_number(r["step"]))
    totals: dict[str, Counter] = defaultdict(Counter)  # kind -> outcome -> runs
    met: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))  # kind -> pattern -> outcome
    met_by: dict[tuple[str, str], list[dict]] = defaultdict(list)  # (kind, pattern) -> successful runs
    ended_by: dict[tuple[str, str], list[dict]] = defaultdict(list)  # (kind, procedure pattern) -> failed runs
    taught: dict[str, list[tuple[str, str]]] = {}  # run step -> (insight id, lesson key) it teaches
    groups: dict[str, list[tuple[dict, dict]]] = {}
    ids: dict[str, str] = {}
    trials = Trials(runs, trial_task)
    successes: dict[str, list[dict]] = defaultdict(list)  # kind -> its successful runs
    of_kind: dict[str, list[dict]] = defaultdict(list)  # kind -> its runs in step order (one pass, not one a page)
    for r in runs:
        kind = kind_of(r)
        of_kind[kind].append(r)
        outcome = r["outcome"]
        totals[kind][outcome] += 1
        if outcome == "success":
            successes[kind].append(r)
        listed = r.get("insights") or []
        for k, lesson in enumerate(r.get("lessons") or []):
            iid = listed[k] if k < len(listed) else ids.setdefault(group_key(r, lesson["key"]),
                                                                     layout.insight_id(len(ids)))
            groups.setdefault(iid, []).append((r, lesson))
            taught.setdefault(r["step"], []).append((iid, lesson["key"]))
    apart = settled.split(groups)  # worked out alone, joined to their change's page below
    # the successful runs that met a pattern, the other runs that met a procedure and the failed
    # runs that met a pattern are listed only for the patterns lessons are about (every one, in step order)
    keyed: dict[str, set[str]] = defaultdict(set)
    for members in groups.values():  # a lesson's key, and the pattern it is contrasted on
        key = members[0][1]["key"]
        keyed[kind_of(members[0][0])].update(p for p in (key, contrast_pattern(key)) if p is not None)
    # each type's patterns counted per outcome in first-met order (kept between commands: pattern_tally.py)
    tally = tally if tally is not None else PatternTally()
    by_step = {r["step"]: r for r in runs}
    asked: dict[str, dict[str, set[str]]] = {}  # kind -> task -> words of its first messages
    requests: dict[str, str] = {}  # step -> its first message
    met_tasks: dict[tuple[str, str], dict[str, set]] = {}  # (kind, lesson's pattern) -> outcome -> tasks meeting it
    failed_by: dict[tuple[str, str], list[dict]] = {}  # (kind, pattern) -> failed runs, named on pages
    records_held: dict[str, dict[str, set[str]]] = {}  # task type -> its records' values by field (rule_quote.held)
    for kind, kind_runs in of_kind.items():
        kind_tally = tally.of(kind, kind_runs, keyed.get(kind, set()))
        records_held[kind] = kind_tally.held
        if memo is not None:
            memo.patterns.update(kind_tally.digests)  # the same runs: the comparisons' digests need not hash them again
        asked[kind] = kind_tally.asks
        requests.update(kind_tally.requests)
        met_tasks.update(((kind, p), by) for p, by in kind_tally.tasks_met.items())
        if kind_tally.first_met:
            met[kind].update(kind_tally.met())
        for listed_by, by in ((kind_tally.won, met_by), (kind_tally.lost, ended_by), (kind_tally.failed, failed_by)):
            for p, steps in listed_by.items():
                by[(kind, p)] = [by_step[s] for s in steps]
    picked = {iid: pick_text(m) for iid, m in groups.items()}
    openings = Openings.of(asked, requests)
    splits = {kind: separating(kind_met) for kind, kind_met in met.items()}
    sourced = {iid: [e for e, _l in m] for iid, m in groups.items()}  # each insight's source runs, listed once
    out = []
    for iid in sorted(groups, key=layout.id_number):
        members, entries = groups[iid], sourced[iid]
        first, lesson = members[0]
        kind = kind_of(first)
        text = picked[iid]
        sources = [{"step": e["step"], "outcome": e["outcome"], "detail": l.get("detail") or ""} for e, l in members]
        counts = {"runs": len(sources), "success": sum(s["outcome"] == "success" for s in sources),
                  "failure": sum(s["outcome"] == "failure" for s in sources)}
        cue = openings.cues(kind, entries, lesson["key"])
        text["applicability"] = applies_when(lesson["key"], text["applicability"], kind, cue,
                                             openings.examples(entries))
        pattern = contrast_pattern(lesson["key"])
        contrast = None
        if pattern is not None:
            failed, succeeded = totals[kind]["failure"], totals[kind]["success"]
            seen = met[kind].get(pattern, Counter())
            a, b = seen["failure"], seen["success"]
            verdict, p = _verdict(a, b, failed, succeeded)
            instead, per_lesson = [], Counter()
            if pattern.split("|", 1)[0] in TROUBLE and pattern == lesson["key"]:
                own = settled.own_runs(apart, groups, iid)
                listed = {src["step"] for src in sources}
                for s in met_by.get((kind, pattern), []):  # every one counted, up to INSTEAD_SHOWN named per lesson
                    if s["step"] in own:
                        continue
                    theirs = [i for i in s.get("insights") or [] if i != iid]
                    if not theirs and s["step"] in listed:
                        continue  # a source teaching only this lesson: under Sources, not "no lesson of its own"
                    per_lesson[",".join(theirs)] += 1
                    if per_lesson[",".join(theirs)] <= INSTEAD_SHOWN:
                        instead.append({"step": s["step"], "insights": theirs})
            contrast = {"pattern": pattern, "failed_met": a, "failed": failed, "success_met": b,
                        "success": succeeded, "verdict": verdict, "p": p, "instead": instead,
                        "instead_counts": dict(sorted(per_lesson.items())),
                        "counted": run_counts.counted_runs(sources, {"failure": failed_by.get((kind, pattern), []),
                                                                     "success": met_by.get((kind, pattern), [])})}
            if pattern.startswith("went-through|"):  # failed runs whose every such change was the task's own
                tool = pattern.split("|", 1)[1]
                alike = sum(run_counts.all_as_expected(e, tool) for e in failed_by.get((kind, pattern), []))
                if alike:
                    contrast["as_expected"] = alike
                asked = sum(run_counts.expected_tool(e, tool) for e in failed_by.get((kind, pattern), []))
                if asked > alike:  # the task asked for that change: making it is no fault, how it was made may be
                    contrast["asked_for"] = asked
            tasks = met_tasks.get((kind, pattern), {})
            if len(tasks.get("failure", ())) != a or len(tasks.get("success", ())) != b:  # trials of one task
                contrast["tasks_met"] = {o: len(tasks.get(o, ())) for o in ("failure", "success")}
        out.append({
            "id": iid, "key": lesson["key"], **text,
            "task_type": first.get("task_type") if not first.get("apps") else None, "apps": first.get("apps") or None,
            "compiler": first.get("compiler") or "offline",
            "source_step": first["step"], "source_outcome": first["outcome"],
            "counts": counts, "contrast": contrast, "sources": sources,
            "tasks": len({task_of(e) for e in entries}),  # trials of one task are one task
            **({"cue": cue[0][0], "cue_tasks": {"with": cue[1], "tasks": cue[2], "others_with": cue[3],
                                               "others": cue[4]}} if cue[0] else {}),  # applies.py
            "same_task": (memo.compare if memo is not None else lambda t, m: t.compare(m))(
                trials, entries),
            "separating": relevant(lesson["key"], splits.get(kind, []), entries),
        })
    kind_of_entry = {iid: kind_of(groups[iid][0][0]) for iid in groups}
    indexes: dict[str, dict] = {}  # task type -> rewrites.success_index, made on first use
    learned: dict[str, dict] = {}  # task type -> change tool -> conditions.learn, made on first use
    for entry in out:
        retitle(entry, groups[entry["id"]], trials)
        right_file(entry, groups[entry["id"]], trials)
        check_without(entry, groups[entry["id"]])
        st = entry.get("same_task") or {}
        top = (st.get("differences") or [{}])[0].get("text", "")
        if st.get("side") == "failure" and not st.get("advised") and top.startswith("had no "):
            said = told_instead(groups[entry["id"]], trials, top.split(" ")[2])
            if said:
                st["instead"] = said  # what the successful trials did instead, said with the advice
        temper(entry, by_step)
        lead_with_contrast(entry)
        ask_first(entry, groups[entry["id"]], met.get(kind_of_entry[entry["id"]]))
        take_from(entry, groups[entry["id"]], met.get(kind_of_entry[entry["id"]]))
        kind = kind_of_entry[entry["id"]]
        if entry["key"].startswith("went-through|") and kind not in indexes:
            indexes[kind] = success_index(met.get(kind) or {})
        checklist(entry, groups[entry["id"]], met.get(kind), indexes.get(kind))
        name_missing(entry, groups[entry["id"]])
        say_allowed(entry, groups[entry["id"]])
        say_answered(entry, groups[entry["id"]], trials)
        untested_fix(entry, groups[entry["id"]], by_step)
        mark_listed_leads(entry, groups[entry["id"]], trials)
        habits(entry, groups[entry["id"]])
        verdict_mix(entry, groups[entry["id"]])
        say_unasked(entry, groups[entry["id"]])
        partial_scores(entry, groups[entry["id"]])
        advise_choices(entry, groups[entry["id"]])
        failed_peers(entry, ended_by.get((kind, entry["key"]), []), taught)
        successful_cue(entry, sourced[entry["id"]], openings, kind)
        if entry["key"].startswith(("went-through|", "procedure|")):  # after the rewrites that read the guideline
            if kind not in learned:
                learned[kind] = conditions.learn(of_kind[kind], openings, kind)
            conditions.state(entry, learned[kind])
    for entry in out:
        restate_sources(entry, groups[entry["id"]])
    annotate_answers(out, groups, kind_of, trials)
    weighed: dict[tuple[str, str | None], tuple] = {}  # (task type, pattern) -> what lead_with_facts weighs against
    ways: dict[str, SuccessWays] = {}  # task type -> its successful runs' changes and look-ups, made on first use
    rules = rules_on(runs, kind_of)
    for entry in out:  # last: it leads the guideline the rewrites above made
        kind, pattern = kind_of_entry[entry["id"]], contrast_pattern(entry["key"])
        if (kind, pattern) not in weighed:
            weighed[(kind, pattern)] = _successes(kind, pattern, met_by, successes)
        if kind not in ways:
            ways[kind] = SuccessWays(successes.get(kind, []))
        lead_with_facts(entry, groups[entry["id"]], weighed[(kind, pattern)], ways[kind], rules.get(kind))
        failed_only_facts.say(entry, groups[entry["id"]], _key_tool(entry["key"]))  # those too few to lead
        failed_only_facts.unagreed(entry, groups[entry["id"]])
        untold_counts.split(entry, failed_by.get((kind, entry["key"]), []))
        no_call_lead(entry, groups[entry["id"]], ways[kind])
        looked_up_instead.lead(entry, groups[entry["id"]], trials)
        differences_lead(entry, groups[entry["id"]], ways[kind])
        success_differences(entry, groups[entry["id"]], ended_by.get((kind, entry["key"]), []), ways[kind])
        weigh_advice(entry, groups[entry["id"]])
        quoted_plainly(entry, of_kind[kind], by_step)
    for entry in out:  # an error's or a change's lesson is titled by the advice its page now gives
        error_titles.retitle(entry)
        argument_title(entry, by_step, ways.get(kind_of_entry[entry["id"]]))
    out = settled.fold(out, apart, groups, task_of)
    mark_one_run(out, groups, kind_of_entry, trials)  # names the other lessons by their titles
    titles = {entry["id"]: entry["title"] for entry in out}  # as the pages are titled, after the rewrites
    for entry in out:  # the lessons the successful runs that met it teach, by title
        check_first(entry, titles)
        for item in (entry["contrast"] or {}).get("instead", []):
            item["titles"] = [titles[i] for i in item["insights"] if i in titles]
    prompt_rules = {r["step"]: rules_of(r) for r in runs}  # the prompt's rules on each run's arguments, once a run
    for entry in out:  # last: what to do keeps the advice, the evidence the counts
        said, runs = mistake(entry, by_step, ways.get(kind_of_entry[entry["id"]]))
        if entry["key"].startswith("idle|"):  # an agent that said it could not, where a look-up could have shown it
            kind = kind_of_entry[entry["id"]]
            claim = claims(groups[entry["id"]], trials, ways[kind].writes, ways[kind].did,
                           len(ways[kind].runs)) if kind in ways else ("", {})
            said, runs = claim if claim[0] else (said, runs)
        verdict_said = ""
        if not said:
            verdict_said, runs = verdict_misused(entry, of_kind[kind_of_entry[entry["id"]]])
        said = passed_errors.merge(entry, said)
        if runs:
            entry["mistake_runs"] = runs
        stopped_at(entry, of_kind[kind_of_entry[entry["id"]]])
        trial_advice = instead_sentence(entry)
        # a rule's page says what the rule asks: what else the successful trials did stays under Evidence
        cut_advice(entry, said, "" if entry["key"].startswith("rule|") else
                   trial_advice or action(same_task_advice(entry)))
        if verdict_said:
            entry["counted"] = [*(entry.get("counted") or []), verdict_said]
        if trial_advice and trial_advice in entry["advice"]:  # said in What to do: Evidence keeps its list only
            entry["same_task"]["advised"] = True
        quote_rule(entry, groups[entry["id"]], prompt_rules, records_held[kind_of_entry[entry["id"]]])
    annotate_facts(out, groups, trials, memo)  # after the lead: the cases show its kind first
    for entry in out:
        rerun_lead(entry, groups[entry["id"]], trials)
    return out


def _successes(kind: str, pattern: str | None, met_by: dict, succeeded: dict) -> tuple[dict, list[dict], str]:
    """The successful runs a lesson's checked facts are weighed against: those of its task type
    that met its pattern, else (none did, or the lesson has no pattern) all of the type's."""
    runs = met_by.get((kind, pattern), []) if pattern is not None else []
    if not runs:
        return by_kind(succeeded.get(kind, [])), succeeded.get(kind, []), TYPE_WIDE
    fields = pattern.split("|")
    what = met_words(pattern, fields[1] if len(fields) > 1 else "it")
    return by_kind(runs), runs, f"runs of this task type {what}"


_RULE_QUOTE = " The system prompt's rule on it: "  # compilers/rule_lessons: a rule the agent's own prompt holds
_QUOTE_SHORT = 100  # characters of a rule's own quote kept on its page once the contrast leads


def lead_with_contrast(entry: dict) -> None:
    """A lesson that restates a rule of the system prompt (the rule on its call, or the rule it is
    about), where the contrast shows it separates the outcomes: what to do leads with that
    contrast (both sides, counted). The quote, which the agent reads in its own prompt anyway,
    goes from a call's lesson and is cut short on the rule's own page (it says which rule)."""
    from ..compilers.insight_words import clip_words

    c = entry.get("contrast") or {}
    g = entry["guideline"]
    rule_page = entry["key"].startswith("rule|") and ': "' in g
    if not (_RULE_QUOTE in g or rule_page) or c.get("verdict") not in ("success", "failure"):
        return
    tasks = c.get("tasks_met")
    what = met_words(c["pattern"], entry["key"].split("|")[1])
    if c["pattern"].startswith("rule|"):  # a change the log leaves in doubt is not counted (contrast_words.IN_DOUBT)
        what = what.replace("that broke", "that plainly broke") + " (a reply in the user's own words left in doubt)"
    tasks = tasks or {"success": c["success_met"], "failure": c["failed_met"]}
    met = (f"Runs of this task type {what}: {run_counts.count(c['success_met'], tasks['success'], 'successful')}, "
           f"{run_counts.count(c['failed_met'], tasks['failure'], 'failed')}"
           + f"; they {'succeeded' if c['verdict'] == 'success' else 'failed'} more often than the runs that did not.")
    if rule_page:
        head, quote = g.split(': "', 1)
        g = f'{head}: "{clip_words(quote.rstrip().removesuffix(chr(34)), _QUOTE_SHORT)}"'
    else:
        g = g.split(_RULE_QUOTE, 1)[0].strip()
    entry["guideline"] = f"{met} {g}"


__all__ = ["MET", "TROUBLE", "contrast_pattern", "contrast_sentence", "fisher_tails", "gather", "group_key", "index_note",
           "kind_of", "pick_text", "run_entry_fields"]
