"""The procedure lesson of a run that settled its task with a change: what it looked with, what
it changed, and for a free-text ending where the text came from (``procedure|<final call>[:<source>]``).
The key is recorded as a pattern by every run (run_patterns.py) and the lesson taught by a success
(run_insights.py); both read the same facts here.
"""

from __future__ import annotations

from .answer_case import answer_case
from .ending_words import ENDING, TESTED, TITLE
from .coding_insights import coding_procedure, edit_detail, last_edit
from .insight_parts import kind_of_tasks, lookups_before, main_edit, make_insight, tested_after, verb
from .argument_places import sources
from .arguments import asked_option, is_chosen, wrong_kind
from .insight_words import answer_seen_in, edited_files, free_form, gives_answer, join
from .reading import Call, Reading
from .schema import CandidateInsight
from .task_words import answer_origin
from .text import clip


def _text_source(r: Reading, final: Call, answer: str) -> str:
    """Where the text of a run's last free-text call came from (a key of ``ENDING``): a verdict
    label, a look-up's answer, or the run's own words; for text that is no answer (a click, a
    move), whether a look-up's answer showed it."""
    # a look-up that holds the whole answer word for word counts, as it does on the run's page
    # (answer_seen_in): a long answer copied from a page is a value a look-up returned
    tools = sources(r, final).tools or answer_seen_in(r, " ".join(str(final.turn.arguments).split()), final) is not None
    # a yes or a no is chosen between two, as a verdict label is: no look-up returns it word for word
    text = " ".join(str(final.turn.arguments).split())
    # a yes or a no to a question asking for a thing named is no verdict: a guess of the wrong kind
    where = "label" if is_chosen(r, text) and wrong_kind(r, text) is None else "looked-up" if tools else "own"
    if where != "label" and gives_answer(r, final) and asked_option(r.run.task.instruction or "", text):
        # one of the things a "which of" question names, whether or not a look-up wrote it: runs that
        # named the right one and runs that named the other end the same way, and are counted together
        return "option"
    if where != "label" and not gives_answer(r, final):
        where = "shown" if tools else "unshown"  # a click or a move: text sent, not an answer given
    elif where == "own" and answer_origin(r, text) == "question":
        # words the question states (not an option it asks between); a name only a reflection gave is as
        # unchecked as a guess
        where = "task"
    return where


_OPENED = "open an item a list showed"
_CHOSE = "choose the options the task names"
_TITLED = {_OPENED: "opening a listed item", _CHOSE: "choosing the options the task names"}


def _page_steps(r: Reading, final: Call) -> list[str]:
    """The steps of a run that ended with a text sent on a page (a click): opening an item a
    result list showed, and choosing on its page the options the task names, each when it did."""
    from .option_choices import choices, item_note

    earlier = [c for c in r.calls if c.n < final.n and c.name == final.name and c.writes and not c.error]
    steps = [_OPENED] if any(item_note(r, c) for c in earlier) else []
    if any(ch.named and ch.chosen in ch.named for ch in choices(r) if ch.call.n < final.n):
        steps.append(_CHOSE)
    return steps


def procedure_key(r: Reading) -> str | None:
    """What the run did to settle its task, as a key: the last state-changing call that
    went through, and for a free-text answer where its value came from. How it got there (a
    look-up that followed a name an earlier answer showed) is a choice its page counts, not a
    lesson of its own: one way of settling is one page."""
    writes = [c for c in r.calls if c.writes and not c.error]
    if not writes:
        return None
    final = writes[-1]
    answer = free_form(final)
    where = ""
    if answer is not None:
        where = _text_source(r, final, answer)
    elif main_edit(r) is not None:  # a coding run: where it found the file it changed, and a test it saw pass
        _c, _e, place, _shown = main_edit(r)
        where = f"file-{place}" + (TESTED if tested_after(r, last_edit(r)) else "")
    return f"procedure|{verb(final)}{':' + where if where else ''}"




def procedure_insight(r: Reading) -> CandidateInsight:
    writes = [c for c in r.calls if c.writes and not c.error]
    final = writes[-1]
    v = verb(final)
    looks = lookups_before(r, final)
    others = list(dict.fromkeys(verb(c) for c in writes[:-1] if verb(c) != v))
    answer = free_form(final)
    steps = []
    if looks:
        steps.append(f"look with {join(sorted(looks), 3)}")
    where = _text_source(r, final, answer) if answer is not None else ""
    on_page = _page_steps(r, final) if where in ("shown", "unshown") else []
    if on_page:  # a shop's page: the item it opened and the options it chose are the way to the end
        steps += [f"{step} with {final.name}" for step in on_page]
        steps.append(f"end with {final.name}[{clip(answer, 30)}]")
    elif answer is not None:
        steps.append(f"end with {final.name} " + ENDING[where][1])
    else:
        if others:
            steps.append(f"make the change with {join(sorted(others), 3)}")
        src = sources(r, final)
        tools, user = src.tools, src.user
        took = "; ".join(f"{join(sorted(k), 3)} from {t}" for t, k in sorted(tools.items()) if t not in src.earlier_calls)
        took = "; ".join(x for x in (took, f"{join(sorted(user), 3)} from the user's words" if user else "") if x)
        steps.append(f"call {v}" + (f", taking {took}" if took else ""))
    edited = edit_detail(r) if answer is None and main_edit(r) is not None else edited_files(r, writes)
    # each look-up as it was sent (quote marks and all: they may be why one failed), an error said as one
    asked = [f"{c.name}[{clip(' '.join(str(c.turn.arguments).split()), 40)}]" + (" (an error)" if c.error else "")
             for c in r.calls if not c.writes and free_form(c) is not None]
    detail = f"turn {final.n}: {v}" + (f"; changed {edited}" if edited else "") + (  # what the look-ups asked, in order
        f"; looked up {join(asked, 4)}" if answer is not None and asked else "")
    if answer is None and main_edit(r) is not None:
        return coding_procedure(r, final, looks, detail, procedure_key(r) or "")
    how = ""
    if on_page:
        how = f"[{clip(answer, 30)}] after " + join([_TITLED[step] for step in on_page])
    elif answer is not None:
        how = ", " + TITLE.get(where, ENDING[where][0])
    insight = make_insight(procedure_key(r) or "", f"Settle with {v}" + (how or (f" after {join(sorted(looks), 2)}" if looks else "")),
                           "To settle the task: " + ", then ".join(steps) + ".",
                           f"In {kind_of_tasks(r)} that end with {v}.", detail, True)
    if answer is not None and gives_answer(r, final):
        insight.case = answer_case(r, final)
    return insight
