"""The In short fact about a run's answer (a QA log's Finish): judged right or wrong, against the
expected answer, and where the answer came from as far as the log shows (a look-up, an error's
list of names, the question itself, a reflection, a user message, or nothing the run read), so a
reader does not take a guess for what its look-ups earned."""

from __future__ import annotations

import re

from .arguments import is_chosen, yes_or_no
from .error_listings import listed_as_title, listed_in_errors
from .insight_words import answer_seen_in, expected_answer, gives_answer, is_verdict, join
from .named_source import named_source
from .near_words import near_look_up, near_phrase
from .page_notes import _window, answer_source, searched_listed
from .qa_reasons import name_with_middle
from .reading import Call, Reading, harness_reason
from .schema import KeyFact
from .task_words import answer_origin
from .text import clip, clip_words

SEEN_WIDTH = 60  # characters either side of an expected answer a look-up held, quoted in the fact
SEEN_TURNS = 4  # look-ups named as holding a right answer


def answer_call(r: Reading) -> Call | None:
    """The call that gave the run's answer (a QA log's Finish), when it gave one."""
    writes = [c for c in r.calls if c.writes and not c.error and isinstance(c.turn.arguments, str)]
    last = writes[-1] if writes else None
    return last if last is not None and harness_reason(r) is None and gives_answer(r, last) else None


UNTIED = "answer-untied"  # a wrong answer from a page that held none of some name the question gives


def _untied(r: Reading, c: Call) -> str:
    """", though no page the run read before answering holds "Argentine" or "Ronald Koeman", which
    the question names" for a wrong answer: the names of the question nothing read tied it to (the
    run took a page about another thing for the one asked about); "" when every name was met."""
    from .qa_reasons import unmet_names

    question, given = r.run.task.instruction or "", " ".join(str(c.turn.arguments).split())
    read = "\n".join(x.turn.result for x in r.calls if x.n < c.n and not x.error and not x.writes and x.turn.result)
    unmet = unmet_names(question, read, given)[:3] if read else []
    if not unmet:
        return ""
    quoted = [f'"{n}"' for n in unmet]
    named = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f", though no page the run read before answering holds {named}, which the question names"


def answer_fact(r: Reading, c: Call, right: bool) -> KeyFact | None:
    gold = expected_answer(r)
    given = clip(" ".join(str(c.turn.arguments).split()), 100)
    if gold is None:
        return None
    if right:  # a verdict label is chosen, not read: a page's "supports" is no source of "SUPPORTS"
        seen = None if is_verdict(r, gold) else named_source(r, gold, c) or answer_seen_in(r, gold, c)
        unread, at = ("", None) if seen or is_chosen(r, given) else _unread_answer(r, c)
        # every later look-up that held it too: a year many pages hold is no quote of the first page
        # that happens to, and the page the answer came from may be a later one
        held = [seen] if seen else []
        while held and (more := answer_seen_in(r, gold, c, after=held[-1].n)) is not None and len(held) < SEEN_TURNS:
            held.append(more)
        around = _window(seen.turn.result, gold, SEEN_WIDTH, r.run.task.instruction or "") if len(held) == 1 else None
        where = (f"the look-up at turn {seen.n}" if len(held) == 1 else
                 f"the look-ups at turns {join([str(x.n) for x in held], SEEN_TURNS)}" if held else "")
        return KeyFact(f"The answer \"{given}\" (turn {c.n}) was judged right"
                       + (f"; \"{clip(gold, 80)}\" appears in what {where} returned"
                          + (f" (\"{around}\")." if around else ".") if seen else f"{unread}.{_chosen_on(c)}"),
                       [c.n] + [x.n for x in held] + ([at] if at is not None else []), "answer-seen" if seen else "")
    if is_verdict(r, gold):
        return KeyFact(f"The answer \"{given}\" (turn {c.n}) was judged wrong; the task expected the verdict "
                       f"\"{clip(gold, 80)}\".{_chosen_on(c)}", [c.n])
    seen = named_source(r, gold, c) or answer_seen_in(r, gold, c)
    listed = None if seen else listed_in_errors(r, gold, c.n)
    titled = None if seen or listed else listed_as_title(r, gold, c.n)
    near = None if seen or listed or titled else near_look_up(r, gold, c.n)
    # the words around it, so a reader sees whether the page ties it to the question or only lists it
    around = _window(seen.turn.result, gold, SEEN_WIDTH) if seen else None
    # a yes or a no is worked out, never read off a page: where no look-up held it there is nothing to say
    bare = seen is None and listed is None and near is None and yes_or_no(gold)
    text = (f"The answer \"{given}\" (turn {c.n}) was judged wrong; the task expected \"{clip(gold, 80)}\"." if bare else
            f"The answer \"{given}\" (turn {c.n}) was judged wrong; the task expected \"{clip(gold, 80)}\", "
            + (f"which appears in what the look-up at turn {seen.n} returned"
               + (f" (\"{around}\")." if around else ".") if seen else
               f"which no look-up that went through had returned, only {listed.where('answered')}." if listed else
               f"which no look-up had returned; the page \"{titled[1]}\" was listed by {titled[0].where('answered')}."
               if titled else
               f"which no look-up had returned as written{near_phrase(near)}." if near else "which no look-up had returned."))
    turns = [c.n] + ([seen.n] if seen else []) + (listed.turns if listed else []) + ([near[0].n] if near else []) \
        + (titled[0].turns if titled else [])
    told = _beside_expected(" ".join(str(c.turn.arguments).split()), gold)
    untied = ""  # the question's names no page read held, when the answer came from a page about another thing
    if told is None:
        found = answer_source(r, c)
        if found is not None and found[0] == "error":
            errs = listed_in_errors(r, " ".join(str(c.turn.arguments).split()), c.n)
            opened = searched_listed(r, c, found[1].n)
            # a listed name the run then searched and found named: "no look-up that went through"
            # held it as written, and yet the page it opened was about it
            told = (f"The run's answer is a name the error {found[1].name} returned at turn {found[1].n} listed; "
                    f"{opened[0].name}[{clip(str(opened[0].turn.arguments), 60)}] at turn {opened[0].n} went through, "
                    f"and its answer names \"{opened[1]}\"." if opened else
                    "The run's answer appears in no look-up that went through, only in "
                    + (errs.where("returned") if errs else f"the error {found[1].name} returned at turn {found[1].n}") + ".")
            turns += (errs.turns if errs else [found[1].n]) + ([opened[0].n] if opened else [])
        elif found is not None and found[0] == "user":
            # a person's name a page wrote with a middle name ("Sir Patrick John Thompson Vallance") is there
            named = next(((x, span) for x in r.calls if x.n < c.n and not x.error and not x.writes and x.turn.result
                          and (span := name_with_middle(x.turn.result, " ".join(str(c.turn.arguments).split())))), None)
            told = (f"The run's answer appears in no look-up as written, only in the user message at turn {found[1].turn}; "
                    f"what {named[0].name} returned at turn {named[0].n} wrote it \"{named[1]}\"." if named else
                    f"The run's answer appears in no look-up, only in the user message at turn {found[1].turn}.")
            turns += [found[1].turn] + ([named[0].n] if named else [])
        elif found is not None and (seen is None or found[1].n != seen.n):
            untied = _untied(r, c)
            told = f"The run's answer appears in what {found[1].name} returned at turn {found[1].n}{untied}."
            turns.append(found[1].n)
    kind = ("answer-extra" if told and told.startswith("The answer holds the expected")
            else "answer-partial" if told and told.startswith("The answer is only part") else "answer-seen" if seen
            # counted across a lesson's failed runs (corpus/failed_only_facts.py): a page about another thing
            else UNTIED if untied else "")
    chosen = _chosen_on(c) if is_chosen(r, given) else ""  # a yes or no: the reading it rests on
    about = [c.name or ""] if kind == UNTIED else ["seen"] if seen else []  # the tool a lesson's count is on
    return KeyFact(text + (" " + told if told else "") + chosen, sorted(set(turns)), kind, about)


REASON_WIDTH = 240


def _chosen_on(c: Call) -> str:
    """An answer no look-up returned word for word (a verdict, a yes or no, one of the names the
    question offers) is chosen on the agent's own reading: its words with the call, quoted from
    the start, are what decided it right or wrong."""
    said = " ".join((c.turn.reasoning or "").split())
    return f" The agent's words with it: \"{clip_words(said, REASON_WIDTH)}\"" if said else ""


def _unread_answer(r: Reading, c: Call) -> tuple[str, int | None]:
    """Where a right answer no look-up returned came from, as far as the log shows (and the turn it
    names): an error's list of names, the question itself (one of the choices it offers), a
    reflection on an earlier trial the run was given, or nothing before it, when the agent answered
    from what it knew. A reader must not take such a success for one its look-ups earned."""
    from .trial_record import _reflections

    found = answer_source(r, c)
    if found is not None and found[0] == "look-up":  # the answer as given, where the expected one is written otherwise
        return f"; the answer appears in what {found[1].name} returned at turn {found[1].n}", found[1].n
    if found is not None and found[0] == "error":
        return f"; no look-up that went through returned it, only the error {found[1].name} at turn {found[1].n}", found[1].n
    origin = answer_origin(r, " ".join(str(c.turn.arguments).split()))
    if origin == "question":
        return "; no look-up returned it as written: the question itself names it", None
    told = _reflections(r)
    if origin == "given" and told is not None:
        return (f"; no look-up returned it: a reflection on an earlier trial, given to the run at turn {told['turn']}, "
                "had named it"), told["turn"]
    if found is not None and found[0] == "user":
        return f"; no look-up returned it, only the message at turn {found[1].turn}, which the run was given", found[1].turn
    return ("; no look-up returned it and no earlier turn of the log held it: the agent answered from what it knew, "
            "so this log holds no step a run without that knowledge could copy to find it"), None


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _beside_expected(given: str, gold: str) -> str | None:
    """How an answer relates to the expected one when either holds the other word for word: the
    words it added, or the words of the expected answer it left out."""
    a, g = _fold(given), _fold(gold)
    if a == g or not a or not g:
        return None
    if g in a and re.search(r"(?<!\w)" + re.escape(g) + r"(?!\w)", a):  # the plain test first
        i = a.index(g)
        extra = [x.strip(" ,;") for x in (given[:i], given[i + len(g):])]
        parts = [f"\"{clip(x, 60)}\" {where}" for x, where in zip(extra, ("before it", "after it")) if x]
        return ("The answer holds the expected words and adds " + " and ".join(parts) + ".") if parts else None
    if a in g and re.search(r"(?<!\w)" + re.escape(a) + r"(?!\w)", g):
        i = g.index(a)
        left = [x.strip(" ,;") for x in (gold[:i], gold[i + len(a):])]
        parts = [f"\"{clip(x, 60)}\"" for x in left if x]
        return ("The answer is only part of the expected one: it leaves out " + " and ".join(parts) + ".") if parts else None
    return None
