"""The sentences a lesson writes about how a coding run settled its task (where it found the file
it changed, the edit, the test it saw pass) and the page rewrites built across runs (where the
successful runs of a change took each argument, the programs the shell could not find, retries
that got past an error in runs that all failed): each is checked against the turns it speaks of,
on every importer's fixtures, as a success and as a failure."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from helpers import write_jsonl
from test_offline_content import _call, _msg, _record, _turns
from test_lesson_peers import peer_counts
from fixture_runs import RUNS, relabeled

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.changes import edit_of, what_ran
from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import runs_a_command

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import text_counts  # noqa: E402


def _named(text: str, path: str) -> bool:
    """The file's base name, its stem of four letters or more, or its module path (the stem after
    one to three of its folders, dot-joined: ``tally.stats``), as a whole word of ``text``."""
    parts = path.strip("/").split("/")
    base = parts[-1]
    stem = base.rsplit(".", 1)[0]
    words = [base] + ([stem] if stem != base and len(stem) >= 4 else [])
    if stem != base:
        words += [".".join(parts[-1 - k:-1] + [stem]) for k in range(1, min(3, len(parts) - 1) + 1)]
    return any(re.search(rf"(?<![\w.]){re.escape(w)}(?!\w)", text, re.I) for w in words)


def _check_procedure(run, guideline: str, detail: str) -> None:
    calls = [t for t in run.turns if t.type == "function_call"]
    edits = [(t, e) for t in calls if not t.is_error and (e := edit_of(t)) is not None]
    task = run.task.instruction or ""
    if "find the file the task text names" in guideline:
        assert any(_named(task, e.file) for _t, e in edits), guideline
    if "find the file to change in what an earlier call returned" in guideline:
        assert any(_named(x.result or "", e.file) for t, e in edits for x in calls if x.turn < t.turn), guideline
    m = re.search(r"change (?:it|the code) with (.+?)(?:, then|\.$)", guideline)
    if m:  # every tool named made an edit
        named = re.split(r", | and ", m.group(1))
        assert named and all(any((t.name or "") == n.split(" ")[0] for t, _e in edits) for n in named), guideline
    m = re.search(r"run the (\S+) command that failed before the change again and see it pass", guideline)
    if m:
        last = edits[-1][0].turn
        assert any(t.is_error and what_ran(t) == m.group(1) and runs_a_command(t) for t in calls if t.turn < last)
        assert any(not t.is_error and what_ran(t) == m.group(1) and runs_a_command(t) for t in calls if t.turn > last)
    # the detail: each changed file, where it was found
    for part in re.findall(r"(\S+?)(?: \(in (\w+)\))?, (a file the task names|found in (\S+)'s answer \(turn (\d+)\))",
                           detail):
        path, _fn, how, tool, turn = part
        assert any(e.file == path for _t, e in edits), (path, detail)
        if how == "a file the task names":
            assert _named(task, path), (path, task)
        else:
            (shown,) = [t for t in calls if t.turn == int(turn)]
            assert what_ran(shown) == tool and _named(shown.result or "", path), (detail, shown)


def _check_points(run, detail: str) -> None:
    """``; the task's trace names line N of F, which the edit at turn T changed`` / ``; the task
    names FN, the function the edit at turn T changed``, against the task text and the edit."""
    task = run.task.instruction or ""
    m = re.search(r"; the task's trace names line (\d+) of (\S+), which the edit at turn (\d+) changed$", detail)
    if m:
        line, base, turn = int(m.group(1)), m.group(2), int(m.group(3))
        (t,) = [x for x in run.turns if x.turn == turn and x.type == "function_call"]
        e = edit_of(t)
        lo, hi = map(int, re.match(r"\s*edit\s+(\d+):(\d+)", t.arguments if isinstance(t.arguments, str)
                                   else t.arguments.get("command", "")).groups())
        assert e.file.endswith("/" + base) and lo <= line <= hi and not t.is_error
        assert re.search(rf"(?<![\w.]){re.escape(base)}(?::|\", line ){line}(?!\d)", task), (base, line)
    m = re.search(r"; the task names (\w+), the function the edit at turn (\d+) changed$", detail)
    if m:
        (t,) = [x for x in run.turns if x.turn == int(m.group(2)) and x.type == "function_call"]
        assert edit_of(t).function == m.group(1) and re.search(rf"(?<!\w){m.group(1)}(?!\w)", task)


def _check_after_error(run, detail: str) -> None:
    """What an error lesson says the run did after the error: the files it changed (by base name,
    with the function), the tools and turns of those edits, the same command passing or not, the
    call it ended with; each checked against the turns."""
    calls = {t.turn: t for t in run.turns if t.type == "function_call"}
    err = calls[int(re.match(r"turn (\d+): ", detail).group(1))]
    m = re.search(r"; then changed (.+?) with (.+?) at turns? (\d+)(?:-(\d+))?(?:;|$)", detail)
    if m:
        first, last = int(m.group(3)), int(m.group(4) or m.group(3))
        edits = [(t, e) for n, t in calls.items() if err.turn < n and first <= n <= last and not t.is_error
                 and (e := edit_of(t)) is not None]
        assert {edits[0][0].turn, edits[-1][0].turn} == {first, last}, detail
        for name in re.findall(r"(?:^|, | and )([\w.-]+)(?: \(in \w+\))?", m.group(1)):
            assert any(e.file.rstrip("/").rsplit("/", 1)[-1] == name for _t, e in edits), (name, detail)
        for fn in re.findall(r"\(in (\w+)\)", m.group(1)):
            assert any(e.function == fn for _t, e in edits), (fn, detail)
    m = re.search(r"; the same (\S+) command passed at turn (\d+)(?: \((.+)\))?$", detail)
    if m:
        passed = calls[int(m.group(2))]
        assert not passed.is_error and runs_a_command(passed) and what_ran(passed) == m.group(1) == what_ran(err)
        assert not m.group(3) or m.group(3).rstrip("…") in " ".join((passed.result or "").split())
    m = re.search(r"; no later (\S+) command passed \((\d+) more runs?\)$", detail)
    if m:
        again = [t for n, t in calls.items() if n > err.turn and runs_a_command(t) and what_ran(t) == m.group(1)]
        assert len(again) == int(m.group(2)) and all(t.is_error for t in again), detail
    m = re.match(r"turn \d+: (.+?) not found by the shell; (?:did not run (?:it|them) again|ran (?:it|them) again "
                 r"(\d+) times?)", detail)
    if m:  # each program of a shell line counts, ``cd /r && mvn test`` runs mvn
        programs = re.split(r", | and ", m.group(1))
        again = [t for n, t in calls.items() if n > err.turn and runs_a_command(t)
                 and set(programs) & set(_programs_of(t))]
        assert len(again) == int(m.group(2) or 0), detail
    if detail.endswith(" was not run again"):
        assert not any(n > err.turn and runs_a_command(t) and what_ran(t) == what_ran(err) for n, t in calls.items())
    if "; changed no file after it" in detail:
        assert not any(n > err.turn and not t.is_error and edit_of(t) is not None for n, t in calls.items()), detail
    m = re.search(r"; ended with (\S+)(?: \S+)? at turn (\d+)$", detail)
    if m:
        last = calls[int(m.group(2))]
        assert last.name == m.group(1) and not last.is_error, detail


def _programs_of(t) -> list[str]:
    from wikitrace.compilers.reading import command_of

    return [p.split()[0] for p in re.split(r"&&|\|\||[;|\n]", command_of(t) or "") if p.split()]


def _check_any_error(run, lesson) -> None:
    """``turn N: did not call T again`` / ``no later T call went through`` beside an error lesson of a
    command, and the shell-syntax lesson only on a line the shell refused to parse."""
    calls = {t.turn: t for t in run.turns if t.type == "function_call"}
    m = re.match(r"turn (\d+): ", lesson.detail)
    if not m or int(m.group(1)) not in calls:
        return
    err = calls[int(m.group(1))]
    later = [t for n, t in calls.items() if n > err.turn]
    m = re.search(r"did not call (\S+) again", lesson.detail)
    if m:
        assert m.group(1) in ("it", err.name) and not any(t.name == err.name for t in later), lesson.detail
    m = re.search(r"no later (\S+) call went through", lesson.detail)
    if m:
        same = [t for t in later if t.name == m.group(1)]
        assert same and all(t.is_error for t in same), lesson.detail
    if lesson.key == "error|shell-syntax":
        assert err.is_error and re.search(r"syntax error(?: near unexpected token|: unexpected end)", err.result, re.I)
        if "did not send it again" in lesson.detail:
            assert not any(t.arguments == err.arguments for t in later), lesson.detail
    swap = re.search(r"got past it at turn (\d+) \(with (\w+) changed from \"(.+?)\", ((?:held|given|returned|sent) .+?), "
                     r"to \"(.+?)\", (.+)\)(?:;|$)", lesson.detail)
    if swap:  # the two values are the calls' own, and each source is the turn the argument check names
        fix, key = calls[int(swap.group(1))], swap.group(2)
        assert err.arguments[key] == swap.group(3) and fix.arguments[key] == swap.group(5), lesson.detail
        users = [t.content or "" for t in run.turns if t.type == "message" and t.role == "user"]
        for value, said, at in ((swap.group(3), swap.group(4), err.turn), (swap.group(5), swap.group(6), fix.turn)):
            answers = [t.result or "" for n, t in calls.items() if n < at and not t.is_error]
            by = re.fullmatch(r"returned by (\S+) at turn (\d+)", said)
            if by:
                assert calls[int(by.group(2))].name == by.group(1) and value in calls[int(by.group(2))].result, said
            elif said.startswith("given in a user's message"):
                n = int(re.fullmatch(r"given in a user's message \(turn (\d+)\)", said).group(1))
                turn = next(t for t in run.turns if t.turn == n)
                assert turn.role == "user" and n < at and value.lower() in (turn.content or "").lower(), said
            elif said.startswith("sent by an earlier call"):
                n = int(re.fullmatch(r"sent by an earlier call \(turn (\d+)\)", said).group(1))
                assert n < at and value in str(calls[n].arguments), said
            else:
                assert not any(value.lower() in a.lower() for a in answers), said
                digits = re.fullmatch(r"held as written in no answer before it, only its digits (\d+) in a user's "
                                      r"message", said)
                assert digits or said == "held as written in no answer or user message before it", said
                assert (digits is not None) == any(d and d.group(0) in u for u in users
                                                   for d in [re.search(digits.group(1) if digits else r"(?!)", value)]), said
    again = re.search(r"; then met it again at turns? ([\d, and]+?)( and never got past it)?(?:;|$)", lesson.detail)
    if again:  # got past it once, then met it again: each named turn an error of the tool, none went through after
        turns = [int(n) for n in re.findall(r"\d+", again.group(1))]
        assert all(calls[n].is_error and calls[n].name == err.name for n in turns), lesson.detail
        after = [t for t in later if t.name == err.name and t.turn > max(turns)]
        assert bool(again.group(2)) == (not any(not t.is_error for t in after)), lesson.detail
    elif "never got past it" in lesson.detail:  # only where the run kept calling the tool and each call failed
        same = [t for t in later if t.name == err.name]
        assert same and all(t.is_error for t in same), lesson.detail


def _check_asked(run, detail: str) -> None:
    from wikitrace.compilers.reading import read_run

    m = re.match(r"got the user's answer to (\d+) messages?, (\d+) of them (?:a question|questions), no tool call",
                 detail)
    assert m and not any(t.type == "function_call" for t in run.turns), detail
    r = read_run(run)
    by_turn = {t.turn: t for t in run.turns}
    answered = [t for t in run.turns if t.type == "message" and t.role == "assistant"
                and (nxt := by_turn.get(t.turn + 1)) is not None and nxt.role == "user" and t.turn + 1 in r.replies]
    asked = [t for t in answered if "?" in (t.content or "")]
    assert int(m.group(1)) == len(answered) and int(m.group(2)) == len(asked) > 0, detail


def test_a_success_that_asked_and_changed_nothing_teaches_nothing_and_a_log_without_a_person_answers_directly():
    from test_offline_content import _run

    asked = _record("a-1", "airline", "Cancel my trip.", _turns(
        _msg("system", SYSTEM), _msg("user", "Cancel my trip please."),
        _msg("assistant", "Could you give me the reservation id?"), _msg("user", "I do not have it with me."),
        _msg("assistant", "I need the reservation id to proceed."), _msg("user", "I really do not have it."),
        _msg("assistant", "I need the reservation id to cancel; write again when you have it."),
        {"type": "episode_over"}), True)
    # it passed because its task needed no change: no step another run could copy, so no lesson
    comp = compile_offline(_run(asked))
    assert comp.insights == []
    alone = _record("a-2", "qa", "What is 2 + 2?", _turns(_msg("user", "What is 2 + 2?"), _msg("assistant", "4?"),
                                                         {"type": "episode_over"}), True)
    assert [i.key for i in compile_offline(_run(alone)).insights] == ["direct"]


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
@pytest.mark.parametrize("success", [True, False], ids=["as-success", "as-failure"])
def test_every_coding_lesson_sentence_is_true_of_its_run(run, success):
    run = relabeled(run, success)
    comp = compile_offline(run)
    for lesson in comp.insights:
        assert "this run" not in lesson.guideline.lower(), lesson.guideline
        if lesson.key.startswith("procedure|") or lesson.key.startswith("went-through|"):
            _check_procedure(run, lesson.guideline, lesson.detail)
            _check_points(run, lesson.detail)
        if lesson.key == "direct|asked":  # a question of the agent's that a person's reply came right after
            _check_asked(run, lesson.detail)
        if lesson.key.endswith("|failing tests") or lesson.key == "error|missing-program":
            _check_after_error(run, lesson.detail)
        if lesson.key.startswith("error|"):
            _check_any_error(run, lesson)
        if lesson.key.endswith("|failing tests"):
            m = re.match(r"turn (\d+): (\S+) reported failing tests(?: \((.+?)\))?(?:; then changed|; changed no file)",
                         lesson.detail)
            assert m, lesson.detail
            (err,) = [t for t in run.turns if t.turn == int(m.group(1)) and t.type == "function_call"]
            assert err.is_error and what_ran(err) == m.group(2)
            assert not m.group(3) or m.group(3).rstrip("…") in err.result, m.group(3)


def test_the_fixtures_hold_failing_tests_and_missing_programs_with_what_came_after():
    """The check above reads something: a failing test then an edit then the same command passing,
    and a program the shell could not find followed by edits."""
    details = []
    for run in RUNS:
        for success in (True, False):
            details += [lesson.detail for lesson in compile_offline(relabeled(run, success)).insights
                        if lesson.key.endswith("|failing tests") or lesson.key == "error|missing-program"]
    assert any("; then changed " in d and "command passed at turn" in d for d in details), details
    assert any("not found by the shell" in d and "; then changed " in d for d in details), details
    assert any("not found by the shell; ran it again 1 time" in d for d in details), details  # cd /r && mvn


def test_a_success_whose_way_ends_on_the_passing_test_command_is_not_taught_the_rerun_again():
    """A successful run that saw the failing test command pass after its edit teaches that way
    (``procedure|…+tested``); the failing-tests lesson says the same fix-and-rerun loop, so it is
    taught by the runs that did not settle so."""
    met = 0
    for run in RUNS:
        keys = [lesson.key for lesson in compile_offline(relabeled(run, True)).insights]
        if any(k.startswith("procedure|") and k.endswith("+tested") for k in keys):
            met += 1
            assert not [k for k in keys if k.endswith("|failing tests")], keys
    assert met >= 2  # the Claude Code and the SWE-agent fixtures both hold one


def test_the_fixtures_hold_shell_syntax_errors_and_errors_the_run_left_behind():
    """The checks above read something: a bash syntax error is its own lesson about the line, and an
    error the run never sent again says what the run did next."""
    keys, details = set(), []
    for run in RUNS:
        for lesson in compile_offline(relabeled(run, False)).insights:
            keys.add(lesson.key)
            details.append(lesson.detail)
    assert "error|shell-syntax" in keys
    assert any(re.search(r"did not call \S+ again; then changed ", d) for d in details), details


def test_the_fixtures_hold_a_coding_success_of_each_kind():
    """The check above reads something: the fixtures hold coding runs whose lesson finds the file
    in the task text, in an earlier answer, and a failing test seen passing after the edit."""
    lessons = [lesson for run in RUNS for lesson in compile_offline(relabeled(run, True)).insights
               if lesson.key.startswith("procedure|")]
    said = {lesson.key.split(":", 1)[1] for lesson in lessons if ":file-" in lesson.key}
    assert {"file-task", "file-shown"} <= {k.split("+")[0] for k in said}, said
    assert any(k.endswith("+tested") for k in said), said
    points = [lesson.detail for lesson in lessons if "; the task " in lesson.detail]
    assert points, "no fixture's task names the function or the trace line its edit changed"


# --- the rewrites across runs -----------------------------------------------------------------

SYSTEM = "You are an airline agent. Cancel a reservation only when the user gives its id and a reason."


def _cancel(k: int, success: bool, id_from_user: bool) -> dict:
    """A cancellation: the user names the reservation (or only the agent's look-up lists it, and the
    agent takes one unasked), then cancel_reservation goes through."""
    listing = json.dumps({"user_id": f"mia_{k}", "reservations": [f"R{k}A1", f"R{k}B2", f"R{k}C3"]})
    said = f"Please cancel reservation R{k}B2, my plans changed." if id_from_user else "Please cancel my trip."
    turns = [_msg("system", SYSTEM), _msg("user", f"I am mia_{k}."),
             _call("get_user_details", {"user_id": f"mia_{k}"}, listing),
             _msg("assistant", "Which reservation?"), _msg("user", said),
             _call("cancel_reservation", {"reservation_id": f"R{k}B2"}, '{"status": "cancelled"}'),
             {"type": "episode_over"}]
    return _record(f"c-{k:02d}", "airline", "Cancel a reservation.", _turns(*turns), success)


def test_a_change_page_says_where_most_successful_runs_took_each_argument(tmp_path):
    # the source separates nothing (2 of 3 successful, 2 of 4 failed took it from the reply), so no
    # contrast leads the page; most successful runs took it from the reply all the same
    runs = ([_cancel(0, True, True), _cancel(1, True, True), _cancel(2, True, False)]
            + [_cancel(3, False, True), _cancel(4, False, True), _cancel(5, False, False), _cancel(6, False, False)])
    out = tmp_path / "c"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "c.jsonl", runs)], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"] == "went-through|cancel_reservation"]
    assert "check each argument against the part of the request" not in entry["guideline"]
    m = re.search(r"take each argument where most successful runs of cancel_reservation took it: (.+?)\.(?: |$)",
                  entry["guideline"])
    assert m, entry["guideline"]
    item = m.group(1)
    assert item.startswith("`reservation_id` from what the user said in reply"), item
    # the count is of the page's own runs: those that took it from elsewhere (picked from the listing)
    by_step = {r["step"]: r for r in data["runs"]}
    members = [by_step[s["step"]] for s in entry["sources"] if s["outcome"] == "failure"]
    other = sum("took|cancel_reservation|reservation_id|reply" not in r["patterns"] for r in members)
    assert f"({other} of the {len(members)} failed runs here that set it did not)" in item, item
    assert (other, len(members)) == (2, 4)
    # where most of the page's own runs took it as the successful ones did, the place was no mistake
    # of theirs: the page does not lead with it
    runs = ([_cancel(0, True, True), _cancel(1, True, True), _cancel(2, True, False)]
            + [_cancel(3, False, True), _cancel(4, False, True), _cancel(5, False, True), _cancel(6, False, False)])
    out = tmp_path / "d"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "d.jsonl", runs)], out=out, offline=True, quiet=True))
    (entry,) = [i for i in json.loads((out / "corpus.json").read_text())["insights"]
                if i["key"] == "went-through|cancel_reservation"]
    assert "take each argument where" not in entry["guideline"], entry["guideline"]


def test_a_retry_that_got_past_an_error_only_in_failed_runs_is_not_taught_as_the_fix(tmp_path):
    def run(k: int) -> dict:
        turns = [_msg("system", SYSTEM), _msg("user", "Move me to business class on R1."),
                 _call("update_reservation_flights", {"reservation_id": "R1", "cabin": "business", "payment_id": "gift_1"},
                       "Error: gift card balance is not enough", is_error=True),
                 _call("update_reservation_flights", {"reservation_id": "R1", "cabin": "economy", "payment_id": "gift_1"},
                       '{"status": "updated"}'),
                 {"type": "episode_over"}]
        return _record(f"u-{k}", "airline", "Upgrade R1.", _turns(*turns), False)

    out = tmp_path / "u"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "u.jsonl", [run(k) for k in range(3)])], out=out, offline=True,
                       quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"].startswith("error|update_reservation_flights|")]
    assert entry["counts"] == {"runs": 3, "success": 0, "failure": 3}
    assert "again with cabin changed" not in entry["guideline"]
    assert "the 3 runs here that got past it all failed (cabin changed: 3 runs)." in entry["guideline"]
    # the message names no value the call sent: the advice claims none, and points at the call itself
    assert ("check the call's arguments against the request and the records looked up before calling "
            "update_reservation_flights again, or tell the user it cannot be done") in entry["guideline"]
    assert "the message names" not in entry["guideline"]


def _paid(k: int, success: bool, retried: bool) -> dict:
    """A booking refused for its amounts, then (``retried``) sent again adding up to the total the
    error names, or sent again unchanged."""
    bad = {"user_id": "u1", "flights": ["F1"], "payment_methods": [{"payment_id": "card_1", "amount": 250}]}
    good = {**bad, "payment_methods": [{"payment_id": "card_1", "amount": 250}, {"payment_id": "gift_2", "amount": 50}]}
    turns = [_msg("system", SYSTEM), _msg("user", "Book F1 for me."),
             _call("book_reservation", bad, "Error: payment amount does not add up, total price is 300, but paid 250",
                   is_error=True),
             _call("book_reservation", good if retried else bad,
                   '{"reservation_id": "R9"}' if retried else
                   "Error: payment amount does not add up, total price is 300, but paid 250", is_error=not retried),
             {"type": "episode_over"}]
    return _record(f"p-{k}-{success}", "airline", "Book F1.", _turns(*turns), success)


@pytest.mark.parametrize("failed_retried", [3, 1])
def test_paying_the_total_an_error_names_is_not_advised_when_most_failed_runs_did(tmp_path, failed_retried):
    runs = [_paid(k, False, k < failed_retried) for k in range(3)] + [_paid(9, True, True)]
    out = tmp_path / "p"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "p.jsonl", runs)], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"].startswith("error|book_reservation|")]
    assert entry["counts"] == {"runs": 4, "success": 1, "failure": 3}
    text = entry["guideline"]
    if failed_retried == 3:  # the failed runs all paid the named total: that advice is what failed
        assert "adding up to the figure the error names" not in text
        assert "do not just pay the figure the error names" in text
        assert "3 of the 3 failed runs here got past it and still failed (payment_methods changed: 3 runs)." in text
    else:  # one failed run of three got past it: the advice stands as the runs taught it
        assert "adding up to the figure the error names" in text and "still failed" not in text


def test_the_missing_program_lesson_names_the_programs_its_runs_met(tmp_path):
    from test_insight_layer import swe_run

    runs = [swe_run(k, success=k % 2 == 0) for k in range(4)]
    out = tmp_path / "m"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "m.jsonl", runs)], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"] == "error|missing-program"]
    assert '("command not found"; in these runs: mvn)' in entry["guideline"]
    # every run of the type met it: a fact of the machine, said as what not to try from the first call
    c = entry["contrast"]
    assert c["failed_met"] + c["success_met"] == c["failed"] + c["success"] == 4
    assert ("In 4 of the 4 runs of this task type the shell could not find a program it was asked to run (2 of the 2 "
            "failed, 2 of the 2 successful): do not count on mvn in tasks of this kind") in entry["guideline"]
    assert "Do not count on mvn in tasks of this kind, and take the way without it from the first call" in entry["advice"]


IMPORTERS = Path(__file__).parent / "fixtures" / "importers"
FOLDERS = sorted(p for p in IMPORTERS.iterdir() if p.is_dir())


def _habit_counts(entry: dict, members: list[dict]) -> None:
    """``build every T query from words ... (k of the n runs here that sent one did)`` and
    ``retry a T error with a name it lists (k of the n runs here that
    retried did``: recounted from the page's own runs, all of them successful."""
    text = entry["guideline"]
    for tool, k, n in re.findall(r"uild every (\S+) query from words the task or an earlier answer gives \((\d+) of "
                                 r"the (\d+) runs here that sent one did\)", text):
        assert entry["counts"]["failure"] == 0
        asked = [r for r in members if any(p.startswith(f"query|{tool}|") for p in r["patterns"])]
        assert int(n) == len(asked) and int(k) == sum(f"query|{tool}|own" not in r["patterns"] for r in asked), text
        assert 2 * int(k) > int(n)
    for tool, k, n in re.findall(r"etry a (\S+) error with a name it lists \((\d+) of the (\d+) runs here that "
                                 r"retried did\)", text):
        retried = [r for r in members if any(p.startswith(f"retry|{tool}|") for p in r["patterns"])]
        assert int(n) == len(retried) and int(k) == sum(f"retry|{tool}|listed" in r["patterns"] for r in retried)


# how run_counts says the tasks behind a count of runs that repeat tasks
TASKS = r"(?: \((?:all trials of 1(?: of their \d+ tasks?| task)|all \d+ of their tasks|\d+ of their \d+ tasks?)\))?"
INNER_TASKS = TASKS.replace(r" \(", ", ").replace(r"\))?", ")?")


def _task_count(members: list[dict]) -> int:
    from wikitrace.corpus.applies import task_of

    return len({task_of(r) for r in members})


def lead_counts(entry: dict, by_step: dict[str, dict]) -> None:
    """The first advice's counts and the facts set aside under Evidence, recounted from the runs'
    own entries (checked_facts.py, advice_fit.py)."""
    from wikitrace.corpus.checked_facts import _SAID

    failed = [by_step[s["step"]] for s in entry["sources"] if s["outcome"] == "failure"]
    said = [(kind, re.compile(".+?".join(map(re.escape, re.split(r"\{\w*\}", shown)))))
            for kind, (shown, _do) in _SAID.items()]
    for text in [entry["guideline"], *(entry.get("set_aside") or [])]:
        m = re.search(rf"In (?:the one failed run here|(\d+) of the (\d+) failed runs here{TASKS}) (.+)", text)
        if not m or text.startswith("Not advised"):
            continue
        kind = next((k for k, shape in said if shape.match(m.group(3))), None)
        if kind is None:
            continue
        having = [r for r in failed if any(f["kind"] == kind for f in r.get("facts") or [])]
        assert (len(having), len(failed)) == ((int(m.group(1)), int(m.group(2))) if m.group(1) else (1, 1)), text
        if m.group(1) and "all trials of 1" in text.split(" failed runs here", 1)[1][:40]:
            assert _task_count(having) == 1, text
    for note in entry.get("set_aside") or []:
        m = re.match(rf"Not advised here, as it fits at most (\d+) of the (\d+) failed runs here{TASKS}", note)
        if m:
            assert int(m.group(2)) == len(failed) and 2 * int(m.group(1)) < len(failed), note


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_every_page_rewrite_is_true_of_the_runs_it_counts(tmp_path, folder):
    outcomes = next((p for p in folder.iterdir() if p.stem == "outcomes"), None)
    if outcomes is None and (folder / "results.json").exists() is False:  # a log with no verdict: alternate them
        names = {p.name for p in folder.rglob("*")}
        keys = [k for r in RUNS if r.source.get("file") in names for k in (r.source.get("outcome_keys") or [r.run_id])]
        outcomes = tmp_path / "outcomes.json"
        outcomes.write_text(json.dumps({k: "success" if i % 2 else "failure" for i, k in enumerate(keys)}))
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[folder], out=out, offline=True, quiet=True, outcomes=outcomes))
    data = json.loads((out / "corpus.json").read_text())
    by_step = {r["step"]: r for r in data["runs"]}
    insights = {i["id"]: i for i in data["insights"]}
    runs_of = {i["id"]: len(i["sources"]) for i in data["insights"]}
    for entry in data["insights"]:
        members = [by_step[s["step"]] for s in entry["sources"]]
        # every count of runs the page's text states is the runs it links (benchmarks/text_counts.py)
        tally = text_counts.check((out / "insight" / f"{entry['id']}.md").read_text(), entry["sources"], runs_of)
        assert tally.mismatches == 0, [e for e in tally.examples if e.startswith("mismatch")]
        _habit_counts(entry, members)
        lead_counts(entry, by_step)
        peer_counts(entry, by_step, insights)
        m = re.search(r" The runs here gave (.+)\.$", entry["guideline"])
        if m:  # each wrong verdict with the one expected, counted over the page's sources
            for given, wanted, n in re.findall(r"(.+?) where (.+?) was expected \((\d+)\)(?:; |$)", m.group(1)):
                assert sum(f'[{given}], expected "{wanted}"' in s["detail"] for s in entry["sources"]) == int(n)
        m = re.search(r" (\d+) of the (\d+) scored runs here ended with a score above (\S+): ", entry["guideline"])
        if m:  # recounted from the scores beside the failed sources
            scored = [float(x.group(1)) for s in entry["sources"] if s["outcome"] == "failure"
                      and (x := re.search(r"; score ([\d.]+)$", s["detail"]))]
            assert int(m.group(2)) == len(scored) and int(m.group(1)) == sum(x > float(m.group(3)) for x in scored)
        for s in entry["sources"]:
            score = re.search(r"; score ([\d.]+)$", s["detail"])
            if score:  # the score the log gave the run (its raw metadata page says it)
                meta = (out / "raw" / s["step"] / "metadata.md").read_text()
                logged = re.search(r"^score: ([\d.]+)$", meta, re.M)
                assert logged and float(score.group(1)) == pytest.approx(float(logged.group(1)), abs=1e-6), s
            if re.match(r"turn \d+: ended with ", s["detail"]):  # no answer turn holds what the call sent
                assert entry["key"].startswith("answer|") and "answered" not in s["detail"]
        m = re.search(r"in these runs: ([^)]+)\)", entry["guideline"])
        if m:  # each program named was met by one of the page's runs
            for program in re.split(r", | and ", m.group(1)):
                assert any(f"missing|{program}" in r["patterns"] for r in members), (program, entry["guideline"])
        m = re.search(rf"the \d+ runs(?: \((?:of \d+ tasks|all trials of 1 task)\))? here that got past it all failed \((.+)\)\.",
                      entry["guideline"])
        some = re.search(rf"(\d+) of the (\d+) failed runs here{TASKS} got past it and still failed \((.+)\)\.",
                         entry["guideline"])
        assert "the one run here that got past it" not in entry["guideline"]  # one run is no count
        if m or some:
            failed = [s for s in entry["sources"] if s["outcome"] == "failure"]
            if m:
                assert entry["counts"]["success"] == 0
            else:  # most failed runs did what the old advice said, and still failed
                assert int(some.group(2)) == len(failed) and 2 * int(some.group(1)) > len(failed)
            ways = re.findall(r"(.+?) changed: (\d+) runs?(?:; |$)", (m or some).group(m and 1 or 4))
            for what, k in ways:
                assert sum(re.search(rf"got past it at turn \d+ \(with {re.escape(what)} (changed|taken from)",
                                     s["detail"]) is not None for s in failed) == int(k), entry["guideline"]
        m = re.search(rf"(?:the message names the (.+?) value it refused|replace the (.+?) value the message names)"
                      rf"(?: \(in (\d+) of the (\d+) runs here{INNER_TASKS}\))?(?=[:;.]| with)", entry["guideline"])
        if m:  # the runs' own details say their error named that argument's value
            what = m.group(1) or m.group(2)
            named = sum(s["detail"].endswith(f"; the message named the {what} value sent") for s in entry["sources"])
            assert named == int(m.group(3) or 1) and len(entry["sources"]) == int(m.group(4) or 1), entry["guideline"]
        for arg, place, other, n in re.findall(r"`(\w+)` (from what the user said in reply|from the task statement|"
                                               r"from what \S+ returned|as the earlier \S+ call sent it|worked out by the agent "
                                               r"\(no earlier turn held it\))(?: \((\d+) of the (\d+) runs here that set "
                                               r"it did not\))?", entry["guideline"].split("took it: ", 1)[-1]
                                               if "took it: " in entry["guideline"] else ""):
            tool = entry["key"].split("|")[1]
            setting = [r for r in members if any(p.startswith(f"took|{tool}|{arg}|") for p in r["patterns"])]
            if other:
                assert int(n) == len(setting), entry["guideline"]


def test_a_success_procedure_says_how_most_of_its_runs_worded_their_queries(tmp_path):
    """Three QA successes search the names their question gives, one searches a word of its own
    first: the page says to build queries from the task's or an answer's words, 3 of 4."""
    from test_lesson_specifics import _qa

    def run(k: int, own: bool) -> dict:
        looks = ([("famous bands", "Could not find famous bands.")] if own else []) + [
            (f"Band{k}", f"Band{k} is a rock band formed in 199{k} in Leeds.")]
        return _qa(f"199{k}", f"199{k}", looks, f"When was Band{k} formed?", success=True, run_id=f"q-{k}")

    out = tmp_path / "q"
    runs = [run(0, False), run(1, False), run(2, True), run(3, False)]
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "q.jsonl", runs)], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    (entry,) = [i for i in data["insights"] if i["key"].startswith("procedure|Finish")]
    assert entry["guideline"].endswith(" Build every Search query from words the task or an earlier answer gives (3 of "
                                       "the 4 runs here that sent one did)."), entry["guideline"]
    by_step = {r["step"]: r for r in data["runs"]}
    _habit_counts(entry, [by_step[s["step"]] for s in entry["sources"]])
    # which 3 and which 4: the page's Evidence names them, so the count can be checked
    own = next(r["step"] for r in data["runs"] if r["run_id"] == "q-2")
    others = [s["step"] for s in entry["sources"] if s["step"] != own]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    evidence = page.split("## Evidence", 1)[1].split("## Sources", 1)[0]
    assert ("The 3 runs here that sent a Search query and built it from the task's or an earlier answer's words: "
            + ", ".join(f"[{st}](../compilation/{st}.md)" for st in others) + ".") in evidence
    assert f"The 1 run here that sent a Search query and used other words: [{own}](../compilation/{own}.md)." in evidence


@pytest.mark.parametrize("run", RUNS, ids=lambda r: f"{r.source.get('format')}:{r.run_id}")
def test_a_run_the_harness_stopped_while_browsing_is_taught_so_and_no_other_is(run):
    """'stopped by the harness' is said of a failed run only when its log shows the harness ended
    it and no call that went through was an answer (free text an answer turn holds) or a change
    with named arguments."""
    from wikitrace.compilers.reading import harness_reason, read_run

    run = relabeled(run, False)
    lessons = [i for i in compile_offline(run).insights if i.key == "stopped"]
    if not lessons:
        return
    r = read_run(run)
    assert harness_reason(r) is not None
    answers = {(t.content or "").strip() for t in run.turns if t.type == "answer"}
    for c in r.calls:
        if c.writes and not c.error:
            assert isinstance(c.turn.arguments, str) and c.turn.arguments.strip() not in answers, c.turn
    assert "stopped by the harness: " in lessons[0].detail


def test_the_fixtures_hold_a_run_taught_it_was_stopped_by_the_harness():
    """The check above reads something: at least one importer fixture, read as failed, is taught it."""
    def stopped(run) -> bool:
        return any(i.key == "stopped" for i in compile_offline(relabeled(run, False)).insights)

    assert any(stopped(run) for run in RUNS)


def test_a_success_whose_edit_changed_the_line_the_tasks_trace_names_says_so():
    """An issue with a stack trace naming Cart.java:42, an edit of lines 40 to 44 of that file, a
    submit: the procedure's source says the trace's line is the one the edit changed; an edit of
    other lines says nothing of the trace."""
    from test_offline_content import _run

    def record(start: int, end: int) -> dict:
        task = ("Cart.total() throws NullPointerException for an empty cart. Stack trace: "
                "java.lang.NullPointerException at acme.shop.Cart.total(Cart.java:42)")
        listing = "[File: /acme__shop/src/main/java/acme/shop/Cart.java (80 lines total)]\n(40 more lines above)\n41:x"
        turns = [_msg("user", task),
                 _call("open", "open src/main/java/acme/shop/Cart.java 42", listing),
                 _call("edit", f"edit {start}:{end}\n        if (items == null) return 0;\nend_of_edit",
                       listing + "\nFile updated. Please review the changes."),
                 _call("submit", "submit", "diff --git a/src/main/java/acme/shop/Cart.java b/src/main/java/acme/shop/Cart.java"),
                 {"type": "episode_over"}]
        return _record("cart-1", "swe-bench", task, _turns(*turns), True)

    run = _run(record(40, 44))
    (lesson,) = [i for i in compile_offline(run).insights if i.key.startswith("procedure|")]
    assert lesson.detail.endswith("; the task's trace names line 42 of Cart.java, which the edit at turn 2 changed"), \
        lesson.detail
    _check_points(run, lesson.detail)
    (other,) = [i for i in compile_offline(_run(record(60, 61))).insights if i.key.startswith("procedure|")]
    assert "trace names line" not in other.detail


def test_a_success_that_stalled_teaches_no_lesson_and_its_page_names_the_look_ups_its_task_expected():
    """A success with no call that asked for ids the user could not give passed because its task
    needed no change: its log shows no step another run could copy, so it teaches no lesson, with
    or without expected look-ups, and its page still names the look-ups its task expected."""
    from test_offline_content import _run

    def stalled(expected: list[dict] | None) -> dict:
        record = _record("s-1", "airline", "Cancel my upcoming one-passenger trips.", _turns(
            _msg("system", SYSTEM + " The current time is 2024-05-15 15:00:00 EST."),
            _msg("user", "Hi, I am amelia_davis_8890 and I want to cancel some flights."),
            _msg("assistant", "Could you give me the reservation ids?"), _msg("user", "I don't remember them."),
            _msg("assistant", "Sorry, I cannot cancel anything without the reservation IDs."),
            _msg("user", "Fine, thanks."), {"type": "episode_over"}), True)
        if expected is not None:
            record["task"]["metadata"] = {"expected_calls": json.dumps(expected)}
        return record

    looks = [{"name": "get_user_details", "arguments": {"user_id": "amelia_davis_8890"}},
             {"name": "get_reservation_details", "arguments": {"reservation_id": "UDMOP1"}}]
    comp = compile_offline(_run(stalled(looks)))
    assert comp.insights == []
    said = " ".join(f.text for f in comp.in_short)
    assert "as this run did" not in said and "Look up get_user_details and get_reservation_details before answering" in said, said
    for expected in (None, [], looks + [{"name": "cancel_reservation", "arguments": {"reservation_id": "UDMOP1"}}]):
        assert compile_offline(_run(stalled(expected))).insights == []
