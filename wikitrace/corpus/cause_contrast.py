"""A failure page's causes set against the successful runs of its task type.

A run compiled alone ranks an error no later call got past as a likely cause. Whether it
decided anything shows only across runs: an error met before the run's first change that the
successful runs of the same task type met at least as often as the failed ones (a program
the machine lacks, a search every run fumbles; compilers/offline.py ``cause_keys``) did not
set this run apart. Once every run's entry is known, such a
cause is moved below the run's own state changes and says so, with the counts (the same
pattern keys the insight layer contrasts: compilers/run_patterns.py). The page writer
(corpus/pages.py) applies this to the compilation pages it holds; ``set_on_disk`` sets the
pages an ``add`` or ``forget`` did not write (their counts change with the runs), from the
page itself: each cause is known by its turns (the entry keeps them in the order the run
ranked them), so what an earlier command set is undone first. A page no cause of which is
affected is as rendered.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from . import layout

_HEAD = "\n## Failure Causes\n"
# a context item (a change as expected) is headed so; a program the machine lacks that successes met too is
# headed as the setting it is, and another error they met too as also met, not as a cause (and back to a cause
# when the counts no longer say so)
_BLOCK = re.compile(r"\n### (Cause|Context|Setting|Also met) ")
_ALSO = "Also met"  # the heading of a cause the successful runs met too: it did not decide the run
_SETTING = ("missing|", "error|missing-program")
_RANKED = "> They are ranked:"
MOVED_NOTE = ("> An error that the successful runs of this task type met at least as often as the failed ones comes "
              "after the run's own changes: it did not set this run apart.\n")
TRIAL_MOVED_NOTE = ("> An error that every successful trial of the same task met too comes after the run's own "
                    "changes: it did not set this run apart.\n")
# the error counted is its form, its values aside (an error key masks them): another flight, another date
_ERROR = r"(?:[Tt]his error|[Aa]n error of this form \(its values aside\))"
_SAID = re.compile(rf"( —|) {_ERROR} was also met in \d+ of \d+ successful runs? of this task type "
                   r"\(and in \d+ of \d+ failed runs?\): it did not decide this run\.|( —|) "
                   rf"{_ERROR} was also met by (?:the|both|all \d+) successful trials? of this task: it did not decide "
                   r"this run\.")
SETTING_NOTE = ("> A program the machine lacks that successful runs of this task type met too comes last, headed "
                "Setting: it is where the run worked, not what it did.\n")
_TURN = re.compile(r"#turn-(\d+)\)")


def _causes(entry: dict) -> list | None:
    causes = (entry.get("decisive") or {}).get("causes")
    return causes if entry.get("outcome") == "failure" and causes else None


@dataclass
class CauseCounts:
    """Per task type, the runs of each outcome, and per outcome the runs that met each pattern
    (each run once): what ``notes`` sets a failure's causes against."""

    total: dict[str, Counter]
    met: dict[str, dict[str, Counter]]
    won_trials: dict[str, list[frozenset[str]]]  # task -> the patterns of each of its successful trials


def count(runs: Iterable[dict]) -> CauseCounts:
    """The counts of ``runs`` (every entry of the corpus). A command counts once and hands the
    result to each ``notes`` it makes (the page writer's, then the pages on disk)."""
    from .applies import task_of
    from .insights import kind_of  # the build's, not the page writer's: it never counts

    total: dict[str, Counter] = defaultdict(Counter)
    met: dict[str, dict[str, Counter]] = defaultdict(lambda: defaultdict(Counter))
    won_trials: dict[str, list[frozenset[str]]] = defaultdict(list)
    for r in runs:
        kind, outcome = kind_of(r), r.get("outcome")
        total[kind][outcome] += 1
        patterns = r.get("patterns")
        if patterns:
            met[kind][outcome].update(set(patterns))
        if outcome == "success":
            won_trials[f"{kind}\n{task_of(r)}"].append(frozenset(patterns or ()))
    return CauseCounts(total, met, won_trials)


def notes(runs: Iterable[dict], steps: set[str] | None = None, counts: CauseCounts | None = None) -> dict[str, dict]:
    """step -> {"met": [[cause index, successes met, successes, failures met, failures]],
    "causes": the entry's causes} for each failed run (of ``steps``, when given) with causes
    recorded; "met" is empty when none was met as often by the successes. ``counts``: ``count``
    of the same runs, when the caller made it already."""
    from .applies import task_of
    from .insights import kind_of

    runs = list(runs)
    counts = count(runs) if counts is None else counts
    total, met = counts.total, counts.met
    out: dict[str, dict] = {}
    for r in runs:
        causes = _causes(r)
        if causes is None or (steps is not None and r["step"] not in steps):
            continue
        kind = kind_of(r)
        won, lost = total[kind]["success"], total[kind]["failure"]
        by = met.get(kind) or {}
        won_met, lost_met = by.get("success") or Counter(), by.get("failure") or Counter()
        hits, seen, trials = [], [], []
        won_trials = counts.won_trials.get(f"{kind}\n{task_of(r)}") or []
        for i, (keys, _turns) in enumerate(causes):
            for key in keys if isinstance(keys, list) else ():
                s, f = won_met[key], lost_met[key]
                if s and f and s * lost >= f * won:  # as often among the successes as among the failures
                    hits.append([i, s, won, f, lost])
                    break
                if key.startswith("error|") and won_trials and all(key in w for w in won_trials):
                    trials.append([i, len(won_trials)])  # every successful trial of its own task met it too
                    break
            found = [won_met[key] for key in keys if key.startswith(_ENVIRONMENT)
                     and won_met[key]] if isinstance(keys, list) else []
            if found:  # an error successful runs met too: its In short line says how many
                seen.append([i, found[0], won])
        out[r["step"]] = {"met": hits, "causes": causes, "seen": seen, **({"trials": trials} if trials else {})}
    return out


# errors that say what the machine lacks (a program, a path), not what the run decided
_ENVIRONMENT = ("missing|", "error|missing-program", "error|missing-path")
# an In short line of an error, as set_causes marks it with the successful runs that met it too
_SHORT_SAID = re.compile(r"; (?:an error of the same form \(its values aside\) was )?also met by "
                         r"(?:\d+ of \d+ successful runs? of this task type|(?:the|both|all \d+) "
                         r"successful trials? of this task)(?=\. \(turns? \[)")
_SHORT_HEAD = "\n## In short\n"


def _mark_in_short(page: str, note: dict) -> str:
    """The page with each In short line of an error the successful runs of the task type met too
    ending "also met by k of n successful runs of this task type" (whatever an earlier command
    set): a fact of the environment is not what set this run apart. A line is known by its last
    turn, the last turn of its cause."""
    start = page.find(_SHORT_HEAD)
    if start < 0:
        return page
    end = page.find("\n## ", start + len(_SHORT_HEAD))
    end = len(page) if end < 0 else end
    lines = _SHORT_SAID.sub("", page[start:end]).split("\n")
    said = [(i, f"{s} of {won} successful run{'s' if won != 1 else ''} of this task type")
            for i, s, won in note.get("seen") or ()]
    said += [(i, _trial_who(k) + " of this task") for i, k in note.get("trials") or () if i not in dict(said)]
    for i, who in said:
        last = note["causes"][i][1][-1] if note["causes"][i][1] else None
        for k, ln in enumerate(lines):
            turns = [int(n) for n in _TURN.findall(ln)]
            if ln.startswith("- ") and " failed at turn" in ln and turns and max(turns) == last \
                    and "](step-" not in ln:
                at = ln.rfind(". (turn")
                if at > 0 and not _SHORT_SAID.search(ln):
                    lines[k] = ln[:at] + f"; an error of the same form (its values aside) was also met by {who}" + ln[at:]
                break
    return page[:start] + "\n".join(lines) + page[end:]


def _sentence(s: int, won: int, f: int, lost: int, bare: bool) -> str:
    return (f"{' —' if bare else ''} {'a' if bare else 'A'}n error of this form (its values aside) was also met in {s} "
            f"of {won} successful"
            f" run{'s' if won != 1 else ''} of this task type (and in {f} of {lost} failed"
            f" run{'s' if lost != 1 else ''}): it did not decide this run.")


def _trial_who(k: int) -> str:
    return "the successful trial" if k == 1 else "both successful trials" if k == 2 else f"all {k} successful trials"


def _trial_sentence(k: int, bare: bool) -> str:
    return (f"{' —' if bare else ''} {'a' if bare else 'A'}n error of this form (its values aside) was also met by "
            f"{_trial_who(k)} of this task: it "
            "did not decide this run.")


def _turns(body: str) -> tuple[int, ...]:
    line = next((ln for ln in body.split("\n") if ln.startswith("**Turns**: ")), "")
    return tuple(int(n) for n in _TURN.findall(line))


def set_causes(page: str, note: dict | None) -> str:
    """The page with each cause of ``note`` (``notes``) saying it was met by the successes, and
    moved below the last state change ranked under it, whatever an earlier command set there;
    the page as it was without a note or when its causes are not the ones the note lists."""
    if not note:
        return page
    page = _mark_in_short(page, note)
    start = page.find(_HEAD)
    if start < 0:
        return page
    body_at = start + len(_HEAD)
    ends = [e for e in (page.find("\nLeft out: ", body_at), page.find("\n## ", body_at)) if e >= 0]
    end = min(ends) if ends else len(page)
    parts = _BLOCK.split(page[body_at:end])  # lead, then (heading word, block) pairs
    lead, words, blocks = parts[0], parts[1::2], parts[2::2]
    causes = note["causes"]
    wanted = [tuple(turns) for _keys, turns in causes]
    if (len(blocks) != len(causes) or len(set(wanted)) != len(wanted)
            or not all(b.startswith(f"{n}\n") for n, b in enumerate(blocks, 1))):
        return page
    shown = {_turns(b): _SAID.sub("", b.split("\n", 1)[1], count=1) for b in blocks}
    if set(shown) != set(wanted):
        return page
    word_of = {_turns(b): w for b, w in zip(blocks, words)}
    bodies = [shown[t] for t in wanted]  # as the run ranked them
    headings = [word_of[t] for t in wanted]
    said = [(i, lambda bare, s=s, won=won, f=f, lost=lost: _sentence(s, won, f, lost, bare))
            for i, s, won, f, lost in note["met"]]
    said += [(i, lambda bare, k=k: _trial_sentence(k, bare)) for i, k in note.get("trials") or ()]
    for i, sentence in said:
        head, sep, rest = bodies[i].partition("**Support**: ")
        if not sep:
            return page
        line, nl, tail = rest.partition("\n")
        bare = not line.rstrip().endswith((".", "!", "?"))  # a quoted error may end without a stop
        bodies[i] = head + sep + line + sentence(bare) + nl + tail
    met = {i for i, _s in said}
    # a program the machine lacks that any successful run of the type met too did not decide this run by itself
    setting = {i for i, *_ in [*note["met"], *(note.get("seen") or ())] if isinstance(causes[i][0], list)
               and any(k.startswith(_SETTING) for k in causes[i][0])}
    headings = ["Setting" if i in setting else _ALSO if i in met and h in ("Cause", _ALSO)
                else "Cause" if h in ("Setting", _ALSO) else h for i, h in enumerate(headings)]
    changes = [i for i, (c, _t) in enumerate(causes) if c == "change"]
    last = max(changes) if changes else -1
    # above the last change: the other causes keep their order, the ones the successes met follow
    order = ([i for i in range(last + 1) if i not in met] + [i for i in range(last + 1) if i in met]
             + list(range(last + 1, len(bodies))))
    order = [i for i in order if i not in setting] + [i for i in order if i in setting]  # the setting after every cause
    text = lead + "".join(f"\n### {headings[i]} {n}\n{bodies[i]}" for n, i in enumerate(order, 1))
    page = page[:body_at] + text + page[end:]
    for note_text in (MOVED_NOTE, TRIAL_MOVED_NOTE, SETTING_NOTE):
        had = page.find(note_text)
        if had >= 0:
            page = page[:had] + page[had + len(note_text):]
    if order != sorted(order) or setting:
        moved = {i for i in met if i <= last} - setting  # the ones set below a change of the run's
        by_type = {i for i, *_ in note["met"]}
        at = page.find(_RANKED)
        line_end = page.find("\n", at) + 1 if at >= 0 else -1
        notes_now = ((MOVED_NOTE if moved & by_type else "") + (TRIAL_MOVED_NOTE if moved - by_type else "")
                     + (SETTING_NOTE if setting else ""))
        if line_end > 0:
            page = page[:line_end] + notes_now + page[line_end:]
    return page


def set_on_disk(pub, runs: list[dict], touched: set[str], dropped: list[dict], templates=None,
                counts: CauseCounts | None = None) -> int:
    """Set the causes of every failure page in the corpus not written by this command (not in
    ``touched``) of a task type that ``touched`` or ``dropped`` (entries no longer held, or
    compiled again) has a run of, against the successes of ``runs`` (every entry now): only
    those types' counts moved. ``counts``: ``count(runs)``, when the caller has it. Returns the
    pages changed."""
    from . import plain_pages
    from .insights import kind_of

    if plain_pages.overridden(templates, plain_pages.COMPILATION_TEMPLATE):
        return 0
    kinds = {kind_of(r) for r in runs if r["step"] in touched} | {kind_of(r) for r in dropped}
    every = any("task_type" not in d and "apps" not in d for d in dropped)  # an entry kept by its ids only
    steps = {r["step"] for r in runs
             if r["step"] not in touched and (every or kind_of(r) in kinds) and _causes(r)}
    changed = 0
    for step, note in notes(runs, steps, counts).items():
        rel = layout.compilation_doc(step)
        try:
            page = (pub.root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        new = set_causes(page, note)
        if new != page:
            pub.write(rel, new.encode("utf-8"))
            changed += 1
    return changed
