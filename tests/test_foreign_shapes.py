"""Shapes met in public agent logs this repository does not hold (SWE-agent on Java
repositories, the ReAct notebooks' printouts, Claude Code sessions), written here in
their real shapes with our own content: each one once read or worded wrongly."""

from __future__ import annotations

import re
from pathlib import Path

from wikitrace.compilers.insight_words import edited_files
from wikitrace.compilers.reading import read_run
from wikitrace.runs import load
from wikitrace.runs.model import Outcome, Run, Task, Turn

FIX = Path(__file__).parent / "fixtures" / "importers"


def _only_run(path: Path, fmt: str | None = None) -> Run:
    runs = [r for r in load._read(path, fmt or load.detect(path)) if isinstance(r, Run)]
    assert len(runs) == 1
    return runs[0]


def _writes(run: Run):
    r = read_run(run)
    return r, [c for c in r.calls if c.writes and not c.error]


def test_changed_files_are_what_the_edits_changed_not_what_a_test_command_ran():
    run = _only_run(FIX / "claude_code_fix" / "7d3e1a52-9c4b-4f0e-8a61-3b2c5d9e0f14.jsonl")
    r, writes = _writes(run)
    changed = edited_files(r, writes)
    assert "ledger/invoice.py" in changed
    assert "test_invoice.py" not in changed  # pytest ran it; nothing edited it


def test_changed_files_of_a_swe_agent_edit_are_the_open_file_not_a_url_in_its_text():
    """SWE-agent's ``edit N:M`` names no file: the editor's echo does. The text it wrote
    (a pom.xml with its namespace URL) holds no file it changed."""
    pom = "edit 1:1\n<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n  <modelVersion>4.0.0</modelVersion>\n</project>\nend_of_edit"
    turns = [Turn(turn=0, type="message", role="user", content="Fix the build of the widget module."),
             Turn(turn=1, type="function_call", role="assistant", name="create", arguments="create pom.xml",
                  result="[File: /acme__widgets/pom.xml (1 lines total)]\n1:", is_error=False),
             Turn(turn=2, type="function_call", role="assistant", name="edit", arguments=pom,
                  result="[File: /acme__widgets/pom.xml (3 lines total)]\n1:<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n"
                         "File updated. Please review the changes and make sure they are correct.", is_error=False),
             Turn(turn=3, type="function_call", role="assistant", name="submit", arguments="submit",
                  result="diff --git a/pom.xml b/pom.xml\nnew file mode 100644\n", is_error=False),
             Turn(turn=4, type="episode_over")]
    run = Run(run_id="acme__widgets-7", task=Task(id="acme__widgets-7", instruction="Fix the build.", task_type="swe-bench"),
              turns=turns, outcome=Outcome(success=True, steps=3))
    r, writes = _writes(run)
    assert edited_files(r, writes) == "/acme__widgets/pom.xml"


def test_a_claude_code_session_opening_with_a_mode_line_is_detected_and_read():
    """Current Claude Code transcripts open with ``{"type": "mode", ..}`` and carry
    file-history snapshots between turns: neither is a turn, and neither hides the format."""
    path = FIX / "claude_code_mode" / "c41e7a10-2b9d-4f6e-9a83-5d0c1e2f3a4b.jsonl"
    assert load.detect(path) == "claude-code"
    run = _only_run(path)
    assert run.task.instruction.startswith("the test for parse_amount fails")
    assert [c.name for c in run.actions] == ["Bash", "Read", "Edit", "Bash"]
    assert [c.is_error for c in run.actions] == [True, False, False, False]


def test_a_file_of_only_unknown_typed_lines_is_not_claimed_as_claude_code(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"type": "mode", "mode": "normal", "sessionId": "s1"}\n'
                    '{"type": "heartbeat", "sessionId": "s1"}\n')
    from wikitrace.runs import claude_code
    from wikitrace.runs._common import sniff
    assert not claude_code.looks_like(sniff(path))


def test_swe_agent_java_run_sees_a_refused_search_and_a_sed_error_but_not_an_empty_find():
    """SWE-agent 0.x on a Java repository (the old template: a demonstration marked
    ``is_demo`` before the issue): a search_dir that refused to list ("Please narrow your
    search"), a sed whose expression did not parse and a missing build tool are errors; a
    find_file that found nothing is an answer."""
    from wikitrace.runs import swe_agent
    run = _only_run(FIX / "swe_agent_java" / "acme__ledger-12.traj", "swe-agent")
    assert run.task.instruction.startswith("Money.parseAmount(\"12\") throws")  # not the demonstration's issue
    flags = {t.arguments.split()[0] + ("" if t.arguments.split()[0] != "search_dir" else " " + t.arguments.split()[1]): t.is_error
             for t in run.actions}
    assert flags == {'search_dir "Money"': True, 'search_dir "parseAmount"': False, "open": False, "sed": True,
                     "edit": False, "mvn": True, "find_file": False, "submit": False}
    assert swe_agent.instance_id(FIX / "swe_agent_java" / "acme__ledger-12.traj") == "acme__ledger-12"


def test_a_notebook_printout_of_many_episodes_is_not_counted_as_one_run():
    """The progress bar's total: a ReAct notebook printout holds many episodes (the bar read
    "compiling runs: 7/1 (700%)"), so its count is unknown until it is read."""
    from wikitrace.input_survey import survey
    found = survey([FIX / "react_notebook" / "fever_printout.txt"])
    assert found.formats and set(found.formats.values()) == {"react-notebook"}
    assert found.runs is None


def test_a_run_the_step_limit_ended_teaches_no_lesson_about_its_answer(tmp_path):
    """WebShop episode 2 of the fixture ran out of steps while browsing: its last click opened
    a page and ended nothing, so no insight source may say it "answered" with it."""
    import json
    from wikitrace.build import BuildOptions, build
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[FIX / "react_notebook" / "webshop_printout.txt"], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    limited = {r["step"] for r in data["runs"] if r["run_id"] == "webshop_printout-2"}
    assert limited
    details = [s["detail"] for i in data["insights"] for s in i["sources"] if s["step"] in limited]
    assert details and not any("answered" in d for d in details), details


def test_a_failing_test_command_is_not_advised_to_install_a_program():
    """A Claude Code session whose pytest run failed, then passed after an Edit: the lesson
    about the failing run says to change the code the failure points to and run the same command
    again, and beside the run what it changed and that the command then passed; installing a
    program is advice for a shell that could not find one."""
    from wikitrace.compilers.offline import compile_offline
    run = _only_run(FIX / "claude_code_mode" / "c41e7a10-2b9d-4f6e-9a83-5d0c1e2f3a4b.jsonl")
    # judged a success, the session teaches its way to the passing command once, not again as an error's fix
    run.outcome = Outcome(success=True, steps=4)
    assert [i.key for i in compile_offline(run).insights] == ["procedure|Bash python:file-shown+tested"]
    run.outcome = Outcome(success=False, steps=4)
    lessons = [i for i in compile_offline(run).insights if i.key.startswith("error|")]
    assert lessons and all("install" not in i.guideline for i in lessons)
    assert lessons[0].key == "error|Bash python|failing tests"
    assert "change that code, then run the same Bash python command again" in lessons[0].guideline
    assert lessons[0].detail.startswith("turn 1: python reported failing tests (FAILED ")
    assert lessons[0].detail.endswith("; then changed money.py (in parse_amount) with Edit at turn 3; the same python "
                                      "command passed at turn 4 (2 passed in 0.02s)")


def test_a_call_without_arguments_is_not_told_to_check_its_arguments():
    """SWE-agent's ``submit`` takes no argument: the lesson of a failed run that submitted is
    about the changes before it, not about 'each argument'."""
    from wikitrace.compilers.offline import compile_offline
    run = _only_run(FIX / "swe_agent_java" / "acme__ledger-12.traj", "swe-agent")
    run.outcome = Outcome(success=False, steps=8)
    lessons = [i for i in compile_offline(run).insights if i.key == "went-through|submit"]
    assert lessons, [i.key for i in compile_offline(run).insights]
    assert "argument" not in lessons[0].guideline
    assert lessons[0].guideline.startswith("Before submit, check that the changes made before it do what the request asks")


def test_a_refused_click_followed_by_another_target_is_not_got_past(tmp_path):
    """WebShop episode 1 of the fixture: click[30 liters] is refused (no such option), then
    click[Buy Now] goes through. The option was never chosen: no source may say the run got
    past the refusal."""
    import json
    from wikitrace.build import BuildOptions, build
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[FIX / "react_notebook" / "webshop_printout.txt"], out=out, offline=True, quiet=True))
    data = json.loads((out / "corpus.json").read_text())
    step = next(r["step"] for r in data["runs"] if r["run_id"] == "webshop_printout-1")
    details = [s["detail"] for i in data["insights"] if i["key"].startswith("error|click")
               for s in i["sources"] if s["step"] == step]
    assert details and not any("got past" in d for d in details), details
    assert any("with another target" in d for d in details)


def _calls_by_turn(run: Run):
    return {c.n: c for c in read_run(run).calls}


def test_a_look_up_is_no_change_whatever_the_format_names_it():
    """A tool named thing-then-verb (Langfuse's ``calendar_lookup``), an MCP tool behind its server
    prefix, code that only prints and a shell's ``env`` read; a tool whose first word changes
    something, a redirect into a file and ``sed -i`` change state, whatever word ends the line."""
    from wikitrace.compilers.reading import is_read_only

    def reads(name, args=None):
        return is_read_only(Turn(turn=0, type="function_call", role="assistant", name=name, arguments=args or {}))
    assert reads("calendar_lookup") and reads("order_status") and reads("mcp__github__get_issue")
    assert reads("TodoWrite") and reads("Glob") and reads("WebSearch") and not reads("Write") and not reads("MultiEdit")
    assert not reads("mcp__pager__send_page") and not reads("send_status") and not reads("request_swap")
    assert reads("python", {"code": "n = 13*60 + 5\nprint(n - 580)"})
    assert not reads("python", {"code": "import os\nos.remove('a.txt')"})
    assert reads("Bash", {"command": "env | grep -i tempo"}) and reads("bash", {"command": "grep -c \"a>b\" f.py"})
    assert not reads("bash", {"command": "cat a.java | sed 's/x//' > b.java"})
    assert not reads("bash", {"command": "echo 'Hello' > hello.txt"}) and not reads("bash", {"command": "sed -i s/a/b/ f"})
    # SWE-agent names a command line by its first word: the redirect still writes
    assert not reads("cat", "cat a.java | sed 's/x//' > b.java") and reads("cat", "cat a.java")
    assert reads("Search", "Search[a > b]")
    [lookup_run] = [r for r in load._read(FIX / "langfuse" / "langfuse-traces.json", "langfuse")
                    if isinstance(r, Run) and r.run_id == "sess-91"]
    calls = [c for c in read_run(lookup_run).calls if c.name == "calendar_lookup"]
    assert calls and not any(c.writes for c in calls)


def test_a_test_run_after_the_users_yes_is_not_said_to_follow_it():
    """The user agreed to a rounding change; the Edits after it carry that yes, the pytest run that
    checked them does not (running tests needs nobody's agreement)."""
    run = _only_run(FIX / "claude_code_fix" / "7d3e1a52-9c4b-4f0e-8a61-3b2c5d9e0f14.jsonl")
    calls = _calls_by_turn(run)
    assert calls[6].confirmed and calls[8].confirmed  # the Edits
    assert not calls[9].confirmed  # python -m pytest
    from fixture_runs import relabeled
    from wikitrace.compilers.offline import compile_offline
    decisions = [e.decision for e in compile_offline(relabeled(run, True)).evidence]
    assert not any(d.startswith("Called Bash") and "agreed" in d for d in decisions), decisions


def test_env_output_is_a_look_up_and_no_error():
    """A Claude Code session printed its environment (``env | grep``); OpenHands printed two
    variables and then stopped waiting on a script: the variables are output, the wait is the error,
    and the lesson names the script's program and the wait, not ``env`` and a variable."""
    run = _only_run(FIX / "claude_code_twofiles" / "5a9d2c71-3e8b-4f06-b1d4-8c7e0a2f6b39.jsonl")
    env = _calls_by_turn(run)[2]
    assert "env" in env.turn.arguments["command"] and not env.error and not env.writes
    from fixture_runs import relabeled
    from wikitrace.compilers.offline import compile_offline
    hung = compile_offline(relabeled("acme__ledger-415", False)).insights
    titles = [i.title for i in hung if i.key.startswith("error|execute_bash")]
    assert "When execute_bash python runs past the time limit, find what it waits for" in titles, titles
    assert not any("AWS_" in i.title + i.key or " env" in i.key for i in hung), [i.key for i in hung]
    short = [str(getattr(f, "text", f)) for f in compile_offline(relabeled("acme__ledger-415", False)).in_short]
    assert not any("AWS_" in f or "(env)" in f for f in short), short


def test_the_program_a_command_ran_is_the_one_sudo_ran_and_the_last_of_a_sequence():
    """``sudo /usr/bin/cat x`` ran cat; ``env | grep aws; python warm.py`` is reported by the shell
    with python's status: a later ``sudo cat`` is the later cat call a page speaks of."""
    from wikitrace.compilers.changes import what_ran

    def ran(command):
        return what_ran(Turn(turn=0, type="function_call", role="assistant", name="bash", arguments={"cmd": command}))
    assert ran("sudo /usr/bin/cat /home/ctf/.flag") == "cat"
    assert ran("env | grep -i aws; python scripts/warm_cache.py") == "python"
    assert ran("cd /repo && python -m pytest -q") == "python" and ran("grep -n 'a; b' f.py") == "grep"


def test_a_java_run_without_maven_is_told_its_missing_program_and_its_file_writes():
    """SWE-agent 1.x on a Java repository with no mvn: the shell's "command not found" is the
    environment lesson; ``which ...; env | grep`` is a look-up; a command that pipes into a new
    file is a change, not a look-up."""
    run = _only_run(FIX / "swe_agent_java_nojdk" / "acme__calendar-58.traj", "swe-agent")
    calls = _calls_by_turn(run)
    assert calls[1].error and not calls[2].error and not calls[2].writes
    assert calls[8].writes and not calls[8].error
    from fixture_runs import relabeled
    from wikitrace.compilers.offline import compile_offline
    keys = [i.key for i in compile_offline(relabeled(run, True)).insights]
    assert "error|missing-program" in keys, keys


def test_mini_swe_agents_submitting_echo_is_its_submit_not_a_look_up():
    """mini-swe-agent ends a run with ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff``;
    its info says ``submitted``: that command is the run's submit (a change), so the page does not
    call it a look-up nor the lesson "answer ... and change nothing"."""
    from fixture_runs import relabeled
    from wikitrace.compilers.offline import compile_offline
    run = relabeled("sympy__sympy-20590", True)
    last = read_run(run).calls[-1]
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in last.turn.arguments["command"] and last.writes
    comp = compile_offline(run)
    assert not any(e.decision.startswith("Looked up with bash({\"command\": \"echo COMPLETE") for e in comp.evidence)
    assert [i.key for i in comp.insights if i.key.startswith("procedure|")] == ["procedure|submit"]
    assert not any(i.key == "answer-from" for i in comp.insights)


def test_an_openhands_read_action_is_a_look_up_not_a_change_to_the_file_it_shows():
    """OpenHands logs the editor's ``view`` as ``"action": "read"`` with only a path: the page
    must not say the editor changed the file it printed."""
    from fixture_runs import relabeled
    from wikitrace.compilers.offline import compile_offline
    run = relabeled("acme__ledger-415", True)
    read = _calls_by_turn(run)[4]
    assert read.name == "str_replace_editor" and read.turn.arguments.get("command") == "view" and not read.writes
    comp = compile_offline(run)
    assert not any("registry.py" in e.decision and "changing" in e.decision for e in comp.evidence)
    assert not any("changed `/workspace/repo/ledger/plugins/registry.py`" in str(f) for f in comp.in_short)


def _every_run_both_ways():
    from fixture_runs import RUNS, relabeled
    for run in RUNS:
        for success in (True, False):
            yield relabeled(run, success)


def test_on_every_fixture_a_test_run_is_neither_agreed_to_nor_the_change_a_lesson_checks():
    """Over every importer fixture, judged both ways: a call whose answer is a test runner's report
    is never said to come "after the user agreed", and no went-through lesson ("Before X, check
    the request") is about it: running tests changes nothing a user or a reader could check."""
    from wikitrace.compilers.insight_parts import verb
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.runs.errors import is_test_report
    for run in _every_run_both_ways():
        r = read_run(run)
        tests = {c.n for c in r.calls if is_test_report(c.turn.result)}
        comp = compile_offline(run)
        for e in comp.evidence:
            if "after the user agreed" in e.decision:
                assert e.turns[-1] not in tests, (run.run_id, e.decision)
        test_verbs = {verb(c) for c in r.calls if c.n in tests}
        other_verbs = {verb(c) for c in r.calls if c.n not in tests and c.writes}
        for i in comp.insights:
            if i.key.startswith("went-through|"):
                v = i.key.split("|", 1)[1]
                assert v not in test_verbs or v in other_verbs, (run.run_id, i.key)


def test_on_every_fixture_an_error_lesson_quotes_the_line_that_failed():
    """Over every importer fixture, judged both ways: an error lesson's quoted message comes from
    the line of the answer that shows the failure (runs/errors.failure_line) whenever the answer
    has one, never from ordinary output printed before it (an ``env`` listing, progress dots)."""
    from wikitrace.compilers.error_insights import error_key
    from wikitrace.compilers.offline import compile_offline
    from wikitrace.runs.errors import failure_line
    seen = 0
    for run in _every_run_both_ways():
        r = read_run(run)
        keys = {i.key for i in compile_offline(run).insights if i.key.startswith("error|")}
        for c in r.calls:
            line = failure_line(c.turn.result) if c.error else None
            key = error_key(c) if c.error else None
            if line is None or key not in keys or key.endswith(("|failing tests", "missing-program", "shell-syntax", "missing-path")):
                continue
            said = key.rsplit("|", 1)[1]
            words = [w for w in re.findall(r"[A-Za-z]{4,}", said)]
            assert all(w.lower() in line.lower() for w in words), (run.run_id, key, line)
            seen += 1
    assert seen >= 10


def test_one_error_message_is_one_key_whether_or_not_its_path_holds_a_digit():
    """'File …/Base64.java not found' and 'File …/JsonPointer.java not found' are the same error:
    a digit in the file's name had the name masked first and the rest of the path kept, so the
    insight on that error counted a successful run and missed the failed one that met it too."""
    from wikitrace.compilers.error_insights import error_key

    runs = [r for r in load.iter_runs([Path(__file__).parent / "fixtures/importers/coding_corpus"]) if isinstance(r, Run)]
    keys = {}
    for run in runs:
        for c in read_run(run).calls:
            if c.error and c.name == "open" and (c.turn.result or "").startswith("File "):
                keys[(run.run_id, c.n)] = error_key(c)
    assert any("Base64" in rid or "102" in rid for rid, _n in keys), keys  # the digit-named file is among them
    # a path that is not there is one lesson whichever tool named it (error_insights.MISSING_PATH_KEY)
    assert len(keys) >= 2 and set(keys.values()) == {"error|missing-path"}, keys
