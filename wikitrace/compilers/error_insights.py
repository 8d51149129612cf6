"""The insight of a call answered with an error, keyed by the tool, its command word and the
error's masked first failing line; a program the shell could not find is one lesson per task
type, whichever program it was (``error|missing-program``), and a test command that reported
failing tests is one lesson per program, whichever test failed (``error|<tool>|failing tests``).
The detail beside each run says what it did after the error: the files it changed, and whether
the same command then passed, so the page of a lesson shows what its successful runs did."""

from __future__ import annotations

import re

from .. import lazy_re
from ..runs.errors import failure_line, reports_failing_tests, tests_passed
from .changes import what_ran
from .insight_parts import edits_of, kind_of_tasks, make_insight, shape, verb
from .insight_words import join, led_nowhere, named_by, packed_calls, sums_to_named, what_changed
from .error_titles import error_title
from .option_choices import holding_words
from .page_notes import listed_names
from .retry_values import swapped
from .reading import _SHELL_TOOLS, Call, Reading, _head_word, _occurs, command_of, leaves, runs_a_command
from .schema import CandidateInsight
from .text import base_name, clip

_MISSING_PROGRAM = lazy_re.compile(r"command not found|^(?:[\w./-]+: )?(?:line \d+: |\d+: )?[^\s:]+: not found\s*$", re.M)


_NOT_FOUND_NAME = lazy_re.compile(r"([^\s:]+): (?:command )?not found\s*$", re.M)

MISSING_PROGRAM_KEY = "error|missing-program"
DEAD_END = "no later query or answer drew on the page it found"  # a retry that got past the error to a dead end
SHELL_SYNTAX_KEY = "error|shell-syntax"  # one lesson per task type, whichever program the line ran
MISSING_PATH_KEY = "error|missing-path"  # one lesson per task type, whichever tool named the path
# a file or folder that is not there, as shells and agents' editors say it: cat's "No such file or
# directory", SWE-agent's "File x not found" / "Directory x not found", "The path /x does not exist"
_MISSING_PATH = lazy_re.compile(r"No such file or directory|^(?:File|Directory) \S+ not found\s*$"
                                r"|\b(?:file|path|directory)\b[^\n]{0,80}\bdoes not exist", re.M | re.I)

# a shell's sequence separator (the exit status of ``a; b`` is b's), and quoted text that may hold one
_SEQUENCE = lazy_re.compile(r"\s*;\s*")
_QUOTED_TEXT = lazy_re.compile(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"")


# the separators of a shell line's commands (``cd /r && mvn test | tail``), for the programs it runs
_COMMANDS = lazy_re.compile(r"\s*(?:&&|\|\||[;|\n])\s*")
# a shell refusing to parse the line: "bash: -c: line 1: syntax error near unexpected token `)'"
_SHELL_SYNTAX = lazy_re.compile(r"^(?:[\w./-]+: )*(?:line \d+: )?syntax error(?: near unexpected token|: unexpected end)",
                                re.M | re.I)


def _programs_run(command: str) -> list[str]:
    """The first word of each command of a shell line: ``cd /r && mvn -q compile`` runs cd and mvn."""
    parts = _COMMANDS.split(_QUOTED_TEXT.sub("''", command))
    return [p.split()[0] for p in parts if p.split()]


# an answer that says the command was stopped for running too long, not what was wrong with it
_HUNG = lazy_re.compile(r"\b(?:timed out|no new output after|took (?:more|longer) than)\b|TIMED OUT", re.I)


def failing_verb(c: Call) -> str:
    """The tool and the program an error is told of: for a command that runs several in sequence
    (``env | grep aws; python warm.py``), the one the error line names (``sed: -e ...``), else the
    last one, whose exit status the shell reports; ``verb`` for any other call."""
    command = command_of(c.turn) if _head_word(c.name) in _SHELL_TOOLS else None
    if command is None or "\n" in command.strip():  # a script of many lines: its first program names it
        return verb(c)
    parts = [p for p in _SEQUENCE.split(_QUOTED_TEXT.sub("''", command)) if p.strip()]
    if len(parts) < 2:
        return verb(c)
    heads = [p.split()[0] for p in parts]
    said = failure_line(c.turn.result) or ""
    head = next((h for h in heads if said.startswith(h + ":")), heads[-1])
    return c.name if head.lower() == c.name.lower() else f"{c.name} {head}"


def missing_programs(c: Call) -> list[str]:
    """The programs a command's shell answered it could not find (``javac: command not found``,
    ``sh: 1: mvn: not found``), in order; empty for any other answer."""
    if not runs_a_command(c.turn) or not _MISSING_PROGRAM.search(c.turn.result or ""):
        return []
    return list(dict.fromkeys(_NOT_FOUND_NAME.findall(c.turn.result or ""))) or [verb(c)]


def tests_failed(c: Call) -> bool:
    """Whether a command's answer is a test runner's report of failing tests."""
    return runs_a_command(c.turn) and reports_failing_tests(c.turn.result)


def error_key(c: Call) -> str:
    """The pattern an error is counted as across the runs of a task type: a program the shell
    could not find is one fact of the environment whichever program it was (javac in one run,
    mvn in another), so it is one key; so are failing tests of one program, whichever test
    failed; any other error is keyed by its tool and its message."""
    if missing_programs(c):
        return MISSING_PROGRAM_KEY
    if runs_a_command(c.turn) and _SHELL_SYNTAX.search(c.turn.result or ""):
        return SHELL_SYNTAX_KEY
    if _MISSING_PATH.search((c.turn.result or "").lstrip()[:300]):
        return MISSING_PATH_KEY
    return f"error|{failing_verb(c)}|failing tests" if tests_failed(c) else f"error|{failing_verb(c)}|{shape(c)}"



def changed_after(r: Reading, err: Call, until: int | None = None) -> str:
    """``; then changed a.py (in f) with Edit at turn 3``: the files the run changed after an error
    (before turn ``until`` when given), with the function when the log shows it; "" when none."""
    edits = [(c, e) for c, e in edits_of(r) if c.n > err.n and (until is None or c.n < until)]
    if not edits:
        return ""
    files: dict[str, str] = {}
    for _c, e in edits:
        files[base_name(e.file)] = files.get(base_name(e.file)) or e.function or ""
    named = join([f + (f" (in {fn})" if fn else "") for f, fn in files.items()], 3)
    tools = join(list(dict.fromkeys(verb(c) for c, _e in edits)), 2)
    turns = sorted({c.n for c, _e in edits})
    at = f"turn {turns[0]}" if len(turns) == 1 else f"turns {turns[0]}-{turns[-1]}"
    return f"; then changed {named} with {tools} at {at}"


def _ending(r: Reading, err: Call) -> str:
    """``; ended with submit at turn 8``: the run's last state-changing call that went through
    after the error, when it is no file edit (a submit, an answer)."""
    writes = [c for c in r.calls if c.writes and not c.error and c.n > err.n]
    last = writes[-1] if writes else None
    if last is None or any(c is last for c, _e in edits_of(r)):
        return ""
    return f"; ended with {verb(last)} at turn {last.n}"


def failing_tests_insight(r: Reading, err: Call) -> CandidateInsight:
    """A test command that reported failing tests: the lesson is the fix-and-rerun loop, and the
    detail says what the run did next (the files it changed, whether the same command passed)."""
    v, ran = failing_verb(err), what_ran(err.turn)
    again = [c for c in r.calls if c.n > err.n and runs_a_command(c.turn) and what_ran(c.turn) == ran]
    passed = next((c for c in again if not c.error), None)
    changed = changed_after(r, err, passed.n if passed is not None else None)
    if passed is not None:
        summary = tests_passed(passed.turn.result)
        after = f"; the same {ran} command passed at turn {passed.n}" + (f" ({clip(summary, 60)})" if summary else "")
    elif again:
        after = f"; no later {ran} command passed ({len(again)} more run{'s' if len(again) != 1 else ''})"
    else:
        after = f"; {ran} was not run again"
    said = failure_line(err.turn.result)  # the line naming what failed (pytest's FAILED x::t), not its banner
    detail = (f"turn {err.n}: {ran} reported failing tests" + (f" ({clip(said, 100)})" if said else "")
              + (changed or "; changed no file after it") + after)
    return make_insight(f"error|{v}|failing tests", f"When {v} reports failing tests, fix the code they point to and rerun them",
                        f"When {v} reports failing tests, read the first failure's message and the trace under it to "
                        f"find the file and function it points to, change that code, then run the same {v} command "
                        "again, and settle the task only once it passes.",
                        f"In {kind_of_tasks(r)}, whenever {v} reports failing tests.", detail,
                        passed is not None and bool(changed))


def _other_target(x, y, listed: str) -> bool:
    """Whether a plain-string retry aims elsewhere: no name the error listed, and no word of four
    characters or more in common with the refused value (``click[blue]`` then ``click[Buy Now]``;
    "Livesey Hal War Memorial" then "World War II": a short word such as "war" or "of" is no
    shared name)."""
    if not (isinstance(x, str) and isinstance(y, str)) or y.strip().lower() in listed:
        return False
    words = lambda v: set(re.findall(r"[a-z0-9]{4,}", v.lower()))  # noqa: E731
    return not (words(x) & words(y))


def named_arguments(err: Call) -> list[str]:
    """The arguments of a refused call whose value (one of its scalars, three characters or more)
    the error's text names: ``flights`` for "not enough seats on flight HAT123" when flights held
    HAT123. What the message says is wrong, in the call's own terms."""
    args, text = err.turn.arguments, (err.turn.result or "").lower()
    if not isinstance(args, dict) or not text:
        return []
    return [k for k, v in args.items()
            if any(len(str(x)) >= 3 and _occurs(str(x).lower(), text) for _p, x in leaves(v) if x is not None)]


def error_insight(r: Reading, err: Call) -> CandidateInsight:
    v, said = failing_verb(err), shape(err)
    later = [c for c in r.calls if c.n > err.n]
    passed = next((c for c in later if c.name == err.name and not c.error), None)
    same = [c for c in later if c.sig == err.sig]
    if tests_failed(err) and not missing_programs(err):
        return failing_tests_insight(r, err)
    if error_key(err) == MISSING_PATH_KEY:  # whichever tool named it: the fix is to find the path, not guess
        found = next((c for c in later if not c.error and c.name == err.name), None)
        return make_insight(MISSING_PATH_KEY, "When a file or folder is not there, search for it before naming it again",
                            "When a call answers that a file or folder it names does not exist, do not guess another "
                            "path: search for its name (a file search, a listing of a folder that exists) and use the "
                            "path the search returns.",
                            f"In {kind_of_tasks(r)}, whenever a path a call names does not exist.",
                            f"turn {err.n}: {v} named a path that does not exist; "
                            + (f"a later {err.name} call went through at turn {found.n}{found_by(r, err, found)}"
                               if found is not None else f"did not call {err.name} again") + changed_after(r, err),
                            found is not None)
    if runs_a_command(err.turn):
        # a command's later success says little about this error: the advice is the message's own,
        # and what the successful runs that met it did is listed on the page
        # a program the shell could not find is installed or located; any other message (a failing
        # test, a rejected edit, a compiler error) is fixed where it points, then the command run again
        missing = _MISSING_PROGRAM.search(err.turn.result or "")
        if _HUNG.search(said):  # stopped for running too long: no message to fix
            return make_insight(f"error|{v}|{said}", f"When {v} runs past the time limit, find what it waits for",
                                f"When {v} is stopped for running too long (\"{said}\"), do not send it again as it "
                                "was: find what it waits for (input, the network, a lock), or run it with a time "
                                "limit or in the background.",
                                f"In {kind_of_tasks(r)}, whenever {v} runs past the time limit.",
                                f"turn {err.n}: " + (f"a later {err.name} call went through at turn {passed.n}"
                                                     if passed is not None else "no later call went through"),
                                passed is not None)
        advice = ("install or locate the missing program, or reach the same end another way" if missing else
                  "fix what the message names, then send the command again, or reach the same end another way")
        if passed is not None:
            detail = f"a later {err.name} call went through at turn {passed.n}"
        elif any(c.name == err.name for c in later):
            detail = f"no later {err.name} call went through"
        else:  # the run went on without the command: say what it did, never that it was stuck
            detail = f"did not call {err.name} again" + changed_after(r, err)
        detail += f"; the same command was sent {len(same)} more time{'s' if len(same) != 1 else ''}" if same else ""
        if error_key(err) == SHELL_SYNTAX_KEY:
            # the shell refused the line before any program in it ran: the fix is the line's own form
            return make_insight(SHELL_SYNTAX_KEY,
                                "When the shell cannot parse a command line, fix its quotes and brackets",
                                "When the shell reports a syntax error in the command line (an unexpected token, an "
                                "unexpected end of file), none of the line ran: balance its quotes and brackets, "
                                "or split it into simpler commands, then send it again before acting on what it was "
                                "to show (a file changed unread is changed blind).",
                                f"In {kind_of_tasks(r)}, whenever the shell cannot parse a command line.",
                                f"turn {err.n}: {clip(command_of(err.turn) or '', 80)}: "
                                + (f"sent it again unchanged {len(same)} time{'s' if len(same) != 1 else ''}" if same
                                   else "did not send it again" + changed_after(r, err)), False)
        worked = passed is not None
        programs = missing_programs(err)
        if programs:  # one lesson per task type, whichever program was missing (error_key)
            heads = lambda c: set(_programs_run(command_of(c.turn) or ""))  # noqa: E731
            # the run's every missing program, from the first one it met: one lesson covers them all
            first: dict[str, int] = {}
            for c in r.calls:
                for p in missing_programs(c) if c.error else ():
                    first.setdefault(p, c.n)
            programs = list(first)
            err = next(c for c in r.calls if c.n == min(first.values()))
            ran_again = [c for c in r.calls if any(p in heads(c) and c.n > n for p, n in first.items())]
            # installing is advised only by a run that got the program to run; the others show working without it
            way = ("Install or locate it where the task allows, or reach the same end another way"
                   if worked else "Reach the same end without it")
            return make_insight(MISSING_PROGRAM_KEY, "When the shell cannot find a program, "
                           + ("install it or work without it" if worked else "work without it"),
                           "When a command answers that a program is not found (\"command not found\"), do not send "
                           f"commands that need it again. {way}: read the code the change touches, search that each "
                           "name the change writes stands in the code as written, and work the task's example through "
                           "the changed lines by hand.",
                           f"In {kind_of_tasks(r)}, whenever the shell cannot find a program.",
                           f"turn {err.n}: {join(programs, 4)} not found by the shell"
                           + (f" (at turns {join([str(n) for n in first.values()], 4)})" if len(set(first.values())) > 1
                              else "") + "; "
                           + (f"ran {'it' if len(programs) == 1 else 'them'} again {len(ran_again)} "
                              f"time{'s' if len(ran_again) != 1 else ''}" if ran_again else f"did not run {'it' if len(programs) == 1 else 'them'} again")
                           + changed_after(r, err) + _ending(r, err),
                           False)
    elif passed is not None:
        x, y = err.turn.arguments, passed.turn.arguments
        listed = (err.turn.result or "").lower()
        swap = swapped(r, err, passed)  # one text value for another, and where each came from
        if isinstance(x, dict) and isinstance(y, dict):
            changed = [k for k in dict.fromkeys([*x, *y]) if x.get(k) != y.get(k)]
            taken = [k for k in changed if named_by(listed, x.get(k), y.get(k))]
            summed = [k for k in changed if sums_to_named(listed, y.get(k))]
            spans = join([f"`{k}`" for k in changed])  # in code: the insight layer quotes the prompt's rule on it
            # the figure is the system's price for the call as sent: right only when the call is (a failed run
            # paid it and still failed), so the check comes with it
            advice = (f"call {err.name} again with the amounts in {join(summed)} adding up to the figure the error "
                      "names, once that figure is what the request should cost" if summed else
                      f"call {err.name} again with {join(taken)} taken from what the error lists" if taken else
                      f"call {err.name} again with {spans} exactly as {swap[1]} returns it (the refused value stood "
                      "in no answer before it)" if swap and swap[1] else
                      f"call {err.name} again with {spans} changed" if changed else
                      f"do what the message asks first, then send the same {err.name} call again")
        elif isinstance(y, str) and y != x:
            advice = (f"call {err.name} again with the name the error lists that fits what the task asks"
                      if y.strip().lower() in listed else f"call {err.name} again with other words")
        else:
            advice = f"do what the message asks first, then send the same {err.name} call again"
        how = what_changed(err, passed)
        detail = f"got past it at turn {passed.n} ({how}{swap[0] if swap and how.endswith(' changed') else ''})"
        if led_nowhere(r, passed):
            detail += f"; {DEAD_END}"
        worked = True
        if _other_target(x, y, listed):
            # click[blue] refused, then click[Buy Now]: the later call went through, but the refused
            # one was never sent right, so the run did not get past it
            advice = f"call {err.name} again only with a value the latest answer shows, word for word"
            detail = (f"a later {err.name} call went through at turn {passed.n}, with another target "
                      f"({what_changed(err, passed)})" + holding_words(r, err))
            worked = False
    elif same:
        advice = f"do not send the same {err.name} call again: change what the message points at first"
        detail = f"sent the same call {len(same)} more time{'s' if len(same) != 1 else ''}, never got past it"
        worked = False
    elif listed_names(err.turn.result or ""):  # the message offers the names it has: the fix is among them
        advice = f"call {err.name} again with the name the error lists that fits what the task asks"
        detail = "tried other arguments, never got past it" if any(c.name == err.name for c in later) \
            else "did not call it again"
        worked = False
    else:
        asking = ", or ask for it" if r.has_interlocutor else ""  # only a run with someone to ask
        advice = (f"fix the value the message names (look it up{asking}) before calling {err.name} again, "
                  "or reach the same end another way")
        detail = "tried other arguments, never got past it" if any(c.name == err.name for c in later) \
            else "did not call it again"
        worked = False
    if isinstance(err.turn.extra.get("sent"), str):  # written after blank lines: the form was refused
        advice = f"write the {err.name} call on the action line itself, with no blank line before its name"
        detail = "sent after blank lines; " + detail
    if passed is not None and (again := [c for c in r.calls if c.n > passed.n and c.error
                                         and error_key(c) == error_key(err)]):
        # it got past it once and met it again: the last time is what the run ended on
        later_ok = any(c.name == err.name and not c.error and c.n > again[-1].n for c in r.calls)
        detail += (f"; then met it again at turn{'s' if len(again) > 1 else ''} "
                   f"{join([str(c.n) for c in again], 4)}" + ("" if later_ok else " and never got past it"))
        worked = worked and later_ok  # what the run ended on is the error, not the way past it
    packed = packed_calls(err)
    if packed > 1:  # several calls written into one argument: the fix is the call's form, not its words
        advice = (f"send one {err.name} call per query, never several {err.name}[...] calls written into one "
                  "argument")
        detail = f"its argument held {packed} {err.name} calls; " + detail
    named = named_arguments(err)
    if named:  # what the message itself says was wrong: the value it names
        detail += f"; the message named the {join(named)} value{'s' if len(named) != 1 else ''} sent"
    if not (err.turn.result or "").strip():  # an error with no text: there is no message to follow
        title = (f"When {v} fails with no output, make it print why before sending it again" if runs_a_command(err.turn)
                 else f"When {v} fails with no output, check whether it took effect before sending it again")
        return make_insight(f"error|{v}|{said}", title,
                            f"When {v} fails with no output, find out why before sending it again: "
                            + ("make it print its error (its exit status, a shorter or more verbose form of the "
                               "command), or reach the same end another way." if runs_a_command(err.turn) else
                               "check with a look-up whether it took effect, then send it again or reach the same "
                               "end another way."),
                            f"In {kind_of_tasks(r)}, whenever {v} fails without a message.", f"{_met_at(r, err)}: {detail}",
                            worked)
    guideline = f"When {v} answers \"{said}\", {advice}."
    return make_insight(f"error|{v}|{said}", error_title(v, said, guideline), guideline,
                   f"In {kind_of_tasks(r)}, whenever {v} answers with this error.", f"{_met_at(r, err)}: {detail}", worked)


def _met_at(r: Reading, err: Call) -> str:
    """Where the run met the error: the turn of the call the lesson is about, and where the same
    error first came when that was earlier (a reader looks for where it was first met)."""
    key = error_key(err)
    first = next(c.n for c in r.calls if c.error and c.n <= err.n and error_key(c) == key)
    return f"turn {err.n}" + (f" (first met at turn {first})" if first < err.n else "")


_PATHISH = re.compile(r"[\w.-]*[/.][\w./-]*\w")  # a word with a slash or a dot inside: a path or a file name


def _paths(c: Call) -> list[str]:
    """The paths (or file names) a call's arguments hold, in order."""
    texts = [c.turn.arguments] if isinstance(c.turn.arguments, str) else [
        x for _p, x in leaves(c.turn.arguments) if isinstance(x, str)]
    return [m.group() for v in texts for m in _PATHISH.finditer(v) if "/" in m.group() or len(m.group()) > 4]


def found_by(r: Reading, err: Call, found: Call) -> str:
    """``, on `src/a/B.java`, a path find_file returned at turn 2 (the failed call named `src/b/B.java`)``:
    the call between a missing path and the call that got past it whose answer held the path that
    call sent (the search the lesson advises), with both paths: where the file was, and the guess
    that was not; or ""."""
    sent = _paths(found)
    for c in r.calls:
        if err.n < c.n < found.n and not c.error and c.turn.result:
            hit = next((p for p in sent if p in str(c.turn.result)), None)
            if hit is not None:
                guessed = next((p for p in _paths(err) if p != hit), None)
                return (f", on `{hit}`, a path {c.name} returned at turn {c.n}"
                        + (f" (the failed call named `{guessed}`)" if guessed else ""))
    return ""
