"""A failure's deciding mistake that other trials of its task made too, said on its page.

A mistake one trial makes may be chance; the same mistake in most trials of a task is what a
new attempt at it will meet. The mistakes compared are the ones a run's entry already records:
its final answer (compilers/trial_record.py) and the kinds of the facts its page checked
(corpus/checked_facts.py ``run_facts``): a change the task expected and the run never made, a
change it did not expect, an argument sent otherwise, a call form every error shared. A
mistake any successful trial of the task made too decided nothing and is not said. The line
counts the trials that made it, links each, and says whether any trial succeeded; for an
expected change they all left unmade it says what each did there instead (another change, a
hand-off, none), not "make it when asked", which only restates the task and is wrong where the
prompt's rule forbade it; where the
run opened with reflections on its task's earlier failed trials (Reflexion's retries), it says
that too. corpus/trial_contrast.py adds the line to a failure's line against a successful
trial, or makes it the failure's line when no trial succeeded.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from functools import lru_cache

from ..compilers.insight_words import hands_off  # by tool name, as the page's hand-off lessons judge it
from ..compilers.near_words import main_words
from ..compilers.trial_record import answer_norm
from ..controls import visible
from ..templates import md_text
from . import fact_leads, layout
from .trial_leads import held_elsewhere

LINKED = 8  # trials linked per line; more are counted

# an item's kind -> (what the trials did, as a verb phrase after "N trials of this task", what to do)
_CHANGE = {
    # a run may have made one of several `X` changes the task expected: "left out one", never "never made it"
    "missed": ("left out {a} `{0}` change the task expected", ""),  # what they did instead is said (``_instead``)
    "unexpected": ("made {a} `{0}` change the task did not expect", "before a `{0}` change, check that the request calls for it and the rules allow it as sent"),
    "arguments": ("sent `{1}` in {0} otherwise than the task expected",
                  "check `{1}` against what the user asked for and the rules on {on} before {0}"),
}
ANSWER_DO = ("before giving an answer other trials of the task failed with, find a look-up whose text shows it fits "
              "every part of the task")  # a question's conditions, a claim's parts: said of any task with an answer


def _t(text: str) -> str:
    return visible(md_text(text))


def items(entry: dict) -> list[tuple]:
    """The mistakes a failed run's entry records, the deciding one first: its answer, then its
    checked facts in page order (a change fact once per tool or argument it names)."""
    out: list[tuple] = []
    answer = (entry.get("decisive") or {}).get("answer") or {}
    if answer.get("text") and answer_norm(answer["text"]):
        out.append(("answer", answer.get("words") or answer_norm(answer["text"])))
    from .checked_facts import _SAID

    for f in entry.get("facts") or []:
        kind, about = f.get("kind", ""), f.get("about") or []
        if kind == "missed-change":
            out += [("missed", tool) for tool in about]
        elif kind == "unexpected-change":
            out += [("unexpected", tool) for tool in about]
        elif kind == "arguments":
            out += [("arguments", a.split("@", 1)[0]) for a in about if "." in a]
        elif kind in _SAID and kind != "rule":
            out.append(("kind", fact_leads.group(f)))
    return list(dict.fromkeys(out))


def _said(item: tuple, entry: dict, fact: dict | None) -> tuple[str, str, bool]:
    """(what the trials did, what to do, whether the first is a clause rather than a verb phrase)."""
    if item[0] == "answer":
        return f"answered \"{_t(entry['decisive']['answer']['text'])}\"", ANSWER_DO, False
    if item[0] in _CHANGE:
        did, do = _CHANGE[item[0]]
        tool, _, arg = item[1].partition(".")
        a = "an" if tool[:1].lower() in "aeiou" else "a"
        on = "the record it names" if re.search(r"(?:^|_)ids?$", arg, re.I) else "it"  # an id names a record
        return did.format(_t(tool), _t(arg), a=a), do.format(_t(tool), _t(arg), on=on), False
    from .checked_facts import _SAID

    about = (fact or {}).get("about") or []
    tool = about[0] if about and fact_leads.kind_of(item[1]) in fact_leads.TOOL_KINDS else ""  # else: a reading, not a tool
    answered = bool((entry.get("decisive") or {}).get("answer"))
    fields = defaultdict(str, t=f"calling {tool}" if tool else "answering" if answered else "acting", tool=tool or "the tool",
                         items=", ".join(about))
    shown, do = (x.format_map(fields) for x in _SAID[fact_leads.kind_of(item[1])])
    return _t(shown.replace("the run ", "each trial ")), _t(do), True


def _fact(entry: dict, item: tuple) -> dict | None:
    return next((f for f in entry.get("facts") or [] if item[0] == "kind" and fact_leads.group(f) == item[1]), None)


def _reflected(entry: dict) -> dict:
    return (entry.get("decisive") or {}).get("reflections") or {}


def made_by(members: list[dict]) -> dict[str, list]:
    """step -> the mistakes its entry records (``items``), for every trial of a task: worked out once per task."""
    return {m["step"]: items(m) for m in members}


def recurring(entry: dict, members: list[dict], made: dict[str, list] | None = None) -> tuple[str, list[int]] | None:
    """The sentence saying that ``entry``'s (a failure's) mistake recurs in other failed trials
    of its task (``members``, every trial, ``entry`` among them; ``made``: ``made_by(members)``),
    with the turns of this run it cites; None when no mistake of it recurs, or a successful
    trial made it too."""
    won = [m for m in members if m["outcome"] == "success"]
    failed = [m for m in members if m["outcome"] != "success"]
    made = made if made is not None else made_by(members)
    shared = []
    for item in made[entry["step"]]:
        if any(item in made[w["step"]] for w in won):
            continue  # a successful trial made it too: it did not decide the run
        holders = [m for m in failed if any(_same(item, x) for x in made[m["step"]])]
        if len(holders) >= 2:
            shared.append((item, holders))
    if not shared:
        return None
    # the answer when others gave it too; else the mistake most trials share, the earliest on a tie
    item, holders = next((x for x in shared if x[0][0] == "answer"), None) or max(shared, key=lambda x: len(x[1]))
    text = _line(entry, item, holders, members, won, made)
    return text, _turns(entry, item, "and this run opened with" in text)


def _same(item: tuple, other: tuple) -> bool:
    """Whether two trials made one mistake: the same item, or two answers one of which holds the
    other as whole words ("Sir Patrick Vallance" and "Patrick Vallance"; a name and that name with
    its place added), the shorter with a main word (a bare "no" stands in many answers)."""
    if item == other:
        return True
    if item[0] != "answer" or other[0] != "answer":
        return False
    short, long = sorted((item[1], other[1]), key=len)
    return bool(main_words(short)) and f" {short} " in f" {long} "


def _unmet(entry: dict, holders: list[dict]) -> tuple[list[str], int]:
    """The question's names that the page this run took its answer from never holds and that no
    page another holder took it from held either, with how many holders' pages were checked."""
    mine = ((entry.get("decisive") or {}).get("answer") or {}).get("unmet") or []
    pages = [a for m in holders if (a := (m.get("decisive") or {}).get("answer") or {}).get("found")]
    names = [n for n in mine if all(n in (a.get("unmet") or []) for a in pages)]
    return names, len(pages)


def _turns(entry: dict, item: tuple, reflected: bool) -> list[int]:
    """The turns of this run the line cites: its answer's (and the page's it came from, when the
    line names what that page lacked), and the reflections' when it names them."""
    answer = (entry["decisive"].get("answer") or {}) if item[0] == "answer" else {}
    turns = [(answer.get("found") or {}).get("turn") if answer.get("unmet") else None, answer.get("turn")]
    return [t for t in turns + [_reflected(entry).get("turn") if reflected else None] if isinstance(t, int)]


_FORM = (("kind", "answer-extra"), ("kind", "answer-partial"))
FORM_DO = "give just the words the question asks for, none added and none dropped, before answering"
EXTRA_SEEN_DO = ("give only the words the question asks for, leaving out the words the look-up wrote around them, "
                 "before answering")
FORM_SEEN_DO = ("give the words the question asks for exactly as the look-up wrote them, none added and none dropped, "
                "before answering")


def _answer_do(entry: dict, holders: list[dict], made: dict[str, list]) -> str | None:
    """For an answer the holders share, the advice of a checked fact every one of them holds too
    (the comparison they all wrote backwards, the words they all added): it says why the answer
    was wrong, which the answer alone does not. Answers that each held the expected words with
    others added, or only part of them, share their form's fault, whichever of the two each had."""
    if all(any(x in made[m["step"]] for x in _FORM) for m in holders):
        seen = all(("kind", "answer-seen") in made[m["step"]] for m in holders)  # a look-up had returned the span
        if seen and all(_FORM[0] in made[m["step"]] and _FORM[1] not in made[m["step"]] for m in holders):
            return EXTRA_SEEN_DO  # each copied more of the page than was asked: the words around it are the fault
        return FORM_SEEN_DO if seen else FORM_DO
    mine = [x for x in made[entry["step"]] if x[0] == "kind"]
    for item in mine:
        if all(item in made[m["step"]] for m in holders):
            return _said(item, entry, _fact(entry, item))[1]
    return None


def _line(entry: dict, item: tuple, holders: list[dict], members: list[dict], won: list[dict],
          made: dict[str, list]) -> str:
    did, do, clause = _said(item, entry, _fact(entry, item))
    if item[0] == "answer":
        do = _answer_do(entry, holders, made) or _unmet_do(entry, holders) or do
        did += _other_forms(entry, item, holders)
    failed = [m for m in members if m["outcome"] != "success"]
    k, pool = len(holders), len(failed)
    trials = "trials of this task" if not won else "failed trials of this task"
    if item[0] == "missed" and k == pool:  # "all N left out one" said plainly
        who = f"neither of the 2 {trials}" if pool == 2 else f"none of the {pool} {trials}"
        did = f"made every `{_t(item[1])}` change the task expected"
    else:
        who = (f"both {trials}" if k == pool == 2 else f"all {pool} {trials}" if k == pool
               else f"{k} of the {pool} {trials}")
    said = f"in {who}, {did}" if clause else f"{who} {did}"
    said = said[0].upper() + said[1:] + f" ({_runs(entry, holders, failed)})"
    if not won:
        said += ", and none of the task's trials succeeded" if k < pool else ", and none succeeded"
    mine = _reflected(entry).get("count", 0)
    reflected = bool(mine and any(_reflected(m).get("count", 0) < mine for m in holders))
    if reflected:
        said += (", and this run opened with a reflection on an earlier failed trial of this task" if mine == 1 else
                 f", and this run opened with {mine} reflections on earlier failed trials of this task")
    if item[0] == "missed":  # "make X when asked" restates the task, and is wrong where a rule forbade X
        instead = _instead(entry, holders, item[1])
        return f"{said}. Instead, {instead}." if instead else f"{said}."
    held = held_elsewhere(entry, members, holders, _sibling) if item[0] == "answer" and not won else None
    if held and do == ANSWER_DO:  # the page that held the answer says more than the general advice
        return f"{said}. {held}"
    if item[0] == "answer" and not won and never_returned(members):
        # no page any trial read held it: the advice may not have been enough, and the reader is told so
        held = (f"No look-up that went through in the {len(members)} trials of this task returned the expected answer "
                "as written" + _listed(members) + ".")
    # after the reflections clause, a colon would read the advice as theirs: it is a sentence of its own
    return (f"{said}. {do[:1].upper()}{do[1:]}." if reflected else f"{said}: {do}.") + (f" {held}" if held else "")


def _listed(members: list[dict]) -> str:
    """", though the list of near names an error gave held it in 2 of them ([step-0095](…) at its turn
    4, …): send a name …": the name to search was offered, and no trial took it up."""
    shown = sorted(((m["step"], x) for m in members if (x := (m.get("decisive") or {}).get("expected_listed"))),
                   key=lambda sx: layout.id_number(sx[0]))
    if not shown:
        return ""
    where = ", ".join(f"[{s}]({_sibling(s)}) at its turn {x['turn']}" for s, x in shown[:LINKED])
    where += f" and {len(shown) - LINKED} more" if len(shown) > LINKED else ""
    return (f", though the list of near names an error gave held it in {len(shown)} of them ({where}): send a name "
            "such a list offers when it fits the question")


def never_returned(members: list[dict]) -> bool:
    """Whether every trial records where the expected answer stood, and none had a look-up return it."""
    return all((m.get("decisive") or {}).get("expected_seen") == {} for m in members)


def _other_forms(entry: dict, item: tuple, holders: list[dict]) -> str:
    """The holders' answers written otherwise than this run's, said after it: a reader who
    recounts the trials sees each form the line counts as this answer. "Words added or dropped only
    at its ends" (what ``_same`` counts) only when every form shown differs by its words, not by
    accents or "and"."""
    def plain(text: str) -> str:
        return " ".join(text.casefold().split())

    mine = plain(entry["decisive"]["answer"]["text"])
    texts = [((m.get("decisive") or {}).get("answer") or {}).get("text") for m in holders]
    forms = list(dict.fromkeys(t for t in texts if t and plain(t) != mine))[:2]
    if not forms:
        return ""
    # only at its ends: a form with a word put inside ("port of Baltimore west to …") is not counted as one
    how = " with words added or dropped only at its ends" if all(answer_norm(t) != item[1] for t in forms) else ""
    return f" or a form of it{how} (" + ", ".join(f'"{_t(x)}"' for x in forms) + ")"


def _unmet_do(entry: dict, holders: list[dict]) -> str | None:
    """What to do, said with the question's names the answer's page never gave."""
    names, pages = _unmet(entry, holders)
    if not names:
        return None
    found = entry["decisive"]["answer"]["found"]
    said = " or ".join(f'"{_t(n)}"' for n in names[:2])
    mine = f"the {_t(found['tool'])} for \"{_t(found['query'])}\" at turn {found['turn']}"
    # "returned it first", not "first saw it": an error's list of names or a reflection may have
    # shown the answer before any look-up returned it
    page = (f"the look-up that first returned it to this run ({mine}) never mentions" if pages == 1 else
            f"none of the {pages} look-ups that first returned it to these trials (this run's: {mine}) mentions")
    tie = " and ".join(f'"{_t(n)}"' for n in names[:2])
    return (f"{page} {said}, which the question names; before answering, find a page that ties the answer to "
            f"{tie}{' as well' if len(names) == 1 else ''}")


def _instead(entry: dict, holders: list[dict], missed: str) -> str:
    """What the trials that never made the expected ``missed`` change did at its place, from
    their entries: the changes that went through (a hand-off said as one), or none; empty when
    an entry does not record its changes. The reader sees where the trials went another way
    (declined, handed off, changed something else) and whether that was the rule's doing."""
    said: dict[str, list[str]] = {}
    for m in sorted(holders, key=lambda m: (m["step"] != entry["step"], layout.id_number(m["step"]))):
        record = m.get("decisive") or {}
        if not record:
            return ""  # its changes are not recorded: nothing is said of any
        tools = list(dict.fromkeys(c.get("tool") or "" for c in record.get("changes") or ()))
        parts = [f"handed off with `{_t(t)}`" for t in tools if hands_off(t)]
        other = [t for t in tools if not hands_off(t)]
        if other == [missed] and _as_written(record, missed) and not _differed(m, missed):
            # its changes were ones the task expected, sent alike: what it lacked is another one
            n = len({json.dumps(c.get("values"), sort_keys=True) for c in record.get("changes") or ()
                     if c.get("tool") == missed})  # the same change sent twice is one change
            parts.insert(0, f"made {'one' if n == 1 else n} of the expected `{_t(missed)}` changes as written")
        elif other:
            names = " and ".join(f"`{_t(t)}`" for t in other)
            one = ("an " if other[0][:1].lower() in "aeiou" else "a ") if len(other) == 1 else ""
            parts.insert(0, f"made {one}{names} change{'s' if len(other) > 1 else ''}"
                         + (" other than the expected one" if missed in other and _differed(m, missed) else ""))
        what = " and ".join(parts) or "made no change that went through"
        said.setdefault(what, []).append("this run" if m["step"] == entry["step"] else f"[{m['step']}]({_sibling(m['step'])})")
    many = len(holders) > LINKED  # the line's own list links them already: here they are counted
    return "; ".join(f"{_who(whos, many)} {what}" for what, whos in said.items())


def _as_written(record: dict, tool: str) -> bool:
    """Whether every ``tool`` change a run's record holds is marked as one the task expected, sent alike."""
    made = [c for c in record.get("changes") or () if c.get("tool") == tool]
    return bool(made) and all(c.get("expected") for c in made)


def _differed(entry: dict, tool: str) -> bool:
    """Whether a ``tool`` change of ``entry`` differed from every one the task expected (its facts
    say it was unexpected or sent other arguments); one that matched is no change "other than
    the expected one", though the run left out another the task expected of the same tool."""
    for f in entry.get("facts") or []:
        if f.get("kind") in ("unexpected-change", "arguments") and any(
                a.split("@", 1)[0].split(".", 1)[0] == tool for a in f.get("about") or []):
            return True
    return False


def _who(whos: list[str], counted: bool) -> str:
    if counted:
        others = len(whos) - (whos[0] == "this run")
        mine = "this run" if whos[0] == "this run" else ""
        rest = f"{others} other trial{'s' if others != 1 else ''}" if others else ""
        return " and ".join(x for x in (mine, rest) if x)
    return whos[0] if len(whos) == 1 else ", ".join(whos[:-1]) + " and " + whos[-1]


@lru_cache(maxsize=4096)
def _sibling(step: str) -> str:
    """The link from one compilation page to another's (pages of one folder: the same from every page)."""
    return layout.Linker(layout.compilation_doc("step-0000"), "/").rel(layout.compilation_doc(step))


def _runs(entry: dict, holders: list[dict], failed: list[dict]) -> str:
    """The trials that made the mistake, this run first, then the failed ones that did not ("not …"),
    each linked while there is room: what a reader recounts the line's numbers from."""
    def steps(group):
        return sorted((m["step"] for m in group if m["step"] != entry["step"]), key=layout.id_number)

    made = steps(holders)
    held = set(made)
    not_made = [s for s in steps(failed) if s not in held]
    room = LINKED
    said = []
    for group in (made, not_made):
        shown = [f"[{s}]({_sibling(s)})" for s in group[:room]]
        rest = len(group) - len(shown)
        room -= len(shown)
        said.append((", ".join(shown) + (f" and {rest} more" if rest else "")) if shown else f"{rest} more" if rest else "")
    text = "this run" + (" and " + said[0] if said[0] else "")
    return text + (f"; not {said[1]}" if said[1] else "")
