"""What the offline compiler says about a run: decisions that decided, causes that point at
the turn that went wrong, full arguments checked against what the run saw, lessons in
the run's own words, and harness steps never read as the agent's choices.

Golden pages live in tests/fixtures/offline/golden/. After an intended change to what the
offline compiler writes, regenerate them with:
  WIKITRACE_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/test_offline_content.py
and review the diff.

The runs are native JSONL in the shapes the importers write: SWE-agent-like shell and
editor calls with plain-text errors (``is_error`` unset), a harness stop as an
``episode_over`` turn with role ``harness``, tau-bench-like tool calls with a policy
system prompt, nested arguments and a hand-off tool.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from helpers import write_jsonl

from wikitrace.build import BuildOptions, build
from wikitrace.compilers.offline import compile_offline
from wikitrace.runs.native import run_from_dict


def _turns(*turns: dict) -> list[dict]:
    return [dict(t, turn=i) for i, t in enumerate(turns)]


def _call(name, arguments, result, is_error=None, reasoning=None) -> dict:
    t = {"type": "function_call", "role": "assistant", "name": name, "arguments": arguments, "result": result}
    if is_error is not None:
        t["is_error"] = is_error
    if reasoning:
        t["reasoning"] = reasoning
    return t


def _msg(role, content) -> dict:
    return {"type": "message", "role": role, "content": content}


def _record(run_id, task_type, instruction, turns, success, ended_by="agent") -> dict:
    return {"run_id": run_id, "task": {"id": run_id, "instruction": instruction, "task_type": task_type},
            "outcome": {"success": success, "ended_by": ended_by}, "turns": turns}


def _run(record: dict):
    return run_from_dict(record, "test.jsonl:1")


JAVA_SYSTEM = ("You are a software engineer fixing an issue in a Java repository. Use the shell and the editor. "
               "When the fix is done, call submit.")
JAVA_TASK = "NullPointerException in JsonParser.parseArray when the input has a trailing comma."


def swe_success() -> dict:
    """Twelve look-ups first, then the edit that fixed it, a test run and submit."""
    turns = [_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK)]
    for i in range(10):
        turns.append(_call("bash", {"command": f"grep -rn parseArray src/main/java/part{i}"}, f"src/part{i}/A.java:{i}: parseArray("))
    turns.append(_call("bash", {"command": "javac JsonParser.java"}, "bash: javac: command not found"))
    turns.append(_call("bash", {"command": "mvn -q compile"}, "BUILD SUCCESS"))
    turns.append(_call("str_replace_editor", {"command": "view", "path": "src/main/java/JsonParser.java"}, "  120 if (next == ',') {"))
    turns.append(_call("str_replace_editor", {"command": "str_replace", "path": "src/main/java/JsonParser.java",
                                              "old_str": "if (next == ',') {", "new_str": "if (next == ',' && peek() != ']') {"},
                       "The file src/main/java/JsonParser.java has been edited."))
    turns.append(_call("bash", {"command": "mvn -q test -Dtest=JsonParserTest"}, "Tests run: 14, Failures: 0"))
    turns.append(_call("submit", {}, "diff --git a/src/main/java/JsonParser.java"))
    turns.append({"type": "episode_over"})
    return _record("java-fix-1", "java-bugfix", JAVA_TASK, _turns(*turns), True)


def swe_cost_limit() -> dict:
    """A failure the harness stopped at its cost limit, with the exit also logged as a call."""
    turns = [_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK),
             _call("bash", {"command": "javac JsonParser.java"}, "bash: javac: command not found"),
             _call("bash", {"command": "javac JsonParser.java"}, "bash: javac: command not found"),
             _call("str_replace_editor", {"command": "str_replace", "path": "src/main/java/JsonParser.java",
                                          "old_str": "if (next == ',') {", "new_str": "if (next == ',' && x) {"},
                   "Your proposed edit has introduced new syntax error(s). Please read this error message carefully",
                   is_error=True),  # the importer's flag for a rejected edit
             _call("exit_cost", {}, "Exited due to cost limit"),
             {"type": "episode_over", "role": "harness", "content": "cost limit"}]
    return _record("java-fix-2", "java-bugfix", JAVA_TASK, _turns(*turns), False, ended_by="harness: cost limit")


AIRLINE_SYSTEM = (
    "# Airline Agent Policy\n\n"
    "- Before taking any actions that update the booking database (booking, modifying flights, editing baggage), "
    "you must list the action details and obtain explicit user confirmation (yes) to proceed.\n"
    "- You should transfer the user to a human agent if and only if the request cannot be handled within the "
    "scope of your actions.\n\n"
    "## Book flight\n\n"
    "- Payment: each reservation can use at most one travel certificate, at most one credit card, and at most "
    "three gift cards.\n"
    "- Basic economy flights cannot be modified.\n")


def booking_failure() -> dict:
    user = "mia_li_3668"
    profile = json.dumps({"user_id": user, "membership": "silver",
                          "payment_methods": {"certificate_7504069": {"amount": 250}, "certificate_3765853": {"amount": 100},
                                              "credit_card_4421486": {"brand": "visa"}}})
    flights = json.dumps([{"flight_number": "HAT136", "date": "2024-05-20", "cabin": "economy", "price": 305}])
    args = {"user_id": user, "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "business",
            "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
            "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
            "payment_methods": [{"payment_id": "certificate_7504069", "amount": 250},
                                {"payment_id": "certificate_3765853", "amount": 55}],
            "total_baggages": 2, "nonfree_baggages": 1, "insurance": "no"}
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", f"Hi, I want to book a one-way flight from JFK to SEA on May 20. My user id is {user}."),
        _call("get_user_details", {"user_id": user}, profile, is_error=False),
        _call("search_direct_flight", {"origin": "JFK", "destination": "SEA", "date": "2024-05-20"}, flights, is_error=False),
        _msg("user", "Economy please, the first flight. I have 2 checked bags and no insurance. Pay with my two certificates."),
        _call("book_reservation", args, json.dumps({"reservation_id": "ZFA04Y", "status": "booked"}), is_error=False),
        _msg("user", "Thanks! ###STOP###"),
        {"type": "episode_over"},
    )
    return _record("book-1", "airline", "You want to fly from New York to Seattle on May 20 in economy.", turns, False, "user")


def hand_off_failure() -> dict:
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "Change my basic economy flight on reservation XEHM4B to the next day."),
        _call("get_reservation_details", {"reservation_id": "XEHM4B"},
              json.dumps({"reservation_id": "XEHM4B", "cabin": "basic_economy"}), is_error=False),
        _call("update_reservation_flights", {"reservation_id": "XEHM4B", "cabin": "basic_economy", "flights": []},
              "Error: basic economy flights cannot be modified", is_error=True),
        _call("transfer_to_human_agents", {"summary": "User wants to change a basic economy flight, which the tools cannot do."},
              "Transfer successful", is_error=False),
        {"type": "episode_over"},
    )
    return _record("handoff-1", "airline", "Change your basic economy flight to the next day; accept a cancellation.",
                   turns, False, "agent")


def no_tool_failure() -> dict:
    turns = _turns(_msg("system", AIRLINE_SYSTEM), _msg("user", "What is the total of my gift card balances?"),
                   _msg("assistant", "Your gift cards hold 300 dollars in total."), {"type": "episode_over"})
    return _record("none-1", "airline", "You want to know the sum of your gift card balances.", turns, False, "user")


# --- decisions --------------------------------------------------------------------------------


def test_success_decisions_hold_the_fixing_edit_and_the_submit():
    run = _run(swe_success())
    comp = compile_offline(run)
    cited = {n for e in comp.evidence for n in e.turns}
    edit = next(t.turn for t in run.turns if t.name == "str_replace_editor" and t.arguments["command"] == "str_replace")
    submit = next(t.turn for t in run.turns if t.name == "submit")
    assert edit in cited and submit in cited
    # the first look-up is there, but not all twelve shell calls: the rest are counted as left out
    assert 2 in cited
    assert comp.left_out == len(run.actions) - len(cited & {t.turn for t in run.actions})
    assert comp.left_out >= 8
    # the edit that fixed it is shown in full, not cut
    item = next(e for e in comp.evidence if edit in e.turns)
    assert "if (next == ',' && peek() != ']') {" in item.call


def test_the_page_says_what_was_left_out_and_how_to_see_it(tmp_path):
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", [swe_success()])], out=out, offline=True, quiet=True))
    page = (out / "compilation" / "step-0000.md").read_text()
    m = re.search(r"Left out: (\d+) more calls of this run, at turns not named above; `actions step-0000` lists every call", page)
    # the count is of the calls at turns the page names nowhere above it, by link or in words
    above = page[:m.start()]
    named = {int(n) for n in re.findall(r"#turn-(\d+)", above)}
    for said in re.findall(r"(?<!its )\bturns? (\d+(?:(?:, | and )\d+)*)", above):
        named |= {int(n) for n in re.findall(r"\d+", said)}
    lines = (out / "raw" / "step-0000" / "solver.full.jsonl").read_text().splitlines()
    calls = {t["turn"] for t in map(json.loads, lines) if t.get("type") == "function_call"}
    assert calls and int(m.group(1)) == len(calls - named) >= 8


# --- harness --------------------------------------------------------------------------------


def test_harness_stop_is_never_a_decision_cause_or_lesson(tmp_path):
    record = swe_cost_limit()
    run = _run(record)
    comp = compile_offline(run)
    harness_turns = {t.turn for t in run.turns if t.name == "exit_cost" or t.role == "harness"}
    assert harness_turns
    for e in comp.evidence:
        assert not set(e.turns) & harness_turns
        assert "exit_cost" not in f"{e.decision} {e.support} {e.call}"
    for i in comp.insights:
        assert "exit_cost" not in f"{i.title} {i.guideline} {i.applicability}"
    assert "The harness stopped the run: cost limit." in comp.description
    assert "exit_cost" not in comp.description
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", [record])], out=out, offline=True, quiet=True))
    page = (out / "compilation" / "step-0000.md").read_text()
    assert "step budget" not in page and "cost limit" in page


def test_plain_text_errors_are_counted_and_several_turn_sentences_hold_for_each():
    record = swe_cost_limit()
    comp = compile_offline(_run(record))
    assert "(3 returned an error)" in comp.description  # two `command not found`, one rejected edit
    # three identical calls answered three ways: no repetition, and no sentence says "each"
    mixed = _turns(_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK),
                   _call("bash", {"command": "make test"}, "bash: make: command not found"),
                   _call("bash", {"command": "make test"}, "ok, 3 tests passed", is_error=False),
                   _call("bash", {"command": "make test"}, "error: 1 test failed", is_error=True),
                   {"type": "episode_over"})
    comp = compile_offline(_run(_record("mixed", "java-bugfix", JAVA_TASK, mixed, False)))
    assert not any(e.decision.startswith("Repeated the same call") for e in comp.evidence)
    assert not any("each" in e.support.lower() for e in comp.evidence)
    # the same three calls answered the same way are one
    same = _turns(_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK),
                  *[_call("bash", {"command": "make test"}, "bash: make: command not found") for _ in range(3)],
                  _call("bash", {"command": "ls"}, "Makefile\nsrc", is_error=False),
                  _call("bash", {"command": "cd src"}, "", is_error=False),
                  _call("bash", {"command": "ls"}, "main.c", is_error=False),
                  _call("bash", {"command": "ls"}, "main.c", is_error=False),
                  {"type": "episode_over"})
    comp = compile_offline(_run(_record("same", "java-bugfix", JAVA_TASK, same, False)))
    loops = [e for e in comp.evidence if e.decision.startswith("Repeated the same call")]
    assert [e.turns for e in loops] == [[2, 3, 4]]  # `ls` in two folders is no loop
    assert "each of them was answered with an error" in loops[0].support


# --- failure pages ----------------------------------------------------------------------------


def test_failure_page_shows_full_arguments_and_what_differs_from_what_was_seen(tmp_path):
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", [booking_failure()])], out=out, offline=True, quiet=True))
    # run and model text is escaped on the page (never markup the template did not write): read it as shown
    page = re.sub(r"\\([\\`\[\]<>])", r"\1", (out / "compilation" / "step-0000.md").read_text())
    # every argument, nested ones too, exactly as called
    assert '"nonfree_baggages": 1' in page and '"payment_id": "certificate_3765853"' in page
    assert '"passengers": [{"dob": "1990-04-05", "first_name": "Mia", "last_name": "Li"}]' in page
    # the diff: the user said 2 bags (told), never a non-free bag; the flight's cabin was economy
    assert "`nonfree_baggages` is 1: no earlier observation, user message or call holds this value." in page
    assert "`total_baggages`" not in page.split("## Insights")[0].replace('"total_baggages": 2', "")
    # the cabin a flight offer lists is not the booking's own field: only that nothing showed "business" is said
    assert "`cabin` is \"business\": no earlier observation, user message or call holds this value." in page
    assert "`flight_type`" not in page.replace('"flight_type": "one_way"', "")  # the user said "one-way"


def test_failure_page_quotes_the_rules_the_call_breaks_with_their_turn():
    comp = compile_offline(_run(booking_failure()))
    item = next(e for e in comp.evidence if e.call and e.call.startswith("book_reservation("))
    notes = "\n".join(item.notes)
    assert ('The system prompt (turn 0) says: "Payment: each reservation can use at most one travel certificate, '
            'at most one credit card, and at most three gift cards." — here the arguments hold 2 travel certificate values; '
            'the rule allows 1.') in notes
    # the user's last words before the booking asked for it, with no yes to the details the agent never listed
    assert "obtain explicit user confirmation (yes) to proceed.\" — here the user's last message before the call (turn 4) was " \
           "a request, and the agent made the change without first putting its details to the user for a yes" in notes
    assert item.turns == [5]
    assert comp.evidence[0] is item  # causes are ranked: the call whose checks fail comes first


# --- lessons ----------------------------------------------------------------------------------


def _lessons(record) -> str:
    """A run's lessons as its pages show them: the lesson, and what this run showed of it."""
    return "\n".join(f"{i.title} {i.guideline} {i.applicability} {i.detail}" for i in compile_offline(_run(record)).insights)


def test_lessons_speak_the_runs_own_domain():
    java = _lessons(swe_cost_limit()) + _lessons(swe_success())
    assert "policy" not in java.lower() and "user's stated request" not in java
    assert "str_replace_editor" in java or "bash" in java
    assert "command not found" in java  # the error it met
    airline = _lessons(booking_failure())
    assert "book_reservation" in airline and "certificate" in airline  # the rule it broke, in its words
    assert "3765853" not in airline and "7504069" not in airline  # no episode ids


def test_no_misleading_lessons():
    none = _lessons(no_tool_failure())
    assert "without a tool call" in none
    assert "gathering information" not in none.lower() and "look-up call" not in none
    hand_off = _lessons(hand_off_failure())
    assert "transfer_to_human_agents" in hand_off
    assert "change the arguments" not in hand_off.lower() and "rather than repeat" not in hand_off.lower()


REASONS = ["the cover is torn", "the wrong book was sent", "it arrived two weeks late", "pages are missing",
           "the customer was charged twice", "the parcel was lost", "the order was cancelled before shipping",
           "the print is unreadable"]


def _refund_run(k: int) -> dict:
    """Runs of one task type with the same two tools that went differently: other reasons,
    other arguments built from the look-up or from the user, or set from nowhere."""
    order = {"order_id": f"44{k}", "total": 30 + k, "payment_id": f"card_{k}", "status": "delivered"}
    refund = {"order_id": f"44{k}", ["amount", "payment_id", "reason", "note"][k % 4]: ["full", f"card_{k}", REASONS[k], "goodwill"][k % 4]}
    turns = [_msg("system", "You run a bookshop's back office through tools."),
             _msg("user", f"Please refund order 44{k}: {REASONS[k]}."),
             _call("get_order", {"order_id": f"44{k}"}, json.dumps(order), is_error=False),
             _call("refund_order", refund, '{"status": "issued"}', is_error=False),
             {"type": "episode_over"}]
    return _record(f"refund-{k}", "refund", f"Get order 44{k} refunded because {REASONS[k]}.", _turns(*turns), k % 3 != 0)


def test_runs_of_one_task_type_that_teach_the_same_thing_share_one_insight():
    """Eight refund runs that went differently: their lessons gather into fewer insights than
    lesson links, no two insights teach the same text, and every count equals its sources."""
    from wikitrace.corpus.insights import gather, run_entry_fields

    entries = []
    for k in range(8):
        run = _run(_refund_run(k))
        comp = compile_offline(run)
        entries.append({"step": f"step-{k:04d}", "task_type": "refund", "apps": None, "outcome": run.outcome.label,
                        **run_entry_fields(comp)})
    links = sum(len(e["lessons"]) for e in entries)
    insights = gather(entries)
    assert links >= 8 and len(insights) < links
    assert len({i["guideline"] for i in insights}) == len(insights)
    for i in insights:
        assert i["counts"]["runs"] == len(i["sources"]) == len({s["step"] for s in i["sources"]})
        assert i["counts"]["success"] + i["counts"]["failure"] == i["counts"]["runs"]
    assert sum(i["counts"]["runs"] for i in insights) == links


def test_rules_hold_when_the_call_keeps_them():
    """A yes followed by a look-up is still a yes; a gift card is not a second credit card."""
    record = booking_failure()
    turns = record["turns"]
    book = turns[5]
    book["arguments"] = dict(book["arguments"], payment_methods=[
        {"payment_id": "certificate_7504069", "amount": 250}, {"payment_id": "gift_card_1101", "amount": 30},
        {"payment_id": "credit_card_4421486", "amount": 25}])
    agree = _msg("user", "Yes, go ahead and book it.")
    calc = _call("calculate", {"expression": "305 - 250 - 30"}, "25", is_error=False)
    record["turns"] = [dict(t, turn=i) for i, t in enumerate(turns[:5] + [agree, calc] + turns[5:])]
    comp = compile_offline(_run(record))
    item = next(e for e in comp.evidence if e.call and e.call.startswith("book_reservation("))
    assert item.decision.endswith("after the user agreed.")
    assert not any(" — here " in n for n in item.notes), item.notes


def test_a_long_repeat_cites_the_turn_it_quotes():
    calls = [_call("bash", {"command": "make"}, "make: *** No rule to make target 'all'.", is_error=True)
             for i in range(9)]
    turns = _turns(_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK), *calls, {"type": "episode_over"})
    comp = compile_offline(_run(_record("loop", "java-bugfix", JAVA_TASK, turns, False)))
    loop = next(e for e in comp.evidence if e.decision.startswith("Repeated the same call"))
    assert loop.turns[-1] == 10 and loop.quote and "No rule to make target" in loop.quote
    assert "each of them was answered with an error" in loop.support
    assert comp.dropped_quotes == 0


def test_commands_and_edits_the_agent_wrote_are_not_checked_as_looked_up_values():
    turns = _turns(_msg("system", JAVA_SYSTEM), _msg("user", JAVA_TASK),
                   _call("bash", {"command": "cat > Repro.java <<'EOF'\nclass Repro { }\nEOF"}, "", is_error=False),
                   _call("bash", "javac Repro.java && java Repro", "Exception in thread \"main\" java.lang.NullPointerException"),
                   _call("str_replace_editor", {"command": "create", "path": "Repro2.java", "file_text": "class R { int x = 1; }"},
                         "File created successfully at: Repro2.java", is_error=False),
                   {"type": "episode_over"})
    comp = compile_offline(_run(_record("swe-3", "java-bugfix", JAVA_TASK, turns, False)))
    notes = "\n".join(n for e in comp.evidence for n in e.notes)
    assert "`command`" not in notes and "`file_text`" not in notes and "`argument`" not in notes
    lessons = _lessons(_record("swe-3", "java-bugfix", JAVA_TASK, turns, False))
    assert "confirm command" not in lessons and "with the user first" not in lessons


GOLDEN = Path(__file__).parent / "fixtures" / "offline" / "golden"


def test_golden_pages(tmp_path):
    """The whole compilation and insight pages of four runs, byte for byte."""
    runs = [swe_success(), swe_cost_limit(), booking_failure(), hand_off_failure()]
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", runs)], out=out, offline=True, quiet=True))
    pages = sorted((out / "compilation").glob("step-*.md")) + sorted((out / "insight").glob("insight-*.md"))
    assert len(pages) > 4
    for page in pages:
        name = f"{page.parent.name}-{page.name}"
        path = GOLDEN / name
        text = page.read_text(encoding="utf-8")
        if os.environ.get("WIKITRACE_REGEN_GOLDEN"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert path.exists(), f"missing golden {path}; run with WIKITRACE_REGEN_GOLDEN=1"
        assert text == path.read_text(encoding="utf-8"), f"{name} changed; regenerate if intended"


def test_shell_and_editor_calls_are_judged_by_what_they_run():
    from wikitrace.compilers.reading import is_read_only
    from wikitrace.runs.model import Turn

    def reads(name, arguments):
        return is_read_only(Turn(turn=1, type="function_call", name=name, arguments=arguments))

    assert reads("bash", {"command": "cd /repo && grep -rn parseArray src"})
    assert reads("bash", {"command": "git diff"}) and not reads("bash", {"command": "git checkout -- a.java"})
    assert not reads("bash", {"command": "cd /repo; mvn -q test"})
    assert reads("str_replace_editor", {"command": "view", "path": "a.java"})
    assert not reads("str_replace_editor", {"command": "str_replace", "path": "a.java"})
    assert reads("get_user_details", {"user_id": "u1"}) and reads("searchFlights", {})
    assert not reads("book_reservation", {"user_id": "u1"})


SWE_EXPERIMENT = Path(__file__).parent / "fixtures" / "importers" / "swe_experiment" / "20250101_sweagent_gpt4o"


def test_a_swe_agent_experiment_folder_reads_true():
    """SWE-agent logs write each action as a command line (`edit 40:40 ...`) under the tool's name."""
    from wikitrace.runs.load import iter_runs
    from wikitrace.runs.model import Run

    runs = {r.run_id: r for r in iter_runs([SWE_EXPERIMENT]) if isinstance(r, Run)}
    assert runs
    for run in runs.values():
        comp = compile_offline(run)
        text = "\n".join([comp.description] + [f"{e.decision} {e.support}" for e in comp.evidence]
                         + [f"{i.guideline} {i.applicability}" for i in comp.insights])
        assert "changed nothing" not in text or not any(t.name == "edit" for t in run.actions)
        assert "used only values it had seen" not in text  # a command line is not a looked-up value
        assert "exit_cost" not in "\n".join(f"{e.decision} {e.call}" for e in comp.evidence)
        if (run.outcome.ended_by or "").startswith("harness"):
            assert f"The harness stopped the run: {run.outcome.ended_by.split(':', 1)[1].strip()}." in comp.description


def test_left_out_counts_only_the_calls_the_page_names_nowhere(tmp_path):
    """A wrong answer's cause lists the look-ups before it by turn in its notes: those calls are
    on the page, and "Left out" counts only the others."""
    from test_lesson_specifics import _qa

    looks = [("Kestrel Film Days", "Kestrel Film Days is a festival founded in 1990."),
             ("Kestrel Film Days founder", "Could not find Kestrel Film Days founder. Similar: ['Ann Vale']."),
             ("Ann Vale", "Ann Vale is a producer from Leeds."),
             ("Leeds", "Leeds is a city in England.")]
    record = _qa("Leeds", "Harrogate", looks, "In which town was the founder of Kestrel Film Days born?")
    out = tmp_path / "corpus"
    build(BuildOptions(inputs=[write_jsonl(tmp_path / "runs.jsonl", [record])], out=out, offline=True, quiet=True))
    page = (out / "compilation" / "step-0000.md").read_text()
    body = page.split("## Insights from this run", 1)[0]
    named = {int(n) for n in re.findall(r"#turn-(\d+)", body)}
    for said in re.findall(r"(?<!its )\bturns? (\d+(?:(?:, | and )\d+)*)", body):
        named |= {int(n) for n in re.findall(r"\d+", said)}
    unnamed = {1, 2, 3, 4, 5} - named
    m = re.search(r"Left out: (\d+) more calls? of this run", body)
    assert len(named & {1, 2, 3, 4}) >= 2  # the notes name look-ups the links do not
    assert (int(m.group(1)) if m else 0) == len(unnamed), (sorted(named), m and m.group(0))
