"""When an insight applies, in what an agent knows at the start of a new task (corpus/applies.py):
never by how its runs ended; by the word of its tool's action when its tasks' first messages
said it more often than the other tasks of the type; with distinct tasks counted beside runs,
on real-shaped airline runs (a persona instruction, a first user message worded differently
in each trial, a look-up, then a change)."""

from __future__ import annotations

from test_insight_layer import AIRLINE_SYSTEM, compile_runs, corpus_json
from test_offline_content import _call, _msg, _record, _turns

from wikitrace.corpus.applies import Openings, applies_when, same_word
from wikitrace.corpus.insights import kind_of

CANCEL_OPENINGS = ["Hi! I need to cancel my reservation {code}, my plans changed.",
                   "Hello, could you help me with a cancellation? It is reservation {code}."]
BAGS_OPENINGS = ["Hi, I would like three checked bags on my reservation {code}.",
                 "Hello! Please add bags to reservation {code}."]


def trial(task: int, n: int, cancel: bool, success: bool) -> dict:
    code = f"R{task:02d}X{n}"
    opening = (CANCEL_OPENINGS if cancel else BAGS_OPENINGS)[(task + n) % 2].format(code=code)
    found = '{"reservation_id": "%s", "cabin": "economy", "insurance": "no"}' % code
    turns = [_msg("system", AIRLINE_SYSTEM), _msg("user", opening),
             _call("get_reservation_details", {"reservation_id": code}, found),
             _msg("assistant", f"I will {'cancel' if cancel else 'set three bags on'} {code}. Shall I go ahead?"),
             _msg("user", "yes")]
    if cancel:
        turns.append(_call("cancel_reservation", {"reservation_id": code}, '{"status": "cancelled"}'))
    else:
        turns.append(_call("update_reservation_baggages", {"reservation_id": code, "total_baggages": 3,
                                                           "nonfree_baggages": 0, "payment_id": "credit_card_4"},
                           '{"reservation_id": "%s", "total_baggages": 3}' % code))
    turns.append(_msg("assistant", "Done."))
    persona = (f"You are user_{task}. You want to {'cancel' if cancel else 'add three bags to'} your reservation; "
               "you cancel or change nothing else.")
    record = _record(f"task-{task}-trial-{n}", "airline", persona, _turns(*turns), success)
    record["task"]["id"] = str(task)
    return record


def corpus(tmp_path):
    # four cancellation tasks of two trials, all failed (the rules did not allow it); six bag
    # tasks, two trials each, all successful
    runs = [trial(t, n, True, False) for t in range(4) for n in range(2)]
    runs += [trial(t, n, False, True) for t in range(4, 10) for n in range(2)]
    out = compile_runs(tmp_path, runs)
    return out, corpus_json(out)


def test_a_lesson_on_the_action_its_requests_name_says_so_and_counts_its_tasks(tmp_path):
    out, data = corpus(tmp_path)
    (cancel,) = [i for i in data["insights"] if i["key"] == "went-through|cancel_reservation"]
    assert cancel["cue"] == "cancel" and cancel["tasks"] == 4 and cancel["counts"]["runs"] == 8
    assert cancel["applicability"] == ('In airline tasks whose first message says "cancel" or a longer form of it, '
                                       "before calling cancel_reservation.")
    page = (out / "insight" / f"{cancel['id']}.md").read_text()
    assert "Seen in 8 runs of 4 tasks: 0 successful, 8 failed." in page
    # the cue's counts stand under Evidence ("cancellation" is a longer form of "cancel")
    assert ('The first messages of 4 of its 4 tasks say "cancel" or a longer form of it; 0 of the type\'s other 6 '
            "tasks do.") in page
    # the contrast's counts of runs say how many distinct tasks they are
    assert "Runs of this task type whose change with this tool went through: 8 failed of 4 tasks, 0 successful." in page
    assert "8 runs of 4 tasks: 0 successful, 8 failed" in (out / "insight" / "_index.md").read_text()


def test_a_lesson_named_by_how_its_runs_ended_applies_before_the_call_not_at_the_end(tmp_path):
    _out, data = corpus(tmp_path)
    (bags,) = [i for i in data["insights"] if i["key"].startswith("procedure|update_reservation_baggages")]
    # "update" is the tool's action word; the bag requests never say it, so no cue is claimed, and
    # the first messages of its first two tasks (their first trials) are quoted, values masked
    assert "cue" not in bags and bags["tasks"] == 6
    assert bags["applicability"] == (
        "In airline tasks, before calling update_reservation_baggages. The first messages of "
        'two of its tasks said: "Hi, I would like three checked bags on my reservation R04X0."; "Hello! Please add '
        'bags to reservation R05X0.".')  # quoted as written: a masked "reservation …." reads as cut off
    assert not any("that end with" in i["applicability"] for i in data["insights"])


def test_a_later_trials_own_notes_are_no_cue():
    # a Reflexion-style opening: the question, then the run's notes on the trials before it; only
    # words the task statement holds count, so "cancel" in a note is not what the task asked
    from wikitrace.compilers.reading import read_run
    from wikitrace.compilers.run_patterns import opening_words
    from wikitrace.runs.native import run_from_dict

    question = "Which airline flew the first jet route between London and Johannesburg?"
    record = _record("q1-t2", "qa", question, _turns(
        _msg("user", question + " Reflections:\n- I should not cancel the search early; look up the airline."),
        _call("Search", "BOAC", "BOAC was a British airline."), _msg("assistant", "BOAC")), True)
    words = opening_words(read_run(run_from_dict(record, "t.jsonl:1")))
    assert "airline" in words and "london" in words
    assert "cancel" not in words and "reflections" not in words


def test_few_tasks_or_a_word_every_task_says_give_no_cue():
    def run(step, task, words):
        return {"step": f"step-{step:04d}", "task_id": str(task), "task_type": "airline",
                "patterns": [f"asks|{w}" for w in words]}

    # every task says "cancel": it tells these tasks from no other
    runs = [run(k, k, ["cancel", "reservation"]) for k in range(10)]
    openings = Openings(runs, kind_of)
    assert openings.cues("airline", runs[:5], "went-through|cancel_reservation") == ([], 0, 5, 0, 5)
    # one task: no cue, however its message reads
    assert openings.cues("airline", runs[:1], "went-through|cancel_reservation")[0] == []
    # a rule's lesson has no tool, so no action word
    assert openings.cues("airline", runs[:5], "rule|31f656c6a2")[0] == []
    assert applies_when("rule|31f656c6a2", "In airline tasks, before any call the rule names.", "airline",
                        ([], 0, 5, 0, 5)) == "In airline tasks, before any call the rule names."
    assert same_word("cancel", "cancellation") and not same_word("bag", "baggages") and not same_word("can", "cancel")
