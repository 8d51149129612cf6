"""A lesson's cases: what the pages of a few of its failed runs established, in their words.

A lesson's advice is a generalisation; the reader acts on it sooner with the run it came from in
view: "book_reservation at turn 21 sent `nonfree_baggages` 1 where the task expected 0. The system
prompt's rule on `nonfree_baggages`: …". Each failed run's page opens with the facts the compiler
checked against its log (compilers/in_short.py), most telling first. A run entry keeps, for each of
its lessons, the first of those facts that is about the lesson (lesson_fact says how). The insight
page shows them for the first failed run of up to three tasks (three trials of one task would show
one mistake three times). Lessons whose answers have their own cases (answer_cases.py) keep those.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..compilers.in_short import NOTHING_SETTLED
from ..compilers.text import clip
from ..compilers.run_insights import RULE_TITLE
from .applies import key_tool, task_of

SHOWN = 3  # cases per page
WIDTH = 600  # characters of a fact kept
_RULE_WORDS = 5  # opening words of a rule a fact must quote to be about it
_TURNS = re.compile(r"\bturns?\s+(\d+(?:(?:,\s*|,?\s+and\s+)\d+)*)")
_FAILING = re.compile(r"\b(?:fail(?:ed|s)?|errors?)\b", re.I)  # a fact about a call failing
_CLAIM = "user-claim"  # the agent took the user's word where a record said otherwise: it bears on any change made
_UNSETTLED = frozenset(NOTHING_SETTLED.values())  # a page's word that nothing is established: no case


def lesson_fact(comp, lesson) -> dict:
    """The checked fact of a failed run's page that is about ``lesson`` (a CandidateInsight), as its
    run entry keeps it (``fact``: its words, ``fact_kind``: its kind when counted); {} when none is.
    About it means: naming its tool, or the user's word the run took against a record (for an error,
    only a fact saying a call of the tool failed on a turn of the error the lesson's detail names,
    and quoting no other message of its kind); for a change the task expected and never got, a fact
    of that kind; for a rule, quoting it; for any other lesson, on a turn the lesson's detail names."""
    key = lesson.key
    if getattr(comp, "outcome", "") != "failure" or not key:
        return {}
    facts = [f for f in getattr(comp, "in_short", ()) or () if f.text not in _UNSETTLED]
    tool, kind = key_tool(key), key.split("|", 1)[0]
    turns = {int(n) for span in _TURNS.findall(lesson.detail or "") for n in re.findall(r"\d+", span)}
    if tool:
        shape = key.split("|")[2] if kind == "error" and key.count("|") > 1 else ""
        facts = [f for f in facts if (kind != "error" and f.kind == _CLAIM) or _naming(tool).search(f.text) and (
            kind != "error" or turns & set(f.turns) and _FAILING.search(f.text) and not _other_message(f.text, shape))]
    elif kind == "missed":
        facts = [f for f in facts if f.kind == "missed-change"]
    elif kind == "rule":
        opening = " ".join(lesson.title.removeprefix(RULE_TITLE).split()[:_RULE_WORDS]).rstrip(" …")
        facts = [f for f in facts if opening and opening in f.text]
    else:
        facts = [f for f in facts if turns & set(f.turns)]
    if not facts:
        return {}
    return {"fact": clip(facts[0].text, WIDTH), **({"fact_kind": facts[0].kind} if facts[0].kind else {})}


@lru_cache(maxsize=512)
def _naming(tool: str) -> re.Pattern:
    """A tool's name as a whole word (not inside `a.tool` or `tool_x`)."""
    return re.compile(rf"(?<![\w.]){re.escape(tool)}(?!\w)")


def _other_message(text: str, shape: str) -> bool:
    """Whether a fact quotes a message that opens like the lesson's error and is another one
    ("Error: gift card balance …" on a lesson about "Error: certificate cannot be used …")."""
    head = shape.split("…")[0].strip()
    if not head:
        return False
    first = head.split()[0]
    alike = [q for q in re.findall(r'"([^"]+)"', text) if q.split()[:1] == [first]]
    return bool(alike) and not any(q.startswith(head) or head.startswith(q.rstrip("…")) for q in alike)


def annotate(out: list[dict], groups: dict[str, list[tuple[dict, dict]]]) -> None:
    """Sets ``cases`` on the entries without answer cases whose failed runs kept a fact for them:
    first those of the kind the lesson leads with (``checked``), so the cases show what its advice
    is about, then the others, each in step order."""
    for entry in out:
        if entry.get("cases"):
            continue
        lead = (entry.get("checked") or {}).get("kind")
        members = groups[entry["id"]]
        if lead:
            members = sorted(members, key=lambda m: m[1].get("fact_kind") != lead)
        cases, tasks = [], set()
        for e, lesson in members:
            if e["outcome"] != "failure" or not lesson.get("fact") or task_of(e) in tasks:
                continue
            tasks.add(task_of(e))
            cases.append({"step": e["step"], "text": lesson["fact"], "checked": True})
        if cases:
            entry["cases"] = cases[:SHOWN]
