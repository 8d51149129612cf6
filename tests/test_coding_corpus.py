"""The coding corpus (tests/coding_corpus.py, committed under tests/fixtures/importers/coding_corpus)
read as a user reads it: every run of every experiment folder compiled, trials of one task
grouped, and the missing JDK that successes and failures both met named as no cause."""

from __future__ import annotations

import json
import re
from pathlib import Path

from coding_corpus import write_corpus

from wikitrace.build import BuildOptions, build

CORPUS = Path(__file__).parent / "fixtures" / "importers" / "coding_corpus"


def test_the_committed_corpus_is_what_the_generator_writes(tmp_path):
    fresh = write_corpus(tmp_path / "c")
    made = sorted(p.relative_to(fresh) for p in fresh.rglob("*") if p.is_file())
    assert made == sorted(p.relative_to(CORPUS) for p in CORPUS.rglob("*") if p.is_file())
    for rel in made:
        assert (fresh / rel).read_bytes() == (CORPUS / rel).read_bytes(), rel


def test_every_run_of_every_experiment_is_compiled_as_a_trial_of_its_task(tmp_path):
    out = tmp_path / "out"
    result = build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                                outcomes=CORPUS / "claude-code" / "outcomes.json"))
    assert result.runs == 12 and not result.skipped
    data = json.loads((out / "corpus.json").read_text())
    by_task: dict[str, list[str]] = {}
    for r in data["runs"]:
        by_task.setdefault(r["task_id"], []).append(r["outcome"])
    assert sorted(by_task["acme__jsonkit-101"]) == ["failure", "failure", "success"]
    assert sorted(by_task["acme__jsonkit-103"]) == ["success", "success"]
    missing = next(i for i in data["insights"] if i["key"] == "error|missing-program")
    page = (out / "insight" / f"{missing['id']}.md").read_text()
    # met by 4 of the 5 failed and 4 of the 5 successful coding runs: no cause, and what the successes did
    assert "so it is not named a cause (successful runs met it too)" in page
    assert "What successful runs that met it did" in page
    # each case is the run's own missing program, never another error on a turn its lesson names (the
    # shell's syntax error at turn 6 that ends with the edit at turn 7 is no missing program: r43 rater)
    cases = page.split("\n## Cases\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert cases and all("command not found" in c for c in cases), cases
    step = {r["run_id"]: r["step"] for r in data["runs"]}
    llama = (out / "compilation" / f"{step['swe-llama/acme__jsonkit-101']}.md").read_text()
    # the failed trial edited the test file, the successful one the parser: said so, never "the same calls"
    assert "edited NumberParser.java at its turn 3; this run edited NumberParserTest.java instead" in llama


import pytest  # noqa: E402

from wikitrace.runs.model import Turn  # noqa: E402
from wikitrace.runs.tool_kinds import EDIT, SEARCH, TEST, VIEW, kind_of  # noqa: E402


@pytest.fixture(scope="module")
def coding_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("coding") / "out"
    build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True,
                       outcomes=CORPUS / "claude-code" / "outcomes.json"))
    data = json.loads((out / "corpus.json").read_text())
    return out, data, {r["run_id"]: r["step"] for r in data["runs"]}


def _in_short(out: Path, step: str) -> list[str]:
    page = (out / "compilation" / f"{step}.md").read_text()
    part = page.split("## In short\n", 1)[1].split("\n## ", 1)[0]
    return [ln for ln in part.splitlines() if ln.startswith("- ")]


def _call(name, arguments, result="", fmt=None):
    return kind_of(Turn(turn=1, type="function_call", name=name, arguments=arguments, result=result), fmt)


def test_each_agent_names_its_edits_views_searches_and_tests_by_one_kind():
    assert _call("edit", "edit 3:3\n    x = 1\nend_of_edit", fmt="swe-agent").kind == EDIT
    assert _call("str_replace_editor", "str_replace_editor str_replace /r/a.py --old_str 'a' --new_str 'b'",
                 fmt="swe-agent").kind == EDIT
    viewed = _call("str_replace_editor", "str_replace_editor view /r/a.py", fmt="swe-agent")
    assert (viewed.kind, viewed.target) == (VIEW, "/r/a.py")
    assert _call("open", "open src/a.py 40", fmt="swe-agent").kind == VIEW
    assert _call("search_dir", 'search_dir "x" src', fmt="swe-agent").kind == SEARCH
    for tool in ("Edit", "MultiEdit", "Write"):
        assert _call(tool, {"file_path": "/r/a.py", "content": "x"}, fmt="claude-code").kind == EDIT
    assert _call("Read", {"file_path": "/r/a.py"}, fmt="claude-code").target == "/r/a.py"
    assert _call("Bash", {"command": "python -m pytest -q"}, fmt="claude-code").kind == TEST
    assert _call("bash", {"command": "cat a.py"}, fmt="mini-swe-agent").kind == VIEW
    assert _call("apply_patch", "*** Begin Patch", fmt="codex-cli").kind == EDIT
    # a chat agent's tool is no coding act, whatever its name
    assert _call("update_reservation_flights", {"reservation_id": "X"}, fmt="openai-chat") is None


def test_trials_are_compared_by_what_their_calls_did_not_by_their_tool_names(coding_out):
    _out, data, _step = coding_out
    said = [d["text"] for i in data["insights"] for d in (i.get("same_task") or {}).get("differences", [])]
    # SWE-agent 0.x's edit/open and 1.x's str_replace_editor are one kind of act: never a difference by name
    assert said and not [t for t in said if t.startswith(("called edit ", "called str_replace_editor ", "called open "))]
    # the 1.x trial of task 101 never opened the parser the successful 0.x trial read before changing it
    assert "viewed NumberParser.java, which the failed run never did" in said
    # that trial did search (search_dir answered with an error twice): only a search that went through counts
    assert "searched the code or listed its folders without an error, which the failed run never did" in said
    assert "searched the code, which the failed run never did" not in said
    keys = {i["key"] for i in data["insights"]}
    assert "went-through|a file edit" in keys and not {"went-through|edit", "went-through|str_replace_editor"} & keys


def test_a_failure_that_edited_the_file_a_success_edited_leads_with_what_the_edits_wrote(coding_out):
    out, _data, step = coding_out
    first = _in_short(out, step["acme__jsonkit-101"])[0]  # the swe-claude trial, read first of its task
    # the successful trial rewrote the accumulation line; this run only loosened the overflow check
    assert "replaced `value = value * 10 + (c - '0');`" in first and "which this run's edits left as" in first
    assert "this run wrote `if (value \\< 0 && !(neg && value == Long.MIN_VALUE))" in first
    tally = _in_short(out, step["acme__tally-7"])[0]  # swe-tally-bad
    # both replaced the same line of median: what each wrote in its place, a short fix written out whole
    assert ("wrote `n = len(s)` / `if n % 2:` / `return s\\[n // 2\\]` / `return (s\\[n // 2 - 1\\] + s\\[n // 2\\]) / 2` "
            "in place of the same line") in tally, tally
    assert "this run wrote `return s\\[len(s) // 2\\]`" in tally
    assert not [b for s in step.values() for b in _in_short(out, s) if "what separated them is in what the edits" in b]


def test_a_missing_program_successful_runs_met_too_is_said_so_below_the_runs_own_difference(coding_out):
    out, _data, step = coding_out
    lines = _in_short(out, step["acme__jsonkit-102"])  # the swe-claude trial: javac and mvn missing
    assert "](step-" in lines[0]  # its successful trial's edit comes first
    mvn = next(ln for ln in lines if "mvn: command not found" in ln)
    # mvn was missing in 3 of the 5 successful swe-bench runs (the gpt4o trials of 101 and 102, the claude 103)
    assert "also met by 3 of 5 successful runs of this task type" in mvn
    assert not [ln for ln in lines if "syntax error" in ln and "also met" in ln]


def test_paths_that_are_not_there_are_one_lesson_whichever_tool_named_them(coding_out):
    _out, data, _step = coding_out
    keys = [i["key"] for i in data["insights"] if i["task_type"] == "swe-bench"]
    assert "error|missing-path" in keys
    assert not [k for k in keys if k.startswith(("error|open|File", "error|search_dir|Directory", "error|cat|"))]


def test_sessions_without_outcomes_are_left_out_never_given_a_verdict(tmp_path):
    out = tmp_path / "out"
    result = build(BuildOptions(inputs=[CORPUS], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    assert result.runs == 10 and len(result.skipped) == 2
    assert not [r for r in data["runs"] if r.get("task_type") == "claude-code"]


def _lessons(data: dict, step: str) -> list[tuple[dict, str]]:
    """(insight entry, this run's detail on it) for each lesson the run teaches."""
    return [(i, s["detail"]) for i in data["insights"] for s in i["sources"] if s["step"] == step]


def test_a_run_the_cost_limit_ended_after_its_edit_learns_where_its_calls_went(coding_out):
    out, data, step = coding_out
    llama = step["swe-llama/acme__jsonkit-102"]  # opened the file late, edited it, hit exit_cost before submit
    lessons = _lessons(data, llama)
    assert not [i for i, _d in lessons if i["key"].startswith("went-through|")]  # no "check the edit" lesson
    limit, detail = next((i, d) for i, d in lessons if i["key"] == "stopped|changed")
    assert detail == ("stopped by the harness (cost limit reached (exit_cost)) after 7 calls; 6 came before its "
                      "first change (edit, turn 7): 3 answered with an error (mvn, javac and open), 3 looked something "
                      "up (ls and open); it made no call after its last change (turn 7)")
    page = (out / "insight" / f"{limit['id']}.md").read_text()
    assert "make the call that settles the task" in page and "the file it changes is the one" not in page
    # it made no more calls than its successful trial, each dearer: the title blames neither the calls
    # after its change (there were none) nor how late it reached the change, but the cost
    assert limit["title"] == "Under a cost limit, reach the change and settle it within the first few calls"
    # its successful trial made more model calls for less: the lesson does not blame the calls it spent
    assert "instead of spending calls" not in page and (
        f"The logs record what the model calls cost: {llama}, 3 over 7 model calls (0.43 a call), against "
        f"{step['swe-gpt4o/acme__jsonkit-102']}, 0.61 over 8 (0.076 a call).") in page
    assert "where each call costs more, fewer of them fit: spend none on probes" in limit["guideline"]
    # its successful trial submitted: the page's trial contrast says so
    assert "submitted its changes, which the failed run never did" in page


def test_a_run_the_harness_ended_before_its_submit_is_not_said_to_have_left_it_out(coding_out):
    """The cost limit ended the run right after its edit: its page and its successful trial's page
    say the harness ended it, and its edit is not blamed for the failure."""
    out, _data, step = coding_out
    llama, won = step["swe-llama/acme__jsonkit-102"], step["swe-gpt4o/acme__jsonkit-102"]
    mine = (out / "compilation" / f"{llama}.md").read_text()
    assert "; the harness ended this run before it made it" in mine and "this run never made it" not in mine
    assert ("but the harness ended the run (cost limit reached (exit_cost)) before the change was submitted, so the "
            "run failed whatever the change did.") in mine
    assert "the change it made may not be" not in mine
    # both logs record their model cost: it made no more calls than the successful trial, each dearer, so the
    # page does not leave the reader to blame the number of calls
    assert ("the harness ended this run before it made it; the log records this run's model cost as 3 over 7 calls, "
            "and the successful trial's as 0.61 over 8: no more calls than it, each dearer.") in mine
    theirs = (out / "compilation" / f"{won}.md").read_text()
    assert f"was ended by the harness before any submit call ([{llama}]({llama}.md))" in theirs
    # it had no turn left to submit: its successful trial's page does not tell the reader to submit as if
    # the failed one had chosen not to
    (line,) = [x for x in theirs.splitlines() if f"[{llama}]({llama}.md)" in x and "ended by the harness" in x]
    assert not line.startswith("- Make ") and "as this run did" not in line


def test_a_failed_edit_of_the_file_the_task_names_is_told_to_check_what_it_wrote_not_the_file(coding_out):
    out, data, step = coding_out
    # averaged all values in tally/stats.py, the file the other session given the same request fixed
    failed = step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    edit, _d = next((i, d) for i, d in _lessons(data, failed) if i["key"] == "went-through|a file edit")
    assert "the file it changes is the one the task is about" not in edit["guideline"]
    # it ran the tests after its edit and settled with two failing: what it lacked was acting on them
    assert ("then, when the tests run after it still fail (or fail where they passed before), change the edit until "
            "they pass before settling (the failed run here changed the same files as the successful trials of its "
            "task, and ran the tests after its edit)") in edit["guideline"]
    assert edit["title"] == "Before a file edit, check what it writes; after it, fix what the tests still report"
    assert "run the failing check again" not in (out / "insight" / f"{edit['id']}.md").read_text()


def test_a_failed_edit_of_the_file_its_successful_trial_edited_quotes_what_each_wrote(coding_out):
    from wikitrace.corpus.edit_lessons import right_file
    from wikitrace.corpus.trials import Trials

    _out, data, step = coding_out
    won, lost = step["4e0b9d2a-1c3f-4a55-9e21-7b8c6d5e4f30"], step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    runs = [r for r in data["runs"] if r["step"] in (won, lost)]
    # the two Claude Code sessions were given the same request: as trials of one task, their edits are compared
    trials = Trials(runs, lambda r: "median")
    run = next(r for r in runs if r["step"] == lost)
    lesson = next(x for x in run["lessons"] if x["key"] == "went-through|a file edit")
    entry = {"key": lesson["key"], "title": lesson["title"], "guideline": lesson["guideline"]}
    unrun = dict(run, patterns=[p for p in run["patterns"] if p != "ended|failing-tests"])
    bare = {"key": lesson["key"], "title": lesson["title"], "guideline": lesson["guideline"]}
    right_file(bare, [(unrun, lesson)], trials)  # a run that never ran the tests after its edit is told to
    assert ("then run the failing check again together with the tests that passed before it (the failed run here "
            "changed the same files as the successful trials of its task)") in bare["guideline"]
    assert bare["title"] == "Before a file edit, check what it writes and rerun the tests that passed"
    right_file(entry, [(run, lesson)], trials)
    assert ("(the failed run here changed the same files as the successful trials of its task, and ran the tests "
            "after its edit)") in entry["guideline"]
    # what each wrote is shown on the case of every page about how the failed run changed or ended it
    for key in ("went-through|a file edit", "ended|failing-tests"):
        page = (_out / "insight" / f"{next(i for i, _d in _lessons(data, lost) if i['key'] == key)['id']}.md").read_text()
        case = next(line for line in page.split("## Cases\n", 1)[1].splitlines() if line.startswith(f"- [{lost}]"))
        assert (f"The successful trial {won} of its task changed the same file as {lost} (stats.py, in \\`median\\`) "
                "and wrote \\`n = len(s)\\` / ") in case, case
        assert " in place of the same line (" in case and "more lines" not in case
        assert case.endswith(f"; {lost} wrote \\`return round(sum(s) / len(s), 1)\\`."), case
    # a lesson on an error the run met is not about the change: its case keeps to the error
    assert not any("The successful trial" in (_out / "insight" / f"{i['id']}.md").read_text().split("## Cases", 1)[-1]
                   .split("## Evidence", 1)[0] for i, _d in _lessons(data, lost) if i["key"].startswith("error|"))


def test_a_file_named_by_its_module_path_is_a_file_the_task_names(coding_out):
    """`tally.stats.median` in a task names tally/stats.py, as `NumberParser.parseLong` names
    NumberParser.java: the run that changed it is counted among those that changed a named file."""
    from wikitrace.compilers.insight_parts import _names_of_file

    assert "tally.stats" in _names_of_file("/tally/tally/stats.py")
    assert "acme.jsonkit.io.numberparser" in _names_of_file("src/main/java/acme/jsonkit/io/NumberParser.java")
    assert _names_of_file("README") == ["readme"]
    _out, data, _step = coding_out
    tally = [r for r in data["runs"] if "tally.stats" in (r.get("instruction") or "")]
    assert tally and any(p.endswith("file-task") or "file-task+" in p
                         for r in tally if r["outcome"] == "failure" for p in r.get("patterns") or [])


def test_no_two_insights_of_the_coding_corpus_share_a_title(coding_out):
    """A lesson that also saw the failing test pass says so in its title: two pages with one title
    would read as the same lesson."""
    _out, data, _step = coding_out
    titles = [i["title"] for i in data["insights"]]
    assert len(titles) == len(set(titles)), titles


def test_a_one_run_page_says_what_set_its_run_apart_once(coding_out):
    """A lesson one successful run taught says what that run did that its task's failed trials did
    not in one line; the list of the same differences is not repeated under it."""
    out, data, _step = coding_out
    pages = [(out / "insight" / f"{i['id']}.md").read_text() for i in data["insights"] if i.get("one_run_apart")]
    assert pages
    for page in pages:
        said = ("What it did that" in page) + ("Set against the " in page)  # the second when a difference is not
        assert said == 1 and "Compared with the failed trials of the same task" not in page  # one the trials lacked
        assert "Only one run teaches" not in page and "Seen in 1 run:" in page


def test_a_coding_ending_s_count_says_which_runs_it_counts(coding_out):
    """The contrast line of a coding procedure lesson counts the runs whose ending has the lesson's
    key: the same final call, the file found where the key says, a failing command seen passing or
    not. "ended with this call" read as "ended with submit" took in runs it did not count (step-0008
    submitted after editing a test the task never names; step-0011 saw its failing test pass)."""
    out, data, _steps = coding_out
    checked = 0
    for ins in data["insights"]:
        if not ins["key"].startswith("procedure|") or ":file-" not in ins["key"]:
            continue
        page = (out / "insight" / f"{ins['id']}.md").read_text()
        line = next(ln for ln in page.splitlines() if ln.startswith("Runs of this task type "))
        call, ending = ins["key"].split("|", 1)[1].rsplit(":", 1)
        place = {"file-task": "a file the task names", "file-shown": "a file an earlier call's answer showed",
                 "file-new": "a file neither the task nor an earlier answer named"}[ending.removesuffix("+tested")]
        assert line.startswith(f"Runs of this task type that ended with {call} after changing {place}, "), line
        assert ("a command that had failed before its last edit passed after it" in line) == ending.endswith("+tested")
        runs = [r for r in data["runs"] if r["task_type"] == ins["task_type"] and ins["key"] in r["patterns"]]
        failed = sum(r["outcome"] == "failure" for r in runs)
        won = len(runs) - failed
        assert re.search(rf": {failed} failed\b.*?, {won} successful\b", line), (line, failed, won)
        checked += 1
    assert checked >= 1


def test_the_way_successful_runs_submitted_joins_the_submit_check_s_page(coding_out):
    """A successful run's way to submit (a file the task names changed, then submit) was a page of
    its own that the failed runs followed as often; it is one lesson with the check before submit:
    the successful runs under its Sources, their recipe said as theirs, every link still whole."""
    out, data, step = coding_out
    assert not [i["id"] for i in data["insights"] if i["key"].startswith("procedure|submit")]
    entry = next(i for i in data["insights"] if i["key"] == "went-through|submit")
    assert entry["counts"]["success"] >= 2 and entry["counts"]["failure"] >= 2, entry["counts"]
    won = step["swe-gpt4o/acme__jsonkit-101"]
    run = next(r for r in data["runs"] if r["step"] == won)
    assert entry["id"] in run["insights"]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    todo = page.split("## What to do\n", 1)[1].split("\n## ", 1)[0]
    assert re.search(r"The \d+ successful runs here settled the task this way: find the file the task text names", todo), todo
    evidence = page.split("## Evidence\n", 1)[1].split("\n## ", 1)[0]
    assert "settled the task this way" not in evidence  # said once, whole
    from wikitrace.check import check_corpus

    assert check_corpus(out) == []


def test_a_failed_look_up_ranks_below_the_changes_the_run_made(coding_out):
    """A grep line the shell could not parse changed nothing; the edit and the submit the run made
    are what was judged, and lead the causes."""
    out, _data, step = coding_out
    page = (out / "compilation" / f"{step['acme__jsonkit-101']}.md").read_text()  # the swe-claude trial
    causes = [ln for ln in page.splitlines() if ln.startswith("**Decision**")]
    grep = next(i for i, ln in enumerate(causes) if "grep -n 'neg'" in ln)
    changes = [i for i, ln in enumerate(causes) if "Called submit" in ln or "Called str_replace_editor" in ln]
    assert changes and max(changes) < grep, causes


def test_a_run_that_settled_on_tests_it_had_just_seen_fail_learns_to_settle_once_they_pass(coding_out):
    """The SWE-agent trial reran pytest after its edit, saw test_median_even still fail and submitted;
    the Claude Code session ended on two failing tests. Both learn to settle only once the tests run
    after the last edit pass, beside the check of what the edit wrote; the successful trial that saw
    its tests pass meets no such pattern, and the page counts the successes that ended that way."""
    out, data, step = coding_out
    runs = {r["step"]: r for r in data["runs"]}
    swe, session = step["acme__tally-7"], step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    assert {s for s, r in runs.items() if "ended|failing-tests" in r["patterns"]} == {swe, session}
    for s in (swe, session):
        keys = [lesson["key"] for lesson in runs[s]["lessons"]]
        assert "ended|failing-tests" in keys and any(k.startswith("went-through|") for k in keys), keys
    page = (out / "compilation" / f"{swe}.md").read_text()
    assert "still reported failing tests at turn 5" in page
    assert "; submit at turn 6 then settled the run with no edit after it." in page
    lesson = next(i for i in data["insights"] if i["key"] == "ended|failing-tests" and swe in
                  [s["step"] for s in i["sources"]])
    text = (out / "insight" / f"{lesson['id']}.md").read_text()
    assert "title: \"After the last edit, settle only once python shows the tests pass\"" in text
    assert "Runs of this task type that met it: 1 failed, 0 successful." in text
    assert "call submit only once it passes." in text
    # the Claude Code session has no submit: its page says to end the run only once the tests pass
    ended = next(i for i in data["insights"] if i["key"] == "ended|failing-tests" and session in
                 [s["step"] for s in i["sources"]])
    said = (out / "insight" / f"{ended['id']}.md").read_text()
    assert "end the run only once it passes." in said and "submit" not in said.split("## Evidence")[0]


def test_an_edit_that_wrote_a_name_the_log_only_showed_spelt_otherwise_is_flagged_on_its_page(coding_out):
    """step-0003 wrote `_paddingOptional` and its successful trial `Padding.OPTIONAL` where the code
    they searched wrote PADDING_OPTIONAL: both pages say so, as a fact (the success wrote one too). A name no
    turn showed in any spelling (the JDK's `Long.MIN_VALUE`, JUnit's `assertEquals`) and a method
    called on a value the log showed (`seg.replace`) are not flagged."""
    out, _data, step = coding_out
    lost = (out / "compilation" / f"{step['acme__jsonkit-102']}.md").read_text()
    won = (out / "compilation" / f"{step['swe-gpt4o/acme__jsonkit-102']}.md").read_text()
    assert ("wrote \\`_paddingOptional\\` (the log showed \\`PADDING_OPTIONAL\\`), a name no earlier turn of this "
            "log held as written.") in lost
    assert "wrote \\`Padding.OPTIONAL\\` (the log showed \\`PADDING_OPTIONAL\\`)" in won
    assert "the run succeeded with it, but no turn before the edit showed it so written." in won
    # the failure's line against that trial names the words the two lines differ in (the success's line was
    # kept cut short at 100 characters: matched by its last whole words), and that both wrote such a name
    assert ("wrote the same line as this run but for `padding != Padding.OPTIONAL`, where this run wrote "
            "`!_paddingOptional`; each wrote a name its log had shown only with another spelling (`Padding.OPTIONAL`, and "
            "this run `_paddingOptional`).") in lost
    # advice to check such names stands on neither page: the success wrote one too
    assert "check that the name an edit writes" not in lost + won
    # and the success's line names the same difference from its side, after what set it apart from the other trial
    assert (f"The other failed trial, [{step['acme__jsonkit-102']}]({step['acme__jsonkit-102']}.md), changed the same "
            "file as this run (Base64Variant.java) and wrote the same line as this run but for `!_paddingOptional`, "
            "where this run wrote `padding != Padding.OPTIONAL`;") in won
    pages = "\n".join((out / "compilation" / f"{s}.md").read_text() for s in step.values())
    assert not any(f"wrote \\`{n}\\`" in pages for n in ("seg.replace", "Long.MIN_VALUE", "assertEquals"))


def test_a_test_run_that_reported_failures_ranks_below_the_edit_it_checked(coding_out):
    """The Claude Code session edited stats.py at turn 3 and its rerun of pytest failed at turn 4:
    the rerun showed the edit was wrong, so the edit is the first cause and the test run after it."""
    out, _data, step = coding_out
    page = (out / "compilation" / f"{step['9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69']}.md").read_text()
    edit, rerun = page.index("**Decision**: Called Edit at turn 3"), page.index("**Decision**: Called Bash at turn 4")
    assert edit < rerun


def test_a_failed_edit_s_cause_says_what_it_took_out_and_put_in(coding_out):
    """A failed run's edit cause quotes the lines it replaced and wrote (step-0010's upper middle
    value), not only that the call went through."""
    out, _data, step = coding_out
    page = (out / "compilation" / f"{step['acme__tally-7']}.md").read_text()
    assert ("may not be what the task asked for: it took out \\`return s\\[len(s) // 2 - (1 if len(s) % 2 == 0 else "
            "0)\\]\\` and put in \\`return s\\[len(s) // 2\\]\\`.") in page


def test_two_successful_trials_that_wrote_one_line_two_ways_say_so_on_both_pages(coding_out):
    """Both jsonkit-103 trials passed, one unescaping ~0 before ~1, the other ~1 before ~0: neither
    page presents its own line as the fix; each names the other's and says the check took either."""
    out, _data, step = coding_out
    first, second = step["acme__jsonkit-103"], step["swe-gpt4o/acme__jsonkit-103"]
    page = (out / "compilation" / f"{first}.md").read_text()
    assert (f"The other successful trial [{second}]({second}.md) of this task replaced the same line (`return seg;` in "
            "JsonPointer.java, in `unescape`) with `return seg.replace(\"~1\", \"/\").replace(\"~0\", \"~\");` where "
            "this run wrote `return seg.replace(\"~0\", \"~\").replace(\"~1\", \"/\");`: both succeeded") in page
    assert f"The other successful trial [{first}]({first}.md)" in (out / "compilation" / f"{second}.md").read_text()
    # a task with a failed trial keeps its success-against-failure line instead
    tally = (out / "compilation" / f"{step['swe-tally-ok/acme__tally-7']}.md").read_text()
    assert "The other successful trial" not in tally


def test_a_submit_that_hands_in_the_edits_ranks_below_the_last_edit(coding_out):
    """SWE-agent's submit only hands in the edits made before it: on a failed run the edit (what the
    change wrote) is the first cause and the submit comes after it."""
    out, _data, step = coding_out
    for run_id in ("acme__jsonkit-101", "acme__jsonkit-102", "acme__tally-7"):
        page = (out / "compilation" / f"{step[run_id]}.md").read_text()
        causes = re.findall(r"### Cause \d+\n\*\*Decision\*\*: Called (\S+) at turn", page)
        assert causes[:2] == ["str_replace_editor", "submit"], (run_id, causes)


@pytest.mark.parametrize("a, b, parts", [
    ("if (n > 0 && padding != Padding.OPTIONAL) throw e;", "if (n > 0 && !_paddingOptional) throw e;",
     ("padding != Padding.OPTIONAL", "!_paddingOptional")),
    ("return a.strip().lower()", "return a.lower()", None),  # one holds all of the other: no part of its own
    ("x = f(1)", "y = g(2)", None),  # nothing shared at either end
    # two calls in the other order: the lines share less than they differ in
    ("seg = s.replace('~1', '/').replace('~0', '~')", "seg = s.replace('~0', '~').replace('~1', '/')", None),
    ("if (ok) log('saved file'); else fail();", "if (ok) log('stored file'); else fail();",
     ("'saved file'", "'stored file'")),  # a quoted literal differs as a whole
    # a line kept cut short inside a literal: matched at its end by its last whole words
    ('if (n && mode != Mode.LAX) throw new IllegalStateException("bad inp\u2026',
     'if (n && !_lax) throw new IllegalStateException("bad input");', ("mode != Mode.LAX", "!_lax")),
])
def test_two_versions_of_a_line_differ_in_the_words_between_their_shared_ends(a, b, parts):
    from wikitrace.corpus.trial_edits import differing_parts

    assert differing_parts(a, b) == parts
    assert differing_parts(b, a) == (parts[::-1] if parts else None)


def test_an_edit_of_lines_no_call_had_shown_is_flagged_on_a_failure_page_only(coding_out):
    """The failed SWE-agent run's grep failed and it edited NumberParser.java unseen; the failed Claude
    Code session grepped only `def median` and replaced a line of stats.py it never read. A success
    page never says it of itself: the fact is a failed run's."""
    out, _data, step = coding_out
    blind = {"acme__jsonkit-101": "`NumberParser.java`", "9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69": "`stats.py`"}
    for run_id, name in blind.items():
        lines = "\n".join(_in_short(out, step[run_id]))
        assert f"replaced a line of \\{name[:-1]}\\` no call before it had shown" in lines, lines
    for run_id in ("swe-gpt4o/acme__jsonkit-101", "4e0b9d2a-1c3f-4a55-9e21-7b8c6d5e4f30"):
        assert "no call before it had shown" not in "\n".join(_in_short(out, step[run_id]))


def test_a_run_stopped_for_cost_says_what_the_log_records_it_cost(coding_out):
    """swe-llama's jsonkit-102 hit the cost limit after 7 model calls, its trajectory recording
    instance_cost 3.0: the stop says so, so a reader does not take the stop for too many calls."""
    out, _data, step = coding_out
    traj = json.loads((CORPUS / "swe-llama" / "acme__jsonkit-102.traj").read_text())
    stats = traj["info"]["model_stats"]
    line = next(ln for ln in _in_short(out, step["swe-llama/acme__jsonkit-102"]) if "The harness stopped the run" in ln)
    assert (f"The log records its model cost as {stats['instance_cost']:g} over {stats['api_calls']} model calls."
            in line), line
    # a run the log records no cost for says nothing of one
    assert not any("model cost" in ln for ln in _in_short(out, step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]))


def test_a_cost_stop_keeps_the_advice_on_calls_where_the_stopped_run_made_more_of_them():
    """The clause on calls spent goes only where the successful trial made as many calls, each
    cheaper; a stopped run that made more calls than its successful trial keeps it."""
    from wikitrace.compilers.limit_insights import WASTED_CALLS
    from wikitrace.corpus.stop_counts import stopped_at

    guide = f"A harness limit ends a run: go to what the task names early{WASTED_CALLS}, then settle it."

    def entry_for(mine: list, theirs: list) -> dict:
        runs = [{"step": "step-0001", "task_id": "t1", "outcome": "failure", "steps": 12,
                 "decisive": {"stopped": True, "cost": mine}},
                {"step": "step-0002", "task_id": "t1", "outcome": "success", "steps": 8, "decisive": {"cost": theirs}}]
        entry = {"key": "stopped|changed", "guideline": guide,
                 "sources": [{"step": "step-0001", "outcome": "failure"}]}
        stopped_at(entry, runs)
        return entry

    assert WASTED_CALLS not in entry_for([3.0, 7], [0.61, 8])["guideline"]
    assert entry_for([3.0, 12], [0.61, 8])["guideline"] == guide  # it did make more calls
    assert entry_for([0.5, 7], [0.61, 8])["guideline"] == guide  # and no cheaper ones: nothing to say


def test_an_edit_of_lines_never_shown_is_counted_on_its_lesson_as_a_fact_no_success_is_weighed_against(coding_out):
    """The Claude Code session that replaced a line of median no call had shown (its Grep showed only
    the def line): its edit lesson counts that fact, and says it is checked on failed runs only, not
    "0 successful runs showed the same" (no successful run is checked for it)."""
    out, data, step = coding_out
    failed = step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    edit, _d = next((i, d) for i, d in _lessons(data, failed) if i["key"] == "went-through|a file edit")
    page = (out / "insight" / f"{edit['id']}.md").read_text()
    assert "In the one failed run here an edit replaced lines that no call before it had shown." in page
    # what to do with it leads the page's advice
    assert page.split("## What to do\n", 1)[1].startswith("View the lines an edit replaces before writing it.")
    assert ("It is one run's fact, not a proven cause: it is checked only on failed runs, so no successful run is "
            "counted against it.") in page
    assert f"[{failed}](../compilation/{failed}.md)" in page.split("## Runs behind the counts", 1)[1]
    # the run's other lessons (its failing tests, its shell errors) are not about editing: not said there
    others = [i for i, _d in _lessons(data, failed) if i["id"] != edit["id"]]
    assert others and not any("replaced lines that no call before it had shown" in
                               (out / "insight" / f"{i['id']}.md").read_text() for i in others)


def test_the_submit_lesson_shows_what_failed_edits_wrote_apart_from_their_successful_trials(coding_out):
    """'Before submit, check the request' names nothing to look for; the failed runs' successful
    trials edited the same files, and what each wrote there is the check, shown in the run's case."""
    out, data, step = coding_out
    lost, won = step["acme__jsonkit-101"], step["swe-gpt4o/acme__jsonkit-101"]
    entry = next(i for i in data["insights"] if i["key"] == "went-through|submit" and
                 lost in [s["step"] for s in i["sources"]])
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    cases = page.split("## Cases\n", 1)[1].split("\n## ", 1)[0]
    # the pair, said from either side: the failed run's case, or its successful trial's (which then names it)
    case = next(line for line in cases.splitlines() if line.startswith((f"- [{lost}]", f"- [{won}]")))
    if case.startswith(f"- [{lost}]"):
        assert (f"The successful trial {won} of its task changed the same file as {lost} (NumberParser.java, in "
                "\\`parseLong\\`), and replaced \\`value = value * 10 + (c - '0');\\`") in case, case
    else:
        assert (f"The other failed trial, {lost}, changed the same file as this run (NumberParser.java, in "
                "\\`parseLong\\`) but left \\`value = value * 10 + (c - '0');\\`") in case, case
    # the code is escaped once, by the page: `<` shows as itself, not as a backslash and a bracket
    assert "\\`if (value \\< 0 && " in case and "\\\\\\<" not in page
    from wikitrace.check import check_corpus

    assert check_corpus(out) == []


def test_two_sessions_given_one_request_in_one_folder_are_trials_of_one_task(coding_out):
    """A Claude Code session's log names no task but itself: its task id is its session id. The
    same request in the same folder is the same task, so the two sessions asked to fix median are
    compared as trials; a request elsewhere, or a benchmark run named after its instance, is not."""
    from wikitrace.corpus.applies import request_key
    from wikitrace.runs.model import Outcome, Run, Task

    out, data, step = coding_out
    won, lost = step["4e0b9d2a-1c3f-4a55-9e21-7b8c6d5e4f30"], step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    assert any(line.startswith(f"- The successful trial [{won}]({won}.md) of this task changed the same file")
               for line in _in_short(out, lost)), _in_short(out, lost)
    assert any(f"[{lost}]({lost}.md)" in line for line in _in_short(out, won))

    def session(sid, request, cwd):
        return Run(run_id=sid, task=Task(id=sid, instruction=request, metadata={"cwd": cwd} if cwd else {}),
                   turns=[], outcome=Outcome(success=True, steps=0))

    ask = "tests/test_stats.py::test_median_even fails, please fix median in tally/stats.py"
    assert request_key(session("a", ask, "/home/dev/tally")) == request_key(session("b", ask + "\n", "/home/dev/tally"))
    assert request_key(session("a", ask, "/home/dev/tally")) != request_key(session("b", ask, "/home/dev/other"))
    assert request_key(session("a", ask, None)) is None  # no folder recorded: the request alone is not a task
    swe = Run(run_id="acme__x-1", task=Task(id="acme__x-1", instruction=ask), turns=[], outcome=Outcome(success=True, steps=0))
    assert request_key(swe) is None


def test_a_failed_submit_says_which_edits_it_handed_in_and_how_they_were_tested(coding_out):
    """A submit changes nothing itself: its cause names the last edit it handed in and the test run
    after that edit, read from the run's own log (none, or one that still failed)."""
    import re

    out, data, _steps = coding_out
    said = 0
    for r in data["runs"]:
        if r["outcome"] != "failure":
            continue
        page = (out / "compilation" / f"{r['step']}.md").read_text()
        m = re.search(r"It handed in the edits made before it, the last at turn (\d+), (with no test run after that "
                      r"edit|after .+? still reported failing tests at turn (\d+)|after .+? passed at turn (\d+))", page)
        if not m:
            assert "Called submit" not in page or "went through, yet the run was judged a failure, so what it did" \
                not in page
            continue
        said += 1
        turns = [json.loads(ln) for ln in (out / "raw" / r["step"] / "solver.full.jsonl").read_text().splitlines()]
        edit, after = int(m.group(1)), int(m.group(3) or m.group(4) or 0)
        (made,) = [t for t in turns if t["turn"] == edit]
        assert made["type"] == "function_call" and not made.get("is_error")
        if after:
            (ran,) = [t for t in turns if t["turn"] == after]
            assert "passed" in ran["result"] and (("failed" in ran["result"]) == bool(m.group(3)))
        else:  # no test run between the edit and the submit
            assert not [t for t in turns if edit < t["turn"] and t.get("type") == "function_call"
                        and re.search(r"\d+ (passed|failed)", str(t.get("result"))) and "submit" not in str(t.get("name"))]
    assert said >= 3


def test_a_change_page_whose_runs_had_no_test_programs_says_how_to_check_without_them(coding_out):
    """Most failed SWE-agent runs here met 'javac/mvn: command not found': the submit page's check
    says how to check a change with no test to run, and counts the runs that lacked the programs."""
    import re

    out, data, _steps = coding_out
    (entry,) = [i for i in data["insights"] if i["key"] == "went-through|submit"]
    assert "Where the shell lacks the programs that run the tests, check the change by reading the lines" in entry["advice"]
    m = re.search(r"In (\d+) of the (\d+) failed runs here the shell could not find (.+?)(?=[:.](?: |$))",
                  " ".join(entry.get("counted") or []))
    assert m, entry.get("counted")
    failed = [r for r in data["runs"] if r["step"] in {s["step"] for s in entry["sources"] if s["outcome"] == "failure"}]
    lacking = [r for r in failed if any(p.startswith("missing|") for p in r["patterns"])]
    assert (int(m.group(1)), int(m.group(2))) == (len(lacking), len(failed)) and 2 * len(lacking) > len(failed)
    # each program with the number of those runs that lacked it: not every run lacked every one
    said = dict(re.findall(r"(\S+) \((\d+) runs?\)", m.group(3)))
    assert {p: int(n) for p, n in said.items()} == {
        p: sum(f"missing|{p}" in r["patterns"] for r in lacking)
        for p in {q.split("|", 1)[1] for r in lacking for q in r["patterns"] if q.startswith("missing|")}}


def test_a_missing_path_got_past_names_the_search_that_found_it(coding_out):
    """The lesson for a path that does not exist says to search for it: its success's case and
    source line name the search that returned the path the next call sent."""
    out, data, _steps = coding_out
    (entry,) = [i for i in data["insights"] if i["key"] == "error|missing-path"]
    found = [s for s in entry["sources"] if ", a path find_file returned at turn 2" in s["detail"]]
    assert found and found[0]["outcome"] == "success", entry["sources"]
    page = (out / "insight" / f"{entry['id']}.md").read_text()
    cases = page.split("## Cases\n", 1)[1].split("\n## ", 1)[0]
    # where the file was, and the path the failed call guessed
    assert ("a later open call went through at turn 3, on \\`src/main/java/acme/jsonkit/JsonPointer.java\\`, a path "
            "find_file returned at turn 2 (the failed call named \\`src/main/java/acme/jsonkit/pointer/JsonPointer.java\\`)."
            ) in cases
    turns = [json.loads(ln) for ln in (out / "raw" / found[0]["step"] / "solver.full.jsonl").read_text().splitlines()]
    (search,) = [t for t in turns if t["turn"] == 2]
    (opened,) = [t for t in turns if t["turn"] == 3]
    assert search["name"] == "find_file" and opened["arguments"].split()[1] in search["result"]


def test_a_way_that_ends_on_the_tests_passing_leads_with_the_rerun_its_failed_trial_lacked(coding_out):
    """The Claude Code session that fixed median reran the failing test and saw it pass; the other
    session given the same request ran it after its edit and ended with it still failing. That
    rerun is what set them apart, so the way's page leads with it and names the failed trial."""
    out, data, step = coding_out
    won, lost = step["4e0b9d2a-1c3f-4a55-9e21-7b8c6d5e4f30"], step["9a1c7e3b-2d4f-4b66-8f10-1e2d3c4b5a69"]
    entry = next(i for i in data["insights"] if i["key"].startswith("procedure|") and i["key"].endswith("+tested")
                 and won in [s["step"] for s in i["sources"]])
    assert entry["advice"].startswith(
        "After your last edit, run the test command that failed before it again and settle only once it passes: the "
        f"failed trial of its task ({lost}) ran it after its last edit and ended with it still failing."), entry["advice"]
    # a way whose task has no failed trial that ended so is not led by it
    assert not any(i["advice"].startswith("After your last edit, run the test command") for i in data["insights"]
                   if not i["key"].endswith("+tested"))


def test_the_header_says_its_count_is_of_the_runs_that_taught_it_where_evidence_counts_more(coding_out):
    """"Seen in 1 run" beside "met in 3 of 5 failed, 2 of 5 successful" read as two counts of one thing
    to raters; where the contrast counts more runs than the page's sources, the header says which is which."""
    out, data, _step = coding_out
    checked = 0
    for entry in data["insights"]:
        c = entry.get("contrast") or {}
        page = (out / "insight" / f"{entry['id']}.md").read_text()
        header = page.split("\n# ", 1)[1].split("\n## ", 1)[0]
        beyond = c.get("failed_met", 0) + c.get("success_met", 0) > entry["counts"]["runs"]
        said = "that taught it; Evidence counts every run of this task type that met its pattern" in header
        assert said == beyond, (entry["id"], header)
        checked += beyond
    assert checked >= 2
