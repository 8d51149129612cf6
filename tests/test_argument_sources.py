"""Where a change's argument values came from (the user's reply, the task, an answer, a value
picked unasked among several listed, nowhere): recorded per run, contrasted between the
successful and failed runs of a task type, and said on the page only when the counts separate
them. An idle failure page quotes the agent's last message."""

from __future__ import annotations

import json
import re

from test_choice_notes import USER, _cancel
from test_insight_layer import compile_runs, corpus_json
from test_offline_content import AIRLINE_SYSTEM, _call, _msg, _record, _run, _turns
from fixture_runs import RUNS, relabeled

from wikitrace.compilers.offline import compile_offline
from wikitrace.compilers.reading import user_replies


def _patterns(record: dict) -> set[str]:
    return set(compile_offline(_run(record)).patterns)


def test_a_value_the_user_said_in_reply_and_one_picked_unasked_are_told_apart():
    assert "from|cancel_reservation|reservation_id:reply" in _patterns(_cancel("please cancel RB41XK"))
    picked = _patterns(_cancel("the one to denver, not sure of the code"))
    assert "from|cancel_reservation|reservation_id:picked" in picked
    assert not any(p.startswith("from|cancel_reservation|reservation_id:reply") for p in picked)


def _trials(told_wins: bool, runs: int = 6) -> list[dict]:
    out = []
    for k in range(runs):
        for success in (True, False):
            says = "please cancel RB41XK" if (success and told_wins) or not told_wins else "the one to denver"
            record = _cancel(says, success=success)
            record["run_id"] = f"cancel-{k}-{'ok' if success else 'ko'}"
            record["task"]["id"] = f"task-{k}-{success}"  # no two trials of one task: only the type's contrast
            out.append(record)
    return out


def test_a_source_that_separates_outcomes_leads_the_change_page(tmp_path):
    data = corpus_json(compile_runs(tmp_path, _trials(told_wins=True)))
    (page,) = [i for i in data["insights"] if i["key"] == "went-through|cancel_reservation"]
    assert page["guideline"].startswith((
        "Take `reservation_id` of cancel_reservation from what the user said in reply (ask for it when the user has "
        "not said it): among runs whose cancel_reservation call went through, successful ones did so more often",
        "Do not set `reservation_id` of cancel_reservation unasked among several values one answer listed; ask or "
        "look it up first: among runs whose cancel_reservation call went through, failed ones did so more often"))
    assert "(counts under Evidence)." in page["guideline"]
    shown = {c["pattern"] for c in page["separating"]}
    assert {"from|cancel_reservation|reservation_id:reply", "from|cancel_reservation|reservation_id:picked"} <= shown
    # both sides of one argument separate: the page says it once, and no ask-which sentence repeats it
    assert page["guideline"].count("`reservation_id`") == 1 and "ask which one" not in page["guideline"]


def test_the_same_source_on_both_sides_is_not_advised(tmp_path):
    data = corpus_json(compile_runs(tmp_path, _trials(told_wins=False)))
    for page in data["insights"]:
        assert "Take `" not in page["guideline"] and "Do not set `" not in page["guideline"]
        assert not any(c["pattern"].startswith("from|") for c in page.get("separating") or [])


def test_no_run_without_a_user_reply_is_said_to_take_a_value_from_one():
    """Every importer's fixtures (coding agents' logs among them, where the task statement is a
    user message in form): a value is "from the user's reply" only where a person answered."""
    checked = 0
    for run in RUNS:
        run = run if run.outcome else relabeled(run, False)
        patterns = compile_offline(run).patterns
        if not user_replies(run):
            assert not [p for p in patterns if p.startswith("from|") and p.endswith(":reply")], run.run_id
        checked += any(p.startswith("from|") for p in patterns)
    assert checked >= 1  # some fixture has a change with named arguments


def test_an_idle_failure_page_names_its_look_ups_and_quotes_what_the_agent_reported():
    refusal = "I'm sorry, basic economy flights cannot be modified, so I cannot move this trip."
    turns = _turns(
        _msg("system", AIRLINE_SYSTEM),
        _msg("user", "move my flight in reservation Q7LMZ2 to friday"),
        _call("get_reservation_details", {"reservation_id": "Q7LMZ2"}, json.dumps({"cabin": "basic_economy"})),
        _msg("assistant", refusal),
        _msg("user", "ok thanks"),
        _msg("assistant", "You're welcome."),
        _msg("user", "###STOP###"))
    comp = compile_offline(_run(_record("idle-1", "airline", "Move the flight.", turns, False)))
    (idle,) = [e for e in comp.evidence if "no call that changes state" in e.decision]
    assert idle.decision == "Made 1 look-up call (get_reservation_details) and no call that changes state."
    assert idle.support.endswith("What the agent wrote after its last call (turn 3) is quoted below.")
    assert idle.quote == refusal and idle.turns == [3]  # the report, not the goodbye after it
    (lesson,) = [i for i in comp.insights if i.key == "idle|lookups"]
    assert lesson.detail.endswith(f'; it told the user (turn 3): "{refusal}"')


def test_a_wrong_answer_page_quotes_where_the_expected_answer_was_read_past():
    """A failed QA run whose look-up had returned the expected answer: the page quotes the words
    around it from that answer (the sentence check over every fixture proves the quote exact)."""
    notes = []
    for run in RUNS:
        if run.source.get("format") != "react-text" or not (run.task.metadata or {}).get("gold_answer"):
            continue
        run = relabeled(run, False)
        notes += [n for e in compile_offline(run).evidence for n in e.notes if n.startswith("What ") and " holds it: " in n]
    assert notes and all(re.match(r"What (Search|Lookup) returned at turn ", n) for n in notes)


def _qa_entry(k: int, success: bool, own_words: bool) -> dict:
    """A QA run's corpus.json entry as the offline compiler writes it: a Search error it got past
    or not, and where its queries' words came from."""
    patterns = ["did|Search", "error|Search|Could not find …. Similar: …", "query|Search|task",
                "retry|Search|listed"] + (["query|Search|own"] if own_words else [])
    lesson = {"key": "error|Search|Could not find …. Similar: …", "title": "Search answers \"Could not find\"",
              "guideline": "When Search answers \"Could not find …. Similar: …\", call Search again with one of the "
                           "names the error lists.", "applicability": "In QA tasks that call Search.",
              "detail": f"turn 1: run {k}", "worked": success}
    return {"step": f"step-{k:04d}", "outcome": "success" if success else "failure", "task_type": "qa",
            "task_id": f"q{k}", "patterns": patterns, "lessons": [lesson]}


def test_a_query_wording_that_separates_outcomes_follows_the_page_lesson_as_an_instruction():
    from wikitrace.corpus.insights import gather

    runs = [_qa_entry(k, k % 2 == 0, own_words=k % 2 == 1) for k in range(16)]  # failures all wrote their own words
    (page,) = gather(runs)
    assert page["guideline"] == (
        "When Search answers \"Could not find …. Similar: …\", call Search again with one of the names the error "
        "lists. Build each Search query from names the task or an earlier answer gives, not from words of your own: "
        "failed runs of this task type sent a Search query with words that neither the task text it was given nor any earlier "
        "answer held more often (counts under Evidence).")
    assert any(c["pattern"] == "query|Search|own" and (c["failed_met"], c["success_met"]) == (8, 0)
               for c in page["separating"])  # the counts, under Evidence
    mixed = [_qa_entry(k, k % 2 == 0, own_words=k % 4 < 2) for k in range(16)]  # as often on both sides
    (page,) = gather(mixed)
    assert page["guideline"].startswith("When Search answers") and "Build each" not in page["guideline"]
    # the same contrast on the task type, but most of this page's failed runs kept to the task's words
    # already: telling runs like them to do so is no advice
    others = [_qa_entry(k, k % 2 == 0, own_words=k % 2 == 1) for k in range(16)]
    for e in others:
        e["lessons"][0]["key"] = "other|lesson"
    kept = [_qa_entry(100 + k, False, own_words=k == 0) for k in range(3)]
    (page,) = [p for p in gather(others + kept) if p["key"].startswith("error|")]
    assert page["counts"]["failure"] == 3 and "Build each" not in page["guideline"]


def test_a_change_the_successful_trials_did_not_make_names_what_they_did_instead(tmp_path):
    """Tasks whose failed trial cancelled and whose successful trial refused: the page says to check
    the rules first and quotes what the successful trials told the user instead."""
    refusal = "Basic economy trips cannot be cancelled without travel insurance, so I cannot cancel this one."
    runs = []
    for task in range(3):
        failed = _cancel("please cancel RB41XK")
        failed["run_id"], failed["task"]["id"] = f"t{task}-ko", f"t{task}"
        turns = _turns(
            _msg("system", AIRLINE_SYSTEM),
            _msg("user", "hi, i need to cancel RB41XK. user id noor_haddad_4471"),
            _call("get_user_details", {"user_id": "noor_haddad_4471"}, json.dumps(USER)),
            _msg("assistant", refusal),
            _msg("user", "ok, thanks"),
            _msg("assistant", "You're welcome."))
        won = _record(f"t{task}-ok", "airline", "Cancel the trip to Denver.", turns, True)
        won["task"]["id"] = f"t{task}"
        runs += [failed, won]
    data = corpus_json(compile_runs(tmp_path, runs))
    (page,) = [i for i in data["insights"] if i["key"] == "went-through|cancel_reservation"]
    assert page["title"] == "Check that the rules allow cancel_reservation at all before making it"
    steps = {r["run_id"]: r["step"] for r in data["runs"]}
    assert page["guideline"].endswith(  # two shown, in the failed runs' order
        f" What those successful trials did instead: {steps['t0-ok']} told the user \"{refusal}\"; "
        f"{steps['t1-ok']} told the user \"{refusal}\"."), page["guideline"]


def test_ending_after_look_ups_names_what_the_successful_runs_that_ended_so_told_the_user():
    from wikitrace.corpus.insights import gather

    def entry(k: int, success: bool) -> dict:
        said = f"Your fare class allows {k} free bags, so nothing needs to change."
        lesson = ({"key": "answer-from", "title": "Answer from get_reservation_details when nothing should change",
                   "guideline": "When the look-ups show the request needs no change, answer from them.",
                   "applicability": "In airline tasks settled without a change.",
                   "detail": f"answered after 1 look-up call; it told the user (turn 5): \"{said}\"", "worked": True}
                  if success else
                  {"key": "idle|lookups", "title": "Act on what the look-ups found",
                   "guideline": "Once the look-ups have given the facts, make the change.",
                   "applicability": "In airline tasks that ask for a change or an answer.",
                   "detail": "1 look-up call (get_reservation_details), nothing settled", "worked": False})
        return {"step": f"step-{k:04d}", "outcome": "success" if success else "failure", "task_type": "airline",
                "task_id": f"t{k}", "patterns": ["did|get_reservation_details", "idle|lookups"], "lessons": [lesson]}

    runs = [entry(k, k >= 2) for k in range(10)] + [
        {"step": f"step-{k:04d}", "outcome": "failure", "task_type": "airline", "task_id": f"t{k}",
         "patterns": ["went-through|book_reservation"], "lessons": []} for k in range(10, 18)]
    (idle,) = [p for p in gather(runs) if p["key"] == "idle|lookups"]
    assert idle["title"] == "End after look-ups only when the request needs no change or allows none"
    assert idle["guideline"].endswith(
        ' Successful runs that ended so: step-0002 told the user "Your fare class allows 2 free bags, so nothing '
        'needs to change."; step-0003 told the user "Your fare class allows 3 free bags, so nothing needs to change.".')


def test_a_qa_success_names_the_look_ups_it_made_beside_its_procedure():
    """What a successful QA run searched for, in its own words and order, is the detail beside it on
    its procedure insight: the query shapes that found the answer."""
    details = []
    for run in RUNS:
        if run.source.get("format") != "react-text":
            continue
        run = relabeled(run, True)
        for lesson in compile_offline(run).insights:
            if lesson.key.startswith("procedure|Finish"):
                details.append(lesson.detail)
                # each as it was sent, quote marks and all (they may be why one failed), an error marked as one
                queries = [f"{t.name}[{t.arguments}]" + (" (an error)" if t.is_error else "") for t in run.turns
                           if t.type == "function_call" and t.name != "Finish" and isinstance(t.arguments, str)
                           and len(t.arguments) <= 40]
                assert all(q in lesson.detail for q in queries[:4]), lesson.detail
    assert details and all("; looked up " in d for d in details)


def test_a_failed_qa_page_lists_what_its_look_ups_asked_when_none_returned_the_answer():
    asked = []
    for run in RUNS:
        if run.source.get("format") not in ("react-text", "react-notebook"):
            continue
        run = relabeled(run, False)
        asked += [n for e in compile_offline(run).evidence for n in e.notes if n.startswith("Its look-ups before it asked: ")]
    assert asked and all(re.match(r"Its look-ups before it asked: \w+\[", n) for n in asked)


def test_a_type_wide_choice_is_shown_only_on_the_pages_whose_runs_lean_its_way():
    """Failed runs of one lesson all wrote their own query words, those of another never did: the
    count that failed runs did so more often belongs on the first page, not repeated on the second."""
    from wikitrace.corpus.insights import gather

    def entry(k: int, success: bool, own_words: bool, error: str) -> dict:
        e = _qa_entry(k, success, own_words)
        e["patterns"] = [p for p in e["patterns"] if not p.startswith("error|")] + [f"error|Search|{error}"]
        e["lessons"] = [dict(e["lessons"][0], key=f"error|Search|{error}", title=f"Search answers {error!r}")]
        return e

    runs = ([entry(k, k % 2 == 0, own_words=k % 2 == 1, error="Could not find") for k in range(16)]
            + [entry(k, False, own_words=False, error="Timed out") for k in range(16, 24)])
    pages = {p["key"]: p for p in gather(runs)}
    own = "sent one with words that neither the task text it was given nor any earlier answer held"
    assert any(own in c["text"] for c in pages["error|Search|Could not find"]["separating"])
    assert not any(own in c["text"] for c in pages["error|Search|Timed out"]["separating"])


def _expecting(record: dict, calls: list[dict], run_id: str, task: str) -> dict:
    record["run_id"], record["task"]["id"] = run_id, task
    record["task"]["metadata"] = {"expected_calls": json.dumps(calls)}
    return record


def test_a_change_made_as_the_task_expected_is_not_named_a_cause_by_going_through(tmp_path):
    """Failed runs cancelled more often than successful ones, but half of them cancelled exactly
    the reservation their task expected: the cancel going through failed those runs in nothing."""
    cancel = {"name": "cancel_reservation", "arguments": {"reservation_id": "RB41XK"}}
    other = {"name": "update_reservation_baggages", "arguments": {"reservation_id": "RB41XK", "total_baggages": 2}}
    runs = []
    for k in range(4):  # the task expected the cancel and a bag change the run never made
        runs.append(_expecting(_cancel("please cancel RB41XK"), [cancel, other], f"as-expected-{k}", f"both-{k}"))
    for k in range(4):  # the task expected no cancel at all
        runs.append(_expecting(_cancel("please cancel RB41XK"), [], f"unasked-{k}", f"none-{k}"))
    for k in range(8):  # successful runs that looked the user up and answered
        ok = _cancel("please cancel RB41XK", success=True)
        ok["turns"] = [t for t in ok["turns"] if t.get("name") != "cancel_reservation"]
        runs.append(_expecting(ok, [], f"answered-{k}", f"none-{k}"))
    data = corpus_json(out := compile_runs(tmp_path, runs))
    (page,) = [i for i in data["insights"] if i["key"] == "went-through|cancel_reservation"]
    assert page["contrast"]["verdict"] == "failure" and page["contrast"]["as_expected"] == 4
    text = (out / "insight" / f"{page['id']}.md").read_text()
    assert ("but in 4 of the 8 failed runs every cancel_reservation call that went through was the one the task "
            "expected: the change going through is not named a cause of failure.") in text
    assert "so it is named a likely cause of failure" not in text
    (line,) = [x for x in (out / "insight" / "_index.md").read_text().splitlines() if f"[{page['id']}]" in x]
    assert line.endswith("taken more often by failed runs)")


def test_a_look_up_that_answered_nothing_is_no_call_a_run_did():
    """A notebook tool (tau-bench's ``think``) answers with nothing: calling it got nothing from the
    environment, so it is no "called think" a success could be told apart by. A tool that answered
    and a change still count."""
    record = _cancel("please cancel RB41XK")
    record["turns"][3:3] = [_call("think", {"thought": "The user wants RB41XK cancelled."}, "")]
    for n, turn in enumerate(record["turns"]):
        turn["turn"] = n
    patterns = _patterns(record)
    assert "did|think" not in patterns
    assert {"did|get_user_details", "did|cancel_reservation"} <= patterns
    for nothing in ("[]", " No Results ", "no results found.", "{}"):  # a search that found nothing got nothing
        record["turns"][3] = dict(_call("think", {"thought": "RB41XK"}, nothing), turn=3)
        assert "did|think" not in _patterns(record), nothing
    record["turns"][3] = dict(_call("think", {"thought": "The user wants RB41XK cancelled."}, "noted"), turn=3)
    assert "did|think" in _patterns(record)
