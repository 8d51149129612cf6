"""What an insight page about final answers shows beyond its advice, read from the answer cases
runs record (compilers/answer_case.py):

- a few concrete cases, one per task, in step order: "answered X, expected Y", and what the
  look-ups before the answer had shown (the place that held the expected words, the answer's
  own source, or the last look-up's text);
- for the two lessons that pull opposite ways (an answer with words beyond the expected one,
  an answer holding only part of it), one count of both, how the long answers went long and
  whether a look-up held the short answers' whole form, with a link from each page to the other;
- for a lesson drawn from wrong answers, what the successful runs of the task type did before
  their answer, compared with this lesson's runs by the one-sided Fisher test, and said to
  separate them only when the test does.
"""

from __future__ import annotations

from collections import defaultdict
from statistics import median

from . import run_counts
from .advice_fit import register
from .applies import task_of
from .fisher import verdict
from ..compilers.arguments import yes_or_no
from ..compilers.text import folded_words

SHOWN = 3  # cases on a page, each from another task
LONG, SHORT = "extra", "partial"  # the answer lessons' keys (compilers/insight_words.why_wrong) that pull apart
FORM = "form"  # the answer lesson about the words' endings: like LONG and SHORT, about the words, not where they came from
SHAPES = (("number", "a number or year"), ("yes/no", "a yes or no"), ("name", "a name"), ("phrase", "a phrase"))


def case_of(lesson: dict) -> dict | None:
    case = lesson.get("case")
    return case if isinstance(case, dict) and case.get("given") is not None else None


def pick(members: list[tuple[dict, dict]], shown: int = SHOWN, won=None) -> list[tuple[dict, dict]]:
    """Up to ``shown`` (run, case) pairs, the first run of each task in step order: three trials of
    one question would show one mistake three times. Cases that record the expected answer first,
    and among them those of a failed run whose task a trial answered rightly (``won(run)``: its case
    can then show what that trial answered and from which look-up)."""
    firsts, tasks = [], set()
    for e, lesson in members:
        case = case_of(lesson)
        if case is None or task_of(e) in tasks:
            continue
        tasks.add(task_of(e))
        firsts.append((e, case))
    # stable: step order within each part
    firsts.sort(key=lambda ec: ("expected" not in ec[1],
                                won is not None and ec[0]["outcome"] == "failure" and not won(ec[0])))
    return firsts[:shown]


def _q(text: str) -> str:
    return f"\"{text}\""


def case_text(case: dict, success: bool) -> str:
    """One case in words: the answer, the expected one, and what the look-ups had shown."""
    said = f"{'ended with' if case.get('chosen') and 'expected' not in case else 'answered'} {case['tool']}[{case['given']}]"
    if "expected" in case and (not success or case.get("relation") != "same"):
        said += f", expected {_q(case['expected'])}"
    seen, held, last = case.get("seen"), case.get("held"), case.get("last")
    if case.get("chosen"):  # a verdict or a click: what the run had read before it, and its words on it
        asked = case.get("asked") or []
        if asked:
            said += "; its calls before it: " + ", ".join(asked)
        if last:
            said += f"; the last (turn {last['turn']}) returned {_q(last['text'])}"
        if case.get("thought"):
            said += f"; the agent wrote before it {_q(case['thought'])}"
        return said + (f"; score {case['score']:g}" if "score" in case else "")
    if success:
        source = seen or held
        if source:
            return f"{said}, in the words of the look-up at turn {source['turn']} ({source['call']}): {_q(source['text'])}"
        # where its look-ups went and what the agent wrote, not "worked out from" them: an answer no
        # look-up held may as well come from the model's own knowledge ("Adam Levine" in no result)
        asked = case.get("asked") or []
        return (f"{said}{', which no look-up held as written' if case.get('looked') else ''}; its look-ups before it: "
                + (", ".join(asked) if asked else f"{case['answered']} answered")
                + (f"; the agent wrote before it {_q(case['thought'])}" if case.get("thought") else ""))
    if seen:
        said += (f"; the expected words appear in what the look-up at turn {seen['turn']} ({seen['call']}) returned: "
                 f"{_q(seen['text'])}")
    elif case.get("listed"):  # no look-up returned it; an error's list of near names offered it
        listed = case["listed"]
        said += (f"; no look-up that went through returned the expected words, but the error at turn {listed['turn']} "
                 f"({listed['call']}) listed {_q(listed['name'])}")
    elif "expected" in case and case.get("shape") != "yes/no":
        said += "; no look-up before it returned the expected words"
    if held and not seen:
        said += f"; the answer's words stand in the look-up at turn {held['turn']} ({held['call']}): {_q(held['text'])}"
    elif last:
        said += (f"; the last look-up{' that went through' if last.get('through') else ''} (turn {last['turn']}, "
                 f"{last['call']}) returned {_q(last['text'])}")
    if "score" in case and "expected" not in case:
        said += f"; score {case['score']:g}"
    return said


def _of(n: int, total: int) -> str:
    return f"{n} of {total}"


def _tasks(pairs: list[tuple[dict, dict]]) -> int:
    return len({task_of(e) for e, _c in pairs})


def length_rule(long_cases: list[tuple[dict, dict]], short_cases: list[tuple[dict, dict]]) -> list[str]:
    """The counts that tell a too-long answer from a too-short one, over both lessons' runs, and
    the rule they give; each sentence says only what its counts show."""
    a, b = len(long_cases), len(short_cases)
    if not a + b:
        return []
    out = [f"Of the {a + b} runs whose answer differed from the expected one only by words added or left out "
           f"(runs of {_tasks(long_cases + short_cases)} tasks), {a} (of {_tasks(long_cases)} tasks) answered with "
           f"every expected word plus others, and {b} (of {_tasks(short_cases)} tasks) with only part of the "
           "expected words."]
    asked_again = sum(bool(c.get("extra_in_task")) for _e, c in long_cases)
    joined = sum(bool(c.get("joined")) for _e, c in long_cases)
    whole = sum("seen" in c for _e, c in short_cases)
    # a too-short answer that left out a word the question states: "leave those out" is no rule for it
    dropped = sum(_dropped_asked(e, c) for e, c in short_cases)
    if a:
        out.append(f"Too long: in {_of(joined, a)} the answer joined more items (with a comma, \"and\" or the like) "
                   f"than the expected one held; in {_of(asked_again, a)} every added word was already in the question.")
    if b:
        out.append(f"Too short: in {_of(whole, b)} the whole expected form appears in what a look-up before the answer returned; "
                   f"in the other {b - whole} no look-up before the answer had returned it as written"
                   + (f"; in {_of(dropped, b)} a word left out was one the question states." if dropped else "."))
    by_shape = []
    for shape, words in SHAPES:
        la = sum(c.get("shape") == shape for _e, c in long_cases)
        sb = sum(c.get("shape") == shape for _e, c in short_cases)
        if la or sb:
            by_shape.append(f"{words}: {la} too long, {sb} too short")
    if by_shape:
        out.append("By what the expected answer was: " + "; ".join(by_shape) + ".")
    rule = []
    if joined:
        rule.append("give one item when the question asks for one, not a list joined with a comma or \"and\"")
    if asked_again:
        rule.append("leave out the words the question already states" +
                    (", unless they are part of the name of the thing asked for" if dropped else ""))
    if whole:
        rule.append("but copy the thing asked for whole, in the form the look-up wrote it, not the first words of it")
    if rule:
        out.append("So: " + "; ".join(rule) + ".")
    return out


def _dropped_asked(entry: dict, case: dict) -> bool:
    """Whether a too-short answer left out a word of the expected one that the question states."""
    left = set(folded_words(case.get("expected") or "")) - set(folded_words(case.get("given") or ""))
    return bool(left & set(folded_words(entry.get("instruction") or "")))


def _features(case: dict, at_least: int) -> dict[str, bool]:
    return {
        "followed": bool(case.get("followed")),
        "many": case.get("answered", 0) >= at_least,
        "sourced": "held" in case or ("seen" in case and case.get("relation") == "same"),
    }


# what to do, for a choice the successful runs made more often (the counts stand under Evidence)
_ADVICE = {
    "followed": "search next for a name an earlier look-up's answer showed",
    "many": "make more distinct look-ups before answering",
    "sourced": "answer in the words a look-up returned, as written",
}

# a lesson's advice whose premise a choice measures: "look each one up" is what the ``many`` choice
# counts. When most of the page's failed runs already made that choice, the advice is what failed,
# and the page says what is left to do instead
_PREMISE = {
    "option": ("many", "When the request names the options, looking each one up is not enough: find for each the "
                       "fact the request compares them on (a date, a place, a number), and answer with {t} only once "
                       "the look-ups show that fact for every option"),
}

# what a choice was, as the sentence that says it did not suffice
_DONE = {
    "followed": "Searching next for a name an earlier look-up's answer showed",
    "many": "Making more distinct look-ups",
    "sourced": "Answering in a look-up's own words, as written,",
}

# each with its definition in a few words, so a reader can count the same runs from the log
_SAID = {
    "followed": "searched a name an earlier look-up's answer had shown (a query with words beyond the task text's, all "
                "of them in one earlier answer given without an error)",
    "many": "made at least {k} distinct look-up{s} answered without an error (the successful runs' median)",
    "sourced": "answered with words a look-up had returned as written (the whole answer, word for word, in what a "
               "look-up before it returned without an error; yes/no answers not counted, nor a wrong answer of one "
               "lower-case word)",
}


def versus(members: list[tuple[dict, dict]], successes: list[dict], form: bool = False) -> list[str]:
    """What the successful runs of the task type did before their answer, against this lesson's
    failed runs, per measurable choice, with the one-sided Fisher test's verdict. ``form``: a lesson
    about the answer's words against the expected ones (too long, too short), whose answers hold
    look-up words by what they are: where the words came from is left out there."""
    return [line for _name, line, _side, _did, _of_failed in compared(members, successes, form)]


def compared(members: list[tuple[dict, dict]], successes: list[dict],
             form: bool = False) -> list[tuple[str, str, str, int, int]]:
    """``versus`` as (choice, line, the test's verdict, the failed runs here that made it, the failed runs here),
    runs as their entries (counted with their tasks)."""
    failed_runs = [(e, c) for e, l in members if e["outcome"] == "failure" and (c := case_of(l)) is not None]
    failed = [c for _e, c in failed_runs]
    chosen = all(c.get("chosen") for c in failed)  # verdicts or clicks: chosen from a set, never a look-up's words
    named = {c.get("in_task") for c in failed}
    among = "successful runs of this task type"
    if len(named) == 1 and None not in named and not chosen:  # like with like: a question naming its options, or one that does not
        successes = [c for c in successes if c.get("in_task") in named]
        among += " whose question " + ("named" if True in named else "did not name") + " the expected answer"
    if not failed or not successes:
        return []
    at_least = max(1, round(median(c.get("answered", 0) for c in successes)))
    lines = []
    # a yes or a no is never counted as a look-up's words: where every answer here is one, the count is
    # empty by how it is made, not by what the runs did
    yes_no = all(yes_or_no(str(c.get("given") or "")) for c in failed)
    for name, text in _SAID.items():
        if (form or chosen or yes_no) and name == "sourced":
            continue
        made = [e for e, c in failed_runs if _features(c, at_least)[name]]
        a = len(made)
        b = sum(_features(c, at_least)[name] for c in successes)
        side, p = verdict(a, b, len(failed), len(successes))
        told = {"success": "successful runs did this more often", "failure": "failed runs did this more often"}
        lines.append((name, f"{text.format(k=at_least, s='s' if at_least != 1 else '')}: "
                            f"{run_counts.part_of(made, [e for e, _c in failed_runs])}, "
                            f"{_of(b, len(successes))} {among}; "
                            + (f"{told[side]} (one-sided Fisher p = {p:g})" if side in told else
                               "not shown to separate them" if p is not None else "not tested"), side,
                      made, [e for e, _c in failed_runs]))
    return lines


def annotate(out: list[dict], groups: dict[str, list[tuple[dict, dict]]], kind_of, trials=None) -> None:
    """Adds ``cases``, ``length_rule`` (with ``opposite``) and ``versus`` to the entries whose runs
    recorded answer cases; other entries are left as they were. ``trials`` (corpus/trials.Trials):
    every run by task, to say which tasks no trial's look-up ever answered."""
    successes: dict[str, list[dict]] = defaultdict(list)  # task type -> successful runs' cases
    by_key: dict[tuple[str, str], dict] = {}
    seen_runs: set[str] = set()
    for entry in out:
        members = groups[entry["id"]]
        kind = kind_of(members[0][0])
        by_key[(kind, entry["key"])] = entry
        for e, lesson in members:
            case = case_of(lesson)
            if case is not None and e["outcome"] == "success" and e["step"] not in seen_runs:
                seen_runs.add(e["step"])
                successes[kind].append((e, case))
    for kind in successes:
        successes[kind].sort(key=lambda ec: ec[0]["step"])
    def won(run: dict) -> bool:
        task = trials.group(run) if trials is not None else None
        return task is not None and bool(trials.by_task.get(task, {}).get("success"))

    for entry in out:
        members = groups[entry["id"]]
        chosen = pick(members, won=won)
        if not chosen:
            continue
        entry["cases"] = [{"step": e["step"], "text": case_text(c, e["outcome"] == "success")} for e, c in chosen]
        fields = entry["key"].split("|")
        if fields[0] != "answer" or len(fields) < 3:
            continue
        kind = kind_of(members[0][0])
        if fields[2] in (LONG, SHORT):
            other_key = "|".join([*fields[:2], SHORT if fields[2] == LONG else LONG])
            other = by_key.get((kind, other_key))
            mine = [(e, c) for e, l in members if (c := case_of(l)) is not None]
            theirs = [(e, c) for e, l in (groups[other["id"]] if other else []) if (c := case_of(l)) is not None]
            long_cases, short_cases = (mine, theirs) if fields[2] == LONG else (theirs, mine)
            entry["length_rule"] = length_rule(long_cases, short_cases)
            if other is not None:
                entry["opposite"] = other["id"]
            rule = next((x for x in entry["length_rule"] if x.startswith("So: ")), None)
            if rule is not None:  # the rule both slips' counts give is advice on both pages, not one way each
                entry["guideline"] = f"{entry['guideline'].rstrip()} Either way: {rule[4:]}"
        lines = compared(members, [c for _e, c in successes.get(kind, [])], fields[2] in (LONG, SHORT, FORM))
        if lines:
            entry["versus"] = [line for _n, line, _s, _d, _f in lines]
        made = {n: (did, of, line.split(": ", 1)[0].replace(" (the successful runs' median)", ""))
                for n, line, _side, did, of in lines}  # did: the failed runs here that made the choice; of: all
        premise = _PREMISE.get(fields[2])
        if premise and premise[0] in made and 2 * len(made[premise[0]][0]) > len(made[premise[0]][1]):
            did, of, what = made[premise[0]]  # most failed runs here did what it advised
            share = run_counts.part_of(did, of, inner=True)
            entry["guideline"] = premise[1].format(t=fields[1]) + f" ({share}{',' if ', ' in share else ''} {what})."
            # a run whose own words compared the options' values (a comparison the compiler checked) had the fact
            # this asks for: the advice fits the others only
            fits = [e for e, _l in members if e["outcome"] == "failure"
                    and not any(f.get("kind") == "comparison" for f in e.get("facts") or [])]
            register(entry, entry["guideline"], fits, "the others' own words compared the options' values")
        # a choice most failed runs here made too is no advice, whatever the successes did: it did not suffice
        better = [_ADVICE[n] for n, _line, side, did, of in lines if side == "success" and 2 * len(did) <= len(of)]
        done = [f"{_DONE[n]} did not suffice: {run_counts.part_of(did, of)} did so too"
                for n, _line, side, did, of in lines if side == "success" and 2 * len(did) > len(of)]
        if better:  # the verdicts, not the counts, are in the guideline: it moves only when they do
            entry["guideline"] += (" Successful runs of this task type did so more often than the failed runs here: "
                                   + "; ".join(better) + " (counts under Evidence).")
        if done:  # the page's own runs: it moves only with its sources
            entry["guideline"] += " " + "; ".join(done) + "."
        entry["guideline"] += _never_seen(members, trials)
        st = entry.get("same_task") or {}
        top = (st.get("differences") or [{}])[0].get("text", "")
        if any(n == "sourced" and side == "success" and 2 * len(did) > len(of) for n, _l, side, did, of in lines) and \
                top.startswith(f"gave a {fields[1]} answer whose words beyond the task text it was given all came from earlier answers"):
            st["advised"] = True  # the page has said answering in a look-up's words did not suffice: not advised again


def _never_seen(members: list[tuple[dict, dict]], trials) -> str:
    """" In 29 of the 39 tasks of the failed runs here (…), no look-up of any trial returned the
    expected answer as written: …" when most of the page's failed runs are of tasks whose every
    trial's record says where the expected answer stood and none had a look-up return it: what
    the runs found did not hold it, and no answer drawn from those pages could have been right."""
    if trials is None:
        return ""
    from .trial_recur import never_returned

    failed = [e for e, _l in members if e["outcome"] == "failure" and "expected_seen" in (e.get("decisive") or {})]
    never = []
    for e in failed:
        task = trials.group(e)
        runs = [r for side in (trials.by_task.get(task) or {}).values() for r in side] if task is not None else []
        if runs and never_returned(runs):
            never.append(e)
    if 2 * len(never) <= len(failed):
        return ""  # said where it is what most of the page's failed runs met, not of a few
    tasks, of = run_counts.tasks(never), run_counts.tasks(failed)
    return (f" In {tasks} of the {of} tasks of the failed runs here ({len(never)} of the {len(failed)} runs), no look-up "
            "of any trial returned the expected answer as written: the pages the runs found did not hold it, so "
            "search with other words (another name the question gives, a title an error listed) rather than answer "
            "from them.")


def _own_side(entry: dict) -> list[str]:
    """The length rule's sentences a page shows: the counts over both slips, its own slip's ("Too
    long: …" on the too-long page), the counts by kind of answer; the rule they give only where What
    to do does not say it already. Each page of the pair shows its side once, not both."""
    rule = entry.get("length_rule") or []
    side = entry["key"].split("|")[2] if entry.get("opposite") and entry["key"].count("|") >= 2 else ""
    other = {LONG: "Too short: ", SHORT: "Too long: "}.get(side)
    advice = entry.get("advice") or entry.get("guideline") or ""
    return [x for x in rule if not (other and x.startswith(other))
            and not (x.startswith("So: ") and x[4:].rstrip(".") in advice)]


def markdown(entry: dict, link, titles: dict[str, str] | None, md) -> tuple[str, str]:
    """The page's Cases section body and its Evidence lines, as markdown: run text escaped by
    ``md``, the links written here (``link`` a layout.Linker)."""
    from . import layout

    cases = [f"- [{c['step']}]({link.rel(layout.compilation_doc(c['step']))})"
             f"{' (successful)' if c.get('outcome') == 'success' else ''}: {md(c['text'])}"
             for c in entry.get("cases") or []]
    rule = _own_side(entry)
    if rule:
        cases += ["", md(" ".join(rule))]
    if entry.get("opposite"):
        other = entry["opposite"]
        title = md((titles or {}).get(other, other))
        cases += ["", f"The opposite slip has its own page: [{title}]({link.rel(layout.insight_doc(other))}), "
                      "with its own side's counts."]
    lines = entry.get("versus") or []
    versus = ("What the successful runs of this task type did before their answer, against the failed runs here:\n"
              + "\n".join(f"- {md(x)}" for x in lines)) if lines else ""
    return "\n".join(cases), versus
