"""In-short facts about runs that change files (a coding session, a SWE-agent episode): what
was changed, where, and what the run's own checks said after it.

The other In-short facts speak of calls by tool; a shell tool runs many programs, so here a
shell call is named by the program it ran and, where the two differ, by its tool as well
("Bash (python)"), so the error and the later call that went through read as the same thing.
Nothing here fires on a log without file edits.
"""

from __future__ import annotations

import re

from ..runs.errors import reports_failing_tests, tests_passed
from .changes import _EDIT_WORDS, diff_files, what_ran
from .failing_end import failing_end, said_back
from .insight_words import join
from .page_causes import edits_between, edits_phrase
from .option_choices import chosen_as_asked, partial_reasons
from .page_items import label
from .reading import Call, Reading
from .schema import KeyFact
from .text import clip


def ran_name(c: Call) -> str:
    """A call as the page names it: its program, with the tool when the tool is a shell."""
    program = what_ran(c.turn)
    return c.name if program == c.name else f"{c.name} ({program})"


def _first_fixed(r: Reading) -> tuple[Call, list, Call] | None:
    """(a failed call, the file edits after it, the first later run of the same program that
    went through): the run's own check failing, the code changed, the check passing."""
    for err in (c for c in r.calls if c.error):
        key = what_ran(err.turn)
        fix = next((x for x in r.calls if x.n > err.n and not x.error and what_ran(x.turn) == key), None)
        if fix is None:
            continue
        edits = edits_between(r.calls, err.n, fix.n)
        if edits:
            return err, edits, fix
    return None


def fixed_then_passed(r: Reading) -> list[KeyFact]:
    """``After `pytest -q` failed at turn 1, Edit changed `a.py` (in `total`) at turn 6; the same
    command then went through at turn 9 and its tests passed (4 passed).``"""
    found = _first_fixed(r)
    if found is None:
        return []
    err, edits, fix = found
    passed = tests_passed(fix.turn.result)
    again = "the same command" if label(err, 200) == label(fix, 200) else label(fix, 80)
    return [KeyFact(f"After {label(err, 80)} failed at turn {err.n}, {edits_phrase(edits)}; {again} then went "
                    f"through at turn {fix.n}" + (f" and its tests passed ({clip(passed, 80)})." if passed else "."),
                    [err.n] + [c.n for c, _ in edits[:3]] + [fix.n])]


# a test runner's line naming one failing test: pytest's "FAILED tests/a.py::test_x - assert ..."
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.M)


def edited_still_failing(r: Reading) -> list[KeyFact]:
    """A run whose test command reported failing tests, that then changed files, and whose last
    run of the same command still reported failing tests: what it changed and what the tests said
    after it, naming the failing tests the first report did not list (the edit broke them, or
    they ran only once the first failure was gone; the log shows which tests, not why)."""
    first = next((c for c in r.calls if c.error and reports_failing_tests(c.turn.result)), None)
    if first is None:
        return []
    again = [c for c in r.calls if c.n > first.n and label(c, 200) == label(first, 200)]
    last = again[-1] if again else None
    if last is None or not last.error or not reports_failing_tests(last.turn.result):
        return []
    edits = edits_between(r.calls, first.n, last.n)
    if not edits:
        return []
    before = set(_FAILED_TEST.findall(first.turn.result or ""))
    new = [t for t in dict.fromkeys(_FAILED_TEST.findall(last.turn.result or "")) if t not in before]
    text = (f"After {label(first, 80)} reported failing tests at turn {first.n}, {edits_phrase(edits)}; the same "
            f"command still reported failing tests at turn {last.n} ({said_back(last, 90)})")
    if new and before:
        text += (f"; {join(new, 3)} {'was' if len(new) == 1 else 'were'} not among the failures it reported at "
                 f"turn {first.n}")
    turns = [first.n] + [c.n for c, _ in edits[:3]] + [last.n]
    ended = failing_end(r)
    if ended is not None and ended[0] is last:  # and it settled on that report
        settled = ended[1]
        text += (f"; {settled.name} at turn {settled.n} then settled the run with no edit after it" if settled is not None
                 else "; the run then ended with no edit after it")
        turns += [settled.n] if settled is not None else []
    return [KeyFact(text + ".", turns)]


def what_changed(r: Reading) -> list[KeyFact]:
    """For a success with file edits and no other fact: the files (and functions) it changed, the
    edits whose file the log does not name, and the call that ended it with the files of the patch
    it answered with, instead of "its last change went through"."""
    writes = [c for c in r.calls if c.writes and not c.error]
    edits = edits_between(r.calls, -1, 10 ** 9)
    if not writes:
        return []
    last = writes[-1]
    patched = [f for f, _new in diff_files(last.turn.result)  # the patch's files no named edit already told
               if not any(e.file.endswith(f) for _c, e in edits_between(r.calls, -1, 10 ** 9))]
    named = {c.n for c, _ in edits}
    unnamed = [c for c in writes if c is not last and c.n not in named and _EDIT_WORDS.search(c.name)
               and not tests_passed(c.turn.result)]
    if not edits and not patched:
        return []
    parts = ([edits_phrase(edits)] if edits else []) + [
        f"{c.name} at turn {c.n} changed a file the log does not name" for c in unnamed[:2]]
    if last.n not in named:
        parts.append(f"{last.name} at turn {last.n} ended the run"
                     + (f" with a patch of {join([f'`{f}`' for f in patched], 3)}" if patched else ""))
    turns = [c.n for c, _ in edits[:3]] + [c.n for c in unnamed[:2]] + [last.n]
    return [KeyFact(f"The run's file changes: {'; '.join(parts)}.", turns)]


def passed_yet_failed(r: Reading) -> list[KeyFact]:
    """A failure whose own last test run passed after it changed files: the grader checked more
    than that test, which a reader must not take for a fix."""
    if not edits_between(r.calls, -1, 10 ** 9):
        return []
    last_edit = max(c.n for c, _ in edits_between(r.calls, -1, 10 ** 9))
    checks = [c for c in r.calls if c.n > last_edit and not c.error and tests_passed(c.turn.result)]
    if not checks:
        return []
    c = checks[-1]
    return [KeyFact(f"After the run's last file change (turn {last_edit}), {label(c, 80)} passed at turn {c.n} "
                    f"({clip(tests_passed(c.turn.result), 60)}), yet the run was judged a failure: passing the "
                    "tests it ran did not settle the task.", [last_edit, c.n])]


def partial_score(r: Reading) -> list[KeyFact]:
    """A failure the log scores between 0 and 1 (a purchase that matched part of the request):
    the call that ended it and its score, and the refused calls after the last accepted one of
    their tool that were never sent again, which is what the partial score most likely lacks."""
    score = r.run.outcome.score
    done = [c for c in r.calls if not c.error]
    if r.run.outcome.success or score is None or not 0 < score < 1 or not done:
        return []
    last = done[-1]
    dropped = [c for c in r.calls if c.error and c.n < last.n
               and not any(x.n > c.n and not x.error and x.turn.arguments == c.turn.arguments for x in r.calls)]
    text = f"The run ended with {label(last, 60)} at turn {last.n} and scored {score:g}, short of a success"
    turns = [last.n]
    if dropped:
        c = dropped[-1]
        text += f"; {label(c, 60)} at turn {c.n} had been refused ({said_back(c, 60)}) and was never sent again"
        turns.append(c.n)
    for _kind, said, at in partial_reasons(r):
        text += f"; {said}"
        turns += at
    return [KeyFact(text + ".", sorted(set(turns)))]


def chosen_purchase(r: Reading, last: Call) -> list[KeyFact]:
    """A successful purchase on a page of options: the options it chose as the task names them,
    then the call that ended it and its score, in place of "its last change went through"."""
    chose = chosen_as_asked(r)
    if not chose:
        return []
    score = r.run.outcome.score
    return [KeyFact(f"The run chose {chose}, then ended with {label(last, 60)} at turn {last.n}"
                    + (f", which scored {score:g}" if score is not None else "") + ".",
                    sorted({last.n, *(int(n) for n in re.findall(r"at turn (\d+)", chose))}))]
